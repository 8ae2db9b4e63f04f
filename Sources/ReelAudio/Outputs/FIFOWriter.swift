// A named pipe held open at both ends: written, measured, and emptied of what nobody read.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// One FIFO, for the audio thread. reeld opens it for reading as well as for writing (as MPD's
/// fifo output does), with `O_NONBLOCK` on both ends, so that:
///
/// - opening never waits for a reader and never fails for want of one (a write-only open of a
///   FIFO nobody reads fails with `ENXIO`, and a reader such as snapserver, which reopens the
///   FIFO 100 ms after it sees end-of-file, would be missed between its attempts);
/// - the reader sees no end-of-file while reeld runs, only an empty pipe while nothing plays;
/// - reeld can tell how much is still in the pipe (`queuedBytes`, `FIONREAD` on its read end)
///   and throw away what nobody read (`discard`): a reader that comes back never gets more than
///   the lead, and never audio from before a pause.
///
/// Nothing here blocks. A write that finds the pipe full writes what fits. SIGPIPE is ignored
/// process-wide (once), so an `EPIPE` is an error code, never the end of the process; any write
/// error closes both ends and the next `connect` opens them again, at most every
/// `retryNanoseconds` (no busy loop). A path that is not a FIFO or may not be opened is a
/// failure: `connect` throws and the output is turned off.
final class FIFOWriter {
    let path: String
    static let retryNanoseconds: UInt64 = 200_000_000

    private(set) var descriptor: Int32 = -1
    private var readDescriptor: Int32 = -1
    private var nextAttempt: UInt64 = 0
    private let scratch = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)

    init(path: String) {
        self.path = path
        _ = Self.ignoreSIGPIPE
    }

    deinit {
        disconnect()
        scratch.deallocate()
    }

    /// A write to a pipe nobody reads must be an error, not the end of the process.
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    var isConnected: Bool { descriptor >= 0 }

    /// Opens both ends if they are not open and the last attempt is old enough; returns true
    /// when open. `capacity` is the pipe size to ask for (at least). Throws when the path cannot
    /// be used at all.
    func connect(now: UInt64, capacity: Int) throws(ReelError) -> Bool {
        if descriptor >= 0 { return true }
        guard now >= nextAttempt else { return false }
        nextAttempt = now + Self.retryNanoseconds
        let reader = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard reader >= 0 else { throw FIFOPath.failure(path, errno) }
        var status = stat()
        guard fstat(reader, &status) == 0, (status.st_mode & S_IFMT) == S_IFIFO else {
            Glibc.close(reader)
            throw FIFOPath.notAFIFO(path)
        }
        let writer = Glibc.open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard writer >= 0 else {
            let code = errno
            Glibc.close(reader)
            throw FIFOPath.failure(path, code)
        }
        // Linux's F_GETPIPE_SZ and F_SETPIPE_SZ (Glibc's headers hide them behind _GNU_SOURCE).
        let size = fcntl(writer, 1032)
        if size >= 0 && size < capacity { _ = fcntl(writer, 1031, Int32(min(capacity, 1 << 20))) }
        readDescriptor = reader
        descriptor = writer
        return true
    }

    /// Writes what the pipe takes now; returns the bytes written (0 when it is full), or nil
    /// after an error (both ends are closed).
    func write(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard descriptor >= 0, let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        while true {
            let written = Glibc.write(descriptor, base, bytes.count)
            if written >= 0 { return written }
            switch errno {
            case EINTR: continue
            case EAGAIN: return 0
            default:
                disconnect()
                return nil
            }
        }
    }

    /// Bytes in the pipe that no reader has taken yet.
    func queuedBytes() -> Int {
        guard readDescriptor >= 0 else { return 0 }
        var count: Int32 = 0
        return ioctl(readDescriptor, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }

    /// Reads and throws away up to `limit` bytes from the front of the pipe (the oldest); returns
    /// how many.
    @discardableResult
    func discard(upTo limit: Int) -> Int {
        guard readDescriptor >= 0 else { return 0 }
        var total = 0
        while total < limit {
            let count = read(readDescriptor, scratch, min(limit - total, 1 << 16))
            if count <= 0 { break }
            total += count
        }
        return total
    }

    func disconnect() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        if readDescriptor >= 0 { Glibc.close(readDescriptor) }
        descriptor = -1
        readDescriptor = -1
        nextAttempt = 0
    }
}

/// Checks and makes the FIFO of a pipe output, on the control side.
public enum FIFOPath {
    static func failure(_ path: String, _ code: Int32) -> ReelError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOENT:
            return ReelError(.deviceUnavailable, "pipe output \(path) does not exist (\(reason))")
        case EACCES, EPERM, EROFS:
            return ReelError(.deviceUnavailable, "pipe output \(path) may not be opened by reeld (\(reason))")
        default:
            return ReelError(.deviceUnavailable, "pipe output \(path) cannot be opened: \(reason)")
        }
    }

    static func notAFIFO(_ path: String) -> ReelError {
        ReelError(.deviceUnavailable, "pipe output \(path) is not a FIFO; make it with mkfifo, or remove it and reeld makes it")
    }

    /// Makes the FIFO (mode 0660, less the umask) if the path does not exist, owned by `group`
    /// when one is given (so that a reader in that group, such as snapserver, may open it);
    /// checks it is a FIFO reeld may read and write otherwise.
    public static func prepare(_ path: String, group: String? = nil) throws(ReelError) {
        var status = stat()
        if stat(path, &status) != 0 {
            let code = errno
            guard code == ENOENT else { throw failure(path, code) }
            guard mkfifo(path, 0o660) == 0 else {
                let made = errno
                if made == EEXIST { return try prepare(path, group: group) }
                throw ReelError(.deviceUnavailable, "cannot make the FIFO \(path): \(String(cString: strerror(made)))")
            }
            if let group {
                guard let entry = getgrnam(group) else {
                    throw ReelError(.deviceUnavailable, "pipe output \(path): there is no group \"\(group)\"")
                }
                guard chown(path, uid_t.max, entry.pointee.gr_gid) == 0 else {
                    let reason = String(cString: strerror(errno))
                    throw ReelError(
                        .deviceUnavailable, "pipe output \(path): cannot give it to group \"\(group)\" (\(reason)); reeld must be in that group")
                }
            }
            return
        }
        guard (status.st_mode & S_IFMT) == S_IFIFO else { throw notAFIFO(path) }
        guard access(path, R_OK | W_OK) == 0 else { throw failure(path, errno) }
    }
}
