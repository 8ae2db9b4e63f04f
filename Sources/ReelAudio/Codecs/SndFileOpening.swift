// Every libsndfile open in Reel, one at a time with the reading of its error.

import CSndFile
import ReelRuntime

#if canImport(Glibc)
import Glibc
#endif

/// libsndfile keeps the error of a failed open in one process-wide variable, and every open
/// clears it as it starts (`psf_open_file`): the error read after a failed open on one thread
/// may be another thread's open's "No Error.". So every `sf_open*` in Reel runs here, and its
/// error is read before the lock is let go. An open waits for any other open in the process:
/// the file is a regular file (checked before: a FIFO never reaches libsndfile), and a reader's
/// first bytes are read before the lock (`warm`), so a disk that must spin up or a slow mount
/// holds up its own open, not the others. Any thread.
enum SndFileOpening {
    /// A failed open: libsndfile's error code and sentence.
    struct Failure: Error {
        let code: Int32
        let message: String

        /// libsndfile did not recognise the file's format (rather than found it broken).
        var isUnrecognisedFormat: Bool { code == Int32(SF_ERR_UNRECOGNISED_FORMAT) }

        /// libsndfile took the file for MPEG audio, and libmpg123 could not open it: libsndfile's
        /// internal `SFE_BAD_FILE`, which on Linux only its MPEG decoder gives (for any failure
        /// of libmpg123's open), with the sentence "File does not exist or is not a regular file
        /// (possibly a pipe?)" — the file is a regular file, checked before it is opened. Its
        /// guess is made from an MPEG frame header's 11 sync bits, which one file of random
        /// bytes in some 5,000 starts with.
        var isMPEGGuessWithoutFrames: Bool { code == Self.libsndfileBadFile }

        /// `SFE_BAD_FILE` in libsndfile's `common.h` (not in its public header).
        static let libsndfileBadFile: Int32 = 7
    }

    private static let gate = Locked(())

    /// The first 64 KiB of `path` read into the page cache, outside the lock: where libsndfile
    /// reads a file's header. Errors are left for the open to report.
    static func warm(_ path: String) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        withUnsafeTemporaryAllocation(byteCount: 65536, alignment: 16) { buffer in
            _ = pread(fd, buffer.baseAddress, buffer.count, 0)
        }
    }

    /// Runs `open` (one `sf_open`, `sf_open_fd` or `sf_open_virtual`); its file, or its error.
    static func open(_ open: () -> OpaquePointer?) -> Result<OpaquePointer, Failure> {
        gate.withLock { _ in
            if let file = open() { return .success(file) }
            return .failure(Failure(code: sf_error(nil), message: String(cString: sf_strerror(nil))))
        }
    }
}
