// The source seam: the engine plays a source that cannot seek as it plays a file, going back to
// the audible frame from what it keeps of it.

import Foundation
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// A tone that comes as it is read and refuses every seek, as a stream does.
final class UnseekableTone: AudioFileReader {
    let path = "test:unseekable-tone"
    let format = AudioFormat(codec: "wav", sampleRate: 44100, channels: 2)
    let pcmFormat = PCMFormat(sample: .s16, sampleRate: 44100, channels: 2)
    let frameCount: Int64? = nil
    let samples: [Int16]
    private var next = 0
    private(set) var seeks = 0
    var canSeek: Bool { false }

    init(seconds: Double) {
        samples = TestAudio.toneSamples(seconds: seconds, rate: 44100, channels: 2)
    }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        let count = min(frames, (samples.count - next) / 2)
        samples.withUnsafeBytes { raw in
            buffer.copyMemory(from: raw.baseAddress! + next * 2, byteCount: count * 4)
        }
        next += count * 2
        return count
    }

    func seek(to frame: Int64) throws(ReelError) {
        seeks += 1
        throw ReelError(.notSeekable, "a stream cannot seek")
    }
}

@Suite struct NonSeekableSourceTests {
    /// The engine with a fake device (`PlaybackEngineTests.Harness`), given the longer waits
    /// these paced plays need.
    typealias Harness = PlaybackEngineTests.Harness

    func bytes(_ samples: [Int16]) -> [UInt8] { samples.withUnsafeBytes { Array($0) } }

    @Test func pauseAndResumeOnASourceThatCannotSeekLoseAndRepeatNothing() throws {
        let tone = UnseekableTone(seconds: 2)
        let harness = Harness()
        // A device that queues 2,048 frames, drops them on a pause (they are never heard), and
        // takes about real time.
        harness.device.script {
            $0.delayFrames = 2048
            $0.dropDiscardsQueued = true
            $0.writeDelayMicroseconds = 20_000
        }
        let started = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(started.activity == .playing)
        #expect(harness.waitUntil(timeout: 20) { $0.position(at: monotonicNanoseconds()) > 0.3 })
        let paused = try harness.run(timeout: 10) { .pause($0) }.get()
        #expect(paused.activity == .paused)
        harness.device.script { $0.writeDelayMicroseconds = 0 }
        // Paused again and again: each time back to the frame heard, from what is kept.
        for _ in 0..<3 {
            _ = try harness.run(timeout: 10) { .resume($0) }.get()
            _ = try harness.run(timeout: 10) { .pause($0) }.get()
        }
        // To the end, where a real device has played out what it queued (the fake's delay
        // would otherwise stay, and the end's drop take it back).
        harness.device.script { $0.delayFrames = 0 }
        _ = try harness.run(timeout: 10) { .resume($0) }.get()
        #expect(harness.waitUntil(timeout: 20) { $0.activity == .stopped })
        #expect(tone.seeks == 0, "the source was asked to seek")
        let written = harness.device.state.written
        let expected = bytes(tone.samples)
        let first = zip(written, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(written.count == expected.count && first == nil, "\(written.count) bytes heard of \(expected.count); first difference at \(first.map(String.init) ?? "the end")")
    }

    @Test func aSeekWithinWhatIsKeptLandsAndOneBeyondItIsNotSeekableWhilePlayingGoesOn() throws {
        let tone = UnseekableTone(seconds: 6)
        let harness = Harness()
        harness.device.script { $0.writeDelayMicroseconds = 4_000 }
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 20) { $0.position(at: monotonicNanoseconds()) > 3 })
        // Back half a second: within the 2 s kept.
        let back = try harness.run(timeout: 10) { .seek(.relative(-0.5), $0) }.get()
        #expect(back.activity == .playing)
        // Back to the start: long gone.
        let refused = harness.run(timeout: 10) { .seek(.absolute(0), $0) }
        guard case .failure(let error) = refused else {
            Issue.record("a seek to the start of a stream 3 s in was carried out")
            return
        }
        #expect(error.reason == .notSeekable, "\(error)")
        #expect(harness.engine.snapshot.activity == .playing)
        #expect(harness.engine.snapshot.error == nil)
        // Forward, past what was decoded: refused too.
        if case .success = harness.run(timeout: 10, { .seek(.relative(30), $0) }) { Issue.record("a seek ahead of a stream was carried out") }
        #expect(harness.waitUntil(timeout: 20) { $0.activity == .stopped })
        #expect(tone.seeks == 0)
    }

    @Test func theRewindBufferReplaysExactlyWhatWasDecodedAndRefusesWhatItDoesNotHold() throws {
        let tone = UnseekableTone(seconds: 1)
        let reader = RewindableReader(tone, capacity: 10_000)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 44100 * 4, alignment: 16)
        defer { buffer.deallocate() }
        // Read 30,000 frames in odd pieces, then go back 7,000 and read on across the ring's end.
        var read = 0
        while read < 30_000 { read += try reader.read(into: buffer, frames: min(4_093, 30_000 - read)) }
        try reader.seek(to: 23_000)
        var replayed: [Int16] = []
        while replayed.count / 2 < 10_000 {
            let count = try reader.read(into: buffer, frames: min(3_001, 10_000 - replayed.count / 2))
            replayed += UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: Int16.self), count: count * 2)
        }
        #expect(Array(replayed.prefix(20_000)) == Array(tone.samples[46_000..<66_000]))
        #expect(reader.canSeek(to: 33_000 - 10_000) && !reader.canSeek(to: 22_999) && !reader.canSeek(to: 33_001))
        #expect(throws: ReelError.self) { try reader.seek(to: 0) }
        #expect(tone.seeks == 0)
    }
}
