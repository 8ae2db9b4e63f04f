import Foundation
import Glibc
import Logging
import ReelAudio
import ReelModel
import Testing

/// The software gain stage in the engine, through the ALSA `file` plugin: what reaches the
/// device at 100 is the file, bit for bit; at another volume, every sample is scaled by the curve.
@Suite(.serialized) struct SoftwareVolumeTests {
    let directory = TestAudio.temporaryDirectory()

    func play(_ path: String, volume: Int, muted: Bool = false, to out: String) throws {
        let engine = PlaybackEngine(
            device: ALSAOutput(name: "file:FILE=\(out),FORMAT=raw"), logger: Logger(label: "test")) { _ in }
        engine.start()
        defer { engine.shutdown() }
        let reader = try AudioFileOpener.open(path: path)
        engine.send(.setGain(volume: volume, muted: muted, { _ in }))
        engine.send(.load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, { _ in }))
        let deadline = Date().addingTimeInterval(10)
        usleep(20_000)
        while engine.snapshot.activity != .stopped && Date() < deadline { usleep(10_000) }
        #expect(engine.snapshot.activity == .stopped)
    }

    func samples(_ path: String) throws -> [Int16] {
        try Data(contentsOf: URL(fileURLWithPath: path)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    @Test func fullVolumeIsBitExactAndHalfVolumeFollowsTheCurve() throws {
        let path = directory.appendingPathComponent("tone.wav").path
        let source = try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let full = directory.appendingPathComponent("full.raw").path
        try play(path, volume: 100, to: full)
        #expect(try samples(full) == source, "volume 100 changed the samples")

        let half = directory.appendingPathComponent("half.raw").path
        try play(path, volume: 50, to: half)
        let scaled = try samples(half)
        #expect(scaled.count == source.count)
        let gain = VolumeCurve.gain(forVolume: 50)
        // From the very first sample (a level set before playing is not ramped to from unity;
        // regression: the first 5 ms came out louder), each sample is the source's times the
        // gain, ± dither.
        let worst = zip(scaled, source).map { abs(Double($0) - Double($1) * gain) }.max() ?? 99
        #expect(worst <= 1.5, "a sample is \(worst) LSB away from source × \(gain)")

        let muted = directory.appendingPathComponent("muted.raw").path
        try play(path, volume: 80, muted: true, to: muted)
        #expect(try samples(muted).allSatisfy { $0 == 0 }, "muted output is not silent from its first sample")
    }
}
