// Streams that are not MP3 (AAC, Ogg Vorbis, Ogg Opus, FLAC, a whole MP4) through FFmpeg over
// the stream's buffer, against the project's stream server on loopback; and the pure choice of
// decoder.

import Foundation
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite struct StreamDecoderChoiceTests {
    let adts: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x2B, 0x3F, 0xFC]
    let mp3: [UInt8] = [0xFF, 0xFB, 0x90, 0x64, 0x00]

    @Test func theBytesDecideWhenTheyCannotBeMistaken() {
        // A server that says audio/mpeg but sends ADTS AAC, Ogg, FLAC or MP4.
        for bytes in [adts, Array("OggS\0\u{2}".utf8), Array("fLaC\0\0".utf8), [0, 0, 0, 0x20] + Array("ftypM4A ".utf8)] {
            #expect(StreamDecoderChoice.choose(mediaType: "audio/mpeg", isMPEGAudioType: true, first: bytes) == .ffmpeg)
        }
        // MP3 frames said to be AAC.
        #expect(StreamDecoderChoice.choose(mediaType: "audio/aac", isMPEGAudioType: false, first: mp3) == .mpg123)
    }

    @Test func otherwiseTheTypeDecides() {
        let unknown: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(StreamDecoderChoice.choose(mediaType: "audio/mpeg", isMPEGAudioType: true, first: unknown) == .mpg123)
        #expect(StreamDecoderChoice.choose(mediaType: "audio/aacp", isMPEGAudioType: false, first: unknown) == .ffmpeg)
        #expect(StreamDecoderChoice.choose(mediaType: nil, isMPEGAudioType: false, first: unknown) == .ffmpeg)
        // An ID3 tag first: MP3 unless an audio type says otherwise.
        let id3 = Array("ID3\u{4}\0".utf8)
        #expect(StreamDecoderChoice.choose(mediaType: nil, isMPEGAudioType: false, first: id3) == .mpg123)
        #expect(StreamDecoderChoice.choose(mediaType: "audio/aac", isMPEGAudioType: false, first: id3) == .ffmpeg)
    }

    @Test func adtsIsNotAnMPEGAudioFrame() {
        #expect(StreamDecoderChoice.looksLikeADTS(adts) && !StreamDecoderChoice.looksLikeMPEGAudioFrame(adts))
        #expect(!StreamDecoderChoice.looksLikeADTS(mp3) && StreamDecoderChoice.looksLikeMPEGAudioFrame(mp3))
        // A sampling frequency index of 13–15 is reserved: not ADTS.
        #expect(!StreamDecoderChoice.looksLikeADTS([0xFF, 0xF1, 0x3C]))
    }
}

@Suite struct StreamDecoderExpectationTests {
    @Test func theTypeAloneSaysWhichDecoderToLoadWhileTheBodyIsAwaited() {
        #expect(StreamDecoderChoice.expected(mediaType: "audio/aac", isMPEGAudioType: false, isPlaylist: false) == .ffmpeg)
        #expect(StreamDecoderChoice.expected(mediaType: "audio/aacp", isMPEGAudioType: false, isPlaylist: false) == .ffmpeg)
        #expect(StreamDecoderChoice.expected(mediaType: "Audio/OGG", isMPEGAudioType: false, isPlaylist: false) == .ffmpeg)
        #expect(StreamDecoderChoice.expected(mediaType: "application/ogg", isMPEGAudioType: false, isPlaylist: false) == .ffmpeg)
        #expect(StreamDecoderChoice.expected(mediaType: "audio/mpeg", isMPEGAudioType: true, isPlaylist: false) == .mpg123)
        // Nothing to go by: no type, a web page, bytes of any kind, a station playlist.
        #expect(StreamDecoderChoice.expected(mediaType: nil, isMPEGAudioType: false, isPlaylist: false) == nil)
        #expect(StreamDecoderChoice.expected(mediaType: "text/html", isMPEGAudioType: false, isPlaylist: false) == nil)
        #expect(StreamDecoderChoice.expected(mediaType: "application/octet-stream", isMPEGAudioType: false, isPlaylist: false) == nil)
        #expect(StreamDecoderChoice.expected(mediaType: "audio/x-mpegurl", isMPEGAudioType: false, isPlaylist: true) == nil)
    }

    @Test func aStreamTellsItsResponsesHeadBeforeAnyOfItsBody() throws {
        let server = try StreamServer(fixtures: [("tone.aac", "aac", 4)])
        let heads = Locked<[HTTPResponseHead]>([])
        // Through a redirect to a response that sends its head and then nothing.
        let stream = HTTPStream(
            url: server.url("/redirect/1/stall/0/live/tone.aac"), configuration: StreamSourceTests.configuration,
            onResponse: { head in heads.withLock { $0.append(head) } })
        stream.start()
        defer { stream.stop() }
        #expect(waitUntil(seconds: 30) { !heads.current.isEmpty }, "no response's head was told")
        #expect(heads.current.count == 1, "told once, for the response played, not the redirect's")
        #expect(heads.current.first?.status == 200 && heads.current.first?.mediaType == "audio/aac")
        #expect(stream.buffer.available == 0)
    }

    @Test func openingAStationWhoseTypeOnlyFFmpegDecodesReadiesFFmpegBeforeItsFirstByte() throws {
        let server = try StreamServer(fixtures: [("tone.aac", "aac", 4)])
        // Patient enough that the open does not give up (and open FFmpeg's decoder on nothing)
        // while this test waits: the server sends the head and then nothing.
        var configuration = StreamSourceTests.configuration
        configuration.lowSpeedSeconds = 120
        let before = StreamDecoderPreload.promised
        let opening = URLOpening(url: server.url("/stall/0/live/tone.aac"), configuration: configuration)
        opening.start { _ in }
        defer { opening.cancel() }
        #expect(waitUntil(seconds: 60) { StreamDecoderPreload.promised > before }, "the head's audio/aac did not ready FFmpeg")
        #expect(FFmpegReader.isLoaded || waitUntil(seconds: 60) { FFmpegReader.isLoaded })
    }
}

@Suite(.serialized) struct StreamCodecTests {
    static let fixtures: [(name: String, kind: String, seconds: Double)] = [
        ("tone.aac", "aac", 20), ("tone.ogg", "vorbis", 20), ("tone.opus", "opus", 20), ("tone.flac", "flac", 20),
        ("tone.m4a", "m4a", 4), ("he.aac", "heaac", 20),
    ]

    static func open(_ url: String) throws(ReelError) -> (reader: AudioFileReader, stream: HTTPStream) {
        try URLSource.open(url: url, configuration: StreamSourceTests.configuration)
    }

    /// The frequency of channel 0 of interleaved `samples` (zero crossings a second).
    static func frequency(_ samples: [Int16], channels: Int, rate: Int) -> Double {
        var crossings = 0
        var previous: Int16 = 0
        var index = 0
        while index < samples.count {
            let sample = samples[index]
            if (previous < 0) != (sample < 0) { crossings += 1 }
            previous = sample
            index += channels
        }
        return Double(crossings) / 2 / (Double(samples.count / channels) / Double(rate))
    }

    /// Plays one second of `path` and checks the format and that it is the fixture's 440 Hz sine.
    static func playsTheTone(_ server: StreamServer, _ path: String, codec: String, rate: Int) throws {
        let (reader, stream) = try open(server.url(path))
        #expect(reader.format == AudioFormat(codec: codec, sampleRate: rate, channels: 2), "\(path)")
        #expect(reader.pcmFormat.sample == .s16 && !reader.canSeek && reader.frameCount == nil)
        let samples = try StreamSourceTests.readAudible(reader, frames: rate)
        #expect(samples.count >= rate * 2, "\(path): \(samples.count) samples")
        let heard = frequency(samples, channels: 2, rate: rate)
        #expect(abs(heard - 440) < 15, "\(path): \(heard) Hz")
        #expect(samples.map { abs(Int($0)) }.max() ?? 0 > 1000, "\(path): not silence")
        #expect(stream.current.state == .playing)
    }

    @Test func aacVorbisOpusAndFLACStreamsPlay() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        try Self.playsTheTone(server, "/live/tone.aac", codec: "aac", rate: 44100)
        try Self.playsTheTone(server, "/live/tone.ogg", codec: "vorbis", rate: 44100)
        try Self.playsTheTone(server, "/live/tone.opus", codec: "opus", rate: 48000)
        try Self.playsTheTone(server, "/live/tone.flac", codec: "flac", rate: 44100)
        #expect(FFmpegReader.isLoaded)
    }

    @Test func heAACPlaysAtTheDecodersRateAndChannelsNotTheHeaders() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        // The fixture's ADTS headers say AAC-LC, 22,050 Hz (index 7), mono (configuration 1).
        let fixture = try Data(contentsOf: server.directory.appendingPathComponent("fixture-heaac.aac"))
        #expect(fixture[0] == 0xFF && (fixture[2] >> 2) & 0x0F == 7 && ((fixture[2] & 1) << 2 | fixture[3] >> 6) == 1)
        // SBR doubles the rate and parametric stereo makes two channels: what is played.
        let (reader, stream) = try Self.open(server.url("/live/he.aac"))
        #expect(reader.format == AudioFormat(codec: "aac", sampleRate: 44100, channels: 2))
        #expect(reader.pcmFormat == PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        // Its frames come (silence, as made), and the stream plays.
        let deadline = Date().addingTimeInterval(60)
        while (reader as? FFmpegStreamReader)?.decodedFramesWaiting ?? 0 < 2048 && Date() < deadline { usleep(10_000) }
        #expect((reader as? FFmpegStreamReader)?.decodedFramesWaiting ?? 0 >= 2048)
        var chunk = [Int16](repeating: 1, count: 2048 * 2)
        #expect(try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 2048) } == 2048)
        #expect(stream.current.state == .playing)
    }

    @Test func aContentTypeThatLiesIsOverruledByTheBytes() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        // AAC said to be MP3, Ogg said to be text, FLAC said to be AAC.
        try Self.playsTheTone(server, "/as/audio%2Fmpeg/live/tone.aac", codec: "aac", rate: 44100)
        try Self.playsTheTone(server, "/as/text%2Fplain/live/tone.ogg", codec: "vorbis", rate: 44100)
        try Self.playsTheTone(server, "/as/audio%2Faac/live/tone.flac", codec: "flac", rate: 44100)
    }

    @Test func aWholeMP4PlaysToItsEndWithEverySample() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        let (reader, _) = try Self.open(server.url("/file/tone.m4a"))
        #expect(reader.format == AudioFormat(codec: "aac", sampleRate: 44100, channels: 2))
        let samples = try StreamSourceTests.readAudible(reader, frames: Int.max, seconds: 120)
        // The MP4's edit list bounds it: 4 s exactly, the encoder's delay and padding dropped.
        #expect(samples.count == 4 * 44100 * 2, "\(samples.count / 2) frames")
    }

    @Test func icyTitlesOfAnAACStreamAreTakenOutOfItsAudio() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        let (reader, stream) = try Self.open(server.url("/live/tone.aac"))
        var seen: [String] = []
        var samples: [Int16] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && !seen.contains("Second title") {
            samples += try StreamSourceTests.readAudible(reader, frames: 4410)
            if let title = stream.current.title, seen.last != title { seen.append(title) }
        }
        #expect(seen.starts(with: ["First title", "Second title"]), "\(seen)")
        // Metadata blocks left in the audio would break ADTS frames: the tone is clean.
        #expect(abs(Self.frequency(samples, channels: 2, rate: 44100) - 440) < 15)
    }

    @Test func aDroppedAACStreamReconnectsAndPlaysOn() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        let (reader, stream) = try Self.open(server.url("/drop/20000/live/tone.aac"))
        #expect(try StreamSourceTests.readAudible(reader, frames: 3 * 44100).count >= 3 * 44100 * 2)
        #expect(stream.current.reconnects >= 2)
    }

    @Test func aStallNeverBlocksTheReaderItPlaysSilenceAndSaysBuffering() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        // Every connection stalls after 60,000 bytes (about 4 s); the low-speed limit is 3 s.
        let (reader, stream) = try Self.open(server.url("/stall/60000/live/tone.aac"))
        #expect(try StreamSourceTests.readAudible(reader, frames: 2 * 44100).count >= 2 * 44100 * 2)
        var chunk = [Int16](repeating: 0, count: 4096 * 2)
        var sawBuffering = false
        let deadline = Date().addingTimeInterval(60)
        // Reads return at once with what is there: past the 4 s sent, silence, and the state says so.
        while Date() < deadline && !sawBuffering {
            _ = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            sawBuffering = stream.current.state == .buffering
            usleep(2000)
        }
        #expect(sawBuffering)
        // Then it reconnects and plays on. A reader that outran the server (a loaded machine's
        // server sends slower than the reader decodes) saw `buffering` before the stall as well:
        // what is left of the first connection's audio plays before the reconnect.
        let reconnectDeadline = Date().addingTimeInterval(60)
        while stream.current.reconnects < 1 && Date() < reconnectDeadline {
            _ = try StreamSourceTests.readAudible(reader, frames: 4410, seconds: 1)
        }
        #expect(stream.current.reconnects >= 1)
        #expect(try StreamSourceTests.readAudible(reader, frames: 44100).count >= 44100 * 2)
    }

    @Test func garbageIsAnErrorNamingWhatWasSentNotAHang() throws {
        let server = try StreamServer(fixtures: Self.fixtures)
        let error = try #require(StreamSourceTests.failure(server.url("/garbage")))
        #expect(error.reason == .unsupportedFormat, "\(error)")
        #expect(error.message.contains("audio/aac") && error.message.contains(server.url("/garbage")), "\(error)")
    }

    @Test func aStreamThatTurnsToNoiseEndsWithAnErrorNotAnEndlessRead() throws {
        // 100,000 bytes of AAC (about 6 s), then random bytes for ever: the decoder gives up
        // after its bound of bytes without a frame (1 MiB) instead of reading on for ever.
        let server = try StreamServer(fixtures: Self.fixtures)
        // The server sends the noise as fast as it is taken; a decoder slowed by a loaded
        // machine must not trip the low-speed limit: a reconnect starts the station's 6 s of
        // AAC again (this server starts every connection so), and real audio in every window is
        // no noise. (Seen: a loaded run read on for 180 s.)
        var configuration = StreamSourceTests.configuration
        configuration.lowSpeedSeconds = 600
        let (reader, stream) = try URLSource.open(url: server.url("/noise/100000/live/tone.aac"), configuration: configuration)
        var chunk = [Int16](repeating: 0, count: 4096 * 2)
        var failure: ReelError?
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline && failure == nil {
            do {
                _ = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            } catch let error as ReelError {
                failure = error
            }
            usleep(1000)
        }
        let error = try #require(failure, "no error after 180 s; the stream: \(stream.current)")
        #expect(error.reason == .corruptFile && error.message.contains(server.url("/noise/100000/live/tone.aac")), "\(error)")
        #expect(stream.current.reconnects == 0, "\(stream.current)")
    }
}
