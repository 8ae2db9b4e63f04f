// Decoding MP3 through libmpg123, which scans the whole file for its true length.

import CMPG123
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// An MP3 decoder producing 16-bit frames. Not thread-safe; one owner at a time.
public final class Mpg123Reader: AudioFileReader {
    public let path: String
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    public let frameCount: Int64?
    private var handle: OpaquePointer?

    private static let initialized: Bool = {
        mpg123_init()
        return true
    }()

    public init(path: String) throws(ReelError) {
        _ = Self.initialized
        self.path = path
        var code: Int32 = 0
        guard let handle = mpg123_new(nil, &code) else {
            throw ReelError(.ioError, "cannot start the MP3 decoder: \(String(cString: mpg123_plain_strerror(code)))")
        }
        func fail(_ reason: ErrorReason, _ what: String) -> ReelError {
            let detail = String(cString: mpg123_strerror(handle))
            mpg123_delete(handle)
            return ReelError(reason, "\(what) \(path): \(detail)")
        }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue), 0)
        guard mpg123_open(handle, path) == MPG123_OK.rawValue else { throw fail(.corruptFile, "cannot open") }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0, channels > 0
        else { throw fail(.corruptFile, "cannot decode") }
        // Fix the output format so a stream that changes rate mid-file cannot change it under us.
        mpg123_format_none(handle)
        mpg123_format(handle, rate, channels, Int32(MPG123_ENC_SIGNED_16.rawValue))
        // The length from a full scan, not from the first frame (VBR files without a Xing header).
        guard mpg123_scan(handle) == MPG123_OK.rawValue else { throw fail(.corruptFile, "cannot scan") }
        let length = mpg123_length(handle)
        self.handle = handle
        format = AudioFormat(codec: "mp3", sampleRate: rate, channels: Int(channels))
        pcmFormat = PCMFormat(sample: .s16, sampleRate: rate, channels: Int(channels))
        frameCount = length >= 0 ? Int64(length) : nil
    }

    deinit {
        if let handle {
            mpg123_close(handle)
            mpg123_delete(handle)
        }
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        guard let handle else { return 0 }
        let wanted = frames * pcmFormat.bytesPerFrame
        var filled = 0
        while filled < wanted {
            var done = 0
            let code = mpg123_read(handle, buffer + filled, wanted - filled, &done)
            filled += done
            if code == MPG123_DONE.rawValue { break }
            if code == MPG123_NEW_FORMAT.rawValue || code == MPG123_OK.rawValue { continue }
            if code == MPG123_NEED_MORE.rawValue && done == 0 { break }
            if code < 0 {
                throw ReelError(.corruptFile, "cannot decode \(path): \(String(cString: mpg123_strerror(handle)))")
            }
        }
        return filled / pcmFormat.bytesPerFrame
    }

    public func seek(to frame: Int64) throws(ReelError) {
        guard let handle else { return }
        if mpg123_seek(handle, off_t(frame), SEEK_SET) < 0 {
            throw ReelError(.corruptFile, "cannot seek in \(path): \(String(cString: mpg123_strerror(handle)))")
        }
    }
}
