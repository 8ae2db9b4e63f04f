// Going back in a stream and seeking in a file over HTTP, against the project's stream server on
// loopback: the landing frame is checked sample for sample against a continuous decode (a live
// stream) or the same file decoded locally (a finite file).

import Foundation
import ReelModel
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite(.serialized) struct StreamSeekTests {
    static func configuration(bufferBytes: Int? = nil) -> StreamConfiguration {
        var configuration = StreamConfiguration()
        configuration.connectTimeout = 5
        configuration.lowSpeedSeconds = 3
        configuration.bufferBytes = bufferBytes
        return configuration
    }

    static func open(_ url: String, bufferBytes: Int? = nil) throws(ReelError) -> (reader: Mpg123StreamReader, stream: HTTPStream) {
        let opened = try URLSource.open(url: url, configuration: configuration(bufferBytes: bufferBytes))
        return (opened.reader as! Mpg123StreamReader, opened.stream)
    }

    /// Reads exactly `frames` frames (waiting while nothing has come), fewer only at the end.
    static func read(_ reader: AudioFileReader, frames wanted: Int, seconds: Double = 60) throws -> [Int16] {
        let channels = reader.pcmFormat.channels
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096 * channels)
        let deadline = Date().addingTimeInterval(seconds)
        while samples.count / channels < wanted && Date() < deadline {
            let want = min(4096, wanted - samples.count / channels)
            let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: want) }
            if frames == 0 && reader.isWaitingForData {
                usleep(5000)
                continue
            }
            if frames == 0 { break }
            samples.append(contentsOf: chunk[0..<(frames * channels)])
        }
        return samples
    }

    @Test func aLiveStreamGoesBackWithinItsBufferToTheFrameAsked() throws {
        let server = try StreamServer(seconds: 5)
        let (reader, _) = try Self.open(server.url("/live.mp3"))
        // 6 s of the stream, as it came.
        let rate = 44100
        let first = try Self.read(reader, frames: 6 * rate)
        #expect(first.count == 6 * rate * 2)
        // Back to 1.5 s (a frame in the middle of an MPEG frame): the same samples again.
        let target = 3 * rate / 2 + 77
        #expect(reader.canSeek(to: Int64(target)))
        try reader.seek(to: Int64(target))
        let again = try Self.read(reader, frames: 2 * rate)
        #expect(again == Array(first[(target * 2)..<((target + 2 * rate) * 2)]), "sample for sample from the frame asked")
        // Reading on past where it had been decoded goes on as the stream.
        let more = try Self.read(reader, frames: 4 * rate)
        #expect(more.count == 4 * rate * 2 && Array(more.prefix((6 * rate - target - 2 * rate) * 2)) == Array(first[((target + 2 * rate) * 2)...]))
        // Forward of what was decoded: out of range, naming it.
        #expect(!reader.canSeek(to: Int64(30 * rate)))
        #expect(reader.seekRefusal(to: Int64(30 * rate)).reason == .outOfRange)
    }

    @Test func beyondWhatTheBufferKeepsIsOutOfRange() throws {
        let server = try StreamServer(seconds: 5)
        // 64 KiB: about 4 s of 128 kbit/s.
        let (reader, stream) = try Self.open(server.url("/live.mp3"), bufferBytes: 64 << 10)
        let rate = 44100
        _ = try Self.read(reader, frames: 8 * rate)
        #expect(stream.buffer.kept.lowerBound > 0, "the oldest bytes went")
        #expect(!reader.canSeek(to: Int64(rate)))
        let refusal = reader.seekRefusal(to: Int64(rate))
        #expect(refusal.reason == .outOfRange && refusal.message.contains("live"), "\(refusal.message)")
        // What it still keeps works.
        #expect(reader.canSeek(to: Int64(7 * rate)))
        try reader.seek(to: Int64(7 * rate))
        #expect(try Self.read(reader, frames: rate).count == rate * 2)
    }

    @Test func pausedLongerThanTheBufferHoldsResumeJoinsLive() throws {
        let server = try StreamServer(seconds: 5)
        // 96 KiB: about 6 s of 128 kbit/s (more than the server's first burst).
        let (reader, stream) = try Self.open(server.url("/live.mp3"), bufferBytes: 96 << 10)
        let rate = 44100
        _ = try Self.read(reader, frames: 3 * rate)
        #expect(reader.liveJoins == 0)
        let readBefore = stream.buffer.readOffset
        // Paused: the network side goes on receiving (it never waits), past what the buffer holds.
        let written = stream.buffer.written
        #expect(waitUntil { stream.buffer.written > written + (128 << 10) })
        // Resumed: from the newest bytes but a few seconds, not from where it paused.
        let after = try Self.read(reader, frames: rate)
        #expect(after.count == rate * 2)
        #expect(reader.liveJoins == 1)
        #expect(stream.buffer.readOffset > readBefore + (48 << 10), "joined live")
        #expect(stream.current.reconnects == 0, "the connection never stalled")
        // The position went on from where it paused; what was before cannot be gone back to.
        #expect(!reader.canSeek(to: Int64(rate)))
    }

    @Test func aFiniteFileHasItsExactLengthFromItsXingTagAndSeeksByRangeToTheFrameAsked() throws {
        let server = try StreamServer(seconds: 20, xing: true)
        let local = try AudioFileOpener.open(path: server.mp3Path)
        // A small buffer: the writer waits, so what is far ahead is not received yet.
        let (reader, stream) = try Self.open(server.url("/file.mp3"), bufferBytes: 64 << 10)
        #expect(reader.frameCount != nil && reader.frameCount == local.frameCount)
        #expect(stream.current.head?.resourceLength != nil)
        let rate = 44100
        // Far ahead of anything received: a Range request, landing on the frame asked.
        let target = 14 * rate + 333
        #expect(reader.canSeek(to: Int64(target)))
        try reader.seek(to: Int64(target))
        try local.seek(to: Int64(target))
        let got = try Self.read(reader, frames: 2 * rate)
        let expected = try Self.read(local, frames: 2 * rate)
        #expect(got.count == expected.count && got == expected, "the same samples as the file decoded locally")
        #expect(try stream.ranges(server: server).contains { $0 > 0 })
        // Back to the start: every sample of the file to its end, none more.
        try reader.seek(to: 0)
        try local.seek(to: 0)
        let whole = try Self.read(reader, frames: Int.max, seconds: 120)
        let localWhole = try Self.read(local, frames: Int.max, seconds: 120)
        #expect(whole.count == localWhole.count && whole == localWhole)
    }

    @Test func aFiniteFileWithoutATagHasAnEstimatedLengthAndSeeksBackByCheckpoints() throws {
        let server = try StreamServer(seconds: 10)
        let local = try AudioFileOpener.open(path: server.mp3Path, mp3Length: .atOpen)
        let (reader, _) = try Self.open(server.url("/file.mp3"))
        let exact = try #require(local.frameCount)
        #expect(reader.frameCount == nil)
        let estimate = try #require(reader.estimatedFrameCount)
        #expect(abs(estimate - exact) < exact / 100, "\(estimate) vs \(exact)")
        let rate = 44100
        _ = try Self.read(reader, frames: 8 * rate)
        // Back to a frame decoded before: from its checkpoint, sample for sample.
        let target = 2 * rate + 5
        try reader.seek(to: Int64(target))
        try local.seek(to: Int64(target))
        #expect(try Self.read(reader, frames: rate) == (try Self.read(local, frames: rate)))
        // Ahead: by Range; this file is constant-bitrate, so the landing is exact too.
        try reader.seek(to: Int64(9 * rate))
        try local.seek(to: Int64(9 * rate))
        #expect(try Self.read(reader, frames: rate / 2) == (try Self.read(local, frames: rate / 2)))
    }

    @Test func aFiniteFileWithoutRangesSeeksOnlyWithinWhatItKeeps() throws {
        let server = try StreamServer(seconds: 20)
        let (reader, _) = try Self.open(server.url("/norange.mp3"), bufferBytes: 64 << 10)
        #expect(reader.estimatedFrameCount != nil, "it has a length")
        let rate = 44100
        _ = try Self.read(reader, frames: 10 * rate)
        #expect(!reader.canSeek(to: Int64(rate)))
        #expect(reader.seekRefusal(to: Int64(rate)).reason == .notSeekable)
        #expect(!reader.canSeek(to: Int64(18 * rate)))
    }
}

extension HTTPStream {
    /// The Range offsets the server was asked for.
    func ranges(server: StreamServer) throws -> [Int64] {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", server.url("/control/stats")]
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (stats?["ranges"] as? [Int])?.map(Int64.init) ?? []
    }
}
