// HLS against the project's live HLS server on loopback (Tests/Streams/hls_server.py): TS, fMP4
// and packed ADTS segments, a master playlist, reloads, a restarted packager, encryption.

import Foundation
import ReelModel
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite(.serialized) struct HLSStreamTests {
    static func open(_ url: String) throws(ReelError) -> (reader: AudioFileReader, stream: HTTPStream) {
        try URLSource.open(url: url, configuration: StreamSourceTests.configuration)
    }

    /// Reads `seconds` of audio (silence while waiting for segments is skipped) and checks it is
    /// the server's tone: 440 Hz on the left.
    static func playsTheTone(_ reader: AudioFileReader, seconds: Int, _ what: String) throws {
        let rate = reader.pcmFormat.sampleRate
        let samples = try StreamSourceTests.readAudible(reader, frames: seconds * rate, seconds: 120)
        #expect(samples.count >= seconds * rate * 2, "\(what): \(samples.count / 2) frames")
        let heard = StreamCodecTests.frequency(samples, channels: 2, rate: rate)
        #expect(abs(heard - 440) < 15, "\(what): \(heard) Hz")
    }

    @Test func tsFMP4AndADTSSegmentsPlay() throws {
        let server = try HLSServer()
        for variant in ["ts", "fmp4", "adts"] {
            let (reader, stream) = try Self.open(server.url("\(variant)/live.m3u8"))
            #expect(reader.format == AudioFormat(codec: "aac", sampleRate: 44100, channels: 2), "\(variant)")
            try Self.playsTheTone(reader, seconds: 2, variant)
            #expect(stream.current.head?.resourceLength == nil, "live")
            #expect(stream.current.state == .playing)
        }
    }

    @Test(arguments: ["ts", "fmp4", "adts"])
    func aLiveStreamContinuesAcrossReloads(variant: String) throws {
        let server = try HLSServer()
        // Joined 3 target durations (9 s) back at most: 14 s of audio needs new segments.
        let (reader, _) = try Self.open(server.url("\(variant)/live.m3u8"))
        try Self.playsTheTone(reader, seconds: 14, variant)
        let requests = try server.requests()
        #expect(requests.filter { $0 == "/\(variant)/live.m3u8" }.count >= 2, "\(requests)")
    }

    @Test func aMasterPlaylistPlaysAnAudioVariant() throws {
        let server = try HLSServer()
        let (reader, _) = try Self.open(server.url("master.m3u8"))
        try Self.playsTheTone(reader, seconds: 2, "master")
    }

    @Test func aPlaylistIsKnownByItsTypeWithoutTheSuffix() throws {
        let server = try HLSServer()
        let (reader, _) = try Self.open(server.url("ts/live"))
        try Self.playsTheTone(reader, seconds: 2, "ts/live")
    }

    @Test func aRestartedPackagerIsFollowed() throws {
        let server = try HLSServer()
        let (reader, stream) = try Self.open(server.url("adts/live.m3u8"))
        try Self.playsTheTone(reader, seconds: 2, "before")
        // Far ahead, then back to sequence 0: the planner sees a restart, the demuxer reopens.
        try server.control("control/jump?n=40")
        // Played on until the fetcher took a segment past the jump (it skipped the rest).
        var jumped = false
        let jumpDeadline = Date().addingTimeInterval(60)
        while !jumped && Date() < jumpDeadline {
            try Self.playsTheTone(reader, seconds: 1, "after the jump")
            jumped = try server.requests().contains { $0.hasPrefix("/adts/seg") && Int($0.dropFirst(9).prefix { $0.isNumber }) ?? 0 >= 40 }
        }
        #expect(jumped)
        try server.control("control/restart")
        // Audio plays on while the planner finds the restart at a reload (what was fetched
        // before is played first), and after it.
        let deadline = Date().addingTimeInterval(60)
        while stream.current.reconnects == 0 && Date() < deadline {
            try Self.playsTheTone(reader, seconds: 1, "while restarting")
        }
        #expect(stream.current.reconnects >= 1)
        try Self.playsTheTone(reader, seconds: 6, "after the restart")
        #expect(stream.current.failure == nil)
    }

    @Test func aFiniteListPlaysToItsEnd() throws {
        let server = try HLSServer()
        let (reader, _) = try Self.open(server.url("ts/vod.m3u8"))
        let samples = try StreamSourceTests.readAudible(reader, frames: Int.max, seconds: 120)
        // 20 s of segments (AAC's priming frame aside).
        #expect(abs(samples.count / 2 - 20 * 44100) < 44100 / 10, "\(samples.count / 2) frames")
    }

    @Test func lostSegmentsAtTheEndOfAFiniteListEndItWithoutAnError() throws {
        // The last two segments listed are 404: what came plays, then the end (a boundary with
        // nothing after it is not a stream that fails to open).
        let server = try HLSServer()
        let (reader, _) = try Self.open(server.url("ts/vod-lost.m3u8"))
        let samples = try StreamSourceTests.readAudible(reader, frames: Int.max, seconds: 120)
        #expect(abs(samples.count / 2 - 20 * 44100) < 44100 / 10, "\(samples.count / 2) frames")
        var chunk = [Int16](repeating: 0, count: 4096 * 2)
        #expect(try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) } == 0)
    }

    @Test func anEncryptedStreamIsUnsupported() throws {
        let server = try HLSServer()
        let url = server.url("encrypted.m3u8")
        let error = try #require(StreamSourceTests.failure(url))
        #expect(error.reason == .unsupportedFormat && error.message.contains("encrypted"), "\(error)")
    }

    @Test func packedAudioID3TitlesAreWhatIsOnAir() throws {
        // The server's ADTS segments each start with an ID3 tag, TIT2 "Segment N".
        let server = try HLSServer()
        let (reader, stream) = try Self.open(server.url("adts/live.m3u8"))
        try Self.playsTheTone(reader, seconds: 2, "adts with ID3")
        let title = try #require(stream.current.title)
        #expect(title.hasPrefix("Segment "), "\(title)")
        // Later segments bring later titles.
        let first = Int(title.dropFirst(8)) ?? -1
        let deadline = Date().addingTimeInterval(60)
        while (Int(stream.current.title?.dropFirst(8) ?? "") ?? -1) <= first && Date() < deadline {
            try Self.playsTheTone(reader, seconds: 1, "adts with ID3")
        }
        #expect((Int(stream.current.title?.dropFirst(8) ?? "") ?? -1) > first, "\(String(describing: stream.current.title))")
    }

    /// The segments' durations in a media playlist (its `EXTINF`s), in order.
    static func durations(_ url: String) throws -> [Double] {
        let text = String(decoding: try TestTool.output("/usr/bin/curl", ["-s", url]), as: UTF8.self)
        return text.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }
            .compactMap { Double($0.dropFirst(8).prefix { $0 != "," }) }
    }

    @Test func timedID3InMPEGTSIsHeardFromItsPresentationTime() throws {
        let server = try HLSServer()
        // Each segment's timed-ID3 stream says "Segment N" at its first audio's PTS; segment 3's
        // tag is broken.
        let url = server.url("tsid3/vod.m3u8")
        let durations = try Self.durations(url)
        try #require(durations.count >= 6)
        let (reader, stream) = try Self.open(url)
        let rate = Double(reader.pcmFormat.sampleRate)
        let starts = durations.indices.map { index in durations[..<index].reduce(0, +) }
        // Decoded well past segment 5 (the decoder runs ahead of what is read).
        _ = try StreamSourceTests.readAudible(reader, frames: Int((starts[5] + 1) * rate), seconds: 120)
        func frame(_ seconds: Double) -> Int64 { Int64(seconds * rate) }
        for segment in 1...5 where segment != 3 {
            // Just before its time the title before it; from its time its own.
            let before = segment == 4 ? "Segment 2" : "Segment \(segment - 1)"
            #expect(stream.title(atFrame: frame(starts[segment] - 0.03)).title == before, "segment \(segment)")
            #expect(stream.title(atFrame: frame(starts[segment] + 0.03)).title == "Segment \(segment)", "segment \(segment)")
            // The change is where its audio is: within an AAC frame of the segment's start.
            let next = try #require(stream.title(atFrame: frame(starts[segment] - 0.5)).next, "segment \(segment)")
            #expect(abs(Double(next) / rate - starts[segment]) < 0.03, "segment \(segment): \(Double(next) / rate) s")
        }
        #expect(stream.title(atFrame: 0).title == "Segment 0")
        // The broken tag changed nothing and was noted for the log, naming what was wrong.
        #expect(stream.title(atFrame: frame(starts[3] + durations[3] / 2)).title == "Segment 2")
        let notices = stream.takeNotices()
        #expect(notices.contains { $0.contains("timed ID3 tag was skipped") && $0.contains("TIT2") }, "\(notices)")
    }

    @Test func packedAudioTitlesAreHeardFromTheirSegmentsFirstAudio() throws {
        let server = try HLSServer()
        // Each ADTS segment starts with an ID3 tag saying "Segment N": the title from its audio on
        // (noted at the offset of the segment's first frame, placed by the decoder), not from
        // when it was fetched.
        let url = server.url("adts/vod.m3u8")
        let durations = try Self.durations(url)
        try #require(durations.count >= 6)
        let (reader, stream) = try Self.open(url)
        let rate = Double(reader.pcmFormat.sampleRate)
        let starts = durations.indices.map { index in durations[..<index].reduce(0, +) }
        _ = try StreamSourceTests.readAudible(reader, frames: Int((starts[5] + 1) * rate), seconds: 120)
        func frame(_ seconds: Double) -> Int64 { Int64(seconds * rate) }
        #expect(stream.title(atFrame: 0).title == "Segment 0")
        for segment in 1...5 {
            #expect(stream.title(atFrame: frame(starts[segment] - 0.05)).title == "Segment \(segment - 1)", "segment \(segment)")
            #expect(stream.title(atFrame: frame(starts[segment] + 0.05)).title == "Segment \(segment)", "segment \(segment)")
            let next = try #require(stream.title(atFrame: frame(starts[segment] - 0.5)).next, "segment \(segment)")
            #expect(abs(Double(next) / rate - starts[segment]) < 0.05, "segment \(segment): \(Double(next) / rate) s")
        }
    }
}
