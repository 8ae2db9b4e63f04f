// Decoding a stream that is not MP3 (AAC and HE-AAC, Ogg Vorbis and Opus, FLAC, an MP4 that
// arrives whole, HLS segments) through FFmpeg: a thread of its own reads the stream's buffer,
// waiting there while the network is slow, and puts decoded frames into a small ring that the
// audio thread reads without ever waiting.

import CFFmpeg
import Dispatch
import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A stream's FFmpeg decoder, producing 16-bit frames (32-bit for a lossless stream of more
/// than 16 bits) at the rate and channels of the first decoded frame (HE-AAC's SBR rate and its
/// parametric stereo, not what the ADTS header says). It cannot seek (the engine reads it
/// through a `RewindableReader`). When no frames are decoded yet, `read` returns 0 with
/// `isWaitingForData` instead of waiting (the engine plays a silence it does not count as the
/// track's; the stream's state says `buffering`). At each of `boundaries` (an HLS
/// discontinuity) the demuxer ends and a new one opens. Used by one thread at a time (the
/// opener's, then the audio thread); its decoding thread is `reel-decode`.
public final class FFmpegStreamReader: AudioFileReader {
    public var path: String { stream.url }
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    public let frameCount: Int64? = nil
    public var canSeek: Bool { false }
    public func seek(to frame: Int64) throws(ReelError) {
        throw ReelError(.notSeekable, "\(stream.url) is a stream: it cannot seek")
    }

    let stream: HTTPStream
    private let decoding: FFmpegStreamDecoding
    private var starving = false
    private var framesRead: Int64 = 0

    /// Opens FFmpeg's demuxer and decoder on `stream` (started) and waits up to `milliseconds`
    /// for the first decoded frame. `mediaType` (the server's Content-Type) only names what it
    /// sent in an error: the format is probed from the bytes. Throws `unsupported_format` when
    /// FFmpeg knows no such format or decodes none of its audio, `unreachable` when the stream
    /// failed or sent no audio in time, `corrupt_file` when its audio does not decode.
    init(stream: HTTPStream, mediaType: String?, boundaries: StreamBoundaries? = nil, waitingMilliseconds milliseconds: Int)
        throws(ReelError)
    {
        self.stream = stream
        let decoding = FFmpegStreamDecoding(
            stream: stream, mediaType: mediaType, boundaries: boundaries,
            openDeadline: monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000)
        self.decoding = decoding
        let thread = OSThread.start(name: "reel-decode", realtime: false) { decoding.run() }
        pthread_detach(thread)
        // The thread gives up at the same deadline; a second more for it to say so.
        let outcome: Result<FFmpegStreamDecoding.Opened, ReelError>
        if decoding.ready.wait(timeout: .now() + .milliseconds(milliseconds + 1000)) == .timedOut {
            outcome = .failure(ReelError(.unreachable, "\(stream.url) sent no audio within \(milliseconds / 1000) s"))
        } else {
            outcome = decoding.opened.current ?? .failure(ReelError(.unreachable, "\(stream.url) sent no audio"))
        }
        switch outcome {
        case .failure(let error):
            decoding.stop()
            throw error
        case .success(let opened):
            format = AudioFormat(codec: opened.codec, sampleRate: opened.sampleRate, channels: opened.channels)
            pcmFormat = PCMFormat(sample: opened.bits == 16 ? .s16 : .s32, sampleRate: opened.sampleRate, channels: opened.channels)
            if opened.bitrate > 0 { stream.noteBitrate(opened.bitrate / 1000) }
        }
    }

    deinit {
        decoding.stop()
    }

    /// No frame was decoded in time for the last `read` (it returned 0, and the stream goes on).
    public private(set) var isWaitingForData = false

    /// The frames decoded so far; 0 with `isWaitingForData` when none are there yet; 0 at the
    /// stream's end; throws when it failed for good.
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        guard frames > 0 else { return 0 }
        let bytesPerFrame = pcmFormat.bytesPerFrame
        let pcm = decoding.pcm
        // Whole frames only: the decoding thread may be waiting for room in the middle of one.
        let ready = min(frames, pcm.available / bytesPerFrame)
        var count = 0
        if ready > 0 {
            if case .bytes(let bytes) = pcm.read(into: buffer, count: ready * bytesPerFrame) { count = bytes / bytesPerFrame }
        } else if pcm.hasEnded {
            isWaitingForData = false
            if case .ended(let error?) = pcm.read(into: buffer, count: bytesPerFrame) { throw error }
            return 0
        } else {
            // Nothing decoded in time: the engine keeps the device playing meanwhile.
            isWaitingForData = true
            if !starving {
                starving = true
                stream.noteUnderrun(true)
            }
            return 0
        }
        isWaitingForData = false
        if starving || framesRead == 0 {
            starving = false
            stream.noteUnderrun(false)
        }
        framesRead += Int64(count)
        return count
    }

    /// Frames decoded and not read yet (tests).
    var decodedFramesWaiting: Int { decoding.pcm.available / pcmFormat.bytesPerFrame }
}

/// The state of one stream's decoding thread: the demuxer's reads from the stream's buffer and
/// the ring of decoded frames it writes.
final class FFmpegStreamDecoding: @unchecked Sendable {
    struct Opened: Sendable {
        var codec: String
        var sampleRate: Int
        var channels: Int
        var bits: Int
        /// Bits a second as the stream says, 0 when unknown.
        var bitrate: Int
    }

    /// The most bytes the format probe reads, and the stream analysis after it (then FFmpeg
    /// decides with what it has): 256 KiB, 16 s of a 128 kbit/s stream.
    static let probeBytes: Int64 = 256 << 10
    /// The most audio the stream analysis reads (an MPEG-TS segment's streams).
    static let analyzeMicroseconds: Int64 = 3_000_000
    /// A window of bytes read that must hold at least a second of decoded audio, else the stream
    /// is garbage, not audio (the demuxer would resynchronise on it for ever, and a decoder takes
    /// a frame of random bytes now and then): far more than a second of any codec's stream.
    static let garbageBytes = 1 << 20
    /// Decoded frames kept ahead of the audio thread: 384 KiB, 2.2 s of 44.1 kHz 16-bit stereo.
    static let pcmBytes = 384 << 10
    /// Frames decoded at a time.
    static let chunkFrames = 2048

    let stream: HTTPStream
    let mediaType: String?
    let boundaries: StreamBoundaries?
    let pcm = StreamBuffer(capacity: pcmBytes)
    /// Set once by the thread (success or why not), then `ready` is signalled.
    let opened = Locked<Result<Opened, ReelError>?>(nil)
    let ready = DispatchSemaphore(value: 0)

    // The decoding thread's own.
    private let openDeadline: UInt64
    private var opening = true
    /// Bytes of the stream read; bytes read in the current window of `garbageBytes`, and the
    /// frames decoded in it (a stream is noise when a window holds less than a second of audio:
    /// a decoder finds a frame it takes in random bytes now and then).
    private var consumed: Int64 = 0
    private var sinceAudio = 0
    private var framesInWindow = 0
    /// A second of the stream's audio, in frames (its rate, once opened).
    private var leastFramesInWindow = 1
    /// Why the last read failed or ended the stream (nil: the end, or no failure yet).
    private var readFailure: ReelError?

    init(stream: HTTPStream, mediaType: String?, boundaries: StreamBoundaries?, openDeadline: UInt64) {
        self.stream = stream
        self.mediaType = mediaType
        self.boundaries = boundaries
        self.openDeadline = openDeadline
    }

    /// Ends the stream and the thread (at its next read or write). Any thread.
    func stop() {
        stream.stop()
        pcm.stop()
    }

    // MARK: The decoding thread

    func run() {
        var first: Opened?
        var chunk: UnsafeMutableRawPointer?
        defer { chunk?.deallocate() }
        while !pcm.isStopped {
            boundaries?.pass(upTo: consumed)
            opening = first == nil
            let openedAt = consumed
            var status = REEL_FF_OK
            var message = [CChar](repeating: 0, count: 512)
            let context = Unmanaged.passUnretained(self).toOpaque()
            let decoder = reel_ff_open_stream(
                { context, buffer, size in
                    Unmanaged<FFmpegStreamDecoding>.fromOpaque(context!).takeUnretainedValue().readBytes(buffer!, size: Int(size))
                }, context, Self.probeBytes, Self.analyzeMicroseconds, &status, &message, message.count)
            guard let decoder else {
                if first != nil && consumed == openedAt && readFailure == nil {
                    // A boundary at the stream's end (its last segments could not be fetched):
                    // nothing follows it, the stream is over.
                    pcm.finish(error: nil)
                    return
                }
                fail(first: first == nil, openError(status: status, detail: text(message)))
                return
            }
            defer { reel_ff_close(decoder) }
            let info = reel_ff_get_info(decoder)
            let opened = Opened(
                codec: FFmpegReader.registryName(ffmpegCodec: String(cString: info.codec)), sampleRate: Int(info.sample_rate),
                channels: Int(info.channels), bits: Int(info.bits), bitrate: Int(info.bit_rate))
            if let first {
                guard opened.sampleRate == first.sampleRate && opened.channels == first.channels && opened.bits == first.bits else {
                    pcm.finish(error: ReelError(
                        .corruptFile,
                        "\(stream.url): its audio changed from \(first.channels) channels at \(first.sampleRate) Hz to \(opened.channels) at \(opened.sampleRate) Hz"))
                    return
                }
            } else {
                first = opened
                chunk = .allocate(byteCount: Self.chunkFrames * opened.channels * opened.bits / 8, alignment: 16)
                self.opened.withLock { $0 = .success(opened) }
                ready.signal()
            }
            opening = false
            sinceAudio = 0
            framesInWindow = 0
            leastFramesInWindow = max(opened.sampleRate, 1)
            let bytesPerFrame = opened.channels * opened.bits / 8
            var decodeMessage = [CChar](repeating: 0, count: 256)
            while true {
                let count = reel_ff_read(decoder, chunk!, Int64(Self.chunkFrames), &decodeMessage, decodeMessage.count)
                if count > 0 {
                    framesInWindow += Int(count)
                    if !pcm.write(chunk!, count: Int(count) * bytesPerFrame) { return }
                    continue
                }
                if count < 0 {
                    pcm.finish(error: readFailure ?? ReelError(.corruptFile, "cannot decode \(stream.url): \(text(decodeMessage))"))
                    return
                }
                break
            }
            // The demuxer ended: at a boundary a new one opens; else the stream is over.
            if pcm.isStopped { return }
            guard readFailure == nil, let boundary = boundaries?.next(from: consumed), boundary == consumed else {
                pcm.finish(error: readFailure)
                return
            }
        }
    }

    /// A C string written into `characters`.
    private func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Opening failed: the opener is told, or (a demuxer after a boundary) the reader at its end.
    private func fail(first: Bool, _ error: ReelError) {
        if first {
            opened.withLock { $0 = .failure(error) }
            ready.signal()
        } else {
            pcm.finish(error: error)
        }
    }

    /// The error of a failed open: the stream's own failure when it had one.
    private func openError(status: reel_ff_status, detail: String) -> ReelError {
        if let readFailure { return readFailure }
        let url = stream.url
        let sent = mediaType.map { "it sends \($0)" } ?? "it sends no stated type"
        switch status {
        case REEL_FF_UNKNOWN_FORMAT:
            return ReelError(.unsupportedFormat, "cannot play \(url): \(sent), and that is no audio Reel decodes (\(detail))")
        case REEL_FF_UNSUPPORTED, REEL_FF_NOT_LOADED:
            return ReelError(.unsupportedFormat, "cannot play \(url): \(sent) (\(detail))")
        case REEL_FF_IO:
            return ReelError(.unreachable, "\(url) ended before any audio (\(detail))")
        default:
            return ReelError(.corruptFile, "cannot decode \(url): \(detail)")
        }
    }

    /// FFmpeg's read: up to `size` bytes of the stream, up to the next boundary, waiting for
    /// them (only here, on the decoding thread). 0 at the end (or a boundary), -1 on a failure.
    private func readBytes(_ buffer: UnsafeMutablePointer<UInt8>, size: Int) -> Int32 {
        var limit = size
        if let boundary = boundaries?.next(from: consumed) {
            limit = min(limit, Int(boundary - consumed))
            if limit <= 0 { return 0 }
        }
        while true {
            switch stream.buffer.read(into: buffer, count: limit) {
            case .bytes(let count):
                consumed += Int64(count)
                if !opening {
                    sinceAudio += count
                    if sinceAudio > Self.garbageBytes && framesInWindow >= leastFramesInWindow {
                        // Audio in this window: the next one starts.
                        sinceAudio = count
                        framesInWindow = 0
                    } else if sinceAudio > Self.garbageBytes {
                        readFailure = ReelError(.corruptFile, "cannot decode \(stream.url): \(sinceAudio) bytes came that hold less than a second of audio")
                        return -1
                    }
                }
                return Int32(count)
            case .empty:
                if pcm.isStopped { return 0 }
                if opening && monotonicNanoseconds() >= openDeadline {
                    readFailure = ReelError(.unreachable, "\(stream.url) sent no audio in time")
                    return -1
                }
                _ = stream.buffer.waitForBytes(1, milliseconds: 100)
            case .ended(let error):
                if let error { readFailure = error }
                return 0
            }
        }
    }
}
