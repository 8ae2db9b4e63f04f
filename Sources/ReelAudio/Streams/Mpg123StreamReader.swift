// Decoding an MP3 stream through libmpg123's feed mode: it takes the bytes that have come and
// says when it needs more, so the audio thread never waits for the network.

import CMPG123
import ReelModel

/// An MP3 stream's decoder, producing 16-bit frames; it cannot seek (the engine reads it
/// through a `RewindableReader`). When no bytes have come, `read` gives a short silence instead
/// of waiting (the device keeps playing; the stream's state says `buffering`). Used by one
/// thread at a time (the opener's, then the audio thread).
public final class Mpg123StreamReader: AudioFileReader {
    public var path: String { stream.url }
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    public let frameCount: Int64? = nil
    public var canSeek: Bool { false }
    public func seek(to frame: Int64) throws(ReelError) {
        throw ReelError(.notSeekable, "\(stream.url) is a stream: it cannot seek")
    }

    let stream: HTTPStream
    private let handle: OpaquePointer?
    private let input: UnsafeMutableRawPointer
    private static let inputSize = 16 << 10
    /// The last read gave silence because nothing had come (read by `StreamCaptureInput`).
    private(set) var starving = false
    private var framesDecoded: Int64 = 0

    /// The most bytes read at open without finding an MP3 frame: then the stream is not MP3.
    static let sniffLimit = 256 << 10

    /// Opens the decoder on `stream` (started), waiting up to `milliseconds` for its first
    /// frame. Throws `unreachable` when the stream failed or sent no MP3 audio.
    init(stream: HTTPStream, waitingMilliseconds milliseconds: Int) throws(ReelError) {
        self.stream = stream
        let input = UnsafeMutableRawPointer.allocate(byteCount: Self.inputSize, alignment: 16)
        let opened: (handle: OpaquePointer, rate: Int, channels: Int)
        do throws(ReelError) {
            opened = try Self.openDecoder(stream: stream, input: input, milliseconds: milliseconds)
        } catch {
            input.deallocate()
            stream.stop()
            throw error
        }
        self.input = input
        handle = opened.handle
        format = AudioFormat(codec: "mp3", sampleRate: opened.rate, channels: opened.channels)
        pcmFormat = PCMFormat(sample: .s16, sampleRate: opened.rate, channels: opened.channels)
    }

    /// A feed-mode handle that has found the stream's first frame (its output fixed to that
    /// frame's rate and channels, 16-bit).
    private static func openDecoder(stream: HTTPStream, input: UnsafeMutableRawPointer, milliseconds: Int) throws(ReelError)
        -> (handle: OpaquePointer, rate: Int, channels: Int)
    {
        _ = initialized
        var code: Int32 = 0
        guard let handle = mpg123_new(nil, &code) else {
            throw ReelError(.ioError, "cannot start the MP3 decoder: \(String(cString: mpg123_plain_strerror(code)))")
        }
        func fail(_ message: String) -> ReelError {
            mpg123_delete(handle)
            return ReelError(.unreachable, message)
        }
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue), 0)
        mpg123_open_feed(handle)
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        var fed = 0
        let deadline = monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        while true {
            let result = mpg123_getformat(handle, &rate, &channels, &encoding)
            if result == MPG123_OK.rawValue, rate > 0, channels > 0 { break }
            if result != MPG123_NEED_MORE.rawValue && result != MPG123_NEW_FORMAT.rawValue {
                throw fail("\(stream.url) sent no MP3 audio (\(String(cString: mpg123_strerror(handle))))")
            }
            guard fed < sniffLimit else { throw fail("\(stream.url) sent no MP3 audio in its first \(fed) bytes") }
            let now = monotonicNanoseconds()
            guard now < deadline else { throw fail("\(stream.url) sent no audio within \(milliseconds / 1000) s") }
            _ = stream.buffer.waitForBytes(1, milliseconds: Int((deadline - now) / 1_000_000) + 1)
            switch stream.buffer.read(into: input, count: inputSize) {
            case .bytes(let count):
                mpg123_feed(handle, input.assumingMemoryBound(to: UInt8.self), count)
                fed += count
            case .empty:
                continue
            case .ended(let error):
                let failure = fail("\(stream.url) ended before any MP3 audio")
                throw error ?? failure
            }
        }
        // Fixed, so that a stream that changes rate mid-way cannot change it under the engine.
        mpg123_format_none(handle)
        mpg123_format(handle, rate, channels, Int32(MPG123_ENC_SIGNED_16.rawValue))
        return (handle, rate, Int(channels))
    }

    deinit {
        stream.stop()
        if let handle { mpg123_delete(handle) }
        input.deallocate()
    }

    /// Decodes what has come; gives a short silence (a tenth of `frames`, at least 1) when
    /// nothing has; 0 at the stream's end; throws when it failed for good.
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        guard let handle, frames > 0 else { return 0 }
        let bytesPerFrame = pcmFormat.bytesPerFrame
        let wanted = frames * bytesPerFrame
        var filled = 0
        while filled < wanted {
            var done = 0
            let code = mpg123_read(handle, buffer + filled, wanted - filled, &done)
            filled += done
            if code == MPG123_OK.rawValue || code == MPG123_NEW_FORMAT.rawValue { continue }
            if code == MPG123_NEED_MORE.rawValue {
                switch stream.buffer.read(into: input, count: Self.inputSize) {
                case .bytes(let count):
                    mpg123_feed(handle, input.assumingMemoryBound(to: UInt8.self), count)
                    continue
                case .empty:
                    break
                case .ended(let error):
                    if filled == 0, let error { throw error }
                }
                break
            }
            if code == MPG123_DONE.rawValue { break }
            if code < 0 {
                throw ReelError(.corruptFile, "cannot decode \(stream.url): \(String(cString: mpg123_strerror(handle)))")
            }
        }
        var count = filled / bytesPerFrame
        if count == 0, !stream.buffer.hasEnded {
            // Nothing came in time: silence, so that the device does not run dry.
            count = max(frames / 10, 1)
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: count * bytesPerFrame)
            if !starving {
                starving = true
                stream.noteUnderrun(true)
            }
        } else if count > 0 && starving {
            starving = false
            stream.noteUnderrun(false)
        }
        if count > 0 && framesDecoded == 0 {
            var info = mpg123_frameinfo2()
            if mpg123_info2(handle, &info) == MPG123_OK.rawValue { stream.noteBitrate(Int(info.bitrate)) }
            stream.noteUnderrun(false)
        }
        framesDecoded += Int64(count)
        return count
    }

    private static let initialized: Bool = {
        mpg123_init()
        return true
    }()
}
