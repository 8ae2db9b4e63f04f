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

    @Test func id3TitlesOfPackedAudioAreRead() {
        // ID3v2.4: TIT2 "On Air" (UTF-8), and v2.3 TXXX "title" / "Other" (Latin-1).
        let tit2: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 17] + Array("TIT2".utf8) + [0, 0, 0, 7, 0, 0, 3]
            + Array("On Air".utf8)
        #expect(id3Title(tit2 + [0xFF, 0xF1]) == "On Air")
        let body: [UInt8] = [0] + Array("title".utf8) + [0] + Array("Other".utf8)
        let txxx: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, UInt8(10 + body.count)] + Array("TXXX".utf8)
            + [0, 0, 0, UInt8(body.count), 0, 0] + body
        #expect(id3Title(txxx) == "Other")
        #expect(id3Title([0xFF, 0xF1, 0x50]) == nil)
        // The tag's length: what the demuxer is not given.
        #expect(id3TagLength(tit2 + [0xFF, 0xF1]) == tit2.count && id3TagLength([0xFF, 0xF1, 0x50]) == 0)
        // A frame claiming more than the tag holds: nothing, no trap.
        #expect(id3Title(Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 12] + Array("TIT2".utf8) + [0, 0, 0x7F, 0x7F, 0, 0, 3, 65]) == nil)
    }
}
