// A station playlist fetched by URL, parsed: the streams it lists, in order, as absolute URLs.
//
// How to use it (the network source, after a GET whose response is a playlist):
//
//     if let format = playlistFormat(url: url, contentType: contentType) ?? sniffPlaylistFormat(body) {
//         // stop receiving after maximumStationPlaylistBytes (PlaylistLimits.station)
//         switch try parseStationPlaylist(body, format: format, url: url) {
//         case .hls: play url as an HLS stream (HLSMasterPlaylist / HLSMediaPlaylist, HLSSegmentPlanner)
//         case .stations(let list): queue list.entries (URLs, titles); log list.skipped
//         }
//     }

/// One entry of a station playlist.
public struct PlaylistEntry: Equatable, Sendable {
    /// The stream's URL: absolute (resolved against the playlist's URL), `http` or `https`.
    public var location: String
    /// The title the playlist gives (`#EXTINF:…,Title`, `Title1=`, XSPF `<title>`), if any.
    public var title: String?
    /// The length in seconds it gives, if any (nil for -1, the usual "live").
    public var duration: Double?

    public init(location: String, title: String? = nil, duration: Double? = nil) {
        self.location = location
        self.title = title
        self.duration = duration
    }
}

/// A line or entry of a playlist that was not used, and why (for the log).
public struct SkippedPlaylistEntry: Equatable, Sendable {
    /// The 1-based line (M3U, PLS) or track (XSPF) number.
    public var line: Int
    /// What was wrong, e.g. "not an http or https URL: file:///etc/passwd".
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }
}

/// The streams of a station playlist.
public struct StationPlaylist: Equatable, Sendable {
    public var format: PlaylistFormat
    public var entries: [PlaylistEntry]
    public var skipped: [SkippedPlaylistEntry]

    public init(format: PlaylistFormat, entries: [PlaylistEntry], skipped: [SkippedPlaylistEntry] = []) {
        self.format = format
        self.entries = entries
        self.skipped = skipped
    }
}

/// What a station playlist URL turned out to hold.
public enum StationPlaylistContent: Equatable, Sendable {
    /// A list of streams, to expand.
    case stations(StationPlaylist)
    /// An HLS playlist (master or media): the URL is one stream, played segment by segment.
    case hls
}

/// Parses a station playlist's body. Entries are resolved against `url` (the playlist's own
/// URL, after redirects); entries that are not `http`/`https` after that (`file://`, a local
/// path, another scheme) are skipped and reported: a playlist never reaches the file system.
/// Throws `.tooLarge` beyond `limits.maximumBytes`, and `.malformed` when no entry is usable.
public func parseStationPlaylist(
    _ bytes: [UInt8], format: PlaylistFormat, url: String?, limits: PlaylistLimits = .station
) throws(StreamFormatError) -> StationPlaylistContent {
    guard bytes.count <= limits.maximumBytes else {
        throw StreamFormatError(.tooLarge, "the playlist is larger than \(limits.maximumBytes) bytes")
    }
    let raw: [RawPlaylistEntry]
    switch format {
    case .m3u:
        if isHLSPlaylist(bytes) { return .hls }
        raw = readM3UEntries(bytes, limits: limits)
    case .pls:
        raw = try readPLSEntries(bytes, limits: limits)
    case .xspf:
        raw = try readXSPFEntries(bytes, limits: limits)
    }
    var list = StationPlaylist(format: format, entries: [])
    for entry in raw {
        if let reason = entry.problem {
            list.skipped.append(SkippedPlaylistEntry(line: entry.line, reason: reason))
            continue
        }
        let resolved = url.flatMap { resolveURL(entry.location, against: $0) } ?? entry.location
        guard isHTTPURL(resolved) else {
            list.skipped.append(SkippedPlaylistEntry(line: entry.line, reason: "not an http or https URL: \(clip(resolved))"))
            continue
        }
        guard list.entries.count < limits.maximumEntries else {
            list.skipped.append(
                SkippedPlaylistEntry(line: entry.line, reason: "more than \(limits.maximumEntries) entries: the rest are ignored"))
            break
        }
        list.entries.append(PlaylistEntry(location: resolved, title: entry.title, duration: entry.duration))
    }
    guard !list.entries.isEmpty else {
        let why = list.skipped.first.map { " (line \($0.line): \($0.reason))" } ?? ""
        throw StreamFormatError(.malformed, "the \(format.rawValue) playlist lists no http or https stream\(why)")
    }
    return .stations(list)
}

/// An entry as a reader found it, before resolution.
struct RawPlaylistEntry {
    var line: Int
    var location: String
    var title: String?
    var duration: Double?
    var problem: String?
}

/// `text` cut to 200 characters for a message.
func clip(_ text: String) -> String {
    text.count <= 200 ? text : String(text.prefix(200)) + "…"
}
