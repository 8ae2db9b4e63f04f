// The recorder's FLAC encoder (libFLAC directly): sample-exact files with their length and no
// MD5, what a sync pushed survives a cut, and the disk's refusals are errors naming the file.

import Foundation
import Glibc
@testable import ReelAudio
import ReelModel
import Testing

@Suite struct FLACWriterTests {
    func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "reel-flac-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Interleaved samples where sample n holds n (wrapping), with a little noise on the second
    /// channel so the channels differ.
    func ramp(frames: Int, from first: Int, channels: Int) -> [Int16] {
        (0..<frames * channels).map { index in
            let frame = first + index / channels
            return Int16(truncatingIfNeeded: index % channels == 0 ? frame : frame &* 7)
        }
    }

    func write(_ writer: RecordingWriter, _ samples: [Int16], channels: Int) throws {
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frames: samples.count / channels) }
    }

    /// STREAMINFO's bits per sample, total samples (36 bits) and MD5, read from the file's first
    /// metadata block.
    func streamInfo(_ path: String) throws -> (bits: Int, samples: Int64, md5: [UInt8]) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        try #require(bytes.count >= 42 && bytes[0..<4] == [0x66, 0x4C, 0x61, 0x43], "no fLaC marker")
        let info = Array(bytes[8..<42])
        var samples = Int64(info[13] & 0x0F)
        for index in 14..<18 { samples = samples << 8 | Int64(info[index]) }
        return (Int((info[12] & 1) << 4 | info[13] >> 4) + 1, samples, Array(info[18..<34]))
    }

    @Test(arguments: [1, 2])
    func aTakeDecodesSampleExactWithItsLengthAndNoMD5(channels: Int) throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.flac"
        let writer = try FLACWriter(path: path, format: PCMFormat(sample: .s16, sampleRate: 48000, channels: channels))
        // Two seconds in tenth-of-a-second calls, as the capture writer makes them, and an odd tail.
        for chunk in 0..<20 { try write(writer, ramp(frames: 4800, from: chunk * 4800, channels: channels), channels: channels) }
        try write(writer, ramp(frames: 1001, from: 96_000, channels: channels), channels: channels)
        try writer.close()
        let info = try streamInfo(path)
        #expect(info.bits == 16)
        #expect(info.samples == 97_001, "STREAMINFO's length")
        #expect(info.md5 == [UInt8](repeating: 0, count: 16), "no MD5 (zero: not computed)")
        let reader = try AudioFileOpener.open(path: path)
        #expect(reader.format.channels == channels)
        #expect(try TestAudio.decodeAll(reader) == ramp(frames: 97_001, from: 0, channels: channels), "frames lost or altered")
    }

    @Test func aFileOfNoFramesIsValidFromTheOpen() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.flac"
        let writer = try FLACWriter(path: path, format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        try writer.sync()
        // What a power cut right after the take began leaves: STREAMINFO and nothing else.
        let cut = directory + "/cut.flac"
        try FileManager.default.copyItem(atPath: path, toPath: cut)
        #expect(try TestAudio.decodeAll(try AudioFileOpener.open(path: cut)).isEmpty)
        try writer.close()
        #expect(try TestAudio.decodeAll(try AudioFileOpener.open(path: path)).isEmpty)
        #expect(try AudioFileOpener.open(path: path).format.sampleRate == 44100)
    }

    /// The metadata is STREAMINFO, libFLAC's comment and a PADDING block, ending where the first
    /// frame starts, at `metadataEnd` (the room a take's chapters are written into in place).
    @Test func aTakeReservesItsMetadataUpToTheFirstFrame() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.flac"
        let writer = try FLACWriter(path: path, format: PCMFormat(sample: .s16, sampleRate: 8000, channels: 1))
        try write(writer, ramp(frames: 8000, from: 0, channels: 1), channels: 1)
        try writer.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset = 4
        var types: [UInt8] = []
        while true {
            let last = bytes[offset] & 0x80 != 0
            types.append(bytes[offset] & 0x7F)
            offset += 4 + (Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
            if last { break }
        }
        #expect(types == [0, 4, 1], "STREAMINFO, VORBIS_COMMENT, PADDING: \(types)")
        #expect(offset == FLACWriter.metadataEnd)
        #expect(bytes[offset] == 0xFF && bytes[offset + 1] & 0xFE == 0xF8, "a frame starts where the metadata ends")
        #expect(try TestAudio.decodeAll(try AudioFileOpener.open(path: path)).count == 8000)
    }

    /// A power cut keeps what the last sync pushed: a copy of the file made right after a sync
    /// (as the disk holds it), repaired, is the ramp up to at most a block (1152 frames at
    /// levels 0–2) before what was written.
    @Test func whatASyncPushedSurvivesACutAndRepairs() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.flac"
        let writer = try FLACWriter(path: path, format: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1), level: 1)
        for chunk in 0..<15 { try write(writer, ramp(frames: 4800, from: chunk * 4800, channels: 1), channels: 1) }
        try writer.sync()
        let cut = directory + "/cut.flac"
        try FileManager.default.copyItem(atPath: path, toPath: cut)
        // More is written after the sync, never synced.
        try write(writer, ramp(frames: 4800, from: 72_000, channels: 1), channels: 1)
        try writer.close()
        let outcome = try RecordingRepair.repair(path: cut, codec: "flac")
        #expect(outcome.frames <= 72_000 && outcome.frames >= 72_000 - 1152, "kept \(outcome.frames) of 72000 synced frames")
        #expect(try streamInfo(cut).samples == outcome.frames, "the repair wrote the length kept")
        let decoded = try TestAudio.decodeAll(try AudioFileOpener.open(path: cut))
        #expect(decoded == ramp(frames: Int(outcome.frames), from: 0, channels: 1))
    }

    @Test func twentyFourBitSamplesKeepTheirTopTwentyFourBits() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.flac"
        let writer = try FLACWriter(path: path, format: PCMFormat(sample: .s32, sampleRate: 48000, channels: 1))
        let samples = (0..<9600).map { Int32(truncatingIfNeeded: ($0 &* 4099) << 8) }
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frames: samples.count) }
        try writer.close()
        let info = try streamInfo(path)
        #expect(info.bits == 24)
        #expect(info.samples == 9600)
        #expect(try AudioFileOpener.open(path: path).knownDuration?.seconds == 0.2)
    }

    @Test func aFullDiskIsDiskFullAtTheFlushThatMeetsIt() throws {
        // /dev/full takes nothing: every write answers ENOSPC.
        let writer = try FLACWriter(path: "/dev/full", format: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1))
        try write(writer, ramp(frames: 4800, from: 0, channels: 1), channels: 1)
        do {
            try writer.flush()
            Issue.record("a flush to a full disk went through")
        } catch {
            #expect(error.reason == .diskFull, "\(error.message)")
            #expect(error.message.contains("/dev/full"))
        }
        #expect(throws: ReelError.self, "writing after a refused flush fails too") {
            try write(writer, ramp(frames: 4800, from: 4800, channels: 1), channels: 1)
        }
        #expect(throws: ReelError.self) { try writer.close() }
    }

    @Test func aSyncTheDiskRefusesIsAnErrorNamingTheFile() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.flac"
        let writer = try FLACWriter(
            path: path, format: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1),
            fsync: { _ in
                errno = EIO
                return -1
            })
        try write(writer, ramp(frames: 48000, from: 0, channels: 1), channels: 1)
        let message = "cannot sync \(path) to the disk: Input/output error; what was recorded may not be on it"
        #expect(throws: ReelError(.ioError, message)) { try writer.sync() }
        #expect(throws: ReelError(.ioError, message)) { try writer.close() }
        try writer.close()  // closed already: nothing more to say
    }

    @Test func aFolderThatIsNotThereIsAnErrorNamingTheFile() throws {
        let path = NSTemporaryDirectory() + "reel-no-such-\(UUID().uuidString)/take.flac"
        #expect(throws: ReelError(.ioError, "cannot create \(path): No such file or directory")) {
            _ = try FLACWriter(path: path, format: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1))
        }
    }

    @Test func theCompressionLevelReachesTheEncoder() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var generator = SystemRandomNumberGenerator()
        let samples = (0..<240_000).map { index in
            Int16(sin(Double(index) * 2 * .pi * 440 / 48000) * 12000) &+ Int16.random(in: -300...300, using: &generator)
        }
        var sizes: [Int: Int] = [:]
        for level in [0, 8] {
            let path = directory + "/level\(level).flac"
            let writer = try FLACWriter(path: path, format: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1), level: level)
            try write(writer, samples, channels: 1)
            try writer.close()
            sizes[level] = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(try TestAudio.decodeAll(try AudioFileOpener.open(path: path)) == samples, "level \(level) decodes whole")
        }
        #expect(try #require(sizes[8]) < (try #require(sizes[0])), "level 8 compresses more than level 0: \(sizes)")
    }

    @Test func theRecorderWritesFLACThroughIt() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let recording = try #require(CodecRegistry.recordingCodec("flac")?.recording)
        let writer = try recording.makeWriter(directory + "/take.flac", PCMFormat(sample: .s16, sampleRate: 48000, channels: 1), true)
        #expect(writer is FLACWriter)
        try writer.close()
    }
}
