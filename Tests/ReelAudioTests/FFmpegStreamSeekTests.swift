// Going back in a stream that FFmpeg decodes (AAC, Ogg Vorbis and Opus, HLS), against the
// project's stream servers on loopback: the landing frame is checked against a continuous decode
// of the same stream; a reconnecting Ogg stream plays on; a file's demuxer opens no other file.

import Foundation
import ReelModel
import Testing
import ReelTestSupport

@testable import ReelAudio

@Suite struct FFmpegStreamCheckpointsTests {
    typealias Checkpoints = FFmpegStreamCheckpoints

    static func filled() -> Checkpoints {
        var checkpoints = Checkpoints()
        // A run from byte 100 (its header before 300), one packet of 1024 frames per 400 bytes.
        for packet in 0..<40 {
            let offset = Int64(300 + packet * 400)
            let frame = Int64(packet * 1024)
            checkpoints.add(Checkpoints.Place(offset: offset, index: 0, frame: frame, samples: 1024))
            checkpoints.add(packet == 0
                ? Checkpoints.Point(offset: 100, frame: 0, header: 100, runStart: true)
                : Checkpoints.Point(offset: offset, frame: frame, header: 100, runStart: false))
        }
        return checkpoints
    }

    @Test func aFrameIsPlacedByItsPacketAndOnlyOnce() {
        var checkpoints = Self.filled()
        #expect(checkpoints.place(offset: 700, index: 0)?.frame == 1024)
        #expect(checkpoints.place(offset: 700, index: 1) == nil)
        #expect(checkpoints.place(offset: 701, index: 0) == nil)
        // Decoded again after a seek back: not added twice, nor moved.
        checkpoints.add(Checkpoints.Place(offset: 700, index: 0, frame: 99, samples: 1024))
        #expect(checkpoints.place(offset: 700, index: 0)?.frame == 1024 && checkpoints.places.count == 40)
    }

    @Test func aSeekStartsAPrerollBeforeItsTargetOrAtTheRunsStart() {
        let checkpoints = Self.filled()
        // The last point a whole preroll before the target.
        let point = checkpoints.point(toReach: 30_000, keptFrom: 0, preroll: 8192, minimumPreroll: 2048)
        #expect(point?.frame == 21_504 && point?.runStart == false, "\(String(describing: point))")
        // Near the start: the run's start, which needs none.
        #expect(checkpoints.point(toReach: 3000, keptFrom: 0, preroll: 8192, minimumPreroll: 2048)?.runStart == true)
        // The run's start no longer kept: the first point with the least preroll, else none.
        #expect(checkpoints.point(toReach: 9000, keptFrom: 200, preroll: 8192, minimumPreroll: 2048)?.frame == 1024)
        #expect(checkpoints.point(toReach: 2000, keptFrom: 200, preroll: 8192, minimumPreroll: 2048) == nil)
        #expect(checkpoints.firstReachable(keptFrom: 200, minimumPreroll: 2048) == Int64(3072))
        #expect(checkpoints.firstReachable(keptFrom: 0, minimumPreroll: 2048) == 0)
        #expect(checkpoints.firstReachable(keptFrom: 100_000, minimumPreroll: 2048) == nil)
    }
}

@Suite(.serialized) struct FFmpegStreamSeekTests {
    static let fixtures: [(name: String, kind: String, seconds: Double)] = [
        ("tone.aac", "aac", 20), ("tone.ogg", "vorbis", 20), ("tone.opus", "opus", 20),
    ]

    static func configuration(bufferBytes: Int? = nil) -> StreamConfiguration {
        var configuration = StreamSourceTests.configuration
        configuration.bufferBytes = bufferBytes
        return configuration
    }

    static func open(_ url: String, bufferBytes: Int? = nil) throws -> (reader: FFmpegStreamReader, stream: HTTPStream) {
        let opened = try URLSource.open(url: url, configuration: configuration(bufferBytes: bufferBytes))
        return (try #require(opened.reader as? FFmpegStreamReader), opened.stream)
    }

    /// The largest difference between two runs of samples of the same length.
    static func largestDifference(_ a: [Int16], _ b: [Int16]) -> Int {
        zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    /// Reads `seconds` of the stream, goes back to `back` seconds plus 77 frames (inside a
    /// decoded frame), and checks 2 s from there against what was read first: within
    /// `tolerance` (a frame early or late differs by hundreds: the tone moves ~250 a sample).
    static func goesBack(_ reader: FFmpegStreamReader, rate: Int, seconds: Int = 8, back: Double, tolerance: Int, _ what: String) throws {
        let channels = reader.pcmFormat.channels
        let first = try StreamSeekTests.read(reader, frames: seconds * rate)
        #expect(first.count == seconds * rate * channels, "\(what)")
        let target = Int(back * Double(rate)) + 77
        #expect(reader.canSeek(to: Int64(target)), "\(what)")
        try reader.seek(to: Int64(target))
        let again = try StreamSeekTests.read(reader, frames: 2 * rate)
        let expected = Array(first[(target * channels)..<((target + 2 * rate) * channels)])
        #expect(again.count == expected.count, "\(what)")
        let difference = largestDifference(again, expected)
        #expect(difference <= tolerance, "\(what): differs by \(difference) from the continuous decode")
        // Reading on past what had been read goes on as the stream.
        let more = try StreamSeekTests.read(reader, frames: seconds * rate - target - 2 * rate + rate)
        let overlap = (seconds * rate - target - 2 * rate) * channels
        #expect(largestDifference(Array(more.prefix(overlap)), Array(first[((target + 2 * rate) * channels)...])) <= tolerance, "\(what)")
        // Ahead of what was read: out of range.
        #expect(!reader.canSeek(to: Int64(60 * rate)))
        #expect(reader.seekRefusal(to: Int64(60 * rate)).reason == .outOfRange, "\(what)")
    }

    @Test func vorbisOpusAndAACStreamsGoBackWithinTheirBufferToTheFrameAsked() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        // Vorbis: sample for sample (its state is the previous packet's, rebuilt in the preroll).
        let (vorbis, _) = try Self.open(server.url("/live/tone.ogg"))
        try Self.goesBack(vorbis, rate: 44100, back: 4.5, tolerance: 0, "vorbis, inside the run")
        // Opus: its decoder's state converges in the preroll, to within a unit.
        let (opus, _) = try Self.open(server.url("/live/tone.opus"))
        try Self.goesBack(opus, rate: 48000, back: 4.5, tolerance: 2, "opus")
        // AAC: the fixture's encoder used noise substitution; its noise differs by a few units.
        let (aac, _) = try Self.open(server.url("/live/tone.aac"))
        try Self.goesBack(aac, rate: 44100, back: 4.5, tolerance: 4, "aac")
        // Near the start: from the run's start, as decoded first.
        let (start, _) = try Self.open(server.url("/live/tone.ogg"))
        try Self.goesBack(start, rate: 44100, back: 0, tolerance: 0, "vorbis, from the start")
    }

    @Test func anHLSStreamGoesBackWithinItsBuffer() throws {
        let server = try HLSServer()
        // (Not fMP4: its live variant is entered at its run's start only, and ends early; see the notes.)
        for variant in ["ts", "adts"] {
            let opened = try URLSource.open(url: server.url("\(variant)/live.m3u8"), configuration: StreamSourceTests.configuration)
            let reader = try #require(opened.reader as? FFmpegStreamReader)
            try Self.goesBack(reader, rate: 44100, back: 3.5, tolerance: 4, "hls \(variant)")
        }
    }

    @Test func beyondWhatTheBufferKeepsIsOutOfRange() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        // 64 KiB: about 4 s of 128 kbit/s.
        let (reader, stream) = try Self.open(server.url("/live/tone.aac"), bufferBytes: 64 << 10)
        let rate = 44100
        _ = try StreamSeekTests.read(reader, frames: 10 * rate)
        #expect(stream.buffer.kept.lowerBound > 0, "the oldest bytes went")
        #expect(!reader.canSeek(to: Int64(rate)))
        let refusal = reader.seekRefusal(to: Int64(rate))
        #expect(refusal.reason == .outOfRange && refusal.message.contains("live"), "\(refusal.message)")
        #expect(throws: ReelError.self) { try reader.seek(to: Int64(rate)) }
        // What it still keeps works.
        let recent = Int64(9 * rate)
        #expect(reader.canSeek(to: recent))
        try reader.seek(to: recent)
        #expect(try StreamSeekTests.read(reader, frames: rate).count == rate * 2)
    }

    @Test func aReconnectingOggStreamPlaysOnAfterTheDrop() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        // Every connection ends after 30,000 bytes (about 2.5 s of Opus; 10,000, about 2.5 s of
        // this Vorbis): each new one starts with its own header pages, where a new demuxer opens.
        // (FFmpeg 5.1's Ogg demuxer also resynchronises by itself: that it plays on does not
        // depend on the boundary; the boundaries' places are checked.)
        for path in ["/drop/30000/live/tone.opus", "/drop/10000/live/tone.ogg"] {
            let (reader, stream) = try Self.open(server.url(path))
            let rate = reader.pcmFormat.sampleRate
            let samples = try StreamSourceTests.readAudible(reader, frames: 8 * rate, seconds: 90)
            #expect(samples.count >= 8 * rate * 2, "\(path): \(samples.count / 2) frames")
            #expect(stream.current.reconnects >= 2, "\(path)")
            #expect(abs(StreamCodecTests.frequency(samples, channels: 2, rate: rate) - 440) < 15, "\(path)")
            // Each new connection's first byte is a boundary: a new demuxer opened there.
            let second = try #require(stream.boundaries.next(from: 1), "\(path): no boundary at a reconnect")
            #expect(stream.boundaries.next(from: second + 1) != nil, "\(path)")
        }
        // A finite file resumed by a Range continues its container: no boundary.
        let (file, stream) = try StreamSeekTests.open(server.url("/drop/20000/file.mp3"))
        _ = try StreamSourceTests.readAudible(file, frames: 2 * 44100)
        #expect(stream.current.reconnects >= 1)
        #expect(stream.boundaries.next(from: 0) == nil)
    }
}

@Suite struct FFmpegFileRefusalTests {
    /// A file that names another: FFmpeg's concat demuxer would play it, its HLS demuxer fetch it.
    @Test func aFilesDemuxerOpensNoOtherFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-refuse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = directory.appendingPathComponent("elsewhere.wav").path
        try TestAudio.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-ac", "2", other])
        let crafted: [(name: String, text: String)] = [
            ("list.ffconcat", "ffconcat version 1.0\nfile elsewhere.wav\n"),
            ("absolute.ffconcat", "ffconcat version 1.0\nfile \(other)\n"),
            ("list.m3u8", "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:2.0,\n\(other)\n#EXTINF:2.0,\n/etc/passwd\n#EXT-X-ENDLIST\n"),
        ]
        for file in crafted {
            let path = directory.appendingPathComponent(file.name).path
            try file.text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: ReelError.self, "\(file.name)") { _ = try AudioFileOpener.open(path: path) }
        }
        // The file itself still plays.
        #expect(try AudioFileOpener.open(path: other).frameCount == 88200)
    }
}
