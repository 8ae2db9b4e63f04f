// The decoding contract and the choice of decoder for a file.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A decoder positioned in a file. Used by one thread at a time (the audio thread while playing),
/// except `frameCount` and `frameCountIsFinal`, which any thread may read.
public protocol AudioFileReader: AnyObject {
    var path: String { get }
    /// What clients see: codec, rate, channels.
    var format: AudioFormat { get }
    /// What `read` produces.
    var pcmFormat: PCMFormat { get }
    /// Frames in the file, exact, or nil when they are not known: an unfinished FLAC, or an MP3
    /// without a Xing/Info tag while a background thread counts them. Until `frameCountIsFinal`
    /// it can change, once, from nil to the count; the player polls it (it is cheap: an atomic
    /// load, no lock) and publishes the new duration.
    var frameCount: Int64? { get }
    /// True when `frameCount` will not change any more. Read it before `frameCount`: true, then
    /// the count read after it is the final one.
    var frameCountIsFinal: Bool { get }
    /// An estimate of the frames, made at open when `frameCount` was not known then (an MP3
    /// without a Xing/Info tag: `MP3LengthEstimate`); nil when it was, or when nothing could be
    /// estimated. While `frameCount` is nil, the best length known. Any thread.
    var estimatedFrameCount: Int64? { get }
    /// Decodes up to `frames` frames into `buffer`; 0 at the end of the file.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int
    /// Moves so that the next `read` starts at `frame`. A source that cannot go there throws
    /// `not_seekable`.
    func seek(to frame: Int64) throws(ReelError)
    /// Whether `seek` can go anywhere in the source (a file). One that cannot (a stream that
    /// comes as it plays) is read by the engine through a `RewindableReader`, which keeps what
    /// was decoded last so that a pause or a refill goes back to the audible frame.
    var canSeek: Bool { get }
    /// Whether `seek(to: frame)` would work now (always, for a source that `canSeek`).
    func canSeek(to frame: Int64) -> Bool
    /// Why `seek(to: frame)` would fail, when `canSeek(to: frame)` is false: `not_seekable`, or
    /// for a live stream's frame beyond what it keeps `out_of_range`.
    func seekRefusal(to frame: Int64) -> ReelError
    /// True after a `read` that returned 0 because nothing has come yet (a stream waiting for
    /// the network), not because the source ended: the engine plays silence meanwhile, which
    /// is no part of the source's frames.
    var isWaitingForData: Bool { get }
}

extension AudioFileReader {
    /// A reader whose length is known at open says so.
    public var frameCountIsFinal: Bool { true }
    public var estimatedFrameCount: Int64? { nil }
    /// A file seeks.
    public var canSeek: Bool { true }
    public func canSeek(to frame: Int64) -> Bool { canSeek }
    public func seekRefusal(to frame: Int64) -> ReelError {
        ReelError(.notSeekable, "cannot seek in \(path)")
    }
    /// A file never waits.
    public var isWaitingForData: Bool { false }

    /// Seconds, exact; nil while not known.
    public var duration: Double? {
        frameCount.map { Double($0) / Double(pcmFormat.sampleRate) }
    }

    /// The best length known now, in seconds: `duration`, or while that is not known the
    /// estimate (`estimated` true); nil when there is neither.
    public var knownDuration: (seconds: Double, estimated: Bool)? {
        if let duration { return (duration, false) }
        return estimatedFrameCount.map { (Double($0) / Double(pcmFormat.sampleRate), true) }
    }
}

/// Opens a file with the decoder that reads it correctly.
public enum AudioFileOpener {
    /// libsndfile for what it reads, except MP3, which goes to libmpg123 directly (libsndfile
    /// takes the length of an MP3 without a Xing/Info header from its first frame and stops
    /// there); FFmpeg for the rest (AAC, ALAC, WavPack, APE, WMA, DSD, …), loaded then.
    ///
    /// A file that begins (after ID3v2 tags) with MPEG Layer III frames is an MP3 without asking
    /// libsndfile; anything else is offered to libsndfile first, and MPEG audio it recognises
    /// (Layers I and II, or Layer III after junk) still goes to libmpg123.
    ///
    /// - Parameter mp3Length: when the length of an MP3 without a Xing/Info tag is found: for
    ///   playing, `.background` (the default; `open` returns at once, with an estimate of a long
    ///   file's length); `.atOpen` for a caller that needs the exact length from the start and
    ///   can wait (the library's import); `.estimate` for one that only describes the file.
    public static func open(path: String, mp3Length: Mpg123Reader.LengthScan = .background) throws(ReelError)
        -> AudioFileReader
    {
        try open(path: path, mp3Length: mp3Length, countingMP3: true)
    }

    /// Opens the file as playing it would, reading its headers only: an MP3's length is not
    /// counted. For `CodecRegistry.probe`.
    static func openHeaders(path: String) throws(ReelError) -> AudioFileReader {
        try open(path: path, mp3Length: .background, countingMP3: false)
    }

    private static func open(path: String, mp3Length: Mpg123Reader.LengthScan, countingMP3: Bool) throws(ReelError)
        -> AudioFileReader
    {
        try checkRegularFile(path)
        if let layout = MP3Layout.read(path: path) {
            return try Mpg123Reader(path: path, layout: layout, lengthScan: mp3Length, backgroundScan: countingMP3)
        }
        let native: SndFileReader
        do throws(ReelError) {
            native = try SndFileReader(path: path)
        } catch where error.reason != .ioError {
            // Not for libsndfile: FFmpeg (loaded now, if it was not). A file FFmpeg does not know
            // keeps libsndfile's verdict, and so does one libsndfile found broken (a FLAC whose
            // frames are noise is `corrupt_file`, whatever FFmpeg says of it); FFmpeg's verdict
            // counts for a format libsndfile does not read at all.
            let decoder: OpaquePointer?
            do throws(ReelError) {
                decoder = try FFmpegReader.open(path: path)
            } catch let ffmpegError {
                throw error.reason == .corruptFile ? error : ffmpegError
            }
            guard let decoder else { throw error }
            return FFmpegReader(path: path, decoder: decoder)
        }
        if native.isMPEG {
            return try Mpg123Reader(path: path, layout: nil, lengthScan: mp3Length, backgroundScan: countingMP3)
        }
        return native
    }

    /// The file exists, is readable and is a regular file (not a directory, FIFO or device,
    /// which would block or never end).
    static func checkRegularFile(_ path: String) throws(ReelError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR {
                throw ReelError(.notFound, "no file at \(path)")
            }
            throw ReelError(.ioError, "cannot read \(path): \(String(cString: strerror(code)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ReelError(.unsupportedFormat, "\(path) is not a regular file")
        }
        guard access(path, R_OK) == 0 else {
            throw ReelError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
    }
}
