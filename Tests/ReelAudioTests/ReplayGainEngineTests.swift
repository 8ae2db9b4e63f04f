import Foundation
import Glibc
import Logging
import ReelAudio
import ReelModel
import Testing

/// ReplayGain in the engine, through the ALSA `file` plugin (unpaced): each track's frames get
/// its own gain times the volume's, the join of two tracks stays sample-exact in length and
/// position (only the gain changes, ramped from the next track's first frame), and a gain of 1
/// leaves every byte as it is.
@Suite(.serialized) struct ReplayGainEngineTests {
    let directory = TestAudio.temporaryDirectory()

    /// A constant stereo 16-bit signal of `frames` frames at `level`, written as WAV.
    func constant(_ name: String, frames: Int, level: Int16) throws -> String {
        let path = directory.appendingPathComponent(name).path
        let writer = try SndFileWriter(path: path, codec: "wav", format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        let samples = [Int16](repeating: level, count: frames * 2)
        try samples.withUnsafeBytes { raw in try writer.write(raw.baseAddress!, frames: frames) }
        try writer.close()
        return path
    }

    /// Plays `paths` back to back (each lined up inside the engine's request, as the `file`
    /// plugin is not paced), track n with `gains[n]`, and returns what the device got.
    func play(_ paths: [String], gains: [Double], volume: Int = 100) throws -> [Int16] {
        let out = directory.appendingPathComponent("out-\(UUID().uuidString).raw").path
        final class Holder: @unchecked Sendable { weak var engine: PlaybackEngine? }
        let holder = Holder()
        let engine = PlaybackEngine(
            device: ALSAOutput(name: "file:FILE=\(out),FORMAT=raw"), logger: Logger(label: "test"),
            onWantsNext: { token in
                guard token < paths.count, let engine = holder.engine,
                      let reader = try? AudioFileOpener.open(path: paths[token])
                else { return }
                engine.send(.lineUp(after: token, next: TrackBox(reader, token: token + 1, replayGain: gains[token]), { _ in }))
            },
            onChange: { _ in })
        holder.engine = engine
        engine.start()
        defer { engine.shutdown() }
        engine.send(.setGain(volume: volume, muted: false, { _ in }))
        let reader = try AudioFileOpener.open(path: paths[0])
        engine.send(.load(ReaderBox(reader, replayGain: gains[0]), token: 1, startFrame: 0, startPlaying: true, { _ in }))
        let deadline = Date().addingTimeInterval(20)
        usleep(20_000)
        while engine.snapshot.activity != .stopped && Date() < deadline { usleep(10_000) }
        #expect(engine.snapshot.activity == .stopped)
        return try Data(contentsOf: URL(fileURLWithPath: out)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    @Test func eachTrackGetsItsOwnGainAndTheJoinStaysSampleExact() throws {
        // 20,001 frames: the join falls inside a period.
        let a = try constant("a.wav", frames: 20_001, level: 8000)
        let b = try constant("b.wav", frames: 15_000, level: 8000)
        let got = try play([a, b], gains: [0.5, 2])
        #expect(got.count == (20_001 + 15_000) * 2, "the device got \(got.count / 2) frames of 35,001")
        guard got.count == 35_001 * 2 else { return }
        // A at 0.5 from its first frame to its last (± dither).
        #expect(got[0..<(20_001 * 2)].allSatisfy { abs(Int($0) - 4000) <= 1 }, "A is not at half its level")
        // B ramps from A's level to its own over 5 ms (220 frames at 44.1 kHz), from its first frame…
        let rampFrames = 44100 * GainStage.rampMilliseconds / 1000
        let firstOfB = Int(got[20_001 * 2])
        #expect(firstOfB > 4000 && firstOfB < 4200, "B's first frame is at \(firstOfB)")
        let ramp = (0..<rampFrames).map { Int(got[(20_001 + $0) * 2]) }
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $0 <= $1 + 1 }, "the ramp goes down")
        // …then holds 2× (16,000) to the end.
        #expect(got[((20_001 + rampFrames) * 2)...].allSatisfy { abs(Int($0) - 16000) <= 1 }, "B is not at twice its level")
    }

    @Test func gainOneLeavesEveryByteAndVolumeMultiplies() throws {
        let tone = directory.appendingPathComponent("tone.wav").path
        let source = try TestAudio.writeTone(to: tone, codec: "wav", seconds: 1)
        #expect(try play([tone], gains: [1]) == source, "a ReplayGain of 1 changed the samples")
        // Volume 50 and a ReplayGain of 2: the product, from the first sample.
        let scaled = try play([tone], gains: [2], volume: 50)
        let gain = VolumeCurve.gain(forVolume: 50) * 2
        let worst = zip(scaled, source).map { abs(Double($0) - min(max(Double($1) * gain, -32768), 32767)) }.max() ?? 99
        #expect(scaled.count == source.count)
        #expect(worst <= 1.5, "a sample is \(worst) LSB away from source × \(gain)")
    }

    @Test func aGainAboveOneClampsInsteadOfWrapping() throws {
        let loud = try constant("loud.wav", frames: 4410, level: 30000)
        let got = try play([loud], gains: [4])
        #expect(got.count == 4410 * 2)
        #expect(got.allSatisfy { $0 == Int16.max }, "a sample wrapped or fell short of full scale")
    }
}
