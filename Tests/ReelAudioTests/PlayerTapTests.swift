// Recording what plays: the player's tap gives the decoded frames once each, as they are heard.

import Foundation
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing
import ReelTestSupport

@Suite struct PlayerTapTests {
    typealias Harness = PlaybackEngineTests.Harness

    /// A capture engine recording the harness's player into a FLAC file.
    func recordPlayer(_ harness: Harness, to path: String, format: PCMFormat) throws -> (CaptureEngine, PlayerTapInput) {
        let input = PlayerTapInput(tap: harness.engine.tap, logger: Logger(label: "test"))
        let engine = CaptureEngine(device: input, logger: Logger(label: "test"))
        try engine.start(
            CaptureRequest(path: path, codec: "flac", format: format), onProgress: { _ in }, onEnd: { _ in })
        return (engine, input)
    }

    func decode(_ path: String) throws -> [Int16] {
        try TestAudio.decodeAll(try SndFileReader(path: path))
    }

    /// Frames in = frames in the take: a tone played through pauses and a volume change (each
    /// drops what the device queued and decodes it again) is in the take exactly once, sample
    /// for sample, at full level whatever the volume.
    @Test func theTakeHoldsEveryFrameHeardOnceBeforeTheVolume() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = UnseekableTone(seconds: 3)
        let harness = Harness()
        harness.device.script {
            $0.delayFrames = 2048
            $0.dropDiscardsQueued = true
            $0.writeDelayMicroseconds = 20_000
        }
        let take = directory.appendingPathComponent("take.flac").path
        let format = PCMFormat(sample: .s16, sampleRate: 44100, channels: 2)
        let (engine, input) = try recordPlayer(harness, to: take, format: format)
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 20) { $0.position(at: monotonicNanoseconds()) > 0.5 })
        _ = try harness.run(timeout: 10) { .setGain(volume: 40, muted: false, $0) }.get()
        #expect(harness.waitUntil(timeout: 20) { $0.position(at: monotonicNanoseconds()) > 1 })
        _ = try harness.run(timeout: 10) { .pause($0) }.get()
        for _ in 0..<3 {
            _ = try harness.run(timeout: 10) { .resume($0) }.get()
            usleep(100_000)
            _ = try harness.run(timeout: 10) { .pause($0) }.get()
        }
        harness.device.script { $0.delayFrames = 0 }
        _ = try harness.run(timeout: 10) { .resume($0) }.get()
        #expect(harness.waitUntil(timeout: 30) { $0.activity == .stopped })
        #expect(waitUntil(seconds: 30) { engine.snapshot.writtenFrames == input.deliveredFrames })
        engine.stop()
        #expect(input.droppedFrames == 0)
        let recorded = try decode(take)
        let first = zip(recorded, tone.samples).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(
            recorded.count == tone.samples.count && first == nil,
            "\(recorded.count / 2) frames recorded of \(tone.samples.count / 2); first difference at sample \(first.map(String.init) ?? "the end")")
        // The device heard the volume (40 %): the take did not.
        #expect(recorded.max() ?? 0 > 16000 / 2)
    }

    /// A seek back plays a stretch again: the take has it twice, in the order it played.
    @Test func aSeekBackIsRecordedAsItPlayed() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = UnseekableTone(seconds: 2)
        let harness = Harness()
        harness.device.script {
            $0.delayFrames = 2048
            $0.dropDiscardsQueued = true
            $0.writeDelayMicroseconds = 20_000
        }
        let take = directory.appendingPathComponent("seek.flac").path
        let (engine, input) = try recordPlayer(harness, to: take, format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 20) { $0.position(at: monotonicNanoseconds()) > 1 })
        let sought = try harness.run(timeout: 10) { .seek(.relative(-0.37), $0) }.get()
        let landed = Int(sought.audibleFrame)
        harness.device.script { $0.delayFrames = 0 }
        #expect(harness.waitUntil(timeout: 30) { $0.activity == .stopped })
        // Everything the tap gave (more than the tone: a stretch twice) is in the take.
        #expect(waitUntil(seconds: 30) { engine.snapshot.writtenFrames == input.deliveredFrames })
        engine.stop()
        let recorded = try decode(take)
        // The take is the tone up to where the seek was heard, then the tone from where it
        // landed to its end: each stretch sample for sample, in the order it played.
        let frames = recorded.count / 2
        let toneFrames = tone.samples.count / 2
        var heardBefore = 0
        while heardBefore < min(frames, toneFrames), recorded[2 * heardBefore] == tone.samples[2 * heardBefore],
              recorded[2 * heardBefore + 1] == tone.samples[2 * heardBefore + 1]
        {
            heardBefore += 1
        }
        let resumedAt = toneFrames - (frames - heardBefore)
        #expect(resumedAt < heardBefore && resumedAt >= 0, "\(frames) frames: the tone to \(heardBefore), then from \(resumedAt)")
        guard resumedAt >= 0, resumedAt < heardBefore else { return }
        let rest = recorded[(heardBefore * 2)...]
        let first = zip(rest, tone.samples[(resumedAt * 2)...]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(first == nil, "after the seek the take differs from the tone at sample \(first ?? 0) (from \(resumedAt))")
        // It resumed where the player landed (0.37 s back: not a multiple of the tone's
        // 4,410-frame period, so the join shows), within a device buffer.
        #expect(abs(resumedAt - landed) <= 2048, "resumed at \(resumedAt), the player landed at \(landed)")
    }

    /// A recorder that does not keep up never holds the player back: what does not fit the
    /// tap's ring is dropped and counted, and playback runs to its end.
    @Test func aRecorderThatFallsBehindDropsFramesAndNeverStallsPlayback() throws {
        let tone = UnseekableTone(seconds: 3)
        let harness = Harness()
        let input = PlayerTapInput(tap: harness.engine.tap, ringSeconds: 0.1, logger: Logger(label: "test"))
        // Opened (attached) and never read.
        _ = try input.open(PCMFormat(sample: .s16, sampleRate: 44100, channels: 2), timing: PCMTiming())
        defer { input.close() }
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 30) { $0.activity == .stopped })
        #expect(harness.device.state.framesWritten == tone.samples.count / 2)
        // The ring holds 4,410 frames; the rest were dropped.
        #expect(input.droppedFrames == Int64(tone.samples.count / 2 - 4410), "\(input.droppedFrames) dropped")
    }

    /// Frames the tap drops are an overrun, as a capture device's: the read after a drop
    /// answers -EPIPE once (and the drop is logged); after `prepare` the frames the ring holds
    /// are read, then nothing more.
    @Test func aReadAfterDroppedFramesIsAnOverrun() throws {
        let tone = UnseekableTone(seconds: 1)
        let harness = Harness()
        let input = PlayerTapInput(tap: harness.engine.tap, ringSeconds: 0.1, logger: Logger(label: "test"))
        _ = try input.open(PCMFormat(sample: .s16, sampleRate: 44100, channels: 2), timing: PCMTiming())
        defer { input.close() }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8820 * 4, alignment: 16)
        defer { buffer.deallocate() }
        #expect(input.read(into: buffer, frames: 8820) == -Int(EAGAIN))
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 30) { $0.activity == .stopped })
        #expect(input.droppedFrames == Int64(tone.samples.count / 2 - 4410))
        #expect(input.read(into: buffer, frames: 8820) == -Int(EPIPE))
        #expect(input.prepare() == 0)
        #expect(input.read(into: buffer, frames: 8820) == 4410)
        #expect(input.read(into: buffer, frames: 8820) == -Int(EAGAIN))
    }

    /// A recording of what plays counts the frames the tap dropped in its overruns: the engine
    /// reads nothing while the player plays a tone into a tap ring of a tenth of a second, then
    /// finds the overrun, counts it once, and records what the ring held.
    @Test func framesTheTapDroppedAreTheRecordingsOverruns() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = UnseekableTone(seconds: 1)
        let harness = Harness()
        let input = HeldInput(PlayerTapInput(tap: harness.engine.tap, ringSeconds: 0.1, logger: Logger(label: "test")))
        let engine = CaptureEngine(device: input, logger: Logger(label: "test"))
        let take = directory.appendingPathComponent("dropped.flac").path
        try engine.start(
            CaptureRequest(path: take, codec: "flac", format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2)),
            onProgress: { _ in }, onEnd: { _ in })
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 30) { $0.activity == .stopped })
        #expect(engine.snapshot.overruns == 0)
        input.release()
        #expect(waitUntil(seconds: 30) { engine.snapshot.overruns == 1 && engine.snapshot.capturedFrames == 4410 })
        engine.stop()
        #expect(input.inner.droppedFrames == Int64(tone.samples.count / 2 - 4410))
        #expect(try decode(take).count == 4410 * 2)
    }

    /// Nothing plays, nothing is recorded: the session's clock stands still while paused.
    @Test func pausedPlaysNothingIntoTheTake() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let tone = UnseekableTone(seconds: 2)
        let harness = Harness()
        harness.device.script { $0.writeDelayMicroseconds = 20_000 }
        let take = directory.appendingPathComponent("paused.flac").path
        let (engine, _) = try recordPlayer(harness, to: take, format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: false, $0) }.get()
        usleep(600_000)
        #expect(engine.snapshot.capturedFrames == 0)
        engine.stop()
        #expect(try decode(take).isEmpty)
    }

    /// A track in another format than the take's is converted: mono 22,050 Hz into a stereo
    /// 44,100 Hz take gives twice the frames (libsoxr), each channel the source's.
    @Test func anotherFormatIsConvertedToTheTakes() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("mono.wav").path
        _ = try TestAudio.writeTone(to: source, codec: "wav", seconds: 1, rate: 22050, channels: 1)
        let harness = Harness()
        harness.device.script { $0.writeDelayMicroseconds = 5_000 }
        let take = directory.appendingPathComponent("converted.flac").path
        let (engine, input) = try recordPlayer(harness, to: take, format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        _ = try harness.load(source)
        #expect(harness.waitUntil(timeout: 30) { $0.activity == .stopped })
        #expect(waitUntil(seconds: 30) { engine.snapshot.writtenFrames == input.deliveredFrames && input.deliveredFrames > 0 })
        engine.stop()
        let recorded = try decode(take)
        let frames = recorded.count / 2
        #expect(abs(frames - 44100) < 2048, "\(frames) frames for 1 s at 44,100 Hz")
        // Each channel the mono source's (libsoxr dithers each on its own: a step apart at most).
        #expect((0..<frames).allSatisfy { abs(Int(recorded[2 * $0]) - Int(recorded[2 * $0 + 1])) <= 2 })
        #expect(recorded.contains { abs(Int($0)) > 8000 }, "the converted tone is silent")
    }
}

/// A capture input that reads nothing (-EAGAIN) until `release()`: the tap behind it fills
/// meanwhile, as when the recorder falls behind.
private final class HeldInput: PCMInput, @unchecked Sendable {
    let inner: PlayerTapInput
    private let released = Locked(false)
    var name: String { inner.name }

    init(_ inner: PlayerTapInput) { self.inner = inner }

    func release() { released.withLock { $0 = true } }

    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        try inner.open(format, timing: timing)
    }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        released.current ? inner.read(into: buffer, frames: frames) : -Int(EAGAIN)
    }

    func prepare() -> Int32 { inner.prepare() }
    func resume() -> Int32 { inner.resume() }
    func drop() { inner.drop() }
    func wait(timeoutMilliseconds: Int) -> Int32 { inner.wait(timeoutMilliseconds: timeoutMilliseconds) }
    func close() { inner.close() }
}
