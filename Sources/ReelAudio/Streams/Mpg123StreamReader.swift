// Decoding an MP3 stream through libmpg123's feed mode: it takes the bytes that have come and
// says when it needs more, so the audio thread never waits for the network. It can go back to
// any frame whose bytes the stream's buffer still keeps, and in a finite file on a server that
// takes Range requests, to any frame.

import CMPG123
import ReelModel
import ReelRuntime

/// An MP3 stream's decoder, producing 16-bit frames.
///
/// It decodes one MPEG frame at a time and keeps a checkpoint per frame: the byte offset of the
/// frame in the stream and the output frame it starts at. A seek restarts the decoder at the
/// checkpoint `preroll` frames before the target (the bit reservoir of the frames before is
/// filled again, so every sample from the target on is the one a continuous decode gives) and
/// drops the frames before the target. Where no checkpoint is (a finite file not decoded that
/// far), it asks the server from the byte a constant-bitrate frame of that number starts at and
/// counts from the first frame header found there.
///
/// `canSeek` is false: the engine reads it through a `RewindableReader`, which replays the last
/// seconds decoded from memory and asks this reader for anything further back. When no bytes
/// have come, `read` returns 0 and `isWaitingForData` is true (the engine plays silence that is
/// not part of the stream's position). Used by one thread at a time (the opener's, then the
/// audio thread).
public final class Mpg123StreamReader: AudioFileReader {
    public var path: String { stream.url }
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    /// Exact for a finite file with a Xing/Info tag (its frames, less the LAME tag's delay and
    /// padding, as libmpg123 reads a local file); nil otherwise.
    public private(set) var frameCount: Int64?
    /// For a finite file without the tag: libmpg123's extrapolation of the first frame's
    /// bitrate to the resource's length.
    public private(set) var estimatedFrameCount: Int64?
    public var canSeek: Bool { false }
    public private(set) var isWaitingForData = false

    let stream: HTTPStream
    private let handle: OpaquePointer?
    private let input: UnsafeMutableRawPointer
    private static let inputSize = 16 << 10
    private var framesDecoded: Int64 = 0
    /// Times it was paused past what the buffer holds and joined the live stream again.
    private(set) var liveJoins = 0

    /// The stream's byte offset at which the current decoder run was fed its first byte.
    private var runBase: Int64 = 0
    /// The raw frame number (samples from the first audio frame's first, before the start's
    /// trim) of the next MPEG frame the run decodes; nil after a blind landing until the
    /// first frame found says where it is.
    private var rawNext: Int64? = 0
    /// The run started at the resource's first byte: libmpg123 reads the LAME tag there and
    /// trims the encoder delay itself; any other run is placed by `trim`.
    private var runFromStart = true
    /// After a seek: the output frame the next returned frame must be (frames before it are
    /// dropped as they are decoded).
    private var resumeAt: Int64?
    /// The output frame the next `read` gives.
    private var position: Int64 = 0
    /// The frame after the last one decoded (a seek back does not lower it).
    private var decodedEnd: Int64 = 0
    /// The decoded MPEG frame not returned yet: a pointer into libmpg123's buffer (valid until
    /// the next decode), its frames, how many were returned (or dropped).
    private var pending: UnsafeMutablePointer<UInt8>?
    private var pendingFrames = 0
    private var pendingTaken = 0
    /// Leading raw frames not returned on the run from the start: libmpg123 trims the LAME
    /// tag's encoder delay plus its decoder's; the frames a station joined in the middle has no
    /// bit reservoir for are dropped here. Known from the first frame with output that decodes
    /// whole.
    private var trim: Int64 = 0
    private var trimKnown = false
    /// The byte offset of the first audio frame (after tags and the Xing/Info frame).
    private var firstAudioOffset: Int64?
    /// The bit reservoir of the run from the start until its first frame that decodes whole;
    /// nil after it, and in any other run (`decodesWhole`).
    private var reservoir: MP3BitReservoir? = MP3BitReservoir()
    /// The last MPEG frame decoded: its offset, for the title marks.
    private var lastFrameOffset: Int64 = -1

    /// One per decoded MPEG frame, in order: its byte offset and raw frame number. Pruned to
    /// the bytes the buffer keeps (a finite file keeps them all: it fetches them again).
    private var checkpoints = CheckpointList()

    /// MPEG frames decoded before a seek's target to fill the bit reservoir (libmpg123's own
    /// seeks use as many, MPG123_PREFRAMES in `Mpg123Input`).
    static let preroll = 16
    /// Samples per MPEG frame, once the first was decoded.
    private var samplesPerFrame: Int64 = 1152
    /// The first frame's header (its bitrate places frames of a constant-bitrate file).
    private var firstHeader: MP3FrameHeader?
    /// A Xing/Info frame came right before the first audio frame.
    private var xingFound = false
    /// The last bytes fed before the first frame was decoded, from stream offset `recentBase`.
    private var recent: [UInt8] = []
    private var recentBase: Int64 = 0

    /// The most bytes read at open without finding an MP3 frame: then the stream is not MP3.
    static let sniffLimit = 256 << 10

    /// Opens the decoder on `stream` (started), waiting up to `milliseconds` for its first
    /// frame. Throws `unreachable` when the stream failed or sent no MP3 audio.
    init(stream: HTTPStream, waitingMilliseconds milliseconds: Int) throws(ReelError) {
        self.stream = stream
        stream.placeTitlesByDecoding()
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
        runBase = stream.buffer.readOffset
        let head = stream.current.head
        resourceLength = head?.resourceLength
        takesRanges = head?.resourceLength != nil && head?.acceptsRanges == true
        if let length = resourceLength {
            // The first audio frame (and the tag before it) within the opener's patience.
            let deadline = monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
            while firstAudioOffset == nil && monotonicNanoseconds() < deadline {
                guard case .needMore = try decodeFrame() else { break }
                _ = stream.buffer.waitForBytes(1, milliseconds: 100)
            }
            learnLength(resourceLength: length)
        }
    }

    /// A feed-mode handle that has found the stream's first frame (its output fixed to that
    /// frame's rate and channels, 16-bit). The bytes fed stay in the stream's buffer (read
    /// from its start), so the first run decodes them.
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
        mpg123_param2(handle, Int32(MPG123_ADD_FLAGS.rawValue), Int(MPG123_QUIET.rawValue | MPG123_GAPLESS.rawValue), 0)
        mpg123_open_feed(handle)
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        var fed = 0
        let start = stream.buffer.readOffset
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
            _ = stream.buffer.waitForBytes(min(fed + 1, stream.buffer.capacity), milliseconds: Int((deadline - now) / 1_000_000) + 1)
            // Looked at, not read: the bytes stay unread (the writer keeps them) for the first run.
            switch stream.buffer.look(at: start + Int64(fed), into: input, count: inputSize) {
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
        // Then decoding starts again from the first byte (not read yet), so the first run's
        // checkpoints cover the stream from its start.
        mpg123_format_none(handle)
        mpg123_format(handle, rate, channels, Int32(MPG123_ENC_SIGNED_16.rawValue))
        mpg123_close(handle)
        mpg123_open_feed(handle)
        return (handle, rate, Int(channels))
    }

    deinit {
        stream.stop()
        if let handle { mpg123_delete(handle) }
        input.deallocate()
    }

    // MARK: Reading

    /// Decodes what has come; 0 at the stream's end, or with `isWaitingForData` when nothing
    /// has come yet; throws when it failed for good.
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        guard handle != nil, frames > 0 else { return 0 }
        if stream.buffer.takeOverrun() { joinLive() }
        let bytesPerFrame = pcmFormat.bytesPerFrame
        var filled = 0
        var ended = false
        while filled < frames {
            if let pending, pendingTaken < pendingFrames {
                let count = min(frames - filled, pendingFrames - pendingTaken)
                (buffer + filled * bytesPerFrame).copyMemory(
                    from: pending + pendingTaken * bytesPerFrame, byteCount: count * bytesPerFrame)
                pendingTaken += count
                filled += count
                continue
            }
            switch try decodeFrame() {
            case .frame: continue
            case .needMore: break
            case .ended: ended = true
            }
            break
        }
        position += Int64(filled)
        decodedEnd = max(decodedEnd, position)
        if filled == 0 && !ended {
            if !isWaitingForData {
                isWaitingForData = true
                stream.noteUnderrun(true)
            }
        } else if filled > 0 && isWaitingForData {
            isWaitingForData = false
            stream.noteUnderrun(false)
        }
        if filled > 0 && framesDecoded == 0 {
            var info = mpg123_frameinfo2()
            if let handle, mpg123_info2(handle, &info) == MPG123_OK.rawValue { stream.noteBitrate(Int(info.bitrate)) }
            stream.noteUnderrun(false)
        }
        framesDecoded += Int64(filled)
        return filled
    }

    private enum Decoded { case frame, needMore, ended }

    /// Decodes the next MPEG frame into `pending` (feeding bytes as needed), keeping its
    /// checkpoint and dropping what a seek wants dropped.
    private func decodeFrame() throws(ReelError) -> Decoded {
        guard let handle else { return .ended }
        while true {
            var number: off_t = 0
            var audio: UnsafeMutablePointer<UInt8>?
            var bytes = 0
            let code = mpg123_decode_frame(handle, &number, &audio, &bytes)
            if code == MPG123_NEW_FORMAT.rawValue { continue }
            if code == MPG123_NEED_MORE.rawValue {
                switch stream.buffer.read(into: input, count: Self.inputSize) {
                case .bytes(let count):
                    if firstHeader == nil { remember(count: count) }
                    mpg123_feed(handle, input.assumingMemoryBound(to: UInt8.self), count)
                    continue
                case .empty:
                    return .needMore
                case .ended(let error):
                    if let error { throw error }
                    return .ended
                }
            }
            if code == MPG123_DONE.rawValue { return .ended }
            guard code == MPG123_OK.rawValue else {
                throw ReelError(.corruptFile, "cannot decode \(stream.url): \(String(cString: mpg123_strerror(handle)))")
            }
            let offset = runBase + Int64(mpg123_framepos(handle))
            let frames = bytes / pcmFormat.bytesPerFrame
            placeFrame(at: offset, frames: frames, audio: audio, whole: decodesWhole(at: offset))
            return .frame
        }
    }

    /// Whether the MPEG frame just decoded at byte `offset` had all its main data, while the
    /// run from the start has had no frame that did (`MP3BitReservoir`); true after that, in
    /// any other run, and when its bytes cannot be looked at.
    private func decodesWhole(at offset: Int64) -> Bool {
        guard var counted = reservoir else { return true }
        var start = [UInt8](repeating: 0, count: MP3BitReservoir.frameStartLength)
        let looked = start.withUnsafeMutableBytes { stream.buffer.look(at: offset, into: $0.baseAddress!, count: $0.count) }
        guard case .bytes(let count) = looked else {
            reservoir = nil
            return true
        }
        let whole = counted.take(Array(start.prefix(count)))
        reservoir = whole ? nil : counted
        return whole
    }

    /// Where the MPEG frame just decoded at byte `offset` (`frames` of output) is in the
    /// output, its checkpoint, the titles it brings, and what of it is returned. `whole`: false
    /// for a frame whose main data began before the run's first byte.
    private func placeFrame(at offset: Int64, frames: Int, audio: UnsafeMutablePointer<UInt8>?, whole: Bool) {
        if firstHeader == nil, let handle {
            samplesPerFrame = Int64(mpg123_spf(handle))
            firstAudioOffset = offset
            if let header = recentBytes(from: offset, count: 4) { firstHeader = MP3FrameHeader(header, at: 0) }
            xingFound = hasXingTag(before: offset)
            recent = []
        }
        // A frame decoded before has its number (a run that found other frames across a
        // reconnect's seam cannot shift what follows); a blind landing's first frame is
        // numbered from its offset.
        let raw = checkpoints.raw(atOffset: offset) ?? rawNext ?? frameNumber(atOffset: offset)
        rawNext = raw + samplesPerFrame
        // A station joined in the middle: the run's first frames reach back into bytes it never
        // received, and libmpg123 decodes them as silence that is not the stream's (libmad, as
        // MPD uses it, skips them). Trimmed like an encoder delay: the first sample returned,
        // and heard, is the first the stream holds.
        let unheard = runFromStart && !trimKnown && !whole
        if unheard {
            trim = raw + samplesPerFrame
        } else if runFromStart && !trimKnown && frames > 0 {
            trim = raw + samplesPerFrame - Int64(frames)
            trimKnown = true
        }
        // The output frame of this frame's first sample (before the start, negative: in the
        // run from the start libmpg123 has trimmed those already).
        let first = raw - trim
        var skip = unheard ? frames : 0
        var usable = frames
        if !runFromStart {
            if first < 0 { skip = Int(-first) }
            if let count = frameCount { usable = Int(max(0, min(Int64(frames), count - first))) }
        }
        let start = runFromStart ? max(first, 0) : first
        checkpoints.append(offset: offset, raw: raw)
        prune()
        _ = stream.noteDecoded(from: lastFrameOffset + 1, to: offset + 1, frame: max(start, 0))
        lastFrameOffset = offset
        if let resumeAt {
            skip = max(skip, Int(min(max(resumeAt - start, 0), Int64(usable))))
            if start + Int64(usable) > resumeAt { self.resumeAt = nil }
        }
        pending = audio
        pendingFrames = usable
        pendingTaken = min(skip, usable)
    }

    /// Keeps the last bytes fed until the first frame was decoded: its header and the Xing/Info
    /// frame before it are read from them (the buffer may have let them go already).
    private func remember(count: Int) {
        let offset = stream.buffer.readOffset - Int64(count)
        if offset != recentBase + Int64(recent.count) {
            recent = []
            recentBase = offset
        }
        recent += UnsafeRawBufferPointer(start: input, count: count)
        if recent.count > 2 * Self.inputSize {
            let drop = recent.count - 2 * Self.inputSize
            recent.removeFirst(drop)
            recentBase += Int64(drop)
        }
    }

    /// `count` bytes of the stream from `offset`, from what was fed last; nil when not there.
    private func recentBytes(from offset: Int64, count: Int) -> [UInt8]? {
        guard offset >= recentBase, offset + Int64(count) <= recentBase + Int64(recent.count) else { return nil }
        let start = Int(offset - recentBase)
        return Array(recent[start..<(start + count)])
    }

    /// The raw frame number at the MPEG frame found at `offset` after a blind landing: the
    /// frames of the first frame's size (a constant bitrate) from the first audio frame.
    private func frameNumber(atOffset offset: Int64) -> Int64 {
        guard let header = firstHeader, let first = firstAudioOffset else { return 0 }
        let index = (Double(offset - first) / header.nominalLength).rounded()
        return Int64(max(index, 0)) * samplesPerFrame
    }

    /// The checkpoints whose bytes the buffer no longer keeps go (a live stream; a finite
    /// file fetches them again).
    private func prune() {
        guard !isFinite else { return }
        checkpoints.dropBefore(offset: stream.buffer.kept.lowerBound)
    }

    // MARK: Length

    /// A finite resource's length in frames: exact from its Xing/Info tag (the frame before the
    /// first audio frame), else libmpg123's extrapolation of its bitrate to `resourceLength`.
    private func learnLength(resourceLength: Int64) {
        guard let handle else { return }
        // Decode the first frame (it is in the buffer: the opener waited for it) to know the
        // first audio frame's offset; it is returned by the next read.
        if firstAudioOffset == nil {
            _ = try? decodeFrame()
        }
        guard firstAudioOffset != nil else { return }
        if xingFound && mpg123_length(handle) >= 0 {
            frameCount = Int64(mpg123_length(handle))
        } else {
            mpg123_set_filesize(handle, off_t(resourceLength))
            let length = Int64(mpg123_length(handle))
            estimatedFrameCount = length > 0 ? length : nil
        }
    }

    /// Whether a Xing/Info frame ends right at `offset` (the first audio frame).
    private func hasXingTag(before offset: Int64) -> Bool {
        let span = Int(min(offset - recentBase, 2048))
        guard span >= 4, let bytes = recentBytes(from: offset - Int64(span), count: span) else { return false }
        for start in stride(from: span - 4, through: 0, by: -1) {
            guard let header = MP3FrameHeader(bytes, at: start), start + header.length == span else { continue }
            return XingTag(frame: Array(bytes[start...]), header: header)?.frames != nil
        }
        return false
    }

    // MARK: Seeking

    /// The resource's length, when it is finite (a file), from the first response.
    private let resourceLength: Int64?
    private var isFinite: Bool { resourceLength != nil }
    /// A finite resource whose server takes Range requests: it seeks anywhere.
    private let takesRanges: Bool

    /// The first output frame a seek can go to: that of the first checkpoint whose bytes are
    /// kept (any, in a file fetched again by ranges).
    private var firstSeekable: Int64 {
        if takesRanges { return 0 }
        let kept = stream.buffer.kept.lowerBound
        guard let checkpoint = checkpoints.first(atOrAfter: kept) else { return decodedEnd }
        return max(checkpoint.raw - trim, 0)
    }

    public func canSeek(to frame: Int64) -> Bool {
        if takesRanges { return frame >= 0 && frame <= (frameCount ?? Int64.max) }
        return frame >= firstSeekable && frame <= decodedEnd
    }

    /// Why `seek(to: frame)` cannot go there: out of what a live stream keeps (`out_of_range`),
    /// or a finite file whose server takes no ranges (`not_seekable`).
    public func seekRefusal(to frame: Int64) -> ReelError {
        let rate = Double(pcmFormat.sampleRate)
        if isFinite {
            return ReelError(
                .notSeekable,
                "\(stream.url) cannot seek so far: its server does not take Range requests")
        }
        let back = max(Double(decodedEnd - firstSeekable) / rate, 0)
        return ReelError(
            .outOfRange,
            "\(stream.url) is live: only the last \(formatSeconds(back)) are kept, \(formatSeconds(Double(frame) / rate)) is not")
    }

    public func seek(to frame: Int64) throws(ReelError) {
        guard canSeek(to: frame) else { throw seekRefusal(to: frame) }
        let kept = stream.buffer.kept
        let raw = frame + trim
        // The checkpoint of the frame, then `preroll` frames before it (not before the bytes
        // kept when they cannot be fetched again).
        if let index = checkpoints.lastIndex(atOrBefore: raw), raw - checkpoints[index].raw < 4 * samplesPerFrame {
            var from = max(index - Self.preroll, 0)
            if !takesRanges {
                while from < index && checkpoints[from].offset < kept.lowerBound { from += 1 }
            }
            let checkpoint = checkpoints[from]
            if from == 0 && checkpoint.raw == 0 && isFinite {
                // From the resource's start: libmpg123 reads the tags and trims as at first.
                restart(at: 0, rawFrame: 0, fromStart: true, fetch: kept.lowerBound > 0)
            } else {
                restart(at: checkpoint.offset, rawFrame: checkpoint.raw, fromStart: false, fetch: !kept.contains(checkpoint.offset))
            }
            position = frame
            resumeAt = frame
            return
        }
        // Not decoded yet (a finite file): from the byte the frame `preroll` before starts at,
        // numbering from the first header found there.
        guard takesRanges, let header = firstHeader, let first = firstAudioOffset else {
            throw seekRefusal(to: frame)
        }
        let target = max(raw / samplesPerFrame - Int64(Self.preroll), 0)
        let offset = max(first + Int64((Double(target) * header.nominalLength).rounded()) - 2, first)
        checkpoints.removeAll()
        restart(at: offset, rawFrame: nil, fromStart: false, fetch: !kept.contains(offset))
        position = frame
        resumeAt = frame
    }

    /// A new decoder run from byte `offset` (`rawFrame` the raw frame number of the first MPEG
    /// frame there; nil: found from its offset). `fetch`: asked from the server.
    private func restart(at offset: Int64, rawFrame: Int64?, fromStart: Bool, fetch: Bool) {
        guard let handle else { return }
        mpg123_close(handle)
        mpg123_open_feed(handle)
        if fetch {
            stream.refetch(from: offset)
        } else {
            stream.buffer.seekRead(to: offset)
        }
        runBase = offset
        rawNext = rawFrame
        runFromStart = fromStart
        reservoir = fromStart ? MP3BitReservoir() : nil
        pending = nil
        pendingFrames = 0
        pendingTaken = 0
        lastFrameOffset = offset - 1
        if fromStart, let resourceLength { mpg123_set_filesize(handle, off_t(resourceLength)) }
    }

    /// Paused past what the buffer holds (the oldest bytes not played were dropped): the
    /// stream plays on from its newest bytes but a few seconds, as when it connects, and the
    /// position goes on from where it was. What was decoded before cannot be gone back to.
    private func joinLive() {
        liveJoins += 1
        let kept = stream.buffer.kept
        let lead = Int64(max(stream.current.bitrate ?? 128, 8) * 125 * 4)
        checkpoints.removeAll()
        decodedEnd = position
        restart(at: max(kept.lowerBound, kept.upperBound - lead), rawFrame: position + trim, fromStart: false, fetch: false)
        resumeAt = nil
    }

    private static let initialized: Bool = {
        mpg123_init()
        return true
    }()
}

/// The checkpoints of a stream's decoded MPEG frames, oldest first: the byte offset of each and
/// its raw frame number, both growing. A value; one thread.
struct CheckpointList {
    private var offsets: [Int64] = []
    private var raws: [Int64] = []
    private var head = 0

    var count: Int { offsets.count - head }

    subscript(index: Int) -> (offset: Int64, raw: Int64) {
        (offsets[head + index], raws[head + index])
    }

    /// Adds a checkpoint after the last; one at or before the last offset is a frame decoded
    /// again after a seek back, already there.
    mutating func append(offset: Int64, raw: Int64) {
        if head < offsets.count, let last = offsets.last, offset <= last { return }
        offsets.append(offset)
        raws.append(raw)
    }

    mutating func removeAll() {
        offsets.removeAll(keepingCapacity: true)
        raws.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Drops the checkpoints before byte `offset`.
    mutating func dropBefore(offset: Int64) {
        while head < offsets.count && offsets[head] < offset { head += 1 }
        if head > 4096 && head * 2 > offsets.count {
            offsets.removeFirst(head)
            raws.removeFirst(head)
            head = 0
        }
    }

    /// The raw frame number of the frame at byte `offset`, if it has a checkpoint.
    func raw(atOffset offset: Int64) -> Int64? {
        let index = firstIndex(offsetAtLeast: offset)
        return index < offsets.count && offsets[index] == offset ? raws[index] : nil
    }

    /// The index of the last checkpoint whose raw frame is at or before `raw`.
    func lastIndex(atOrBefore raw: Int64) -> Int? {
        var low = head, high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if raws[middle] <= raw { low = middle + 1 } else { high = middle }
        }
        return low > head ? low - 1 - head : nil
    }

    /// The first checkpoint at or after byte `offset`.
    func first(atOrAfter offset: Int64) -> (offset: Int64, raw: Int64)? {
        let index = firstIndex(offsetAtLeast: offset)
        return index < offsets.count ? (offsets[index], raws[index]) : nil
    }

    private func firstIndex(offsetAtLeast offset: Int64) -> Int {
        var low = head, high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
