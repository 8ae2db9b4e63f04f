import Foundation
import Glibc
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// The engine on real alsa-lib devices: `null` (unpaced), the `file` plugin (captures exactly the
/// bytes played) and, when `scripts/test` has started one, a PulseAudio null sink (real time).
@Suite(.serialized) struct ALSAPlaybackTests {
    let directory = TestAudio.temporaryDirectory()

    final class Player: @unchecked Sendable {
        let engine: PlaybackEngine
        init(device: String, timing: PCMTiming = PCMTiming()) {
            engine = PlaybackEngine(device: ALSAOutput(name: device), timing: timing, logger: Logger(label: "test")) { _ in }
            engine.start()
        }
        deinit { engine.shutdown() }

        func run(_ make: (@escaping PlaybackCommand.Reply) -> PlaybackCommand) throws -> PlaybackSnapshot {
            let box = Locked<Result<PlaybackSnapshot, ReelError>?>(nil)
            engine.send(make { result in box.withLock { $0 = result } })
            for _ in 0..<1000 {
                if let result = box.current { return try result.get() }
                usleep(10_000)
            }
            throw ReelError(.ioError, "no reply from the engine within 10 s")
        }

        func play(_ path: String) throws -> PlaybackSnapshot {
            let reader = try AudioFileOpener.open(path: path)
            return try run { .load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, $0) }
        }

        func waitUntilStopped(timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if engine.snapshot.activity == .stopped { return true }
                usleep(10_000)
            }
            return false
        }
    }

    @Test func nullDevicePlaysAFileToItsEnd() throws {
        let path = directory.appendingPathComponent("n.flac").path
        try TestAudio.writeTone(to: path, codec: "flac", seconds: 5)
        let player = Player(device: "null")
        let started = try player.play(path)
        #expect(started.activity == .playing)
        #expect(player.waitUntilStopped(timeout: 5))
        #expect(player.engine.snapshot.error == nil)
    }

    @Test(arguments: ["wav", "flac"])
    func filePluginReceivesExactlyTheDecodedBytes(codec: String) throws {
        let path = directory.appendingPathComponent("exact.\(codec)").path
        let samples = try TestAudio.writeTone(to: path, codec: codec, seconds: 2)
        let raw = directory.appendingPathComponent("out-\(codec).raw").path
        let player = Player(device: "file:FILE=\(raw),FORMAT=raw")
        _ = try player.play(path)
        #expect(player.waitUntilStopped(timeout: 10))
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let expected = samples.withUnsafeBytes { Array($0) }
        #expect(written.count == expected.count)
        let same = written == expected
        #expect(same, "the bytes the device received differ from the file's samples")
    }

    @Test func missingDeviceFailsPlayWithDeviceUnavailable() throws {
        let path = directory.appendingPathComponent("m.wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let player = Player(device: "no_such_device_xyz")
        do {
            _ = try player.play(path)
            Issue.record("play on a missing device succeeded")
        } catch let error as ReelError {
            #expect(error.reason == .deviceUnavailable)
            #expect(error.message.contains("no_such_device_xyz"))
        }
        #expect(player.engine.snapshot.activity == .stopped)
    }

    /// PulseAudio's plugin is known by its setup (its prepare after an underrun drops what its
    /// server held: the engine writes that again); ALSA's `null` and `file` devices are not.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"] != nil,
                   "needs the PulseAudio null sink that scripts/test starts"))
    func pulseIsKnownAsADeviceWhosePrepareDropsWhatItHolds() throws {
        let format = PCMFormat(sample: .s16, sampleRate: 44100, channels: 2)
        for (name, drops) in [("pulse", true), ("null", false), ("file:FILE=/dev/null,FORMAT=raw", false)] {
            let output = ALSAOutput(name: name)
            _ = try output.open(format, timing: PCMTiming())
            #expect(output.prepareDropsQueued == drops, "\(name)")
            output.close()
        }
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"] != nil,
                   "needs the PulseAudio null sink that scripts/test starts"))
    func pulseNullSinkPlaysInRealTime() throws {
        let path = directory.appendingPathComponent("paced.wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 6)
        let player = Player(device: "pulse")
        let started = Date()
        _ = try player.play(path)
        // The sink may hold a new stream's first writes (its latency); measure the rate after that.
        var samples: [(Double, Double)] = []
        while Date().timeIntervalSince(started) < 5 {
            let position = player.engine.currentPosition().position
            samples.append((Date().timeIntervalSince(started), position))
            usleep(50_000)
        }
        // The sink may hold a new stream's first writes for up to ~2 s, and its ALSA plugin reports
        // no delay until the stream's timing is known: the rate is measured over the steady part,
        // from half a second after the position first moved.
        let startedMoving = samples.first { $0.1 > 0.3 }?.0 ?? .infinity
        let moving = samples.filter { $0.0 >= startedMoving + 0.5 }
        #expect(moving.count > 8, "the position did not move steadily: \(samples.suffix(3))")
        if let first = moving.first, let last = moving.last, last.0 > first.0 + 1 {
            let rate = (last.1 - first.1) / (last.0 - first.0)
            // Paced, not merely moving: the null device would run hundreds of times faster. The
            // plugin's delay reports are noisy on a loaded 2-core machine (the whole suite runs
            // in parallel), hence the margin; the wall time of the whole file is checked below.
            #expect(abs(rate - 1) < 0.25, "position advanced at \(rate)x real time")
        }
        // Positions never go backwards while playing.
        let backward = zip(samples, samples.dropFirst()).filter { $0.1 > $1.1 }.map { $0.1 - $1.1 }
        #expect(backward.isEmpty, "the position went back by \(backward)")
        #expect(player.waitUntilStopped(timeout: 5))
        #expect(Date().timeIntervalSince(started) >= 5.9, "a 6 s file ended early")
        #expect(player.engine.snapshot.counters.xruns == 0)
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"] != nil,
                   "needs the PulseAudio null sink that scripts/test starts"))
    func pauseOnPulseHoldsThePosition() throws {
        let path = directory.appendingPathComponent("pause.wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 6)
        let player = Player(device: "pulse")
        _ = try player.play(path)
        let deadline = Date().addingTimeInterval(4)
        while player.engine.snapshot.position(at: monotonicNanoseconds()) < 0.5 && Date() < deadline { usleep(20_000) }
        let paused = try player.run { .pause($0) }
        let held = paused.position(at: monotonicNanoseconds())
        #expect(held >= 0.3, "paused at \(held) s")
        usleep(500_000)
        #expect(player.engine.snapshot.position(at: monotonicNanoseconds()) == held)
        let sought = try player.run { .seek(.absolute(4.5), $0) }
        #expect(sought.position(at: monotonicNanoseconds()) == 4.5)
        _ = try player.run { .resume($0) }
        #expect(player.waitUntilStopped(timeout: 6))
    }
}
