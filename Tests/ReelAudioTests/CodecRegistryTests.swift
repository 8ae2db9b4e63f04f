// The codec registry: one list of what plays, read by the scanner, the decoders and the front ends.

import Foundation
import ReelAudio
import ReelModel
import Testing

@Suite struct CodecRegistryTests {
    @Test func theNativeCodecsAreListedWithTheirSuffixesAndMIMETypes() {
        let names = CodecRegistry.codecs.map(\.name)
        for codec in ["flac", "mp3", "vorbis", "opus", "wav"] {
            #expect(names.contains(codec), "\(codec) is missing from \(names)")
        }
        #expect(Set(names).count == names.count, "a codec is listed twice: \(names)")
        #expect(CodecRegistry.codec(named: "flac")?.suffixes == ["flac"])
        #expect(CodecRegistry.mimeType(forSuffix: "FLAC") == "audio/flac")
        #expect(CodecRegistry.mimeType(forSuffix: "mp3") == "audio/mpeg")
        #expect(CodecRegistry.mimeType(forSuffix: "ogg") == "audio/ogg")
        #expect(CodecRegistry.mimeType(forSuffix: "txt") == "application/octet-stream")
        // A suffix may name several codecs (an .m4a holds AAC or ALAC: the content decides).
        #expect(CodecRegistry.mimeType(forSuffix: "m4a") == "audio/mp4")
        for suffix in ["m4a", "aac", "wv", "ape", "wma", "dsf", "dff", "tta", "mpc"] {
            #expect(CodecRegistry.suffixes.contains(suffix), "no codec of the registry takes .\(suffix) files")
        }
    }

    @Test func theRecordingFormatsAreTheRegistrysAndEachHasAWriterAndARepair() throws {
        #expect(Set(CodecRegistry.recordingFormats) == ["flac", "ogg", "opus", "wav"])
        #expect(CodecRegistry.recordingFormats.first == "flac")
        #expect(CodecRegistry.recordingCodec("ogg")?.name == "vorbis")
        #expect(CodecRegistry.recordingCodec("vorbis")?.recording?.format == "ogg")
        #expect(CodecRegistry.recordingCodec("mp3") == nil && CodecRegistry.recordingCodec("aac") == nil)
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for format in CodecRegistry.recordingFormats {
            let codec = try #require(CodecRegistry.recordingCodec(format))
            let path = directory.appendingPathComponent("take.\(format)").path
            let pcm = PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)
            let writer = try #require(codec.recording).makeWriter(path, pcm, true)
            let samples = TestAudio.toneSamples(seconds: 1, rate: 48000, channels: 1)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: samples.count * 2, alignment: 16)
            defer { buffer.deallocate() }
            samples.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            try writer.write(buffer, frames: samples.count)
            try writer.close()
            // What the writer made plays as the registry's codec, and its repair leaves it playing.
            #expect(try AudioFileOpener.open(path: path).format.codec == codec.name)
            let repaired = try RecordingRepair.repair(path: path, codec: format)
            #expect(abs(repaired.duration - 1) < 0.05, "\(format): \(repaired)")
        }
    }

    @Test(arguments: ["wav", "flac", "ogg", "opus", "mp3", "mp3-noxing"])
    func everyNativeCodecProbesAsItPlays(codec: String) throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let suffix = codec.hasPrefix("mp3") ? "mp3" : codec
        let path = directory.appendingPathComponent("tone.\(suffix)").path
        try TestAudio.writeTone(to: path, codec: codec, seconds: 0.5, rate: codec == "opus" ? 48000 : 44100)
        let probed = try CodecRegistry.probe(path: path)
        let played = try AudioFileOpener.open(path: path)
        #expect(probed.format == played.format)
        #expect(CodecRegistry.codec(named: probed.format.codec) != nil, "\(probed.format.codec) is not a registry name")
    }

    @Test func aFileIsJudgedByWhatItHoldsNotByItsSuffix() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // An MP3 named .flac plays (the decoders look at the content).
        let mp3 = directory.appendingPathComponent("really-an-mp3.flac").path
        try TestAudio.writeTone(to: mp3, codec: "mp3", seconds: 0.5)
        #expect(try CodecRegistry.probe(path: mp3).format.codec == "mp3")
        // Text named .flac does not, and the error names the file.
        let text = directory.appendingPathComponent("notes.flac").path
        try Data("not audio at all, just words".utf8).write(to: URL(fileURLWithPath: text))
        let error = try #require(throws: ReelError.self) { try CodecRegistry.probe(path: text) }
        #expect(error.reason == .unsupportedFormat)
        #expect(error.message.contains(text))
    }

    @Test func bytesThatNoDecoderTakesAreRefusedNamingTheFile() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for suffix in ["m4a", "wv", "ape", "wma", "dsf", "tta", "mpc"] {
            let path = directory.appendingPathComponent("track.\(suffix)").path
            try Data(count: 4096).write(to: URL(fileURLWithPath: path))
            let error = try #require(throws: ReelError.self) { try CodecRegistry.probe(path: path) }
            #expect(error.reason == .unsupportedFormat || error.reason == .corruptFile, "\(error)")
            #expect(error.message.contains(path), "\(error.message)")
        }
    }

    @Test func probingAnMP3WithoutATagGivesItsFormatAndALength() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Without a Xing tag the length is counted (a small file) or estimated, never left out.
        let path = directory.appendingPathComponent("untagged.mp3").path
        try TestAudio.writeTone(to: path, codec: "mp3-noxing", seconds: 2)
        let probed = try CodecRegistry.probe(path: path)
        #expect(probed.format.codec == "mp3")
        #expect(abs((probed.duration ?? 0) - 2) < 0.1, "\(String(describing: probed.duration))")
    }
}
