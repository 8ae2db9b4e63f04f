// Every libsndfile open in Reel, one at a time with the reading of its error.

import CSndFile
import ReelRuntime

/// libsndfile keeps the error of a failed open in one process-wide variable, and every open
/// clears it as it starts (`psf_open_file`): the error read after a failed open on one thread
/// may be another thread's open's "No Error.". So every `sf_open*` in Reel runs here, and its
/// error is read before the lock is let go. Opens are short (the file is a regular file, checked
/// before: a FIFO never reaches libsndfile), so holding the lock across one costs little.
/// Any thread.
enum SndFileOpening {
    /// A failed open: libsndfile's error code and sentence.
    struct Failure: Error {
        let code: Int32
        let message: String

        /// libsndfile did not recognise the file's format (rather than found it broken).
        var isUnrecognisedFormat: Bool { code == Int32(SF_ERR_UNRECOGNISED_FORMAT) }

        /// libsndfile took the file for MPEG audio from its first bytes alone (an MPEG frame
        /// header's 11 sync bits, which one file of random bytes in some 5,000 starts with), and
        /// libmpg123 then found no frames: its internal `SFE_BAD_FILE` (7), which on Linux only
        /// its MPEG decoder gives, with the sentence "File does not exist or is not a regular
        /// file (possibly a pipe?)" — the file is a regular file, checked before it is opened.
        var isMPEGGuessWithoutFrames: Bool { code == 7 }
    }

    private static let gate = Locked(())

    /// Runs `open` (one `sf_open`, `sf_open_fd` or `sf_open_virtual`); its file, or its error.
    static func open(_ open: () -> OpaquePointer?) -> Result<OpaquePointer, Failure> {
        gate.withLock { _ in
            if let file = open() { return .success(file) }
            return .failure(Failure(code: sf_error(nil), message: String(cString: sf_strerror(nil))))
        }
    }
}
