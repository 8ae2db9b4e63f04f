// Decoding MP3 through libmpg123. The length comes from the file's Xing/Info tag when it has
// one; otherwise a scan of the whole file finds it: before the reader opens for a small file, or
// else on a background thread while the file plays, so that a file of ten hours opens as fast as
// one of a minute, with an estimate of its length until the scan ends.

import CMPG123
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// An MP3 decoder producing 16-bit frames. Not thread-safe; one owner at a time, except
/// `frameCount` and `frameCountIsFinal`, which any thread may read.
public final class Mpg123Reader: AudioFileReader {
    /// When the length of a file without a usable Xing/Info tag is found.
    public enum LengthScan: Sendable {
        /// After `init` returns, on a background thread; `frameCount` is nil until then. For playing.
        case background
        /// Before `init` returns, by reading the whole file. For callers that need the length
        /// and can wait (the library's import).
        case atOpen
        /// Never, beyond a small file's count at open (as with `background`): a longer file keeps
        /// its estimate and `frameCount` stays nil. For callers that only describe the file and
        /// close it (adding it to the queue).
        case estimate
    }

    /// Where the length came from.
    enum LengthSource: Equatable {
        /// The Xing/Info tag.
        case header
        /// A scan before `init` returned: asked for (`LengthScan.atOpen`), or a small file
        /// (`scanAtOpenLimit`).
        case scanAtOpen, smallFileScan
        /// A scan on a background thread; until it ends, `estimatedFrameCount`.
        case backgroundScan
    }

    /// Files up to this size without a usable Xing/Info tag are counted before `init` returns,
    /// so that their length is exact from the start: the scan reads 64 KiB at a time and parses
    /// frame headers (about 0.3 ms a megabyte on the 2-vCPU VM with the file in the page cache;
    /// `docs/performance.md`), so 2 MiB — two minutes at 128 kb/s — costs a fraction of what
    /// opening the device does. A longer file opens with an estimate of its length.
    static let scanAtOpenLimit: Int64 = 2 << 20

    public let path: String
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    public var frameCount: Int64? { length.frames }
    public var frameCountIsFinal: Bool { length.isFinal }
    /// Made at open when the length was not known then (from `MP3LengthEstimate`, or libmpg123's
    /// extrapolation of the first frame when the file does not start with Layer III frames); nil
    /// when it was.
    public let estimatedFrameCount: Int64?
    let lengthSource: LengthSource
    /// What the reader read of the file while it opened: libmpg123's first frames and the end
    /// (for an ID3v1 tag), and the estimate's windows — or the whole file when it was scanned.
    let bytesReadAtOpen: Int
    private let input: Mpg123Input
    private var handle: OpaquePointer?
    private let length: Mpg123Length

    public convenience init(path: String, lengthScan: LengthScan = .background) throws(ReelError) {
        try self.init(path: path, layout: MP3Layout.read(path: path), lengthScan: lengthScan)
    }

    /// `layout`: the start of the file, as `MP3Layout.read` found it (nil if it found no frame
    /// there, for instance after junk that libmpg123 skips). `backgroundScan` false (for tests)
    /// leaves a pending length pending and seeks without the scan's index.
    init(path: String, layout: MP3Layout?, lengthScan: LengthScan, backgroundScan: Bool = true) throws(ReelError) {
        self.path = path
        input = try Mpg123Input(path: path)
        // A tag whose count the file cannot hold: libmpg123 is told to ignore it, else it would
        // cut LAME's padding off a frame that is not the last, and decode fewer frames than its
        // scan counts.
        let ignoringTag = layout.map { $0.xing != nil && $0.declaredFrames == nil } ?? false
        let handle = try input.openHandle(path: path, ignoringTag: ignoringTag)
        func fail(_ what: String) -> ReelError {
            let detail = String(cString: mpg123_strerror(handle))
            mpg123_delete(handle)
            return ReelError(.corruptFile, "\(what) \(path): \(detail)")
        }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0, channels > 0
        else { throw fail("cannot decode") }
        // Fix the output format so a stream that changes rate mid-file cannot change it under us.
        mpg123_format_none(handle)
        mpg123_format(handle, rate, channels, Int32(MPG123_ENC_SIGNED_16.rawValue))
        // With the tag's frame count (libmpg123 read the same tag: it reports the same count),
        // mpg123_length is exact: those frames less the LAME tag's encoder delay and padding.
        // Without it, mpg123_length only extrapolates the first frame's bitrate to the file size.
        var frames: Int64?
        if let declared = layout?.declaredFrames, Int64(mpg123_framelength(handle)) == declared,
            mpg123_length(handle) >= 0
        {
            frames = Int64(mpg123_length(handle))
            lengthSource = .header
        } else if lengthScan == .atOpen {
            guard mpg123_scan(handle) == MPG123_OK.rawValue, mpg123_length(handle) >= 0 else { throw fail("cannot scan") }
            frames = Int64(mpg123_length(handle))
            lengthSource = .scanAtOpen
        } else if (layout?.fileSize ?? Self.fileSize(input.descriptor)) <= Self.scanAtOpenLimit {
            lengthSource = .smallFileScan
        } else {
            lengthSource = .backgroundScan
        }
        // Before any scan: libmpg123's extrapolation of the first frame to the file's size.
        let extrapolated = frames == nil && mpg123_length(handle) > 0 ? Int64(mpg123_length(handle)) : nil
        var bytesRead = input.bytesRead
        self.handle = handle
        format = AudioFormat(codec: "mp3", sampleRate: rate, channels: Int(channels))
        pcmFormat = PCMFormat(sample: .s16, sampleRate: rate, channels: Int(channels))
        length = Mpg123Length(frames: frames)
        var estimate: Int64?
        switch lengthSource {
        case .header, .scanAtOpen:
            break
        case .smallFileScan:
            // Its seek index comes with the count: no background scan.
            bytesRead += length.scanNow(path: path, ignoringTag: ignoringTag)
            if length.frames == nil { estimate = extrapolated }
        case .backgroundScan:
            let sampled = layout.map { MP3LengthEstimate.read(path: path, layout: $0) }
            bytesRead += sampled?.bytesRead ?? 0
            estimate = sampled?.estimate?.frames ?? extrapolated
        }
        estimatedFrameCount = estimate
        bytesReadAtOpen = bytesRead
        // Also with the length known from the tag: the scan's seek index spares a seek far ahead
        // from parsing every frame before it on the audio thread.
        if lengthScan == .background && lengthSource != .smallFileScan && backgroundScan {
            length.startScan(path: path, ignoringTag: ignoringTag)
        }
    }

    private static func fileSize(_ descriptor: Int32) -> Int64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : Int64.max
    }

    /// True once the background scan has ended (for tests).
    var backgroundScanFinished: Bool { length.scanFinished }
    /// True when a background scan was started (for tests).
    var backgroundScanStarted: Bool { length.scanStarted }

    deinit {
        length.cancel()
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

    /// Sample-exact: libmpg123 finds the frame through its index (the scan's, once it is ready)
    /// or by parsing forward from the last frame it indexed, never by guessing (no MPG123_FUZZY).
    public func seek(to frame: Int64) throws(ReelError) {
        guard let handle else { return }
        installIndex()
        if mpg123_seek(handle, off_t(frame), SEEK_SET) < 0 {
            throw ReelError(.corruptFile, "cannot seek in \(path): \(String(cString: mpg123_strerror(handle)))")
        }
    }

    /// Hands the background scan's frame index to our handle, once it is ready.
    private func installIndex() {
        guard let handle, var index = length.takeIndex() else { return }
        _ = index.offsets.withUnsafeMutableBufferPointer {
            mpg123_set_index(handle, $0.baseAddress, index.step, $0.count)
        }
    }
}
