// Telling a station playlist from a stream: by content type, by the URL's suffix, by content.

/// The station playlist formats Reel expands.
public enum PlaylistFormat: String, Equatable, Sendable {
    /// M3U and extended M3U (`.m3u`, `.m3u8`); may turn out to be HLS (see `isHLSPlaylist`).
    case m3u
    /// PLS (`[playlist]`, `File1=`).
    case pls
    /// XSPF (`<playlist><trackList><track><location>`).
    case xspf
}

/// The format a response is, from its `Content-Type` and the URL asked for; nil when it is
/// not a playlist (audio, or nothing says so). A content type that names a playlist wins; one
/// that names audio (`audio/mpeg`, …) means a stream whatever the suffix; a generic or missing
/// one (`text/plain`, `application/octet-stream`) leaves it to the URL's path suffix.
public func playlistFormat(url: String, contentType: String?) -> PlaylistFormat? {
    if let contentType {
        let mime = contentType.split(separator: ";").first.map { String(trimmedBlanks($0)).lowercased() } ?? ""
        switch mime {
        case "audio/x-mpegurl", "audio/mpegurl", "application/x-mpegurl", "application/mpegurl",
            "application/vnd.apple.mpegurl", "application/vnd.apple.mpegurl.audio", "audio/m3u", "audio/x-m3u":
            return .m3u
        case "audio/x-scpls", "audio/scpls", "application/pls+xml", "application/pls", "audio/pls":
            return .pls
        case "application/xspf+xml":
            return .xspf
        case "", "text/plain", "application/octet-stream", "binary/octet-stream", "text/html", "application/xml",
            "text/xml", "application/x-unknown", "unknown/unknown":
            break
        default:
            if mime.hasPrefix("audio/") || mime.hasPrefix("video/") || mime.hasPrefix("application/ogg") { return nil }
        }
    }
    return playlistFormat(suffixOf: url)
}

/// The format named by the suffix of a URL's (or a file name's) path, ignoring query and fragment.
public func playlistFormat(suffixOf url: String) -> PlaylistFormat? {
    var path = Substring(url)
    if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
    guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
    switch path[path.index(after: dot)...].lowercased() {
    case "m3u", "m3u8": return .m3u
    case "pls": return .pls
    case "xspf": return .xspf
    default: return nil
    }
}

/// The format the first bytes of a body look like (a server that sends a playlist as
/// `text/plain` under a URL without a suffix): `#EXTM3U`, `[playlist]`, `<?xml`…`<playlist`.
public func sniffPlaylistFormat<C: Collection>(_ bytes: C) -> PlaylistFormat? where C.Element == UInt8 {
    var prefix = ArraySlice(bytes.prefix(512))
    if prefix.starts(with: [0xEF, 0xBB, 0xBF]) { prefix = prefix.dropFirst(3) }
    while let first = prefix.first, first == 0x20 || first == 0x09 || first == 0x0A || first == 0x0D {
        prefix = prefix.dropFirst()
    }
    if hasASCIIPrefix(prefix, "#EXTM3U") { return .m3u }
    if hasASCIIPrefix(prefix, "[playlist]") { return .pls }
    if hasASCIIPrefix(prefix, "<?xml") || hasASCIIPrefix(prefix, "<playlist") {
        let text = String(decoding: prefix, as: UTF8.self).lowercased()
        if text.contains("<playlist") && (text.contains("xspf") || !text.contains("<html")) { return .xspf }
    }
    return nil
}

/// Whether an M3U body is an HLS playlist (a media playlist with `#EXT-X-TARGETDURATION` or
/// `#EXT-X-MEDIA-SEQUENCE`, or a master playlist with `#EXT-X-STREAM-INF`) rather than a list
/// of stations: an HLS URL is played as one stream, a station list is expanded.
public func isHLSPlaylist<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
    let array = Array(bytes.prefix(PlaylistLimits.station.maximumBytes))
    var found = false
    forEachLine(array) { line in
        let text = trimmedBlankBytes(line.bytes)
        for tag in hlsTags where hasASCIIPrefix(text, tag, ignoringCase: false) {
            found = true
            return false
        }
        return true
    }
    return found
}

private let hlsTags = [
    "#EXT-X-TARGETDURATION", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-STREAM-INF", "#EXT-X-PLAYLIST-TYPE",
    "#EXT-X-ENDLIST", "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-MEDIA:", "#EXT-X-MAP", "#EXT-X-KEY",
    "#EXT-X-DISCONTINUITY-SEQUENCE",
]
