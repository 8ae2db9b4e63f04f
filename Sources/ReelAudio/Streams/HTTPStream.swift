// A stream's network side: its own thread fetching an http(s) URL through libcurl into a
// bounded buffer, connecting again after a drop or a stall.

import CCurl
import ReelModel
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
    /// Bytes of compressed stream kept between the network and the decoder.
    public var bufferBytes = 1 << 20
    /// False for a fetch of one whole resource (a station playlist): the end of the first
    /// body, or its failure, is the end; nothing is connected again.
    public var reconnects = true

    public init(extraCAFile: String? = nil) {
        self.extraCAFile = extraCAFile
    }
}

/// What the network side knows of its stream, for the player's state. Any thread reads it.
public struct HTTPStreamStatus: Equatable, Sendable {
    public var state: StreamStatus.State = .connecting
    /// The first response that was played from (its type, length, ICY headers); nil before.
    public var head: HTTPResponseHead?
    public var reconnects = 0
    /// The station's name (`icy-name`) and what is on air (ICY `StreamTitle`), when said.
    public var name: String?
    public var title: String?
    /// Kilobits a second: `icy-br`, or what the decoder measured.
    public var bitrate: Int?
    /// Why the stream ended, when it failed.
    public var failure: ReelError?
}

/// One URL's transfer, run on a thread of its own (`reel-stream`) from `start` until the
/// resource ends, it fails for good, or `stop`. The decoder reads `buffer`.
public final class HTTPStream: @unchecked Sendable {
    public let url: String
    let configuration: StreamConfiguration
    let buffer: StreamBuffer
    /// Read by any thread; written by the network thread (and `noteBitrate`, `noteUnderrun`
    /// by the decoder's).
    private let status = Locked(HTTPStreamStatus())
    /// Called on the network (or decoder) thread after the state, the name or the title changed.
    private let onChange: @Sendable () -> Void

    // The network thread's own.
    private var head = HTTPResponseHead()
    private var refused: ReelError?
    /// Bytes of the resource received over every connection.
    private var received: Int64 = 0
    private var everPlayed = false
    private var rangeAsked: Int64?
    /// The ICY de-interleaver of this connection's body, when the server sends metadata.
    private var icy: ICYDemuxer?

    public init(url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void = {}) {
        self.url = url
        self.configuration = configuration
        buffer = StreamBuffer(capacity: configuration.bufferBytes)
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
        let thread = AudioThread.start(name: "reel-stream", realtime: false) { [self] in run() }
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
    }

    /// Changes the status (and tells `onChange` when the player shows something new). The
    /// network thread's, the decoder's, and an `HLSStream`'s thread, which fills a stream that is
    /// never started.
    func update(_ change: (inout HTTPStreamStatus) -> Void) {
        let changed = status.withLock { status -> Bool in
            let before = status
            change(&status)
            return status.state != before.state || status.name != before.name || status.title != before.title
                || status.reconnects != before.reconnects || status.bitrate != before.bitrate
        }
        if changed { onChange() }
    }

    // MARK: The network thread

    private func run() {
        var attempt = 0
        while !buffer.isStopped {
            let failure = transfer(from: rangeAsked)
            if buffer.isStopped { break }
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
                return
            case .fail(let error):
                end(with: error)
                return
            case .retry(let milliseconds, let from):
                update { $0.state = .reconnecting }
                rangeAsked = from
                if !buffer.sleep(milliseconds: milliseconds) { return }
            }
        }
    }

    private func end(with error: ReelError) {
        update { $0.failure = error }
        buffer.finish(error: error)
    }

    /// One connection; nil when its body ended normally, else why not (`refused` is set when
    /// the server answered with something not to play).
    private func transfer(from offset: Int64?) -> ReelError? {
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
                request.range_start = offset ?? -1
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
        if let asked = rangeAsked {
            // Resuming: the server must send the rest from where we stopped.
            guard head.status == 206, head.rangeStart == asked else {
                refused = ReelError(.unreachable, "\(url) did not resume at byte \(asked) (HTTP \(head.status))")
                return false
            }
        }
        // Each connection's body starts with audio; a server that sends metadata says how often.
        icy = head.icyMetaInterval.flatMap { try? ICYDemuxer(metaInterval: $0) }
        let first = head
        update { status in
            if status.head == nil {
                status.head = first
                status.name = first.icyName
                status.bitrate = first.icyBitrate
                status.state = .buffering
            } else {
                status.reconnects += 1
                status.state = .playing
            }
        }
        return true
    }

    private func takeBody(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
        guard refused == nil else { return false }
        received += Int64(count)
        // Some audio came (not a server that trickles or stalls from its first bytes): from now
        // on a drop is connected again rather than an error.
        if received >= Self.playedBytes { everPlayed = true }
        guard var demuxer = icy else { return buffer.write(bytes, count: count) }
        var written = true
        demuxer.feed(UnsafeRawBufferPointer(start: bytes, count: count)) { piece in
            switch piece {
            case .audio(let audio):
                if written, let base = audio.baseAddress { written = buffer.write(base, count: audio.count) }
            case .metadata(let metadata):
                // What is on air from here on ("" clears it). Told when received: the buffer
                // ahead of the decoder is what the server sent in a burst, a few seconds.
                if let title = metadata.streamTitle {
                    update { $0.title = title.isEmpty ? nil : title }
                }
            }
        }
        icy = demuxer
        return written
    }
}
