// The write end of a named pipe: opened without blocking, retried while nobody reads.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// One FIFO's write end, for the audio thread. Nothing here blocks:
///
/// - `open(2)` with `O_NONBLOCK` fails at once with `ENXIO` while no reader has the FIFO open;
///   `connect` then waits `retryNanoseconds` before it tries again (no busy loop).
/// - A write that finds the FIFO full (`EAGAIN`: the reader is not keeping up) writes what fits.
/// - A write after the reader went away gets `EPIPE` (SIGPIPE is ignored process-wide, once):
///   the descriptor is closed, which also throws away whatever was still in the FIFO, so a
///   reader that comes back never hears stale audio; the next `connect` waits for a new reader.
/// - A path that is not a FIFO, or that may not be written, is a failure: `connect` throws and
///   the output is turned off.
final class FIFOWriter {
    let path: String
    /// How long to wait between attempts while nobody reads the FIFO.
    static let retryNanoseconds: UInt64 = 200_000_000

    private(set) var descriptor: Int32 = -1
    private var nextAttempt: UInt64 = 0

    init(path: String) {
        self.path = path
        _ = Self.ignoreSIGPIPE
    }

    deinit { disconnect() }

    /// A write to a FIFO nobody reads must be an error, not the end of the process.
    private static let ignoreSIGPIPE: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    var isConnected: Bool { descriptor >= 0 }

    /// Opens the FIFO if a reader has it open and the last attempt is old enough. Returns true
    /// when connected. Throws when the path cannot be used at all.
    func connect(now: UInt64) throws(ReelError) -> Bool {
        if descriptor >= 0 { return true }
        guard now >= nextAttempt else { return false }
        nextAttempt = now + Self.retryNanoseconds
        let opened = Glibc.open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard opened >= 0 else {
            let code = errno
            if code == ENXIO { return false }  // no reader yet
            throw FIFOPath.failure(path, code)
        }
        var status = stat()
        guard fstat(opened, &status) == 0, (status.st_mode & S_IFMT) == S_IFIFO else {
            Glibc.close(opened)
            throw ReelError(.deviceUnavailable, "pipe output \(path) is not a FIFO; make it with mkfifo, or remove it and reeld makes it")
        }
        descriptor = opened
        return true
    }

    /// Writes what the FIFO takes now; returns the bytes written (0 when it is full), or nil
    /// when the reader went away (the descriptor is closed).
    func write(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard descriptor >= 0, let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        while true {
            let written = Glibc.write(descriptor, base, bytes.count)
            if written >= 0 { return written }
            switch errno {
            case EINTR: continue
            case EAGAIN: return 0
            default:
                // EPIPE: no reader any more. Anything else: start over as well.
                disconnect()
                return nil
            }
        }
    }

    func disconnect() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
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
            return ReelError(.deviceUnavailable, "pipe output \(path) may not be written by reeld (\(reason))")
        default:
            return ReelError(.deviceUnavailable, "pipe output \(path) cannot be opened: \(reason)")
        }
    }

    /// Makes the FIFO if the path does not exist; checks it is a FIFO reeld may write otherwise.
    /// Called on the control side when the output is turned on.
    public static func prepare(_ path: String) throws(ReelError) {
        var status = stat()
        if stat(path, &status) != 0 {
            let code = errno
            guard code == ENOENT else { throw failure(path, code) }
            guard mkfifo(path, 0o660) == 0 else {
                let made = errno
                if made == EEXIST { return try prepare(path) }
                throw ReelError(
                    .deviceUnavailable, "cannot make the FIFO \(path): \(String(cString: strerror(made)))")
            }
            return
        }
        guard (status.st_mode & S_IFMT) == S_IFIFO else {
            throw ReelError(.deviceUnavailable, "pipe output \(path) is not a FIFO; make it with mkfifo, or remove it and reeld makes it")
        }
        guard access(path, W_OK) == 0 else { throw failure(path, errno) }
    }
}
