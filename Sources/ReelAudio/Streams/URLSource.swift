// Opening an http(s) URL to play: the scheme check, the network thread, the choice of decoder.

import ReelModel

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

    /// Connects to `url` (on a thread of its own) and opens its decoder, waiting for the
    /// server's first audio: on the caller's thread, which must not be an event loop or the
    /// audio thread. Throws `unreachable` (naming the URL and what failed) when there is no
    /// audio to play, `unsupported_format` for audio Reel does not decode from a stream. MP3 goes
    /// to libmpg123, the rest (AAC, HE-AAC, Ogg Vorbis/Opus, FLAC, MP4) to FFmpeg
    /// (`StreamDecoderChoice`).
    public static func open(
        url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void = {}
    ) throws(ReelError) -> (reader: AudioFileReader, stream: HTTPStream) {
        let url = try check(url)
        if HLSStream.isHLS(url: url) { return try openHLS(url: url, configuration: configuration, onChange: onChange) }
        let stream = HTTPStream(url: url, configuration: configuration, onChange: onChange)
        stream.start()
        // Connecting may take the connect timeout; the first bytes the low-speed window after
        // that; and a few seconds of slack.
        let patience = (configuration.connectTimeout + configuration.lowSpeedSeconds + 5) * 1000
        _ = stream.buffer.waitForBytes(16, milliseconds: patience)
        let status = stream.current
        guard let head = status.head else {
            stream.stop()
            throw status.failure ?? ReelError(.unreachable, "\(url): no answer within \(patience / 1000) s")
        }
        var first = [UInt8](repeating: 0, count: 16)
        let peeked = first.withUnsafeMutableBytes { stream.buffer.peek(into: $0.baseAddress!, count: $0.count) }
        let sniffed = Array(first.prefix(peeked))
        if Self.looksLikeHTML(sniffed) {
            stream.stop()
            throw ReelError(.unreachable, "\(url) sent a web page, not audio")
        }
        if HLSStream.hlsTypes.contains(head.mediaType ?? "") || head.mediaType?.hasSuffix("mpegurl") == true {
            // A playlist: HLS when its tags say so (fetched again by the HLS thread).
            _ = stream.buffer.waitForBytes(64 << 10, milliseconds: patience)
            var body = [UInt8](repeating: 0, count: 64 << 10)
            let count = body.withUnsafeMutableBytes { stream.buffer.peek(into: $0.baseAddress!, count: $0.count) }
            if HLSStream.isHLS(mediaType: head.mediaType, body: Array(body.prefix(count))) {
                stream.stop()
                return try openHLS(url: url, configuration: configuration, onChange: onChange)
            }
        }
        switch StreamDecoderChoice.choose(mediaType: head.mediaType, isMPEGAudioType: head.isMPEGAudio, first: sniffed) {
        case .mpg123:
            return (try Mpg123StreamReader(stream: stream, waitingMilliseconds: patience), stream)
        case .ffmpeg:
            return (try FFmpegStreamReader(stream: stream, mediaType: head.mediaType, waitingMilliseconds: patience), stream)
        }
    }

    /// Plays an HLS playlist: `HLSStream` fetches the segments, FFmpeg demuxes them.
    static func openHLS(url: String, configuration: StreamConfiguration, onChange: @escaping @Sendable () -> Void) throws(ReelError)
        -> (reader: AudioFileReader, stream: HTTPStream)
    {
        let hls = HLSStream(url: url, configuration: configuration, onChange: onChange)
        hls.start()
        // The playlists (a master's too), then the first segment: connecting and the low-speed
        // window for each, and some slack.
        let patience = (configuration.connectTimeout + configuration.lowSpeedSeconds) * 2000 + 5000
        let reader = try FFmpegStreamReader(
            stream: hls.stream, mediaType: "HLS segments", boundaries: hls.boundaries, waitingMilliseconds: patience)
        return (reader, hls.stream)
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
