// A file libsndfile writes through (its virtual I/O), with the bytes gathered into large writes.

import CSndFile

#if canImport(Glibc)
import Glibc
#endif

/// A descriptor written through a buffer: libsndfile's encoders and libFLAC write a frame at a time
/// (libFLAC ~40 writes a second at 48 kHz, each a system call and a page-cache update), so their bytes are
/// gathered here and reach the kernel in one write when the owner calls `flush()` (the capture
/// writer does before it sleeps, and before each sync), or when 256 KiB are held. Seeks, reads
/// and the length see the buffered bytes as written. The first failed write is kept (`failure`)
/// and every later write fails. Not thread-safe: the writer's thread only.
final class WriteBehindFile {
    let descriptor: Int32
    private let capacity: Int
    private let buffer: UnsafeMutableRawPointer
    /// The file offset of the buffer's first byte, and how many bytes it holds.
    private var bufferStart: Int64 = 0
    private var buffered = 0
    private var position: Int64 = 0
    /// The end of what reached the descriptor.
    private var writtenLength: Int64 = 0
    /// The errno of the first write the kernel refused (0: none).
    private(set) var failure: Int32 = 0

    init(descriptor: Int32, capacity: Int = 256 * 1024) {
        self.descriptor = descriptor
        self.capacity = capacity
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    var length: Int64 { max(writtenLength, bufferStart + Int64(buffered)) }

    func write(_ source: UnsafeRawPointer, count: Int) -> Int {
        guard failure == 0 else { return 0 }
        if buffered > 0 && position != bufferStart + Int64(buffered) {
            guard flush() else { return 0 }
        }
        if buffered + count > capacity {
            guard flush() else { return 0 }
        }
        if count > capacity {
            guard writeAll(source, count: count, at: position) else { return 0 }
            position += Int64(count)
            return count
        }
        if buffered == 0 { bufferStart = position }
        (buffer + buffered).copyMemory(from: source, byteCount: count)
        buffered += count
        position += Int64(count)
        return count
    }

    func seek(_ offset: Int64, whence: Int32) -> Int64 {
        let target: Int64
        switch whence {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = position + offset
        case SEEK_END: target = length + offset
        default: return -1
        }
        guard target >= 0 else { return -1 }
        position = target
        return position
    }

    func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        guard flush() else { return -1 }
        let got = pread(descriptor, destination, count, off_t(position))
        guard got >= 0 else { return -1 }
        position += Int64(got)
        return got
    }

    func tell() -> Int64 { position }

    /// Hands the buffered bytes to the kernel; false (and `failure` set) when it refused them.
    @discardableResult
    func flush() -> Bool {
        guard failure == 0 else { return false }
        guard buffered > 0 else { return true }
        let ok = writeAll(buffer, count: buffered, at: bufferStart)
        buffered = 0
        return ok
    }

    private func writeAll(_ source: UnsafeRawPointer, count: Int, at offset: Int64) -> Bool {
        var done = 0
        while done < count {
            let wrote = pwrite(descriptor, source + done, count - done, off_t(offset + Int64(done)))
            if wrote < 0 {
                if errno == EINTR { continue }
                failure = errno
                return false
            }
            if wrote == 0 {
                failure = ENOSPC
                return false
            }
            done += wrote
        }
        writtenLength = max(writtenLength, offset + Int64(count))
        return true
    }

    /// libsndfile's virtual I/O over a `WriteBehindFile` passed as the user data (unretained:
    /// the caller keeps it alive while the SNDFILE is open).
    static var virtualIO: SF_VIRTUAL_IO {
        SF_VIRTUAL_IO(
            get_filelen: { data in sf_count_t(WriteBehindFile.from(data).length) },
            seek: { offset, whence, data in sf_count_t(WriteBehindFile.from(data).seek(Int64(offset), whence: whence)) },
            read: { pointer, count, data in
                guard let pointer else { return 0 }
                return sf_count_t(WriteBehindFile.from(data).read(into: pointer, count: Int(count)))
            },
            write: { pointer, count, data in
                guard let pointer else { return 0 }
                return sf_count_t(WriteBehindFile.from(data).write(pointer, count: Int(count)))
            },
            tell: { data in sf_count_t(WriteBehindFile.from(data).tell()) })
    }

    /// The user data libsndfile (or libFLAC) hands back.
    static func from(_ data: UnsafeMutableRawPointer?) -> WriteBehindFile {
        Unmanaged<WriteBehindFile>.fromOpaque(data!).takeUnretainedValue()
    }

    /// The user data for `sf_open_virtual` (unretained).
    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}
