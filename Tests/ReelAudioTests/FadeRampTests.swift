import ReelAudio
import Testing

/// The fade after the volume: smooth per-frame steps, exact ends, passthrough when idle.
@Suite struct FadeRampTests {
    let format = PCMFormat(sample: .s16, sampleRate: 8000, channels: 2)

    /// `frames` stereo frames of a constant 10,000 through the ramp, in buffers of 333 frames.
    func run(_ ramp: inout FadeRamp, frames: Int) -> [Int16] {
        var out: [Int16] = []
        var left = frames
        while left > 0 {
            let count = min(333, left)
            var buffer = [Int16](repeating: 10_000, count: count * 2)
            buffer.withUnsafeMutableBytes { ramp.apply(to: $0.baseAddress!, frames: count, format: format) }
            out += buffer
            left -= count
        }
        return out
    }

    @Test func aFadeInRisesEveryFrameFromSilenceToFullAndStaysThere() {
        var ramp = FadeRamp()
        ramp.start(FadeRamp.Request(from: 0, to: 1, seconds: 2))
        let samples = run(&ramp, frames: 8000 * 3)
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        #expect(left[0] == 0)
        #expect(zip(left, left.dropFirst()).allSatisfy { $0 <= $1 }, "never falls")
        #expect(left[8000] > 0 && left[8000] < 10_000 / 4, "a cubic: a quarter of the way at half time is about 1/8")
        #expect(left[15_999] == 10_000, "the last frame of the fade is at full level")
        #expect(left[16_000...].allSatisfy { $0 == 10_000 }, "then untouched")
        #expect(zip(stride(from: 0, to: samples.count, by: 2), stride(from: 1, to: samples.count, by: 2)).allSatisfy { samples[$0] == samples[$1] })
        #expect(ramp.isIdle)
    }

    @Test func aFadeOutFallsToSilenceAndAResetComesBackAtOnce() {
        var ramp = FadeRamp()
        ramp.start(FadeRamp.Request(from: 1, to: 0, seconds: 1))
        let samples = run(&ramp, frames: 8000 * 2)
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        #expect(left[0] > 9_990)
        #expect(zip(left, left.dropFirst()).allSatisfy { $0 >= $1 }, "never rises")
        #expect(left[7999...].allSatisfy { $0 == 0 })
        #expect(!ramp.isIdle)
        ramp.start(.reset)
        #expect(run(&ramp, frames: 100).allSatisfy { $0 == 10_000 })
        #expect(ramp.isIdle)
    }

    @Test func withoutAFadeTheSamplesAreUntouched() {
        var ramp = FadeRamp()
        var buffer: [Int32] = [1, -1, .max, .min, 123_456_789, -7]
        let before = buffer
        buffer.withUnsafeMutableBytes { ramp.apply(to: $0.baseAddress!, frames: 3, format: PCMFormat(sample: .s32, sampleRate: 48000, channels: 2)) }
        #expect(buffer == before)
    }
}
