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
    /// Bytes read from the file so far.
    private(set) var bytesRead = 0
    private let stopped = Atomic<Bool>(false)
    /// Read-ahead, for a scan: libmpg123 reads each frame's header and then its body, two system
    /// calls a frame, which made a count of every frame ten times slower than the parsing itself.
    /// Holds the file's bytes from `bufferOffset` on, `bufferFill` of them, `bufferNext` taken.
    private let buffer: UnsafeMutableRawBufferPointer?
    private var bufferOffset: off_t = 0
    private var bufferFill = 0
    private var bufferNext = 0

    /// `readAhead`: bytes read at a time, for a handle that reads the whole file (0: each read of
    /// libmpg123's is one system call, for a handle that decodes a little at a time).
    init(path: String, readAhead: Int = 0) throws(ReelError) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ReelError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        buffer = readAhead > 0 ? .allocate(byteCount: readAhead, alignment: 16) : nil
    }

    deinit {
        close(descriptor)
        buffer?.deallocate()
    }

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
            guard !input.isStopped, let buffer else { return -1 }
            return input.read(into: buffer, count: count)
        }
        let seek: @convention(c) (UnsafeMutableRawPointer?, off_t, Int32) -> off_t = { raw, offset, whence in
            let input = Unmanaged<Mpg123Input>.fromOpaque(raw!).takeUnretainedValue()
            return input.seek(offset, whence: whence)
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

    /// libmpg123's read: up to `count` bytes at the current position; 0 at the end, -1 on error.
    private func read(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        guard let buffer else { return readFile(into: destination, count: count) }
        var done = 0
        while done < count {
            if bufferNext == bufferFill {
                // The descriptor stands at the buffer's end.
                let n = readFile(into: buffer.baseAddress!, count: buffer.count)
                if n <= 0 { return done > 0 ? done : n }
                bufferOffset += off_t(bufferFill)
                bufferFill = n
                bufferNext = 0
            }
            let taken = min(bufferFill - bufferNext, count - done)
            (destination + done).copyMemory(from: buffer.baseAddress! + bufferNext, byteCount: taken)
            bufferNext += taken
            done += taken
        }
        return done
    }

    /// libmpg123's seek (`lseek`'s contract); within the read-ahead, no system call.
    private func seek(_ offset: off_t, whence: Int32) -> off_t {
        guard buffer != nil else { return lseek(descriptor, offset, whence) }
        let target: off_t
        switch whence {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = bufferOffset + off_t(bufferNext) + offset
        default:
            let reached = lseek(descriptor, offset, whence)
            if reached >= 0 { (bufferOffset, bufferFill, bufferNext) = (reached, 0, 0) }
            return reached
        }
        if target >= bufferOffset && target <= bufferOffset + off_t(bufferFill) {
            bufferNext = Int(target - bufferOffset)
            return target
        }
        let reached = lseek(descriptor, target, SEEK_SET)
        if reached >= 0 { (bufferOffset, bufferFill, bufferNext) = (reached, 0, 0) }
        return reached
    }

    private func readFile(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        while true {
            let n = Glibc.read(descriptor, destination, count)
            if n < 0 && errno == EINTR { continue }
            if n > 0 { bytesRead += n }
            return n
        }
    }

    private static let initialized: Bool = {
        mpg123_init()
        return true
    }()
}
