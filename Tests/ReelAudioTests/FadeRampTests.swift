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

/// A fade through the engine: sent before a play, the written audio rises from silence, then is
/// the file's own samples.
extension PlaybackEngineTests {
    @Test func aFadeSentBeforeAPlayRisesFromSilenceThenLeavesTheAudioAsItIs() throws {
        let path = directory.appendingPathComponent("fade.wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 2)
        let harness = Harness()
        harness.engine.send(.fade(FadeRamp.Request(from: 0, to: 1, seconds: 1)))
        _ = try harness.load(path)
        #expect(harness.waitUntil { $0.activity == .stopped })
        let written = harness.device.state.written.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        try #require(written.count == samples.count)
        // Peak of each tenth of the first second, against the file's own.
        let window = samples.count / 20
        let peaks = (0..<10).map { index in
            written[index * window..<(index + 1) * window].map { abs(Int($0)) }.max() ?? 0
        }
        let sourcePeak = samples[0..<window].map { abs(Int($0)) }.max() ?? 0
        #expect(peaks[0] < sourcePeak / 100, "starts from silence: \(peaks)")
        #expect(zip(peaks, peaks.dropFirst()).allSatisfy { $0 < $1 }, "rises in every tenth: \(peaks)")
        #expect(Array(written[(samples.count / 2 + 1)...]) == Array(samples[(samples.count / 2 + 1)...]), "then untouched")
    }
}
