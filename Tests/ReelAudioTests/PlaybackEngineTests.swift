import Foundation
import Glibc
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// The engine's policy, with a fake device that accepts writes instantly or at a chosen pace and
/// injects errors. Real libsndfile decodes real files.
@Suite struct PlaybackEngineTests {
    let directory = TestAudio.temporaryDirectory()

    /// Collects change callbacks and lets a test wait for a condition on the snapshot.
    final class Harness: @unchecked Sendable {
        let device = FakeOutput()
        let changes = Locked<[PlaybackSnapshot]>([])
        var engine: PlaybackEngine!

        init() {
            engine = PlaybackEngine(device: device, logger: Logger(label: "test")) { [changes] snapshot in
                changes.withLock { $0.append(snapshot) }
            }
            engine.start()
        }

        deinit { engine.shutdown() }

        /// Sends a command and waits for its reply (at most `timeout` seconds).
        func run(
            timeout: Double = 5, _ make: (@escaping PlaybackCommand.Reply) -> PlaybackCommand
        ) -> Result<PlaybackSnapshot, ReelError> {
            let box = Locked<Result<PlaybackSnapshot, ReelError>?>(nil)
            engine.send(make { result in box.withLock { $0 = result } })
            for _ in 0..<Int(timeout * 100) {
                if let result = box.current { return result }
                usleep(10_000)
            }
            fatalError("the engine did not reply within \(timeout) s")
        }

        func load(_ path: String, startFrame: Int64 = 0, play: Bool = true) throws -> PlaybackSnapshot {
            let reader = try AudioFileOpener.open(path: path)
            return try run { .load(ReaderBox(reader), token: 1, startFrame: startFrame, startPlaying: play, $0) }.get()
        }

        func waitUntil(timeout: Double = 5, _ condition: (PlaybackSnapshot) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if condition(engine.snapshot) { return true }
                usleep(5_000)
            }
            return false
        }
    }

    func pcmBytes(of samples: [Int16]) -> [UInt8] {
        samples.withUnsafeBytes { Array($0) }
    }

    /// Compares audio byte for byte without printing megabytes when it fails.
    func expectSameBytes(_ actual: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let firstDifference = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        let same = actual.count == expected.count && firstDifference == nil
        #expect(same, "got \(actual.count) bytes, expected \(expected.count); first difference at \(firstDifference.map(String.init) ?? "the end")", sourceLocation: sourceLocation)
    }

    @Test func playingToTheEndWritesEveryFrameThenStops() throws {
        let path = directory.appendingPathComponent("a.wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let harness = Harness()
        let started = try harness.load(path)
        #expect(started.activity == .playing)
        #expect(harness.waitUntil { $0.activity == .stopped })
        expectSameBytes(harness.device.state.written, pcmBytes(of: samples))
        #expect(harness.device.state.calls.contains("close"))
    }

    @Test func pauseHoldsThePositionAndResumeContinuesExactly() throws {
        let path = directory.appendingPathComponent("b.wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 2)
        let harness = Harness()
        // About real time: 1024 frames every 23 ms.
        harness.device.script { $0.writeDelayMicroseconds = 23_000 }
        _ = try harness.load(path)
        usleep(300_000)
        let paused = try harness.run { .pause($0) }.get()
        #expect(paused.activity == .paused)
        let heldAt = paused.position(at: monotonicNanoseconds())
        #expect(heldAt > 0.1 && heldAt < 1.0, "paused at \(heldAt)")
        usleep(200_000)
        #expect(harness.engine.snapshot.position(at: monotonicNanoseconds()) == heldAt)
        harness.device.script { $0.writeDelayMicroseconds = 0 }
        _ = try harness.run { .resume($0) }.get()
        #expect(harness.waitUntil { $0.activity == .stopped })
        // With no device delay the audible frame is the written one: nothing skipped or repeated.
        expectSameBytes(harness.device.state.written, pcmBytes(of: samples))
    }

    @Test func seekGoesToTheExactFrame() throws {
        let path = directory.appendingPathComponent("c.wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 3)
        let harness = Harness()
        _ = try harness.load(path, play: false)
        let sought = try harness.run { .seek(.absolute(2.5), $0) }.get()
        #expect(sought.position(at: monotonicNanoseconds()) == 2.5)
        #expect(sought.activity == .paused)
        _ = try harness.run { .resume($0) }.get()
        #expect(harness.waitUntil { $0.activity == .stopped })
        let from = 2.5 * 44100 * 2
        expectSameBytes(harness.device.state.written, pcmBytes(of: Array(samples[Int(from)...])))
    }

    @Test func seekOutsideTheTrackIsOutOfRangeAndRelativeSeekClamps() throws {
        let path = directory.appendingPathComponent("d.wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let harness = Harness()
        _ = try harness.load(path, play: false)
        let result = harness.run { .seek(.absolute(5), $0) }
        #expect(throws: ReelError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.reason == .outOfRange) }
        let back = try harness.run { .seek(.relative(-10), $0) }.get()
        #expect(back.position(at: monotonicNanoseconds()) == 0)
        let forward = try harness.run { .seek(.relative(+10), $0) }.get()
        #expect(forward.position(at: monotonicNanoseconds()) == 1)
    }

    @Test func commandsWithNothingLoadedSayNotPlaying() {
        let harness = Harness()
        for make in [{ PlaybackCommand.pause($0) }, { .resume($0) }, { .seek(.relative(1), $0) }] as [(@escaping PlaybackCommand.Reply) -> PlaybackCommand] {
            let result = harness.run(make)
            guard case .failure(let error) = result else {
                Issue.record("expected not_playing")
                continue
            }
            #expect(error.reason == .notPlaying)
        }
    }

    @Test func underrunIsRecoveredAndCounted() throws {
        let path = directory.appendingPathComponent("e.wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let harness = Harness()
        harness.device.script { $0.writeResults = [Int(-EPIPE), Int(-EPIPE), Int(-EAGAIN), Int(-EINTR)] }
        _ = try harness.load(path)
        #expect(harness.waitUntil { $0.activity == .stopped })
        #expect(harness.engine.snapshot.counters.xruns == 2)
        expectSameBytes(harness.device.state.written, pcmBytes(of: samples))
    }

    /// An underrun reported while the device still holds 3,000 frames; every frame is heard
    /// once, in order, whatever its prepare does with them. PulseAudio's plugin reports its
    /// server's underflow at a later write, when the server holds what was written since, and
    /// its prepare drops that (`prepareDrops`): it is written again from the frame heard last (a
    /// CI run heard 0.5 s less than it counted: the position jumped ahead of the sound, then
    /// held still). PipeWire's plugin keeps its stream and plays them: nothing is written again.
    @Test(arguments: [true, false])
    func underrunIsHeardOnceWhateverThePrepareDoesWithWhatTheDeviceHeld(prepareDrops: Bool) throws {
        let path = directory.appendingPathComponent("underrun-\(prepareDrops).wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let harness = Harness()
        harness.device.script {
            $0.delayFrames = 3000
            $0.underrunAfterFrames = 6000
            $0.prepareDropsQueued = prepareDrops
        }
        _ = try harness.load(path)
        #expect(harness.waitUntil { $0.activity == .stopped })
        #expect(harness.engine.snapshot.counters.xruns == 1)
        #expect(harness.device.state.calls.contains("write \(-Int(EPIPE))"))
        expectSameBytes(harness.device.state.written, pcmBytes(of: samples))
    }

    /// ReplayGain changed while a track plays (a mode or preamp set mid-track): heard from the
    /// frame being heard, ramped over 5 ms from the level heard (no step), then held to the
    /// end; no frame lost or doubled. The device is full at frame 30,000 until the change is
    /// made, so the change lands there whatever the machine's speed.
    @Test func aReplayGainChangeWhilePlayingRampsFromTheFrameHeard() throws {
        let path = directory.appendingPathComponent("constant.wav").path
        let frames = 60_000
        let writer = try SndFileWriter(path: path, codec: "wav", format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        let samples = [Int16](repeating: 8000, count: frames * 2)
        try samples.withUnsafeBytes { raw in try writer.write(raw.baseAddress!, frames: frames) }
        try writer.close()
        let harness = Harness()
        harness.device.script { $0.fullAfterFrames = 30_000 }
        _ = try harness.load(path)
        #expect(harness.waitUntil { _ in harness.device.state.framesWritten >= 30_000 })
        _ = try harness.run { .setReplayGain([1: 0.5], $0) }.get()
        harness.device.script { $0.fullAfterFrames = nil }
        #expect(harness.waitUntil { $0.activity == .stopped })
        let got = harness.device.state.written.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(got.count == frames * 2, "the device got \(got.count / 2) frames of \(frames)")
        guard got.count == frames * 2 else { return }
        let left = stride(from: 0, to: got.count, by: 2).map { Int(got[$0]) }
        // The change lands at the frame written when the device filled (writes are whole
        // periods: at most a period past 30,000).
        let changed = left.firstIndex { $0 != 8000 } ?? frames
        #expect(changed >= 30_000 && changed <= 30_000 + 1024, "the first frame changed is \(changed)")
        let rampFrames = 44100 * GainStage.rampMilliseconds / 1000
        guard changed + rampFrames < frames else { return }
        let ramp = left[changed..<(changed + rampFrames)]
        #expect(ramp.first.map { $0 > 7800 && $0 < 8000 } == true, "the change began at \(ramp.first ?? 0), not with a small step")
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $1 <= $0 + 1 }, "the ramp goes up")
        #expect(left[(changed + rampFrames)...].allSatisfy { abs($0 - 4000) <= 1 }, "the new level is not held to the end")
    }

    /// The underrun's measurement finds the lined-up track audible (the server played on into
    /// it before it ran dry): that new audible track is announced (`onChange`), as every track
    /// that becomes audible is, and it is written again from the frame heard last.
    @Test func underrunThatFindsTheNextTrackAudibleAnnouncesIt() throws {
        let first = directory.appendingPathComponent("e3.wav").path
        let second = directory.appendingPathComponent("e4.wav").path
        let samples = try TestAudio.writeTone(to: first, codec: "wav", seconds: 0.2)
        let following = try TestAudio.writeTone(to: second, codec: "wav", seconds: 1, amplitude: 0.3)
        let harness = Harness()
        harness.device.script {
            $0.delayFrames = 9000
            $0.underrunAfterFrames = 12000
            $0.delayAtUnderrun = 3000
            $0.prepareDropsQueued = true
        }
        _ = try harness.load(first, play: false)
        let next = TrackBox(try AudioFileOpener.open(path: second), token: 2)
        _ = try harness.run { .lineUp(after: 1, next: next, $0) }.get()
        _ = try harness.run { .resume($0) }.get()
        #expect(harness.waitUntil { $0.activity == .stopped })
        #expect(harness.engine.snapshot.counters.xruns == 1)
        #expect(harness.device.state.calls.contains("write \(-Int(EPIPE))"))
        #expect(harness.changes.current.contains { $0.token == 2 && $0.activity == .playing })
        expectSameBytes(harness.device.state.written, pcmBytes(of: samples) + pcmBytes(of: following))
    }

    @Test func suspendIsResumed() throws {
        let path = directory.appendingPathComponent("f.wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let harness = Harness()
        harness.device.script {
            $0.writeResults = [Int(-ESTRPIPE)]
            $0.resumeResults = [-EAGAIN, 0]
        }
        _ = try harness.load(path)
        #expect(harness.waitUntil { $0.activity == .stopped })
        #expect(harness.engine.snapshot.counters.suspends == 1)
        expectSameBytes(harness.device.state.written, pcmBytes(of: samples))
    }

    /// ENODEV: the USB DAC was unplugged; EIO: the device failed.
    @Test(arguments: [ENODEV, EIO])
    func deviceThatVanishesPausesWithAnErrorAndResumesWhenBack(code: Int32) throws {
        let path = directory.appendingPathComponent("g-\(code).wav").path
        let samples = try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let harness = Harness()
        harness.device.script { $0.writeResults = [Int(-code)] }
        _ = try harness.load(path)
        #expect(harness.waitUntil { $0.activity == .paused })
        let failed = harness.engine.snapshot
        #expect(failed.error?.reason == .deviceUnavailable)
        #expect(failed.error?.message.contains("fake") == true)
        #expect(!harness.device.state.isOpen)

        // Still gone: resume fails and the player stays paused.
        harness.device.script { $0.openError = ReelError(.deviceUnavailable, "cannot open ALSA device \"fake\": No such device") }
        let refused = harness.run { .resume($0) }
        guard case .failure(let error) = refused else {
            Issue.record("resume should fail while the device is gone")
            return
        }
        #expect(error.reason == .deviceUnavailable)
        #expect(harness.engine.snapshot.activity == .paused)

        // Back: resume plays the rest, and the error is cleared.
        harness.device.script { $0.openError = nil }
        let resumed = try harness.run { .resume($0) }.get()
        #expect(resumed.error == nil)
        #expect(harness.waitUntil { $0.activity == .stopped })
        expectSameBytes(harness.device.state.written, pcmBytes(of: samples))
    }

    @Test func deviceThatCannotOpenFailsThePlayCommand() throws {
        let path = directory.appendingPathComponent("h.wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 1)
        let harness = Harness()
        harness.device.script { $0.openError = ReelError(.deviceBusy, "cannot open ALSA device \"fake\": Device or resource busy") }
        #expect(throws: ReelError(.deviceBusy, "cannot open ALSA device \"fake\": Device or resource busy")) {
            try harness.load(path)
        }
        #expect(harness.engine.snapshot.activity == .stopped)
    }

    @Test func stopDropsQueuedAudioAndClosesTheDevice() throws {
        let path = directory.appendingPathComponent("i.wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 2)
        let harness = Harness()
        harness.device.script { $0.writeDelayMicroseconds = 23_000 }
        _ = try harness.load(path)
        usleep(100_000)
        let stopped = try harness.run { .stop($0) }.get()
        #expect(stopped.activity == .stopped)
        #expect(stopped.position(at: monotonicNanoseconds()) == 0)
        let calls = harness.device.state.calls
        #expect(calls.suffix(2) == ["drop", "close"])
    }

    @Test func positionIsWrittenFramesMinusDeviceDelay() throws {
        let path = directory.appendingPathComponent("j.wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 2)
        let harness = Harness()
        harness.device.script {
            $0.writeDelayMicroseconds = 23_000
            $0.delayFrames = 4410
        }
        _ = try harness.load(path)
        usleep(300_000)
        let snapshot = harness.engine.snapshot
        #expect(snapshot.audibleFrame == snapshot.writtenFrame - 4410)
    }
}
