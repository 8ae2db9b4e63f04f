// Making a recording that was cut off (kill -9, power cut, full disk) readable by every tool.

import CSndFile
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// What a repair did and what the file holds afterwards.
public struct RepairOutcome: Sendable, Equatable {
    /// A sentence for the log: what was wrong and what was changed.
    public var action: String
    public var frames: Int64
    public var format: AudioFormat
    /// Bytes on disk after the repair.
    public var size: Int64

    public var duration: Double { format.sampleRate > 0 ? Double(frames) / Double(format.sampleRate) : 0 }
}

/// Repairs a file the recorder did not finish, in place and without needing free disk space:
/// - WAV: the RIFF and data sizes are rewritten from the file's length (whole frames only);
/// - FLAC: the file is cut after its last complete frame (CRC-checked) and STREAMINFO is given
///   the number of samples it holds;
/// - Ogg Vorbis and Opus: the file is cut after its last complete page (CRC-checked).
/// Then the file is decoded to count its frames, and synced.
public enum RecordingRepair {
    public static func repair(path: String, codec: String) throws(ReelError) -> RepairOutcome {
        // The codec registry knows how each recording format is made whole.
        guard let recording = CodecRegistry.recordingCodec(codec)?.recording else {
            throw ReelError(.unsupportedFormat, "cannot repair a \(codec) file: \(path)")
        }
        let action = try recording.repair(path)
        let (frames, format) = try countFrames(path)
        return RepairOutcome(action: action, frames: frames, format: format, size: fileSize(path))
    }

    /// libsndfile rewrites a WAV header from the data it finds when a file opened read/write is
    /// closed.
    static func repairWAV(_ path: String) throws(ReelError) -> String {
        let before = fileSize(path)
        var info = SF_INFO()
        let file: OpaquePointer
        switch SndFileOpening.open({ sf_open(path, Int32(SFM_RDWR), &info) }) {
        case .success(let opened): file = opened
        case .failure(let failure): throw ReelError(.corruptFile, "cannot repair \(path): \(failure.message)")
        }
        sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        sf_close(file)
        syncFile(path)
        return "rewrote the WAV header for \(info.frames) frames (\(before) bytes)"
    }

    /// Decodes the whole file: the frames every reader will find.
    static func countFrames(_ path: String) throws(ReelError) -> (Int64, AudioFormat) {
        let reader = try AudioFileOpener.open(path: path)
        let chunk = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk * reader.pcmFormat.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        var frames: Int64 = 0
        while true {
            let read: Int
            do {
                read = try reader.read(into: buffer, frames: chunk)
            } catch {
                break  // a damaged tail: what decoded so far is what readers get
            }
            if read == 0 { break }
            frames += Int64(read)
        }
        return (frames, reader.format)
    }

    /// Bytes in the file at `path`, 0 if there is none.
    public static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    public static func syncFile(_ path: String) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }

    /// Writes a valid take of no frames at `path` (replacing what is there), synced with its
    /// directory entry: for an unfinished take whose file never reached the disk (a power cut
    /// before its first sync left it empty, or before its directory was synced, missing).
    /// `codec` is a recording codec's name or format (`flac`, `vorbis`, `ogg`, ...).
    public static func writeEmptyTake(path: String, codec: String, format: PCMFormat) throws(ReelError) {
        guard let recording = CodecRegistry.recordingCodec(codec)?.recording else {
            throw ReelError(.unsupportedFormat, "cannot write an empty \(codec) take at \(path)")
        }
        unlink(path)
        let writer = try recording.makeWriter(path, format, false)
        try writer.close()
        syncFile(path)
        syncDirectory(of: path)
    }

    /// Makes the entry of the file at `path` durable: fsyncs the directory holding it (a file's
    /// own fsync does not promise its name survives a power cut).
    public static func syncDirectory(of path: String) {
        guard let slash = path.lastIndex(of: "/") else { return }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        let fd = open(directory, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }
}

/// A file mapped read-only, for scanning its structure.
struct MappedFile {
    let bytes: UnsafeRawBufferPointer
    private let base: UnsafeMutableRawPointer?

    init(path: String) throws(ReelError) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw ReelError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(fd) }
        var info = stat()
        fstat(fd, &info)
        let size = Int(info.st_size)
        if size == 0 {
            base = nil
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        let mapped = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0)
        guard let mapped, mapped != MAP_FAILED else {
            throw ReelError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        base = mapped
        bytes = UnsafeRawBufferPointer(start: mapped, count: size)
    }

    func unmap() {
        if let base { munmap(base, bytes.count) }
    }
}

/// Cuts a file to `length` bytes and syncs it.
func truncateFile(_ path: String, to length: Int) throws(ReelError) {
    guard truncate(path, off_t(length)) == 0 else {
        throw ReelError(.ioError, "cannot cut \(path) to \(length) bytes: \(String(cString: strerror(errno)))")
    }
}
