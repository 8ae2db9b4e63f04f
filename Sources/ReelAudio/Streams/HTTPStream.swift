// A stream's network side: its own thread fetching an http(s) URL through libcurl into a
// bounded buffer, connecting again after a drop or a stall.

import CCurl
import ReelModel
import ReelRuntime
import ReelStreamFormats
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How streams connect (the daemon's configuration).
public struct StreamConfiguration: Sendable, Equatable {
    /// A PEM file of CAs trusted besides the system's (`stream_ca_file`), or nil.
    public var extraCAFile: String?
    /// Seconds allowed to connect, TLS included.
    public var connectTimeout = 10
    /// A server that sends less than `lowSpeedBytes` a second for `lowSpeedSeconds` seconds has
    /// stalled: the connection is dropped and made again (a trickle is an error, never a hang).
    public var lowSpeedBytes = 1000
    public var lowSpeedSeconds = 10
    /// Redirects followed at most.
    public var maxRedirects = 5
    /// Seconds of compressed stream kept (`stream_buffer_seconds`): what was played, for
    /// seeking back, and what comes while paused, for resuming where it paused. In bytes the
    /// stream's bitrate times this (see `bufferBytes(kilobitsPerSecond:)`).
    public var bufferSeconds = 300
    /// When set, the buffer's size in bytes whatever the bitrate (tests, a whole playlist).
    public var bufferBytes: Int?
    /// False for a fetch of one whole resource (a station playlist): the end of the first
    /// body, or its failure, is the end; nothing is connected again.
    public var reconnects = true

    /// The bitrate assumed until the stream's is known, and when it never is: 320 kbit/s, the
    /// most an MP3 stream has.
    static let unknownKilobitsPerSecond = 320
    /// The smallest buffer: what a server sends in a burst on connecting, and more.
    static let minimumBufferBytes = 256 << 10

    /// The buffer's size for a stream of `kilobitsPerSecond` (nil: not known).
    public func bufferBytes(kilobitsPerSecond: Int?) -> Int {
        if let bufferBytes { return bufferBytes }
        let rate = max(kilobitsPerSecond ?? Self.unknownKilobitsPerSecond, 8)
        return max(bufferSeconds * rate * 125, Self.minimumBufferBytes)
    }

    public init(extraCAFile: String? = nil, bufferSeconds: Int = 300) {
        self.extraCAFile = extraCAFile
        self.bufferSeconds = bufferSeconds
    }
}

/// What the network side knows of its stream, for the player's state. Any thread reads it.
public struct HTTPStreamStatus: Equatable, Sendable {
    public var state: StreamStatus.State = .connecting
    /// The first response that was played from (its type, length, ICY headers); nil before.
    public var head: HTTPResponseHead?
    public var reconnects = 0
    /// Bytes that reconnects' first bytes repeated of what was already received (a server's
    /// burst to a new listener), skipped: heard once, and no further behind live.
    public var repeatedBytesSkipped: Int64 = 0
    /// The station's name (`icy-name`), when said. (What is on air is `HTTPStream.title(atFrame:)`:
    /// a title is heard from the frame of the audio it names.)
    public var name: String?
    /// The last title received (ICY `StreamTitle`, an HLS segment's ID3 tag): ahead of what is
    /// heard by what the buffer holds. What the player shows is `HTTPStream.title(atFrame:)`.
    public var title: String?
    /// Kilobits a second: `icy-br`, or what the decoder measured.
    public var bitrate: Int?
    /// Why the stream ended, when it failed.
    public var failure: ReelError?
}

/// A title the server put on air, at the frame of the decoded audio from which it is heard.
struct TitleMark: Equatable {
    var frame: Int64
    var title: String?
}

/// One URL's transfer, run on a thread of its own (`reel-stream`) from `start` until the
/// resource ends, it fails for good, or `stop`. The decoder reads `buffer`.
public final class HTTPStream: @unchecked Sendable {
    public let url: String
    let configuration: StreamConfiguration
    let buffer: StreamBuffer
    /// Where the bytes start over: a live stream's reconnect (the new connection's body is a new
    /// container: an Ogg stream's headers, an MP4's), or an HLS discontinuity. A demuxer that
    /// reads across one would take the new container's first bytes for the old one's.
    let boundaries = StreamBoundaries()
    /// Read by any thread; written by the network thread (and `noteBitrate`, `noteUnderrun`
    /// by the decoder's).
    private let status = Locked(HTTPStreamStatus())
    /// Called on the network (or decoder) thread after the state or the name changed, or a title
    /// mark was made.
    private let onChange: @Sendable () -> Void
    private let onResponse: (@Sendable (HTTPResponseHead) -> Void)?

    /// Titles received, by the offset in the buffer of the first audio byte they name; the
    /// decoder turns them into `heard` marks as it decodes past them. A title repeated (a server
    /// sends what is on air in every metadata block, about once a second) is kept once, at its
    /// first offset: so the bound (`markLimit`) counts changes, and a decoder that reads far
    /// behind what was received (the buffer's lead grows with every reconnect's burst) still
    /// finds the title of what it decodes.
    private let receivedTitles = Locked([(offset: Int64, title: String?)]())
    /// The titles by the frame they are heard from, in order, for the player to show the one
    /// of the frame audible now; `before` is the title before the first of them.
    private let heard = Locked((marks: [TitleMark](), before: String?.none, placedByDecoder: false))
    static let markLimit = 64
    /// Skipped metadata not logged yet (`noteSkipped`), and the last sentence kept.
    private let notices = Locked((waiting: [String](), last: String?.none))
    static let noticeLimit = 8
    /// A Range request asked by the decoder (a seek in a finite resource), for the network thread.
    private let pendingRange = Locked<Int64?>(nil)
    /// Whether the buffer was sized for the stream's bitrate (once).
    private let sized = Locked(false)

    // The network thread's own.
    private var head = HTTPResponseHead()
    private var refused: ReelError?
    /// Bytes of the resource received over every connection.
    private var received: Int64 = 0
    private var everPlayed = false
    private var rangeAsked: Int64?
    /// The connection being made is for a seek (`refetch`), not a reconnect.
    private var seeking = false
    /// The buffer generation this connection writes for (a `refetch` ends it).
    private var writing = 0
    /// The ICY de-interleaver of this connection's body, when the server sends metadata.
    private var icy: ICYDemuxer?
    /// A live stream's new connection whose first bytes may repeat the old one's last (its
    /// server's burst): they are held until that is known. With the titles that came meanwhile,
    /// by their offset in what is held.
    private var overlap: ReconnectOverlap?
    private var overlapTitles: [(held: Int, title: String?)] = []
    /// Reconnects in a row whose bytes only repeated what was received (a server that starts
    /// every connection at the same place and ends it early): after two, a reconnect's bytes
    /// are written as they come, repeated as they are, rather than never playing on.
    private var reconnectsOnlyRepeating = 0
    /// The buffer offset of the current connection's first audio byte.
    private var connectionStart: Int64 = 0

    /// `onResponse` is told the first response's head (not a redirect's, nor a reconnect's) on
    /// the network thread, before any of its body is written: what may be readied while the
    /// body is awaited (`StreamDecoderPreload`). It must return at once.
    public init(
        url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void = {},
        onResponse: (@Sendable (HTTPResponseHead) -> Void)? = nil
    ) {
        self.url = url
        self.configuration = configuration
        self.onResponse = onResponse
        // Sized for the highest bitrate until the stream's is known: pages not written are not
        // resident, and it is resized (early, while it holds little) to the stream's.
        buffer = StreamBuffer(capacity: configuration.bufferBytes(kilobitsPerSecond: nil))
        self.onChange = onChange
    }

    deinit { buffer.stop() }

    public var current: HTTPStreamStatus { status.current }

    /// Bytes received and not decoded yet. Any thread.
    public var bufferedBytes: Int { buffer.available }

    /// Bytes received after which a stream counts as having played (a first connection that
    /// fails before is `unreachable` at once).
    static let playedBytes: Int64 = 4 << 10

    /// True once libcurl was loaded (by the first URL played); never loads it.
    public static var libraryLoaded: Bool { reel_curl_loaded() != 0 }

    /// Starts the network thread. Once.
    public func start() {
        let thread = OSThread.start(name: "reel-stream", realtime: false) { [self] in run() }
        pthread_detach(thread)
    }

    /// Ends the transfer (the thread ends at libcurl's next callback). Any thread.
    public func stop() { buffer.stop() }

    /// The decoder had nothing to decode (true) or has bytes again (false).
    func noteUnderrun(_ starving: Bool) {
        update { status in
            guard status.state == .playing || status.state == .buffering else { return }
            status.state = starving ? .buffering : .playing
        }
    }

    /// The decoder's measure of the bitrate, when the server did not say it.
    func noteBitrate(_ kbps: Int) {
        update { status in
            if status.head?.icyBitrate == nil && kbps > 0 { status.bitrate = kbps }
        }
        sizeBuffer(kilobitsPerSecond: kbps)
    }

    /// Sizes the buffer for the stream's bitrate, the first time it is known.
    private func sizeBuffer(kilobitsPerSecond kbps: Int?) {
        guard let kbps, kbps > 0, configuration.bufferBytes == nil else { return }
        let first = sized.withLock { sized -> Bool in
            defer { sized = true }
            return !sized
        }
        if first { buffer.resize(to: configuration.bufferBytes(kilobitsPerSecond: kbps)) }
    }

    // MARK: Titles heard

    /// The decoder places each title at the frame of the audio it names (`noteDecoded`): the
    /// player shows a title when that audio is heard. Called by such a decoder (libmpg123's)
    /// when it opens, before it decodes.
    func placeTitlesByDecoding() {
        heard.withLock { $0.placedByDecoder = true }
    }

    /// Whether the decoder places titles at the frames of the audio they name (`title(atFrame:)`
    /// then gives those frames), as the player shows them. Any thread.
    public var placesTitlesByDecoding: Bool { heard.withLock { $0.placedByDecoder } }

    /// A title came for the audio from buffer offset `offset` on. The network thread.
    func noteTitleReceived(_ title: String?, at offset: Int64) {
        receivedTitles.withLock { list in
            if let last = list.last, last.title == title { return }
            list.append((offset, title))
            if list.count > Self.markLimit { list.removeFirst() }
        }
        let placed = heard.withLock { $0.placedByDecoder }
        status.withLock { $0.title = title }
        // A decoder that places titles (`noteDecoded`) tells the player when one is heard; for
        // any other the title is on air when it arrives.
        if !placed { onChange() }
    }

    /// The decoder decoded the audio from buffer offset `from` up to `to` (exclusive), starting
    /// at frame `frame`: a title received for an offset in there is heard from that frame.
    /// True when a new mark was made (then `onChange` is called). The decoder's thread.
    func noteDecoded(from: Int64, to: Int64, frame: Int64) -> Bool {
        let titles = receivedTitles.withLock { list -> [String?] in
            list.filter { $0.offset >= from && $0.offset < to }.map(\.title)
        }
        guard let title = titles.last else { return false }
        return markHeard(title, atFrame: frame)
    }

    /// A title the decoder found in the audio itself (an MPEG-TS timed-ID3 packet) is heard from
    /// output frame `frame` (its presentation time): marked as `noteDecoded` marks a received
    /// one, and the last title received. True when a new mark was made (then `onChange` is
    /// called). The decoder's thread.
    @discardableResult
    func noteTitleHeard(_ title: String?, atFrame frame: Int64) -> Bool {
        status.withLock { $0.title = title }
        return markHeard(title, atFrame: max(frame, 0), collapsingRepeats: true)
    }

    /// Marks `title` heard from `frame`. `collapsingRepeats`: the same title as the mark before
    /// it makes none (a station repeats what is on air in every segment's timed metadata).
    private func markHeard(_ title: String?, atFrame frame: Int64, collapsingRepeats: Bool = false) -> Bool {
        let marked = heard.withLock { heard -> Bool in
            // Decoded again after a seek back: the same mark.
            if let index = heard.marks.lastIndex(where: { $0.frame <= frame }), heard.marks[index].frame == frame {
                heard.marks[index].title = title
                return false
            }
            heard.marks.removeAll { $0.frame > frame }
            if collapsingRepeats, (heard.marks.last?.title ?? heard.before) == title, !heard.marks.isEmpty || heard.before != nil {
                return false
            }
            heard.marks.append(TitleMark(frame: frame, title: title))
            if heard.marks.count > Self.markLimit {
                heard.before = heard.marks.removeFirst().title
            }
            return true
        }
        // The player schedules the change for when that frame is heard.
        if marked { onChange() }
        return marked
    }

    /// Metadata the stream sent that was skipped (a broken ID3 tag), for the player's log: one
    /// sentence each, the oldest first, at most `noticeLimit` waiting. The same sentence as the
    /// last one kept is not kept again (a station whose every segment has the same broken tag is
    /// logged once). Any thread.
    func noteSkipped(_ sentence: String) {
        let kept = notices.withLock { notices -> Bool in
            guard notices.last != sentence else { return false }
            notices.last = sentence
            notices.waiting.append(sentence)
            if notices.waiting.count > Self.noticeLimit { notices.waiting.removeFirst() }
            return true
        }
        if kept { onChange() }
    }

    /// The sentences `noteSkipped` kept since the last call. Any thread.
    public func takeNotices() -> [String] {
        notices.withLock { notices in
            defer { notices.waiting = [] }
            return notices.waiting
        }
    }

    /// The title on air at `frame` of the decoded audio (what is heard when that frame is),
    /// and the frame of the next change after it, if one was decoded. A decoder that does not
    /// place titles (FFmpeg's, for AAC, Ogg, HLS) leaves the last title received. Any thread.
    public func title(atFrame frame: Int64) -> (title: String?, next: Int64?) {
        if !heard.withLock({ $0.placedByDecoder }) { return (status.withLock { $0.title }, nil) }
        return heard.withLock { heard in
            let index = heard.marks.lastIndex { $0.frame <= frame }
            let title = index.map { heard.marks[$0].title } ?? heard.before
            let next = heard.marks[(index.map { $0 + 1 } ?? 0)...].first?.frame
            return (title, next)
        }
    }

    /// Makes the network thread fetch the resource again from byte `offset` (a Range request;
    /// a finite resource whose server takes them). The buffer is emptied at once: its next
    /// byte is `offset`. The decoder's thread.
    func refetch(from offset: Int64) {
        pendingRange.withLock { $0 = offset }
        buffer.reset(at: offset)
    }

    /// Changes the status (and tells `onChange` when the player shows something new). The
    /// network thread's, the decoder's, and an `HLSStream`'s thread, which fills a stream that is
    /// never started.
    func update(_ change: (inout HTTPStreamStatus) -> Void) {
        let changed = status.withLock { status -> Bool in
            let before = status
            change(&status)
            return status.state != before.state || status.name != before.name
                || status.reconnects != before.reconnects || status.bitrate != before.bitrate
        }
        if changed { onChange() }
    }

    // MARK: The network thread

    private func run() {
        var attempt = 0
        while !buffer.isStopped {
            let generation = buffer.generation
            if let offset = pendingRange.withLock({ pending -> Int64? in defer { pending = nil }; return pending }) {
                // A seek: from that byte, not counted as a reconnect.
                rangeAsked = offset
                received = offset
                seeking = true
                overlap = nil
                overlapTitles = []
                attempt = 0
            }
            let writtenBefore = buffer.written
            let repeatedBefore = status.current.repeatedBytesSkipped
            let failure = transfer(from: rangeAsked, generation: generation)
            // A reconnect's first bytes held back and the connection ended before it was known
            // whether they repeat the old one's end: they are a new start.
            if var pending = overlap { _ = settleOverlap(pending.finish()) }
            if buffer.written == writtenBefore && status.current.repeatedBytesSkipped > repeatedBefore {
                reconnectsOnlyRepeating += 1
            } else if buffer.written > writtenBefore {
                reconnectsOnlyRepeating = 0
            }
            if buffer.isStopped { break }
            if buffer.generation != generation { continue }
            if !configuration.reconnects {
                if let failure = refused ?? failure { end(with: failure) } else { buffer.finish(error: nil) }
                return
            }
            if failure == nil && refused == nil { attempt = 0 }
            if let refused, !everPlayed || refused.reason == .unreachable && rangeAsked != nil {
                end(with: refused)
                return
            }
            attempt += 1
            let length = status.current.head?.resourceLength
            let decision = StreamReconnect.decide(
                url: url, everPlayed: everPlayed, received: received, length: length,
                rangesWork: status.current.head?.acceptsRanges ?? false, failure: failure ?? refused,
                attempt: attempt)
            switch decision {
            case .finished:
                buffer.finish(error: nil)
                // A seek back may want the resource again: wait for one, or for the end.
                while !buffer.isStopped && buffer.generation == generation {
                    _ = buffer.sleep(milliseconds: 60_000)
                }
                continue
            case .fail(let error):
                end(with: error)
                return
            case .retry(let milliseconds, let from):
                update { $0.state = .reconnecting }
                rangeAsked = from
                if !buffer.sleep(milliseconds: milliseconds) { return }
                if buffer.generation != generation { continue }
            }
        }
    }

    private func end(with error: ReelError) {
        update { $0.failure = error }
        buffer.finish(error: error)
    }

    /// One connection; nil when its body ended normally, else why not (`refused` is set when
    /// the server answered with something not to play).
    private func transfer(from offset: Int64?, generation: Int) -> ReelError? {
        writing = generation
        head = HTTPResponseHead()
        refused = nil
        var outcome = reel_curl_outcome()
        let stage: reel_curl_stage = url.withCString { urlText in
            (configuration.extraCAFile ?? "").withCString { caText in
                var request = reel_curl_request()
                request.url = urlText
                request.extra_ca_file = configuration.extraCAFile == nil ? nil : caText
                request.connect_timeout = configuration.connectTimeout
                request.low_speed_limit = configuration.lowSpeedBytes
                request.low_speed_time = configuration.lowSpeedSeconds
                request.max_redirects = configuration.maxRedirects
                request.range_start = offset.flatMap { $0 > 0 ? $0 : nil } ?? -1
                request.icy_metadata = 1
                request.context = Unmanaged.passUnretained(self).toOpaque()
                request.on_header = { context, line, length in
                    let stream = Unmanaged<HTTPStream>.fromOpaque(context!).takeUnretainedValue()
                    let text = String(decoding: UnsafeRawBufferPointer(start: line, count: length), as: UTF8.self)
                    return stream.takeHeader(text) ? 0 : 1
                }
                request.on_body = { context, data, length in
                    let stream = Unmanaged<HTTPStream>.fromOpaque(context!).takeUnretainedValue()
                    return stream.takeBody(UnsafeRawPointer(data!), count: length) ? length : 0
                }
                request.should_stop = { context in
                    Unmanaged<HTTPStream>.fromOpaque(context!).takeUnretainedValue().buffer.isStopped ? 1 : 0
                }
                return reel_curl_perform(&request, &outcome)
            }
        }
        if stage == REEL_CURL_OK { return nil }
        if refused != nil { return refused }
        return Self.error(url: url, stage: stage, outcome: &outcome)
    }

    /// A failed transfer's error, naming the URL and what failed.
    static func error(url: String, stage: reel_curl_stage, outcome: inout reel_curl_outcome) -> ReelError {
        let detail = withUnsafeBytes(of: &outcome.message) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        let what: String
        switch stage {
        case REEL_CURL_DNS: what = "its host name does not resolve"
        case REEL_CURL_CONNECT: what = "cannot connect"
        case REEL_CURL_TLS: what = "TLS failed"
        case REEL_CURL_REDIRECT: what = "bad redirect"
        case REEL_CURL_TRANSFER: what = "the transfer failed"
        case REEL_CURL_UNAVAILABLE: return ReelError(.unsupportedFormat, "cannot play \(url): \(detail)")
        default: what = "failed"
        }
        return ReelError(.unreachable, "\(url): \(what)\(detail.isEmpty ? "" : " (\(detail))")")
    }

    /// A header line of the response; false stops the transfer (a response not to play from).
    private func takeHeader(_ line: String) -> Bool {
        head.take(line: line)
        guard head.complete else { return true }
        // A redirect's (or an interim response's) headers: the next response follows.
        if (300..<400).contains(head.status) || (100..<200).contains(head.status) { return true }
        if let refusal = head.refusal(url: url) {
            refused = refusal
            return false
        }
        if let asked = rangeAsked, asked > 0 {
            // Resuming: the server must send the rest from where we stopped.
            guard head.status == 206, head.rangeStart == asked else {
                refused = ReelError(.unreachable, "\(url) did not resume at byte \(asked) (HTTP \(head.status))")
                return false
            }
        }
        // Each connection's body starts with audio; a server that sends metadata says how often.
        icy = head.icyMetaInterval.flatMap { try? ICYDemuxer(metaInterval: $0) }
        let first = head
        let seek = seeking
        seeking = false
        var opening = false
        var reconnected = false
        update { status in
            if status.head == nil {
                status.head = first
                status.name = first.icyName
                status.bitrate = first.icyBitrate
                status.state = .buffering
                opening = true
            } else if !seek {
                status.reconnects += 1
                status.state = .playing
                reconnected = true
            }
        }
        // A live stream's new connection starts a new container, unless it repeats the end of
        // the old one first (then it continues it: `ReconnectOverlap`); a resumed one (a Range
        // from where it stopped) continues the old.
        if reconnected && (rangeAsked ?? 0) == 0 {
            let written = buffer.written
            if reconnectsOnlyRepeating < 2 {
                let tail = buffer.lastBytes(upTo: ReconnectOverlap.tailLimit)
                let tailStart = written - Int64(tail.count)
                overlap = ReconnectOverlap(
                    tail: tail, lastStart: connectionStart >= tailStart ? Int(connectionStart - tailStart) : nil,
                    bytesPerSecond: status.current.bitrate.map { $0 * 125 })
                overlapTitles = []
            } else {
                boundaries.add(at: written)
            }
        }
        connectionStart = buffer.written
        if opening {
            // A live stream keeps being received while paused: a full buffer drops its oldest
            // bytes. A finite one waits (what it drops can be fetched again).
            buffer.overwrites = first.resourceLength == nil
            sizeBuffer(kilobitsPerSecond: first.icyBitrate)
            onResponse?(first)
        }
        return true
    }

    private func takeBody(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
        guard refused == nil else { return false }
        received += Int64(count)
        if buffer.generation != writing { return false }
        // Some audio came (not a server that trickles or stalls from its first bytes): from now
        // on a drop is connected again rather than an error.
        if received >= Self.playedBytes { everPlayed = true }
        guard var demuxer = icy else { return writeAudio(UnsafeRawBufferPointer(start: bytes, count: count)) }
        var written = true
        demuxer.feed(UnsafeRawBufferPointer(start: bytes, count: count)) { piece in
            switch piece {
            case .audio(let audio):
                if written { written = writeAudio(audio) }
            case .metadata(let metadata):
                // What is on air from the next audio byte on ("" clears it): heard when the
                // decoded audio from that byte is (the decoder makes the mark).
                if let title = metadata.streamTitle {
                    let title = title.isEmpty ? nil : title
                    if let held = overlap?.held.count {
                        overlapTitles.append((held, title))
                    } else {
                        noteTitleReceived(title, at: buffer.written)
                    }
                }
            }
        }
        icy = demuxer
        return written
    }

    /// A connection's audio bytes, into the buffer; after a live stream's reconnect, held until
    /// it is known whether they repeat what was received (`overlap`).
    private func writeAudio(_ audio: UnsafeRawBufferPointer) -> Bool {
        guard var pending = overlap else {
            guard let base = audio.baseAddress, audio.count > 0 else { return true }
            return buffer.write(base, count: audio.count, generation: writing)
        }
        let decision = pending.take(audio, at: monotonicNanoseconds())
        overlap = pending
        return settleOverlap(decision)
    }

    /// Writes what the reconnect's first bytes were found to be, once decided: the part that
    /// does not repeat the old connection's end, or all of it after a boundary.
    private func settleOverlap(_ decision: ReconnectOverlap.Decision) -> Bool {
        guard let pending = overlap, decision != .undecided else { return true }
        overlap = nil
        var skip = 0
        if case .repeats(let count) = decision {
            skip = count
            update { $0.repeatedBytesSkipped += Int64(count) }
        } else {
            boundaries.add(at: buffer.written)
        }
        let start = buffer.written
        // The connection's first byte is the repeated one: where the next reconnect looks.
        connectionStart = start - Int64(skip)
        for (held, title) in overlapTitles { noteTitleReceived(title, at: start + Int64(max(held - skip, 0))) }
        overlapTitles = []
        let rest = pending.held.count - skip
        guard rest > 0 else { return true }
        return pending.held.withUnsafeBytes { held in
            buffer.write(held.baseAddress! + skip, count: rest, generation: writing)
        }
    }
}
