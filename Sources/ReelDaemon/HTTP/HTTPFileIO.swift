// Blocking file calls for the HTTP routes, on a small thread pool of their own.

import NIOCore
import NIOPosix
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// Opens, reads, writes and removes files for `/audio` and `/import` on `pool`, never on the
/// event loop (a disk that stalls stalls one of these threads, not every client); each call's
/// future completes on the loop given. Descriptors are plain `Int32`s owned by the caller,
/// which closes each exactly once (`close`).
final class HTTPFileIO: Sendable {
    private let pool: NIOThreadPool

    /// A recording's file opened for reading: its descriptor, size and change time.
    struct OpenedFile: Sendable {
        let descriptor: Int32
        let size: Int64
        /// Nanoseconds since the epoch of the last change, for the ETag.
        let modified: Int64
    }

    init(threads: Int) {
        pool = NIOThreadPool(numberOfThreads: threads)
    }

    func start() { pool.start() }

    func shutdown() { try? pool.syncShutdownGracefully() }

    /// Opens a regular file for reading.
    func openForReading(_ path: String, on loop: EventLoop) -> EventLoopFuture<OpenedFile> {
        pool.runIfActive(eventLoop: loop) { () throws -> OpenedFile in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Self.failure("open", path) }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                let error = Self.failure("read", path)
                Glibc.close(fd)
                throw error
            }
            let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            return OpenedFile(descriptor: fd, size: Int64(info.st_size), modified: modified)
        }
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    func read(_ fd: Int32, offset: Int64, count: Int, allocator: ByteBufferAllocator, on loop: EventLoop)
        -> EventLoopFuture<ByteBuffer>
    {
        pool.runIfActive(eventLoop: loop) { () throws -> ByteBuffer in
            var buffer = allocator.buffer(capacity: count)
            var failed: Int32 = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                while true {
                    let n = pread(fd, bytes.baseAddress, count, off_t(offset))
                    if n >= 0 { return n }
                    if errno != EINTR {
                        failed = errno
                        return 0
                    }
                }
            }
            if failed != 0 { throw Self.failure("read", "a recording", failed) }
            return buffer
        }
    }

    /// Creates a new file (it must not exist), with the mode of an imported file.
    func create(_ path: String, on loop: EventLoop) -> EventLoopFuture<Int32> {
        pool.runIfActive(eventLoop: loop) { () throws -> Int32 in
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw Self.failure("create", path) }
            return fd
        }
    }

    /// Appends every byte of `bytes`.
    func write(_ fd: Int32, _ bytes: [UInt8], path: String, on loop: EventLoop) -> EventLoopFuture<Void> {
        pool.runIfActive(eventLoop: loop) { () throws -> Void in
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Self.failure("write", path)
                }
                written += n
            }
        }
    }

    /// Closes a descriptor (a close error of a file only read is of no interest; a written
    /// file is fsynced by the import before it counts).
    func close(_ fd: Int32, on loop: EventLoop) -> EventLoopFuture<Void> {
        pool.runIfActive(eventLoop: loop) { _ = Glibc.close(fd) }
    }

    /// Closes a descriptor (if any) and removes the file: an upload that did not make it.
    func discard(_ fd: Int32?, path: String, on loop: EventLoop) -> EventLoopFuture<Void> {
        pool.runIfActive(eventLoop: loop) {
            if let fd { _ = Glibc.close(fd) }
            _ = unlink(path)
        }
    }

    static func failure(_ what: String, _ path: String, _ code: Int32 = errno) -> ReelError {
        let reason: ErrorReason =
            switch code {
            case ENOSPC, EDQUOT: .diskFull
            case ENOENT: .notFound
            default: .ioError
            }
        return ReelError(reason, "cannot \(what) \(path): \(String(cString: strerror(code)))")
    }
}
