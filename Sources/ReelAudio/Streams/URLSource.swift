// Opening an http(s) URL to play: the scheme check, the network thread, a station playlist's
// streams, the choice of decoder.

import ReelModel
import ReelRuntime
import ReelStreamFormats

/// Opens URLs for the player.
public enum URLSource {
    /// The schemes a URL source may have (`daemon.info`'s `urlSchemes`, MPD's `urlhandlers`).
    public static let schemes = ["http", "https"]

    /// True when `text` looks like a URL of any scheme (`name:` then `//`), to tell it from a path.
    public static func looksLikeURL(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        let scheme = text[..<colon]
        return scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
            && text[colon...].hasPrefix("://")
    }

    /// `url` if it is an http(s) URL with a host and no spaces or control characters; else why
    /// not (`unsupported_format` for another scheme, `invalid_name` for a malformed one).
    public static func check(_ url: String) throws(ReelError) -> String {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else {
            throw ReelError(.invalidName, "\(url) is not a URL (it has no scheme://)")
        }
        let scheme = url[..<colon].lowercased()
        guard schemes.contains(scheme) else {
            throw ReelError(.unsupportedFormat, "cannot play \(url): only http:// and https:// URLs are played")
        }
        let rest = url[url.index(colon, offsetBy: 3)...]
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !host.isEmpty, !host.hasPrefix(":"), !host.hasPrefix("@") else {
            throw ReelError(.invalidName, "\(url) has no host")
        }
        guard url.utf8.count <= 8192, !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw ReelError(.invalidName, "\(url) has a space or a control character (escape them as %XX)")
        }
        return url
    }

    /// Connects to `url` and opens its decoder: `open(url:configuration:onChange:cancel:)` for a
    /// URL known to be a stream (a station playlist is an `unsupported_format` here).
    public static func open(
        url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void = {}
    ) throws(ReelError) -> (reader: AudioFileReader, stream: HTTPStream) {
        switch try open(url: url, configuration: configuration, onChange: onChange, cancel: URLOpenCancel()) {
        case .audio(let reader, let stream): return (reader, stream)
        case .stations: throw ReelError(.unsupportedFormat, "cannot play \(url): it is a playlist of stations")
        }
    }

    /// Opens `url`: a station playlist (by its name's suffix, its content type or its first
    /// bytes) is fetched whole and parsed into the streams it lists; anything else is connected
    /// to (on a thread of its own) and its decoder opened, waiting for the server's first audio.
    /// On the caller's thread, which must not be an event loop, the audio thread or the
    /// player's queue: this waits for the network (`URLOpening` runs it on a thread of its
    /// own). `cancel` ends it early (`unreachable`, "cancelled"). Throws `unreachable` (naming
    /// the URL and what failed) when there is nothing to play, `unsupported_format` for audio
    /// Reel does not decode from a stream.
    public static func open(
        url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void = {},
        cancel: URLOpenCancel
    ) throws(ReelError) -> URLContent {
        let url = try check(url)
        if playlistFormat(suffixOf: url) != nil {
            let fetched = try fetchWhole(url: url, configuration: configuration, cancel: cancel, stopAtAudio: true)
            if !fetched.stoppedAtAudio,
               let format = playlistFormat(url: url, contentType: fetched.head.contentType) ?? sniffPlaylistFormat(fetched.body)
            {
                return try stations(in: fetched.body, format: format, url: url, configuration: configuration, onChange: onChange, cancel: cancel)
            }
            // Named like a playlist, but the server says it sends audio: a stream.
        }
        // The decoder's libraries load while the body is awaited (FFmpeg, the first time).
        let stream = HTTPStream(url: url, configuration: configuration, onChange: onChange) { head in
            StreamDecoderPreload.responded(head, url: url)
        }
        guard cancel.register(stream) else { throw URLOpenCancel.cancelled(url) }
        stream.start()
        // From the first bytes to the decoder's first audio is the start's path: this thread runs
        // it at real-time priority where allowed (`OSThread.startPriority`), so that on a busy
        // machine it does not wait for a CPU when the bytes come; back to normal before a
        // playlist is fetched and when the decoder is open.
        let raised = OSThread.raiseToRealtime(priority: OSThread.startPriority)
        defer { if raised { OSThread.lowerToNormal() } }
        // Connecting may take the connect timeout; the first bytes the low-speed window after
        // that; and a few seconds of slack.
        let patience = (configuration.connectTimeout + configuration.lowSpeedSeconds + 5) * 1000
        _ = stream.buffer.waitForBytes(16, milliseconds: patience)
        if cancel.isCancelled {
            stream.stop()
            throw URLOpenCancel.cancelled(url)
        }
        let status = stream.current
        guard let head = status.head else {
            stream.stop()
            throw status.failure ?? ReelError(.unreachable, "\(url): no answer within \(patience / 1000) s")
        }
        var first = [UInt8](repeating: 0, count: 512)
        let peeked = first.withUnsafeMutableBytes { stream.buffer.peek(into: $0.baseAddress!, count: $0.count) }
        let sniffed = Array(first.prefix(peeked))
        if Self.looksLikeHTML(sniffed) {
            stream.stop()
            throw ReelError(.unreachable, "\(url) sent a web page, not audio")
        }
        if let format = playlistFormat(url: url, contentType: head.contentType) ?? sniffPlaylistFormat(sniffed) {
            // A playlist served under a name without a suffix: fetched again, whole.
            stream.stop()
            if raised { OSThread.lowerToNormal() }
            let fetched = try fetchWhole(url: url, configuration: configuration, cancel: cancel)
            return try stations(in: fetched.body, format: format, url: url, configuration: configuration, onChange: onChange, cancel: cancel)
        }
        return .audio(reader: try decoder(for: stream, head: head, sniffed: sniffed, patience: patience), stream: stream)
    }

    /// The decoder of a connected stream, by its type or its first bytes.
    static func decoder(for stream: HTTPStream, head: HTTPResponseHead, sniffed: [UInt8], patience: Int) throws(ReelError)
        -> AudioFileReader
    {
        switch StreamDecoderChoice.choose(mediaType: head.mediaType, isMPEGAudioType: head.isMPEGAudio, first: sniffed) {
        case .mpg123:
            return try Mpg123StreamReader(stream: stream, waitingMilliseconds: patience)
        case .ffmpeg:
            return try FFmpegStreamReader(
                stream: stream, mediaType: head.mediaType, boundaries: stream.boundaries, waitingMilliseconds: patience)
        }
    }

    /// Plays an HLS playlist: `HLSStream` fetches the segments, FFmpeg demuxes them.
    static func openHLS(
        url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void, cancel: URLOpenCancel
    ) throws(ReelError) -> (reader: AudioFileReader, stream: HTTPStream) {
        let hls = HLSStream(url: url, configuration: configuration, onChange: onChange)
        // Stopping its stream stops the fetching thread (it ends when the buffer is stopped).
        guard cancel.register(hls.stream) else { throw URLOpenCancel.cancelled(url) }
        hls.start()
        // The playlists (a master's too), then the first segment: connecting and the low-speed
        // window for each, and some slack.
        let patience = (configuration.connectTimeout + configuration.lowSpeedSeconds) * 2000 + 5000
        let reader = try FFmpegStreamReader(
            stream: hls.stream, mediaType: "HLS segments", boundaries: hls.boundaries, waitingMilliseconds: patience)
        return (reader, hls.stream)
    }

    /// The streams a station playlist lists; an HLS playlist is one stream (`hls(url:…)`).
    static func stations(
        in body: [UInt8], format: PlaylistFormat, url: String, configuration: StreamConfiguration,
        onChange: @escaping @Sendable () -> Void, cancel: URLOpenCancel
    ) throws(ReelError) -> URLContent {
        let content: StationPlaylistContent
        do throws(StreamFormatError) {
            content = try parseStationPlaylist(body, format: format, url: url)
        } catch {
            throw ReelError(.unreachable, "\(url): \(error.message)")
        }
        switch content {
        case .stations(let list):
            return .stations(list.entries.map { ListedStream(url: $0.location, title: $0.title) })
        case .hls:
            return try hls(url: url, configuration: configuration, onChange: onChange, cancel: cancel)
        }
    }

    /// An HLS playlist's URL, played as one stream (`openHLS`).
    static func hls(
        url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void, cancel: URLOpenCancel
    ) throws(ReelError) -> URLContent {
        let (reader, stream) = try openHLS(url: url, configuration: configuration, onChange: onChange, cancel: cancel)
        return .audio(reader: reader, stream: stream)
    }

    /// The streams of the station playlist at `url`, fetched whole (an HLS playlist is one
    /// stream: `url` itself); nil when `url` is a stream (its server says it sends audio). Throws
    /// `unreachable` naming the URL and what failed, also when it is neither (a web page, text).
    /// Waits for the network: not on an event loop or the player's queue.
    public static func fetchStations(url: String, configuration: StreamConfiguration, cancel: URLOpenCancel)
        throws(ReelError) -> [ListedStream]?
    {
        let url = try check(url)
        let fetched = try fetchWhole(url: url, configuration: configuration, cancel: cancel, stopAtAudio: true)
        guard let format = playlistFormat(url: url, contentType: fetched.head.contentType) ?? sniffPlaylistFormat(fetched.body)
        else {
            if fetched.stoppedAtAudio { return nil }
            throw ReelError(
                .unreachable, "\(url) is not a playlist (it sends \(fetched.head.mediaType ?? "no stated type"))")
        }
        let content: StationPlaylistContent
        do throws(StreamFormatError) {
            content = try parseStationPlaylist(fetched.body, format: format, url: url)
        } catch {
            throw ReelError(.unreachable, "\(url): \(error.message)")
        }
        switch content {
        case .stations(let list): return list.entries.map { ListedStream(url: $0.location, title: $0.title) }
        case .hls:
            // One stream, played segment by segment: the URL itself is what is listed.
            return [ListedStream(url: url)]
        }
    }

    /// A whole resource (a playlist), at most `maximumStationPlaylistBytes`, with its response's
    /// head. Throws `unreachable` naming the URL and what failed (a larger body among them).
    /// With `stopAtAudio`, a response whose type is audio (not a playlist's) ends it at once.
    static func fetchWhole(
        url: String, configuration: StreamConfiguration, cancel: URLOpenCancel, stopAtAudio: Bool = false
    ) throws(ReelError) -> (body: [UInt8], head: HTTPResponseHead, stoppedAtAudio: Bool) {
        var whole = configuration
        whole.reconnects = false
        whole.bufferBytes = 64 << 10
        let stream = HTTPStream(url: url, configuration: whole)
        guard cancel.register(stream) else { throw URLOpenCancel.cancelled(url) }
        stream.start()
        defer { stream.stop() }
        let patience = (configuration.connectTimeout + configuration.lowSpeedSeconds + 5) * 1000
        let deadline = monotonicNanoseconds() + UInt64(patience) * 1_000_000
        var body: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            if cancel.isCancelled { throw URLOpenCancel.cancelled(url) }
            if stopAtAudio, let head = stream.current.head, let type = head.mediaType,
               type.hasPrefix("audio/") || type.hasPrefix("video/") || type == "application/ogg",
               playlistFormat(url: url, contentType: head.contentType) == nil
            {
                return (body, head, true)
            }
            let result = chunk.withUnsafeMutableBytes { stream.buffer.read(into: $0.baseAddress!, count: $0.count) }
            switch result {
            case .bytes(let count):
                body += chunk.prefix(count)
                guard body.count <= maximumStationPlaylistBytes else {
                    throw ReelError(.unreachable, "\(url): the playlist is larger than \(maximumStationPlaylistBytes) bytes")
                }
            case .empty:
                let now = monotonicNanoseconds()
                guard now < deadline else { throw ReelError(.unreachable, "\(url): the playlist did not arrive within \(patience / 1000) s") }
                _ = stream.buffer.waitForBytes(1, milliseconds: min(Int((deadline - now) / 1_000_000) + 1, 1000))
            case .ended(let error):
                if let error { throw error }
                if cancel.isCancelled { throw URLOpenCancel.cancelled(url) }
                guard let head = stream.current.head else { throw ReelError(.unreachable, "\(url): no answer") }
                return (body, head, false)
            }
        }
    }

    /// Whether `url`'s name says it is a station playlist (`.m3u`, `.m3u8`, `.pls`, `.xspf`).
    public static func namesPlaylist(_ url: String) -> Bool {
        playlistFormat(suffixOf: url) != nil
    }

    /// The body starts like a web page (`<!DOCTYPE`, `<html`, after spaces).
    static func looksLikeHTML(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }, as: UTF8.self)
            .lowercased()
        return text.hasPrefix("<!doctype") || text.hasPrefix("<html")
    }

    /// The body starts with an ID3v2 tag or an MPEG audio frame header.
    static func looksLikeMP3(_ bytes: [UInt8]) -> Bool {
        if bytes.count >= 3 && bytes[0] == 0x49 && bytes[1] == 0x44 && bytes[2] == 0x33 { return true }
        return bytes.count >= 2 && bytes[0] == 0xFF && (bytes[1] & 0xE0) == 0xE0 && (bytes[1] & 0x06) != 0
    }
}
