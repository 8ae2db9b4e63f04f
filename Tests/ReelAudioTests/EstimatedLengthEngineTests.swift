import Foundation
import Logging
import ReelModel
import Synchronization
import Testing

@testable import ReelAudio
import ReelTestSupport

/// A track whose length is an estimate until its frames are counted (an MP3 without a Xing/Info
/// tag): the engine shows the estimate, does not hold seeks to it, and publishes the count when
/// it comes, playing or paused.
@Suite struct EstimatedLengthEngineTests {
    let directory = TestAudio.temporaryDirectory()

    /// A WAV file whose length is "being counted" until `finishCount()`, with a scripted estimate.
    final class CountingReader: AudioFileReader, @unchecked Sendable {
        let inner: AudioFileReader
        let estimate: Int64
        private let counted = Atomic<Bool>(false)

        init(_ inner: AudioFileReader, estimate: Int64) {
            self.inner = inner
            self.estimate = estimate
        }

        var path: String { inner.path }
        var format: AudioFormat { inner.format }
        var pcmFormat: PCMFormat { inner.pcmFormat }
        var frameCount: Int64? { counted.load(ordering: .acquiring) ? inner.frameCount : nil }
        var frameCountIsFinal: Bool { counted.load(ordering: .acquiring) }
        var estimatedFrameCount: Int64? { estimate }
        func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
            try inner.read(into: buffer, frames: frames)
        }
        func seek(to frame: Int64) throws(ReelError) { try inner.seek(to: frame) }
        func finishCount() { counted.store(true, ordering: .releasing) }
    }

    /// The engine with a fake device.
    typealias Harness = PlaybackEngineTests.Harness

    /// A 4 s WAV at 44.1 kHz, said to be 1 s long until it is counted.
    func countingReader(_ name: String) throws -> CountingReader {
        let path = directory.appendingPathComponent("\(name).wav").path
        try TestAudio.writeTone(to: path, codec: "wav", seconds: 4)
        return CountingReader(try AudioFileOpener.open(path: path), estimate: 44100)
    }

    @Test func theEstimateIsShownSeeksGoPastItAndTheCountIsPublishedWhilePlaying() throws {
        let reader = try countingReader("playing")
        let harness = Harness()
        // About real time: 1024 frames every 23 ms.
        harness.device.script { $0.writeDelayMicroseconds = 23_000 }
        let started = try harness.run { .load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(started.frameCount == 44100)
        #expect(started.frameCountIsEstimate)
        #expect(started.duration == 1)
        // Past the estimate, inside the file: lands there, not `out_of_range`, not held to 1 s.
        let sought = try harness.run { .seek(.absolute(2.5), $0) }.get()
        #expect(sought.position(at: sought.measuredAt) == 2.5)
        let forward = try harness.run { .seek(.relative(0.5), $0) }.get()
        #expect(abs(forward.position(at: forward.measuredAt) - 3) < 0.25)
        #expect(forward.activity == .playing)
        let back = try harness.run { .seek(.absolute(0.5), $0) }.get()
        #expect(back.frameCountIsEstimate)
        reader.finishCount()
        #expect(waitUntil { harness.changes.current.contains { $0.frameCount == 4 * 44100 && !$0.frameCountIsEstimate } })
        // Counted: the length bounds seeks again.
        let refused = harness.run { .seek(.absolute(4.5), $0) }
        #expect(throws: ReelError.self) { try refused.get() }
        if case .failure(let error) = refused { #expect(error.reason == .outOfRange) }
    }

    @Test func theCountIsPublishedWhilePaused() throws {
        let reader = try countingReader("paused")
        let harness = Harness()
        let loaded = try harness.run { .load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: false, $0) }.get()
        #expect(loaded.activity == .paused)
        #expect(loaded.frameCountIsEstimate)
        reader.finishCount()
        #expect(waitUntil { harness.changes.current.last.map { $0.frameCount == 4 * 44100 && !$0.frameCountIsEstimate } == true })
        #expect(harness.engine.snapshot.activity == .paused)
    }

    /// A real MP3 without a tag, whose count never comes (no background scan): a seek past its
    /// end, which the estimate does not forbid, ends the track without an error.
    @Test func aSeekPastTheEndOfAnEstimatedMP3EndsTheTrack() throws {
        let segment = directory.appendingPathComponent("segment.mp3").path
        try TestAudio.writeTone(to: segment, codec: "mp3-cbr-noxing", seconds: 10)
        let path = directory.appendingPathComponent("long.mp3").path
        try TestAudio.repeatFile(segment, copies: 16, to: path)
        let reader = try Mpg123Reader(
            path: path, layout: MP3Layout.read(path: path), lengthScan: .background, backgroundScan: false)
        let estimate = try #require(reader.estimatedFrameCount)
        let harness = Harness()
        _ = try harness.run { .load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        let past = Double(estimate) / 44100 + 60
        let sought = try harness.run { .seek(.absolute(past), $0) }.get()
        #expect(sought.error == nil)
        #expect(waitUntil { harness.engine.snapshot.activity == .stopped })
        let end = harness.engine.snapshot
        #expect(end.reachedEnd)
        #expect(end.error == nil)
    }
}
