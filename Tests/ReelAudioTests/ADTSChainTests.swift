// Which stream starts open FFmpeg's `aac` demuxer without its format probe: chained ADTS frame
// headers (pure), and an ADTS station opened so plays.

import Foundation
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite struct ADTSChainTests {
    /// An ADTS frame of `length` bytes (header included): AAC-LC, 44,100 Hz (index 4) unless
    /// `rate` says otherwise, stereo, no CRC; its payload bytes 0x21.
    static func frame(length: Int, rate: UInt8 = 4) -> [UInt8] {
        var bytes: [UInt8] = [
            0xFF, 0xF1, 0x40 | rate << 2, 0x80 | UInt8((length >> 11) & 0x03),
            UInt8((length >> 3) & 0xFF), UInt8((length & 0x07) << 5) | 0x1F, 0xFC,
        ]
        bytes += [UInt8](repeating: 0x21, count: length - 7)
        return bytes
    }

    @Test func threeHeadersEachAtTheLengthTheOneBeforeSaysAreADTS() {
        let frames = Self.frame(length: 371) + Self.frame(length: 380) + Self.frame(length: 365)
        #expect(ADTSChain.header(frames, at: 0)?.length == 371)
        #expect(ADTSChain.start(in: frames) == 0)
    }

    @Test func aBurstThatStartsInTheMiddleOfAFrameFindsTheNextHeader() {
        // An Icecast burst: the end of a frame, then frames.
        let tail = [UInt8](Self.frame(length: 400).suffix(123))
        let bytes = tail + Self.frame(length: 371) + Self.frame(length: 380) + Self.frame(length: 365)
        #expect(ADTSChain.start(in: bytes) == 123)
    }

    @Test func headersThatDoNotChainAreNot() {
        // The second frame is not where the first's length says.
        let broken = Self.frame(length: 371) + [0] + Self.frame(length: 380) + Self.frame(length: 365)
        #expect(ADTSChain.start(in: broken) == nil)
        // Two headers are not enough.
        #expect(ADTSChain.start(in: Self.frame(length: 371) + Self.frame(length: 380)) == nil)
        // The sampling frequency changes from one header to the next.
        #expect(ADTSChain.start(in: Self.frame(length: 371) + Self.frame(length: 380, rate: 3) + Self.frame(length: 365)) == nil)
        // A frame length shorter than its header.
        var short = Self.frame(length: 371) + Self.frame(length: 380) + Self.frame(length: 365)
        short[3] = 0x80; short[4] = 0; short[5] = 0x1F
        #expect(ADTSChain.header(short, at: 0) == nil)
        // A reserved sampling frequency index (13).
        #expect(ADTSChain.header(Self.frame(length: 371, rate: 13), at: 0) == nil)
    }

    @Test func mp3FramesNoiseAndHeadersTooFarInAreNot() {
        // MPEG-1 Layer III frames of 417 bytes (128 kbit/s, 44,100 Hz).
        let mp3 = Array(repeating: [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0x55, count: 413), count: 4).flatMap { $0 }
        #expect(ADTSChain.start(in: mp3) == nil)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<32768).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(ADTSChain.start(in: noise) == nil)
        let late = [UInt8](repeating: 0, count: ADTSChain.searchBytes) + Self.frame(length: 371) + Self.frame(length: 380) + Self.frame(length: 365)
        #expect(ADTSChain.start(in: late) == nil)
        #expect(ADTSChain.start(in: []) == nil)
    }

    @Test func adtsFramesInsideAnotherContainerAreThatContainers() {
        let frames = Self.frame(length: 60) + Self.frame(length: 60) + Self.frame(length: 60)
        // Three small frames in an MPEG-TS packet's payload, then the next packet.
        let packet = [0x47, 0x41, 0x00, 0x10] + frames + [UInt8](repeating: 0xFF, count: 184 - frames.count)
        #expect(ADTSChain.start(in: packet + packet) == nil)
        #expect(ADTSChain.start(in: Array("OggS".utf8) + [0, 2] + frames) == nil)
        #expect(ADTSChain.start(in: [0, 0, 0, 0x20] + Array("ftypM4A ".utf8) + frames) == nil)
        // The same frames alone are ADTS.
        #expect(ADTSChain.start(in: frames) == 0)
    }
}

@Suite(.serialized) struct ADTSStationOpenTests {
    @Test func anADTSStationOpensWithTheAACDemuxerNamedAndPlays() throws {
        let server = try StreamServer(fixtures: StreamCodecTests.fixtures)
        try StreamCodecTests.playsTheTone(server, "/live/tone.aac", codec: "aac", rate: 44100)
        let (reader, _) = try StreamCodecTests.open(server.url("/live/tone.aac"))
        #expect((reader as? FFmpegStreamReader)?.demuxerWasNamed == true)
        // Anything else is probed as before.
        let (ogg, _) = try StreamCodecTests.open(server.url("/live/tone.ogg"))
        #expect((ogg as? FFmpegStreamReader)?.demuxerWasNamed == false)
    }
}
