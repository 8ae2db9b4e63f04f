// The engine and a source that waits for the network (a stream's underrun): the silence it
// plays meanwhile is no part of the source's frames, so the position does not count it, even
// on a device that takes frames as fast as they come; and a source that can go back further
// than what the engine keeps of it (a stream's buffer) is asked to, with its own refusal.

import Foundation
import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// A tone that has nothing to give (waiting for data) for its first `waits` reads and again
/// after `seconds` of tone, as a stream that stalls; it can go back to any frame it gave, and
/// refuses others with `out_of_range`.
final class StallingTone: AudioFileReader {
    let path = "test:stalling-tone"
    let format = AudioFormat(codec: "mp3", sampleRate: 44100, channels: 2)
    let pcmFormat = PCMFormat(sample: .s16, sampleRate: 44100, channels: 2)
    let frameCount: Int64? = nil
    let samples: [Int16]
    private var waits: Int
    private var next = 0
    private var given = 0
    private(set) var seeks: [Int64] = []
    private(set) var isWaitingForData = false
    var canSeek: Bool { false }

    init(seconds: Double, waits: Int) {
        samples = TestAudio.toneSamples(seconds: seconds, rate: 44100, channels: 2)
        self.waits = waits
    }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        if waits > 0 || next * 2 >= samples.count {
            waits -= 1
            isWaitingForData = true
            return 0
        }
        isWaitingForData = false
        let count = min(frames, samples.count / 2 - next)
        samples.withUnsafeBytes { raw in buffer.copyMemory(from: raw.baseAddress! + next * 4, byteCount: count * 4) }
        next += count
        given = max(given, next)
        return count
    }

    func canSeek(to frame: Int64) -> Bool { frame >= 0 && frame <= Int64(given) }

    func seekRefusal(to frame: Int64) -> ReelError {
        ReelError(.outOfRange, "only the frames given are kept")
    }

    func seek(to frame: Int64) throws(ReelError) {
        guard canSeek(to: frame) else { throw seekRefusal(to: frame) }
        seeks.append(frame)
        next = Int(frame)
    }
}

@Suite struct StreamGapTests {
    typealias Harness = PlaybackEngineTests.Harness

    @Test func silencePlayedWhileTheSourceWaitsIsNotCountedInThePosition() throws {
        // Waits 50 reads, gives 1 s, then waits for ever (a stream whose server went away).
        let tone = StallingTone(seconds: 1, waits: 50)
        let harness = Harness()
        // A device that takes everything at once (as ALSA's `null`): nothing paces the silence.
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        // Far more written than the tone (silence), while the position stays at the tone's frames.
        #expect(harness.waitUntil(timeout: 30) { _ in harness.device.state.framesWritten > 5 * 44100 })
        let snapshot = harness.engine.snapshot
        #expect(snapshot.activity == .playing)
        let position = snapshot.position(at: monotonicNanoseconds())
        #expect(position == 1.0, "the position counted the silence: \(position) s after \(harness.device.state.framesWritten) frames")
        // What the device got: silence, the whole tone, silence.
        let written = harness.device.state.written.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(written.prefix(64).allSatisfy { $0 == 0 }, "silence came first")
        // (The tone's first frame is 0, part of the silence before it.)
        let silence = [Int16](repeating: 0, count: 128)
        #expect(Self.withoutSilence(written) == Self.withoutSilence(silence + tone.samples + silence))
    }

    @Test func audioAfterAWaitIsNotQueuedBehindTheSilence() throws {
        // Waits 50 reads, gives 1 s, then waits for ever; the device always has 500 frames queued
        // and a drop takes them back (they are never heard).
        let tone = StallingTone(seconds: 1, waits: 50)
        let harness = Harness()
        harness.device.script { state in
            state.delayFrames = 500
            state.dropDiscardsQueued = true
        }
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 30) { _ in harness.device.state.framesWritten > 3 * 44100 })
        // When the tone came, the listener heard silence: the silence queued was dropped (once:
        // the load opened the device fresh, nothing else drops) and the tone written at once.
        let drops = harness.device.state.calls.filter { $0 == "drop" }.count
        #expect(drops == 1, "calls: \(harness.device.state.calls)")
        let position = harness.engine.snapshot.position(at: monotonicNanoseconds())
        #expect(position == 1.0, "the position counted the silence: \(position) s")
        // What was heard: silence, the whole tone once, silence.
        let written = harness.device.state.written.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let silence = [Int16](repeating: 0, count: 128)
        #expect(Self.withoutSilence(written) == Self.withoutSilence(silence + tone.samples + silence))
    }

    /// Stereo `samples` without runs of 32 or more frames of exact silence.
    static func withoutSilence(_ samples: [Int16]) -> [Int16] {
        var out: [Int16] = []
        var index = 0
        let frames = samples.count / 2
        while index < frames {
            var end = index
            while end < frames && samples[2 * end] == 0 && samples[2 * end + 1] == 0 { end += 1 }
            if end - index >= 32 {
                index = end
                continue
            }
            let stop = max(end, index + 1)
            out += samples[(2 * index)..<(2 * stop)]
            index = stop
        }
        return out
    }

    @Test func aSeekBeyondWhatTheEngineKeepsIsTheSourcesAndItsRefusalIsKept() throws {
        let tone = StallingTone(seconds: 8, waits: 0)
        let harness = Harness()
        harness.device.script { $0.writeDelayMicroseconds = 4_000 }
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 30) { $0.position(at: monotonicNanoseconds()) > 4 })
        // Back to 0.5 s: long out of the 2 s the engine keeps, but the source has it.
        let back = try harness.run(timeout: 10) { .seek(.absolute(0.5), $0) }.get()
        #expect(back.activity == .playing)
        #expect(tone.seeks == [22050])
        // Ahead of what the source gave: its own refusal, out_of_range; playing goes on.
        guard case .failure(let error) = harness.run(timeout: 10, { .seek(.absolute(7.9), $0) }) else {
            Issue.record("a seek past what the source gave was carried out")
            return
        }
        #expect(error.reason == .outOfRange, "\(error)")
        #expect(harness.engine.snapshot.activity == .playing)
    }
}
