// The recording writers gather libsndfile's many small writes: the bytes reach the file at a
// flush, a sync or the close, whole and in order, and a full disk is still `disk_full`.

import Foundation
import Glibc
import ReelAudio
import ReelModel
import Testing

@Suite struct RecordingWriteBufferTests {
    let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)

    func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }

    func write(_ writer: RecordingWriter, ramp frames: Int, from first: Int) throws {
        let samples = (0..<frames).map { Int16(truncatingIfNeeded: first + $0) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: frames * 2, alignment: 16)
        defer { buffer.deallocate() }
        samples.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        try writer.write(buffer, frames: frames)
    }

    /// (WAV is written straight through: its header follows every write.)
    @Test(arguments: ["flac", "opus"])
    func whatIsWrittenReachesTheFileAtAFlushWholeAndInOrder(codec: String) throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("take.\(codec)").path
        let writer = try SndFileWriter(path: path, codec: codec, format: format, live: true)
        try writer.sync()
        let header = fileSize(path)
        // Half a second in tenth-of-a-second calls, as the capture writer makes them.
        for chunk in 0..<5 { try write(writer, ramp: 4800, from: chunk * 4800) }
        if codec != "opus" {
            // Opus pages close on their own clock; FLAC frames are held until the flush.
            #expect(fileSize(path) == header, "\(fileSize(path) - header) bytes reached the file before a flush")
        }
        try writer.flush()
        let flushed = fileSize(path)
        #expect(flushed > header, "a flush gave the file nothing")
        for chunk in 5..<20 { try write(writer, ramp: 4800, from: chunk * 4800) }
        try writer.close()
        let decoded = try TestAudio.decodeAll(try AudioFileOpener.open(path: path))
        if codec == "opus" {
            #expect(decoded.count == 96_000, "\(decoded.count) frames decoded")
        } else {
            #expect(decoded == (0..<96_000).map { Int16(truncatingIfNeeded: $0) }, "frames lost or altered")
        }
    }

    @Test func aFullDiskIsDiskFullAtTheFlushThatMeetsIt() throws {
        // /dev/full takes nothing: every write answers ENOSPC.
        let writer = try SndFileWriter(path: "/dev/full", codec: "flac", format: format, live: true)
        try write(writer, ramp: 4800, from: 0)
        #expect(throws: ReelError.self) { try writer.flush() }
        do {
            try writer.flush()
        } catch {
            #expect(error.reason == .diskFull, "\(error.message)")
            #expect(error.message.contains("/dev/full"))
        }
        #expect(throws: ReelError.self, "writing after a refused flush fails too") { try write(writer, ramp: 4800, from: 0) }
        #expect(throws: ReelError.self) { try writer.close() }
    }
}
