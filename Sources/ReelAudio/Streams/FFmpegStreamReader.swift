// Decoding a stream that is not MP3 (AAC and HE-AAC, Ogg Vorbis and Opus, FLAC, an MP4 that
// arrives whole, HLS segments) through FFmpeg: a thread of its own reads the stream's buffer,
// waiting there while the network is slow, and puts decoded frames into a small ring that the
// audio thread reads without ever waiting.

import CFFmpeg
import ReelModel
import ReelStreamFormats

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A stream's FFmpeg decoder, producing 16-bit frames (32-bit for a lossless stream of more
/// than 16 bits) at the rate and channels of the first decoded frame (HE-AAC's SBR rate and its
/// parametric stereo, not what the ADTS header says). When no frames are decoded yet, `read`
/// returns 0 with `isWaitingForData` instead of waiting (the engine plays a silence it does not
/// count as the track's; the stream's state says `buffering`). At each of `boundaries` (an HLS
/// discontinuity, an HTTP reconnect) the demuxer ends and a new one opens.
///
/// It goes back to any frame read before whose bytes the stream's buffer still keeps (the
/// engine reads it through a `RewindableReader`, which asks it for what it does not keep
/// itself): the decoding thread opens a new demuxer at a point before it (`FFmpegStreamCheckpoints`:
/// an ADTS frame, an Ogg page or an MPEG-TS packet after the run's header, else where the run's
/// demuxer opened), decodes `preroll` frames to build the decoder's state again, places each
/// decoded frame by its packet, and drops what comes before the frame asked. Sample for sample
/// what the first decode gave for Vorbis, FLAC, and AAC without perceptual noise substitution;
/// AAC's noise substitution draws from a generator that runs from the decoder's start, so its
/// noise bands differ by a few units (±3 of 32,768), and Opus's decoder state converges to
/// within ±1 in the preroll. Used by one thread at a time (the opener's, then the audio thread);
/// its decoding thread is `reel-decode`.
public final class FFmpegStreamReader: AudioFileReader {
    public var path: String { stream.url }
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    public let frameCount: Int64? = nil
    public var canSeek: Bool { false }

    /// The frame the next `read` gives, and the frame after the last one read (a seek back
    /// does not lower it).
    private var position: Int64 = 0
    private var readEnd: Int64 = 0

    /// Within what was read, from a point whose bytes are kept.
    public func canSeek(to frame: Int64) -> Bool {
        frame >= 0 && frame <= readEnd && decoding.canReach(frame)
    }

    /// Past what the buffer keeps or ahead of what was read: `out_of_range` for a live stream;
    /// `not_seekable` for a finite one (it is not fetched again).
    public func seekRefusal(to frame: Int64) -> ReelError {
        if stream.current.head?.resourceLength != nil {
            return ReelError(.notSeekable, "\(stream.url) cannot seek so far: only what its buffer keeps can be gone back to")
        }
        let rate = Double(pcmFormat.sampleRate)
        let first = decoding.firstReachable ?? readEnd
        let back = max(Double(readEnd - min(first, readEnd)) / rate, 0)
        return ReelError(
            .outOfRange,
            "\(stream.url) is live: only the last \(formatSeconds(back)) are kept, \(formatSeconds(Double(frame) / rate)) is not")
    }

    /// The decoding thread decodes again from a point before `frame`; reads return 0 with
    /// `isWaitingForData` until its first frames come.
    public func seek(to frame: Int64) throws(ReelError) {
        guard canSeek(to: frame) else { throw seekRefusal(to: frame) }
        decoding.requestSeek(to: frame)
        position = frame
    }

    let stream: HTTPStream
    /// Its first demuxer was named (`aac`: its first bytes are chained ADTS frames), not probed.
    private(set) var demuxerWasNamed = false
    private let decoding: FFmpegStreamDecoding
    private var starving = false
    private var framesRead: Int64 = 0

    /// Opens FFmpeg's demuxer and decoder on `stream` (started), on the calling thread, waiting
    /// up to `milliseconds` for the stream's bytes, then starts the decoding thread. `mediaType` (the server's Content-Type) only names what it
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
        // The first demuxer opens here, on the opener's thread, which the stream's first bytes
        // woke already: the decoding thread starts with it open, while the engine opens the
        // device, so no thread hop is between the first bytes and the player.
        let opened: FFmpegStreamDecoding.Opened
        do throws(ReelError) {
            opened = try decoding.openFirst()
        } catch {
            decoding.stop()
            throw error
        }
        // Created real-time (where allowed): its first frames are what the player waits for.
        let thread = OSThread.start(name: "reel-decode", realtime: false, startingRealtime: OSThread.startPriority) {
            decoding.run()
        }
        pthread_detach(thread)
        format = AudioFormat(codec: opened.codec, sampleRate: opened.sampleRate, channels: opened.channels)
        pcmFormat = PCMFormat(sample: opened.bits == 16 ? .s16 : .s32, sampleRate: opened.sampleRate, channels: opened.channels)
        if opened.bitrate > 0 { stream.noteBitrate(opened.bitrate / 1000) }
        demuxerWasNamed = opened.named
        firstOpenedOnOpenersThread = decoding.firstOpenThread == pthread_self()
    }

    /// The first demuxer was opened on the thread that made this reader (tests).
    private(set) var firstOpenedOnOpenersThread = false

    /// Whether the decoding thread ran real-time when it wrote its first frames, and when it
    /// wrote frames after its start (`startBoostSeconds`); nil until then (tests).
    var decodingStartPriority: (atFirstAudio: Bool?, afterStart: Bool?) { decoding.startPriority }

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
        position += Int64(count)
        readEnd = max(readEnd, position)
        return count
    }

    /// Frames decoded and not read yet (tests).
    var decodedFramesWaiting: Int { decoding.pcm.available / pcmFormat.bytesPerFrame }
}

/// The state of one stream's decoding thread: the demuxer's reads from the stream's buffer and
/// the ring of decoded frames it writes, and what it keeps to decode again from an earlier point.
final class FFmpegStreamDecoding: @unchecked Sendable {
    struct Opened: Sendable {
        var codec: String
        var sampleRate: Int
        var channels: Int
        var bits: Int
        /// Bits a second as the stream says, 0 when unknown.
        var bitrate: Int
        /// The first demuxer was named (ADTS frames beyond doubt, `ADTSChain`), not probed.
        var named = false
    }

    /// The most bytes the format probe reads, and the stream analysis after it (then FFmpeg
    /// decides with what it has): 256 KiB, 16 s of a 128 kbit/s stream.
    static let probeBytes: Int64 = 256 << 10
    /// The most audio the stream analysis reads (an MPEG-TS segment's streams).
    static let analyzeMicroseconds: Int64 = 3_000_000
    /// The most audio the stream analysis reads of a stream opened as ADTS (`ADTSChain`): its
    /// one stream's parameters come with its first frame.
    static let adtsAnalyzeMicroseconds: Int64 = 500_000
    /// A window of bytes read that must hold at least `leastSecondsInWindow` of decoded audio,
    /// else the stream is garbage, not audio (the demuxer would resynchronise on it for ever, and
    /// a decoder takes a frame of random bytes now and then).
    static let garbageBytes = 1 << 20
    /// The audio a window must hold: 8 s of a lossy codec (1 MiB is 16 s at 512 kbit/s, more
    /// than any lossy station sends; random bytes give an AAC decoder a few hundred frames it
    /// takes in a MiB, under 8 s, while 1 s was within their reach), 1 s of a lossless one (a
    /// FLAC stream of 24 bits at 192 kHz sends about 1 MiB in 1.4 s).
    static func leastSecondsInWindow(lossless: Bool) -> Int { lossless ? 1 : 8 }
    /// The decoding thread runs at real-time priority (`OSThread.startPriority`, where allowed)
    /// until it has decoded this much: the player waits for the first of it (the device starts at
    /// a period, 50 ms), and on a busy machine a thread at normal priority waits for a CPU behind
    /// every other process. Bounded work: a few frames, then normal priority for good.
    static let startBoostSeconds = 0.5
    /// Decoded frames kept ahead of the audio thread: 384 KiB, 2.2 s of 44.1 kHz 16-bit stereo.
    static let pcmBytes = 384 << 10
    /// Frames decoded at a time (at most one decoded frame's: more than AAC's, Opus's, Vorbis's
    /// and FLAC's usual frames hold).
    static let chunkFrames = 8192
    /// Frames decoded before a seek's target from a point inside a run, so that the decoder's
    /// state (AAC's and Vorbis's overlapping transforms, Opus's predictions, HE-AAC's SBR) is
    /// what a continuous decode had; `minimumPreroll` at least (Opus's 80 ms at 48 kHz).
    static let preroll: Int64 = 16384
    static let minimumPreroll: Int64 = 4096
    /// The most bytes of a run's header (Ogg's header pages, MPEG-TS's tables before the first
    /// audio packet) kept to open a demuxer inside the run; a longer one is not kept, and the run
    /// is entered only where it started. With `keptHeaders`, at most 1 MiB.
    static let maximumHeaderBytes = 64 << 10

    let stream: HTTPStream
    let mediaType: String?
    let boundaries: StreamBoundaries?
    let pcm = StreamBuffer(capacity: pcmBytes)
    /// The first run's demuxer, opened by `openFirst` on the opener's thread and decoded from by
    /// the decoding thread (started after it), with what it is.
    private var firstRun: (decoder: OpaquePointer, opened: Opened)?
    /// The thread `openFirst` ran on (tests).
    private(set) var firstOpenThread: pthread_t?

    /// Shared with the reader's thread: the checkpoints, a seek asked for and not begun, and
    /// whether the thread still decodes.
    private struct Shared {
        var checkpoints = FFmpegStreamCheckpoints()
        var seekTarget: Int64?
        var running = true
        /// Whether the thread ran real-time when it wrote its first frames, and when it wrote
        /// the first frames after `startBoostSeconds` (tests).
        var realtimeAtFirstAudio: Bool?
        var realtimeAfterStart: Bool?
    }
    private let shared = Locked(Shared())

    /// A run's header: the bytes from where its demuxer opened up to its first audio packet, and
    /// the demuxer's name.
    private struct RunHeader {
        var start: Int64
        var bytes: [UInt8]?
        var container: String
    }

    // The decoding thread's own.
    private let openDeadline: UInt64
    private var opening = true
    /// Bytes of the stream read (the stream's offset of the next byte read); bytes read in the
    /// current window of `garbageBytes`, and the frames decoded in it (a stream is noise when a
    /// window holds less audio than `leastSecondsInWindow`: a decoder finds a frame it takes in
    /// random bytes now and then).
    private var consumed: Int64 = 0
    private var sinceAudio = 0
    private var framesInWindow = 0
    /// The audio a window must hold, in frames (once opened).
    private var leastFramesInWindow = 1
    /// Why the last read failed or ended the stream (nil: the end, or no failure yet).
    private var readFailure: ReelError?
    /// The output frame of the next frame written to `pcm`.
    private var outputFrames: Int64 = 0
    /// The headers of the runs decoded, by the offset they start at (the newest `keptHeaders`).
    private var headers: [Int64: RunHeader] = [:]
    static let keptHeaders = 16
    /// The bytes read from the current run's start while its header's end is not known.
    private var capture: [UInt8]?
    /// The run being decoded: where its demuxer's bytes start in the stream, the header given to
    /// it first (a seek's run), and its header's index.
    private var runStart: Int64 = 0
    private var prefix: [UInt8] = []
    private var prefixSent = 0
    private var runHeader: Int64 = 0
    /// The thread saw a seek asked for while reading: the demuxer ends, and the seek begins.
    private var abandoning = false

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

    // MARK: Seeking (the reader's thread)

    /// Whether a seek can reach output frame `frame` from a point whose bytes are kept.
    func canReach(_ frame: Int64) -> Bool {
        let kept = stream.buffer.kept.lowerBound
        return shared.withLock { shared in
            shared.running
                && shared.checkpoints.point(
                    toReach: frame, keptFrom: kept, preroll: Self.preroll, minimumPreroll: Self.minimumPreroll) != nil
        }
    }

    /// The first output frame a seek can reach now, nil when none.
    var firstReachable: Int64? {
        let kept = stream.buffer.kept.lowerBound
        return shared.withLock { $0.checkpoints.firstReachable(keptFrom: kept, minimumPreroll: Self.minimumPreroll) }
    }

    /// Asks the thread to decode again from a point before `frame`: the frames decoded ahead
    /// are dropped at once, and the thread's current demuxer ends.
    func requestSeek(to frame: Int64) {
        shared.withLock { $0.seekTarget = frame }
        // After the request: a write of the old frames that comes after this fails, and the
        // thread then finds the request.
        pcm.reset(at: 0)
    }

    private var seekPending: Bool { shared.withLock { $0.seekTarget != nil } }

    // MARK: The decoding thread

    func run() {
        defer { shared.withLock { $0.running = false } }
        // Started real-time (`startBoostSeconds`) where allowed; lowered once the start's audio is out.
        var boosted = OSThread.isRealtime
        defer { if boosted { OSThread.lowerToNormal() } }
        defer {
            // Stopped before its first run began: the demuxer `openFirst` opened is closed here.
            if let firstRun { reel_ff_close(firstRun.decoder) }
            firstRun = nil
        }
        var first: Opened?
        var chunk: UnsafeMutableRawPointer?
        defer { chunk?.deallocate() }
        /// A seek's target not reached yet: frames before it are dropped.
        var target: Int64?
        /// In a seek's run: frames are dropped until one is placed by its checkpoint.
        var placing = false
        var forcedFormat: String?
        while !pcm.isStopped {
            abandoning = false
            var seeking = false
            // A seek asked for before the first run began waits for it (its demuxer is open).
            if firstRun == nil, let seek = shared.withLock({ shared -> Int64? in defer { shared.seekTarget = nil }; return shared.seekTarget }) {
                if let format = beginSeek(to: seek) {
                    seeking = true
                    target = seek
                    placing = true
                    forcedFormat = format
                } else {
                    // Not reachable any more (the buffer dropped its bytes meanwhile): on from here.
                    target = nil
                    placing = false
                }
            }
            let decoder: OpaquePointer
            let opened: Opened
            if let firstRun {
                // The first run, opened on the opener's thread (`openFirst`).
                self.firstRun = nil
                (decoder, opened) = firstRun
                first = opened
                chunk = .allocate(byteCount: Self.chunkFrames * opened.channels * opened.bits / 8, alignment: 16)
            } else {
                let openedAt = consumed
                let attempt = openRun(first: first == nil, seeking: seeking, forcedFormat: forcedFormat)
                forcedFormat = nil
                guard let run = attempt.run else {
                    if seekPending || abandoning { continue }
                    if first != nil && consumed == openedAt && readFailure == nil {
                        // A boundary at the stream's end (its last segments could not be fetched):
                        // nothing follows it, the stream is over.
                        pcm.finish(error: nil)
                        return
                    }
                    pcm.finish(error: attempt.error)
                    return
                }
                (decoder, opened) = run
                if let first {
                    guard opened.sampleRate == first.sampleRate && opened.channels == first.channels && opened.bits == first.bits else {
                        reel_ff_close(decoder)
                        pcm.finish(error: ReelError(
                            .corruptFile,
                            "\(stream.url): its audio changed from \(first.channels) channels at \(first.sampleRate) Hz to \(opened.channels) at \(opened.sampleRate) Hz"))
                        return
                    }
                } else {
                    first = opened
                    chunk = .allocate(byteCount: Self.chunkFrames * opened.channels * opened.bits / 8, alignment: 16)
                }
            }
            defer { reel_ff_close(decoder) }
            let info = reel_ff_get_info(decoder)
            let container = String(cString: info.container)
            // Titles in the stream's own timed metadata are placed by their time: the player shows
            // each when its audio is heard.
            if reel_ff_has_timed_id3(decoder) != 0 { stream.placeTitlesByDecoding() }
            opening = false
            sinceAudio = 0
            framesInWindow = 0
            leastFramesInWindow = max(opened.sampleRate, 1) * Self.leastSecondsInWindow(lossless: info.source_bits > 0)
            let bytesPerFrame = opened.channels * opened.bits / 8
            let resumable = FFmpegStreamCheckpoints.resumableContainers.contains(container)
            var decodeMessage = [CChar](repeating: 0, count: 256)
            var runFirstFrame = true
            while true {
                if seekPending { break }
                let generation = pcm.generation
                var place = reel_ff_place()
                let count = Int(reel_ff_read_frame(decoder, chunk!, Int64(Self.chunkFrames), &place, &decodeMessage, decodeMessage.count))
                if count < 0 {
                    if seekPending || abandoning { break }
                    pcm.finish(error: readFailure ?? ReelError(.corruptFile, "cannot decode \(stream.url): \(text(decodeMessage))"))
                    return
                }
                if count == 0 { break }
                framesInWindow += count
                var frame = outputFrames
                var usable = count
                if place.offset == 0 {
                    // A decoded frame's start: where it goes, from its checkpoint when it has one.
                    let offset = streamOffset(demuxerByte: place.byte)
                    if capture != nil, offset >= 0 { endHeader(at: offset) }
                    let known = offset >= 0 ? shared.withLock { $0.checkpoints.place(offset: offset, index: place.index) } : nil
                    if let known {
                        placing = false
                        if Int(place.samples) < known.samples {
                            // Trimmed at its start here (a stream's first packet): its end is the same.
                            frame = known.frame + Int64(known.samples - Int(place.samples))
                        } else {
                            frame = known.frame
                            // Trimmed at its end before (the end of an Ogg link), not here.
                            usable = min(count, known.samples)
                        }
                    } else if placing {
                        takeTimedTitles(decoder, frameStart: nil)
                        continue
                    } else if offset >= 0 {
                        let header = runHeader
                        let headerKnown = headers[header]?.bytes != nil
                        shared.withLock { shared in
                            shared.checkpoints.add(FFmpegStreamCheckpoints.Place(offset: offset, index: place.index, frame: frame, samples: Int(place.samples)))
                            if runFirstFrame && prefixSent == 0 && runStart <= offset {
                                shared.checkpoints.add(FFmpegStreamCheckpoints.Point(offset: runStart, frame: frame, header: header, runStart: true))
                            } else if resumable && headerKnown && place.index == 0 {
                                shared.checkpoints.add(FFmpegStreamCheckpoints.Point(offset: offset, frame: frame, header: header, runStart: false))
                            }
                            shared.checkpoints.dropBefore(offset: stream.buffer.kept.lowerBound)
                        }
                    }
                    if offset >= 0 { placeReceivedTitles(upTo: offset, frame: frame) }
                    runFirstFrame = false
                } else if placing {
                    takeTimedTitles(decoder, frameStart: nil)
                    continue
                }
                takeTimedTitles(decoder, frameStart: max(frame - Int64(place.offset), 0))
                var skip = 0
                if let wanted = target {
                    if frame + Int64(usable) <= wanted {
                        outputFrames = frame + Int64(usable)
                        continue
                    }
                    skip = Int(max(wanted - frame, 0))
                    target = nil
                }
                if usable > skip {
                    noteStartPriority(boosted: boosted)
                    guard pcm.write(chunk! + skip * bytesPerFrame, count: (usable - skip) * bytesPerFrame, generation: generation) else {
                        if pcm.isStopped { return }
                        break  // a seek reset the ring
                    }
                }
                outputFrames = frame + Int64(usable)
                if boosted && Double(outputFrames) >= Self.startBoostSeconds * Double(opened.sampleRate) {
                    // The start's audio is out: normal priority from here on.
                    OSThread.lowerToNormal()
                    boosted = false
                }
            }
            // The demuxer ended: at a seek or a boundary a new one opens; else the stream is over.
            if pcm.isStopped { return }
            if seekPending || abandoning { continue }
            guard readFailure == nil, let boundary = boundaries?.next(from: consumed), boundary == consumed else {
                pcm.finish(error: readFailure)
                return
            }
        }
    }

    /// Notes the thread's priority at its first audio written, and at the first written once the
    /// start's boost is over (tests: `FFmpegStreamReader.startPriority`).
    private func noteStartPriority(boosted: Bool) {
        guard !startPriorityNoted else { return }
        startPriorityNoted = !boosted
        let now = OSThread.isRealtime
        shared.withLock { shared in
            if shared.realtimeAtFirstAudio == nil { shared.realtimeAtFirstAudio = now }
            if !boosted { shared.realtimeAfterStart = now }
        }
    }

    /// Both are noted (the decoding thread's own).
    private var startPriorityNoted = false

    /// Whether the thread ran real-time at its first audio, and after the start (nil: not yet).
    var startPriority: (atFirstAudio: Bool?, afterStart: Bool?) {
        shared.withLock { ($0.realtimeAtFirstAudio, $0.realtimeAfterStart) }
    }

    /// The decoded frame that starts at output frame `frame` came from stream offset `offset`: a
    /// title received for the bytes up to it (ICY's, a packed-audio segment's ID3 tag: noted at
    /// the offset of the audio it names) is heard from that frame. From the first frame whose
    /// offset the demuxer gives, the player shows titles by these marks (`placeTitlesByDecoding`;
    /// the first call covers every title received before it); a demuxer that gives none leaves
    /// the stream's titles shown as they come.
    private func placeReceivedTitles(upTo offset: Int64, frame: Int64) {
        if !placesReceivedTitles {
            placesReceivedTitles = true
            stream.placeTitlesByDecoding()
        }
        _ = stream.noteDecoded(from: receivedTitlesFrom, to: offset + 1, frame: frame)
        receivedTitlesFrom = offset + 1
    }

    /// Whether received titles are placed (`placeReceivedTitles`), and the stream offset from
    /// which the next decoded frame places them (after a seek back, lower: they are placed again
    /// at the same frames).
    private var placesReceivedTitles = false
    private var receivedTitlesFrom: Int64 = 0

    /// Timed metadata (an MPEG-TS timed-ID3 stream's tags) the demuxer read on the way to the
    /// frame just decoded, whose first sample is output frame `frameStart`: each title is heard
    /// from the frame of its presentation time. Nil: the frame's place is not known yet (a seek's
    /// run before its first checkpoint; what it reads was marked by the first decode), so they
    /// are dropped. A tag that does not parse is skipped with a notice.
    private func takeTimedTitles(_ decoder: OpaquePointer, frameStart: Int64?) {
        while true {
            var at: Int64 = 0
            let size = timedMetadata.withUnsafeMutableBufferPointer { buffer in
                reel_ff_take_timed_id3(decoder, buffer.baseAddress, Int64(buffer.count), &at)
            }
            if size < 0 { return }
            if size > timedMetadata.count && size <= Self.maximumTimedMetadataBytes {
                // Kept for a call with room.
                timedMetadata = [UInt8](repeating: 0, count: Int(size))
                continue
            }
            guard let frameStart else { continue }
            guard size <= timedMetadata.count else {
                stream.noteSkipped("\(stream.url): a timed ID3 tag of \(size) bytes was skipped (more than \(Self.maximumTimedMetadataBytes))")
                continue
            }
            do throws(StreamFormatError) {
                let onAir = try ID3OnAir(timedMetadata: Array(timedMetadata.prefix(Int(size))))
                // A tag without a title (only a timestamp, a picture) changes nothing.
                guard let title = onAir.streamTitle else { continue }
                stream.noteTitleHeard(title, atFrame: frameStart + at)
            } catch {
                stream.noteSkipped("\(stream.url): a timed ID3 tag was skipped: \(error.message)")
            }
        }
    }

    /// Where `takeTimedTitles` copies a tag, grown to the largest taken (up to
    /// `maximumTimedMetadataBytes`, CFFmpeg's bound on what it keeps).
    private var timedMetadata = [UInt8](repeating: 0, count: 4096)
    static let maximumTimedMetadataBytes: Int64 = 256 << 10

    /// Moves the stream's read position to the point to decode from for `frame` and sets the
    /// run's header to be given first; the demuxer's name to open, nil when no point is kept.
    private func beginSeek(to frame: Int64) -> String? {
        let kept = stream.buffer.kept.lowerBound
        guard let point = shared.withLock({
            $0.checkpoints.point(toReach: frame, keptFrom: kept, preroll: Self.preroll, minimumPreroll: Self.minimumPreroll)
        }), let header = headers[point.header], header.start <= point.offset,
            point.runStart || point.offset == header.start || header.bytes != nil,
            stream.buffer.seekRead(to: point.offset)
        else { return nil }
        consumed = point.offset
        runStart = point.offset
        runHeader = point.header
        capture = nil
        prefix = point.runStart || point.offset == header.start ? [] : header.bytes ?? []
        prefixSent = 0
        readFailure = nil
        return header.container.isEmpty ? nil : header.container
    }

    /// The stream's bytes not read yet, as many as are there now (none is waited for), start
    /// with chained ADTS frame headers (`ADTSChain`).
    private func startsWithADTS() -> Bool {
        var bytes = [UInt8](repeating: 0, count: ADTSChain.searchBytes * 2)
        let count = bytes.withUnsafeMutableBytes { stream.buffer.peek(into: $0.baseAddress!, count: $0.count) }
        return ADTSChain.start(in: Array(bytes.prefix(count))) != nil
    }

    /// The stream's offset of byte `byte` of what the demuxer read (its header first, in a
    /// seek's run); -1 for -1.
    private func streamOffset(demuxerByte byte: Int64) -> Int64 {
        guard byte >= 0 else { return -1 }
        let prefixCount = Int64(prefix.count)
        if prefixCount > 0 && byte < prefixCount { return runHeader + byte }
        return runStart + byte - prefixCount
    }

    /// The current run's first decoded frame came from byte `offset`: its header is what came
    /// before it.
    private func endHeader(at offset: Int64) {
        guard let bytes = capture else { return }
        capture = nil
        let length = Int(offset - runHeader)
        if length >= 0 && length <= bytes.count { headers[runHeader]?.bytes = Array(bytes.prefix(length)) }
    }
    /// A C string written into `characters`.
    private func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first run's demuxer, opened on the calling thread (the opener's), which waits for the
    /// stream's bytes up to the open deadline; `run` (the decoding thread, started after this
    /// returned) decodes from it. Throws why it cannot be opened.
    func openFirst() throws(ReelError) -> Opened {
        firstOpenThread = pthread_self()
        let attempt = openRun(first: true, seeking: false, forcedFormat: nil)
        guard let run = attempt.run else { throw attempt.error }
        firstRun = run
        return run.opened
    }

    /// Opens the demuxer of a run that starts at the stream's read position (a seek's run: with
    /// its header given first): the decoder and what it decodes, or why it could not be opened.
    /// On the decoding thread (the first run's on the opener's, before that thread starts).
    private func openRun(first: Bool, seeking: Bool, forcedFormat: String?)
        -> (run: (decoder: OpaquePointer, opened: Opened)?, error: ReelError)
    {
        let kept = stream.buffer.kept.lowerBound
        boundaries?.forget(before: kept)
        opening = first
        if !seeking {
            prefix = []
            prefixSent = 0
        }
        if prefix.isEmpty {
            // A run that starts here: its header is captured as it is read.
            runStart = consumed
            runHeader = consumed
            if headers[consumed] != nil {
                capture = nil
            } else {
                if headers.count >= Self.keptHeaders, let oldest = headers.keys.min() { headers[oldest] = nil }
                headers[consumed] = RunHeader(start: consumed, bytes: nil, container: "")
                capture = []
            }
        }
        var format = forcedFormat
        var analyze = Self.analyzeMicroseconds
        if first && !seeking && format == nil && prefix.isEmpty && startsWithADTS() {
            // ADTS frames beyond doubt: FFmpeg's `aac` demuxer, without the probe.
            format = "aac"
            analyze = Self.adtsAnalyzeMicroseconds
        }
        var status = REEL_FF_OK
        var message = [CChar](repeating: 0, count: 512)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let decoder = reel_ff_open_stream(
            { context, buffer, size in
                Unmanaged<FFmpegStreamDecoding>.fromOpaque(context!).takeUnretainedValue().readBytes(buffer!, size: Int(size))
            }, context, format, stream.current.head?.resourceLength != nil ? 1 : 0, Self.probeBytes, analyze, &status, &message, message.count)
        guard let decoder else { return (nil, openError(status: status, detail: text(message))) }
        let info = reel_ff_get_info(decoder)
        let container = String(cString: info.container)
        if headers[runHeader]?.container.isEmpty == true { headers[runHeader]?.container = container }
        let opened = Opened(
            codec: FFmpegReader.registryName(ffmpegCodec: String(cString: info.codec)), sampleRate: Int(info.sample_rate),
            channels: Int(info.channels), bits: Int(info.bits), bitrate: Int(info.bit_rate), named: format != nil)
        return ((decoder, opened), ReelError(.unreachable, "\(stream.url) sent no audio"))
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
        if prefixSent < prefix.count {
            // A seek's run: its header first.
            let count = min(size, prefix.count - prefixSent)
            prefix.withUnsafeBytes { UnsafeMutableRawPointer(buffer).copyMemory(from: $0.baseAddress! + prefixSent, byteCount: count) }
            prefixSent += count
            return Int32(count)
        }
        var limit = size
        // The run's own start may be a boundary (boundaries are kept for seeks back): the next one.
        if let boundary = boundaries?.next(from: max(consumed, runStart + 1)) {
            limit = min(limit, Int(boundary - consumed))
            if limit <= 0 { return 0 }
        }
        while true {
            switch stream.buffer.read(into: buffer, count: limit) {
            case .bytes(let count):
                consumed += Int64(count)
                if capture != nil {
                    // The run's header is in what it reads first, up to its first audio packet.
                    if capture!.count + count <= Self.maximumHeaderBytes {
                        capture! += UnsafeBufferPointer(start: buffer, count: count)
                    } else {
                        capture = nil
                    }
                }
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
                if seekPending {
                    // A seek: this demuxer ends here.
                    abandoning = true
                    return 0
                }
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
