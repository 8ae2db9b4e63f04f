import Foundation
import ReelAudio
import Testing

/// The software mixer's sample processing: passthrough, scaling with dither, ramps.
@Suite struct GainStageTests {
    static let s16 = PCMFormat(sample: .s16, sampleRate: 48000, channels: 2)
    static let s32 = PCMFormat(sample: .s32, sampleRate: 48000, channels: 2)

    /// Applies `stage` to `samples` in one call (or in chunks of `chunk` frames).
    static func run<Sample>(
        _ stage: inout GainStage, _ samples: [Sample], format: PCMFormat, chunk: Int? = nil
    ) -> [Sample] {
        var output = samples
        let frames = samples.count / format.channels
        output.withUnsafeMutableBytes { raw in
            var frame = 0
            while frame < frames {
                let count = min(chunk ?? frames, frames - frame)
                stage.apply(to: raw.baseAddress! + frame * format.bytesPerFrame, frames: count, format: format)
                frame += count
            }
        }
        return output
    }

    static func randomSamples<Sample: FixedWidthInteger>(_ count: Int) -> [Sample] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in Sample.random(in: .min ... .max, using: &generator) }
    }

    @Test func fullVolumeLeavesEveryByteAsItIs() {
        var stage = GainStage()
        #expect(stage.isPassthrough)
        let short: [Int16] = Self.randomSamples(4096)
        #expect(Self.run(&stage, short, format: Self.s16) == short)
        let long: [Int32] = Self.randomSamples(4096)
        #expect(Self.run(&stage, long, format: Self.s32) == long)
    }

    @Test func returningToFullVolumeBecomesPassthroughAfterTheRamp() {
        var stage = GainStage(volume: 50)
        stage.setTarget(volume: 100, muted: false)
        #expect(!stage.isPassthrough)
        _ = Self.run(&stage, [Int16](repeating: 1000, count: 2 * 240), format: Self.s16)
        #expect(stage.isPassthrough)
        let short: [Int16] = Self.randomSamples(4096)
        #expect(Self.run(&stage, short, format: Self.s16) == short)
    }

    @Test func halfGainHalves16BitFullScaleWithinTheDither() {
        var stage = GainStage()
        stage.setTarget(gain: 0.5)
        stage.jumpToTarget()
        let input = (0..<8192).map { $0 % 2 == 0 ? Int16.max : Int16.min }
        let output = Self.run(&stage, input, format: Self.s16)
        var errors: [Double] = []
        for (sample, result) in zip(input, output) {
            errors.append(Double(result) - Double(sample) * 0.5)
        }
        #expect(errors.allSatisfy { abs($0) <= 1 }, "worst error \(errors.map(abs).max()!) LSB")
        // Dithered: the results are not all the same value, and unbiased on average.
        #expect(Set(output.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)).count > 1)
        #expect(abs(errors.reduce(0, +) / Double(errors.count)) < 0.05)
    }

    @Test func halfGainOn32BitRoundsToTheNearestValue() {
        var stage = GainStage()
        stage.setTarget(gain: 0.5)
        stage.jumpToTarget()
        let input: [Int32] = Self.randomSamples(4096) + [.max, .min]
        let output = Self.run(&stage, input, format: Self.s32)
        for (sample, result) in zip(input, output) {
            #expect(abs(Double(result) - Double(sample) * 0.5) <= 0.5)
        }
    }

    @Test func digitalSilenceStaysSilentWithoutDitherNoise() {
        var stage = GainStage(volume: 40)
        let output = Self.run(&stage, [Int16](repeating: 0, count: 4096), format: Self.s16)
        #expect(output.allSatisfy { $0 == 0 })
    }

    @Test func mutingRampsToExactZero() {
        var stage = GainStage(volume: 80)
        stage.setTarget(volume: 80, muted: true)
        let input = [Int16](repeating: .max, count: 2 * 1000)
        let output = Self.run(&stage, input, format: Self.s16)
        #expect(output[2 * 238] != 0)
        #expect(output[(2 * 239)...].allSatisfy { $0 == 0 }, "not silent from the ramp's last frame on")
        #expect(Self.run(&stage, input, format: Self.s16).allSatisfy { $0 == 0 })
        let long = Self.run(&stage, [Int32](repeating: .max, count: 512), format: Self.s32)
        #expect(long.allSatisfy { $0 == 0 })
    }

    @Test func samplesStayInRangeNearUnityGain() {
        var stage = GainStage()
        stage.setTarget(gain: 0.99999)
        stage.jumpToTarget()
        let input = (0..<8192).map { $0 % 2 == 0 ? Int16.max : Int16.min }
        let output = Self.run(&stage, input, format: Self.s16)
        #expect(output.enumerated().allSatisfy { $0.offset % 2 == 0 ? $0.element >= 32765 : $0.element <= -32766 })
        let long = Self.run(&stage, (0..<512).map { $0 % 2 == 0 ? Int32.max : Int32.min }, format: Self.s32)
        #expect(long.enumerated().allSatisfy { $0.offset % 2 == 0 ? $0.element > 2_147_400_000 : $0.element < -2_147_400_000 })
    }

    /// The gain of each frame of a ramp on a constant full-scale mono 32-bit signal (no dither).
    static func rampGains(from start: Double, to end: Double, frames: Int = 400, chunk: Int? = nil) -> [Double] {
        var stage = GainStage()
        stage.setTarget(gain: start)
        stage.jumpToTarget()
        stage.setTarget(gain: end)
        let format = PCMFormat(sample: .s32, sampleRate: 48000, channels: 1)
        let output = run(&stage, [Int32](repeating: 1 << 30, count: frames), format: format, chunk: chunk)
        return output.map { Double($0) / Double(1 << 30) }
    }

    @Test func rampFromFullToSilenceTakesFiveMillisecondsMonotonically() {
        let gains = Self.rampGains(from: 1, to: 0)
        let silentFrom = gains.firstIndex(of: 0)!
        // 5 ms at 48 kHz: the 240th frame is the first at the target.
        #expect(abs((silentFrom + 1) - 240) <= 1, "silent after \(silentFrom + 1) frames")
        #expect(gains[silentFrom...].allSatisfy { $0 == 0 })
        #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 >= $1 }, "not monotonic")
        let steps = zip(gains, gains.dropFirst()).map { $0 - $1 }
        #expect(steps.max()! < 1.0 / 200, "a step of \(steps.max()!) of full scale")
        #expect(gains[0] < 1 && gains[0] > 0.99)
    }

    @Test func rampEndsExactlyOnTheTargetWhicheverTheBufferSizes() {
        let whole = Self.rampGains(from: 0.3, to: 0.8)
        let chunked = Self.rampGains(from: 0.3, to: 0.8, chunk: 7)
        #expect(whole == chunked)
        #expect(abs(whole[239] - 0.8) < 1e-9)
        #expect(whole[239...].allSatisfy { $0 == whole[239] })
        #expect(zip(whole, whole.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func rampOn16BitHasSmallStepsAndEndsOnTheTarget() {
        var stage = GainStage()
        stage.setTarget(volume: 0, muted: false)
        let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)
        let output = Self.run(&stage, [Int16](repeating: .max, count: 400), format: format).map(Int.init)
        let steps = zip(output, output.dropFirst()).map { $0 - $1 }
        #expect(steps.allSatisfy { $0 >= 0 && $0 <= 32767 / 240 + 2 }, "steps \(steps.min()!)…\(steps.max()!)")
        #expect(output[239...].allSatisfy { $0 == 0 })
    }

    @Test func aNewTargetMidRampStartsFromTheLevelReached() {
        var stage = GainStage()
        stage.setTarget(gain: 0)
        let format = PCMFormat(sample: .s32, sampleRate: 48000, channels: 1)
        let first = Self.run(&stage, [Int32](repeating: 1 << 30, count: 120), format: format)
        stage.setTarget(gain: 1)
        let second = Self.run(&stage, [Int32](repeating: 1 << 30, count: 400), format: format)
        let gains = (first + second).map { Double($0) / Double(1 << 30) }
        let steps = zip(gains, gains.dropFirst()).map { abs($0 - $1) }
        #expect(steps.max()! < 1.0 / 200)
        #expect(gains.last == 1)
        #expect(stage.isPassthrough)
    }

    @Test func jumpToTargetSkipsTheRamp() {
        var stage = GainStage()
        stage.setTarget(gain: 0.25)
        stage.jumpToTarget()
        #expect(!stage.isRamping)
        let format = PCMFormat(sample: .s32, sampleRate: 48000, channels: 2)
        let output = Self.run(&stage, [Int32](repeating: 1 << 30, count: 8), format: format)
        #expect(output.allSatisfy { $0 == 1 << 28 })
    }

    @Test func channelsOfAFrameGetTheSameGainDuringARamp() {
        var stage = GainStage()
        stage.setTarget(gain: 0)
        let output = Self.run(&stage, [Int32](repeating: 1 << 30, count: 2 * 300), format: Self.s32)
        for frame in 0..<300 { #expect(output[2 * frame] == output[2 * frame + 1]) }
    }
}
