import Foundation
import ReelModel
import Testing

@testable import ReelAudio

/// The start of a file read without a decoder: is it an MP3, where does its first frame begin,
/// and what does its Xing/Info tag say.
@Suite struct MP3LayoutTests {
    let directory = TestAudio.temporaryDirectory()

    @Test(arguments: [("mp3", true), ("mp3-cbr", true), ("mp3-xing-only", true), ("mp3-noxing", false)])
    func tagIsFoundWhereLAMEWroteIt(kind: String, tagged: Bool) throws {
        let path = directory.appendingPathComponent("\(kind).mp3").path
        try TestAudio.writeTone(to: path, codec: kind, seconds: 2)
        let layout = try #require(MP3Layout.read(path: path))
        #expect(layout.audioStart == 0)
        #expect(layout.firstFrame.sampleRate == 44100 && !layout.firstFrame.mono)
        #expect((layout.xing != nil) == tagged)
        #expect((layout.declaredFrames != nil) == tagged)
        // 2 s of 1,152-sample frames, and the encoder's delay and padding: about 78.
        if let frames = layout.declaredFrames { #expect((77...80).contains(frames), "\(frames) frames") }
    }

    /// The first bytes of other formats are not taken for MPEG frames: they still open through
    /// libsndfile.
    @Test(arguments: ["wav", "flac", "ogg", "opus"])
    func otherFormatsAreNotTakenForMP3(codec: String) throws {
        let path = directory.appendingPathComponent("tone.\(codec)").path
        try TestAudio.writeTone(to: path, codec: codec, seconds: 1, rate: codec == "opus" ? 48000 : 44100)
        #expect(MP3Layout.read(path: path) == nil)
        let reader = try AudioFileOpener.open(path: path)
        #expect(reader is SndFileReader)
        #expect(reader.frameCountIsFinal)
    }

    @Test func frameHeaderFields() throws {
        // MPEG-1 Layer III, 128 kb/s, 44.1 kHz, padded, joint stereo.
        let header = try #require(MP3FrameHeader([0xFF, 0xFB, 0x92, 0x64], at: 0))
        #expect(header.version == .mpeg1)
        #expect(header.bitrate == 128_000 && header.sampleRate == 44100 && header.padding && !header.mono)
        #expect(header.length == 418)
        #expect(header.sideInformationLength == 32)
        // MPEG-2 Layer III, 64 kb/s, 22.05 kHz, mono.
        let mono = try #require(MP3FrameHeader([0xFF, 0xF3, 0x80, 0xC0], at: 0))
        #expect(mono.version == .mpeg2 && mono.sampleRate == 22050 && mono.mono)
        #expect(mono.length == 208 && mono.sideInformationLength == 9)
        // Layer II, a free-format bitrate, a reserved rate, ADTS (AAC): none is a Layer III frame.
        for bytes: [UInt8] in [[0xFF, 0xFD, 0x90, 0x00], [0xFF, 0xFB, 0x00, 0x00], [0xFF, 0xFB, 0x9C, 0x00], [0xFF, 0xF1, 0x50, 0x80]] {
            #expect(MP3FrameHeader(bytes, at: 0) == nil)
        }
    }
}
