// libmpg123 reading a file through our own read and seek callbacks, so that we can count what it
// read and stop a background scan between two reads.

import CMPG123
import ReelModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An open file that one libmpg123 handle reads. `bytesRead` belongs to the thread that uses the
/// handle; `stop()` may be called from any thread, and every read after it fails, which ends
/// whatever libmpg123 was doing (a scan) at its next read.
final class Mpg123Input: @unchecked Sendable {
    let descriptor: Int32
    /// Bytes libmpg123 has read so far.
    private(set) var bytesRead = 0
    private let stopped = Atomic<Bool>(false)

    init(path: String) throws(ReelError) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ReelError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Makes every later read fail. Any thread.
    func stop() { stopped.store(true, ordering: .relaxed) }
    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// A libmpg123 handle reading this input, decoding gaplessly and quietly. The handle does not
    /// own the input: keep the input alive until after `mpg123_delete`.
    ///
    /// - Parameter ignoringTag: libmpg123 takes no frame count from a Xing/Info tag, nor (then)
    ///   LAME's encoder delay and padding: for a tag that cannot be right (a cut-off file), so
    ///   that a scan counts exactly the frames that the reader decodes.
    func openHandle(path: String, ignoringTag: Bool) throws(ReelError) -> OpaquePointer {
        _ = Mpg123Input.initialized
        var code: Int32 = 0
        guard let handle = mpg123_new(nil, &code) else {
            throw ReelError(.ioError, "cannot start the MP3 decoder: \(String(cString: mpg123_plain_strerror(code)))")
        }
        var flags = MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue
        if ignoringTag { flags |= MPG123_IGNORE_STREAMLENGTH.rawValue }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(flags), 0)
        // A seek decodes this many frames before the target and throws their sound away, so that
        // the target frame finds its bit reservoir and the previous frame's overlap as a straight
        // decode does: the sound after a seek is then the same, sample for sample. libmpg123's
        // default, 4, is short of that where frames are small: Layer III may take its data from
        // up to 511 bytes back, 9 frames of 32 kb/s at 48 kHz, and needs two good frames before.
        mpg123_param2(handle, Int32(MPG123_PREFRAMES.rawValue), 16, 0)
        let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int = { raw, buffer, count in
            let input = Unmanaged<Mpg123Input>.fromOpaque(raw!).takeUnretainedValue()
            guard !input.isStopped else { return -1 }
            while true {
                let n = Glibc.read(input.descriptor, buffer, count)
                if n < 0 && errno == EINTR { continue }
                if n > 0 { input.bytesRead += n }
                return n
            }
        }
        let seek: @convention(c) (UnsafeMutableRawPointer?, off_t, Int32) -> off_t = { raw, offset, whence in
            let input = Unmanaged<Mpg123Input>.fromOpaque(raw!).takeUnretainedValue()
            return lseek(input.descriptor, offset, whence)
        }
        guard mpg123_replace_reader_handle(handle, read, seek, nil) == MPG123_OK.rawValue,
            mpg123_open_handle(handle, Unmanaged.passUnretained(self).toOpaque()) == MPG123_OK.rawValue
        else {
            let detail = String(cString: mpg123_strerror(handle))
            mpg123_delete(handle)
            throw ReelError(.corruptFile, "cannot open \(path): \(detail)")
        }
        return handle
    }

    private static let initialized: Bool = {
        mpg123_init()
        return true
    }()
}
