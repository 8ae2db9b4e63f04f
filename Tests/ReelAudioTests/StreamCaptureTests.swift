// Recording a station without playing it: the capture engine over `StreamCaptureInput`.

import Foundation
import Logging
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite(.serialized) struct StreamCaptureTests {
    /// Records `seconds` of `url` into a FLAC file; returns the input and the file's samples.
    func record(_ url: String, seconds: Double, in directory: URL) throws -> (StreamCaptureInput, [Int16], CaptureEnding?) {
        let input = try StreamCaptureInput.connect(url: url, configuration: StreamSourceTests.configuration, logger: Logger(label: "test"))
        let path = directory.appendingPathComponent("station.flac").path
        let format = input.sourceFormat
        let ending = Locked<CaptureEnding?>(nil)
        let engine = CaptureEngine(device: input, logger: Logger(label: "test"))
        try engine.start(
            CaptureRequest(path: path, codec: "flac", format: format, maxFrames: Int64(seconds * Double(format.sampleRate))),
            onProgress: { _ in }, onEnd: { end in ending.withLock { $0 = end } })
        #expect(waitUntil(seconds: 90) { ending.current != nil }, "the take did not end by itself")
        engine.stop()
        return (input, try TestAudio.decodeAll(try SndFileReader(path: path)), ending.current)
    }

    /// Titles are kept with the frame libmpg123's reader marks them at, as the player hears them
    /// (`HTTPStream.title(atFrame:)`), each change once, in order. The server names a title
    /// every 4 s of audio, in the ICY block after every 16,000 bytes: the second title names the
    /// audio from byte 80,000 on, the third from byte 144,000; so it begins with the first MPEG
    /// frame at or after that byte, which is found in the served file (no ID3 tag, no Xing
    /// frame: the first frame at byte 0), give or take the decoder's delay (under a frame).
    @Test func titleChangesAreKeptWithTheFramesTheDecoderMarks() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try StreamServer(seconds: 12)
        let (input, samples, ending) = try record(server.url("/live.mp3"), seconds: 10, in: directory)
        #expect(ending == .limitReached)
        #expect(samples.count == 10 * 44100 * 2)
        let changes = input.titles.all
        #expect(changes.map(\.title) == ["First title", "Second title", "First title"], "\(changes)")
        guard changes.count == 3 else { return }
        #expect(changes[0].frame == 0)
        // The MPEG frames' offsets (MPEG-1 layer III at 128 kbit/s, 44.1 kHz: 417 bytes, 418 with
        // the padding bit).
        let mp3 = [UInt8](try Data(contentsOf: URL(fileURLWithPath: server.mp3Path)))
        var starts: [Int] = []
        var offset = 0
        while offset + 4 <= mp3.count, mp3[offset] == 0xFF, mp3[offset + 1] & 0xE0 == 0xE0 {
            starts.append(offset)
            offset += 417 + Int((mp3[offset + 2] >> 1) & 1)
        }
        #expect(starts.count > 400, "the fixture's frames were found")
        for (change, byte) in zip(changes.dropFirst(), [80_000, 144_000]) {
            let first = try #require(starts.firstIndex { $0 >= byte })
            let frame = Int64(first) * 1152
            #expect(change.frame <= frame && change.frame > frame - 1152, "\(change.title ?? "nil") at \(change.frame), its MPEG frame at \(frame)")
            // Where the player hears it.
            #expect(input.stream.title(atFrame: change.frame).title == change.title)
            #expect(input.stream.title(atFrame: change.frame - 1).title != change.title)
        }
    }

    /// An HLS stream's timed-ID3 titles (FFmpeg's reader, by presentation time): each segment
    /// says "Segment N" at its first audio (segment 3's tag is broken and changes nothing); the
    /// recorded change is at that segment's start, as the player hears it.
    @Test func timedID3TitlesAreKeptAtTheirPresentationTime() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try HLSServer()
        let url = server.url("tsid3/vod.m3u8")
        let durations = try HLSStreamTests.durations(url)
        try #require(durations.count >= 6)
        let starts = durations.indices.map { index in durations[..<index].reduce(0, +) }
        let (input, _, ending) = try record(url, seconds: starts[5] + 1, in: directory)
        #expect(ending == .limitReached)
        let rate = Double(input.sourceFormat.sampleRate)
        let changes = input.titles.all
        #expect(changes.map(\.title) == ["Segment 0", "Segment 1", "Segment 2", "Segment 4", "Segment 5"], "\(changes)")
        guard changes.count == 5 else { return }
        #expect(changes[0].frame == 0)
        for (change, segment) in zip(changes.dropFirst(), [1, 2, 4, 5]) {
            #expect(abs(Double(change.frame) / rate - starts[segment]) < 0.03, "\(change.title ?? "nil") at \(Double(change.frame) / rate) s")
            #expect(input.stream.title(atFrame: change.frame).title == change.title)
        }
    }

    /// A station that drops every few seconds: the take goes on over the reconnects, with the
    /// gaps skipped (it holds exactly the frames asked for, all of them the station's audio).
    @Test func aDropLeavesAGapSkippedAndTheTakeGoesOn() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try StreamServer(seconds: 4)
        // 48,000 bytes a connection: 3 s of 128 kbit/s.
        let (input, samples, ending) = try record(server.url("/drop/48000/live.mp3"), seconds: 7, in: directory)
        #expect(ending == .limitReached)
        #expect(input.status.reconnects >= 2, "\(input.status)")
        #expect(samples.count == 7 * 44100 * 2)
        // No silence was recorded for the gaps: no run of 0.1 s of zeros anywhere (the tone
        // never rests that long).
        var run = 0
        var longest = 0
        for index in stride(from: 0, to: samples.count, by: 2) {
            run = samples[index] == 0 && samples[index + 1] == 0 ? run + 1 : 0
            longest = max(longest, run)
        }
        #expect(longest < 4410, "\(longest) silent frames in a row")
    }
}
