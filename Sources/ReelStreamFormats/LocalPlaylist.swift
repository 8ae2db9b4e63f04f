// Playlist files found in a music folder (`.m3u`, `.m3u8`, `.pls`): their entries as written,
// before they are resolved against the playlist's folder.

/// One entry of a playlist file, as written (a path relative to the playlist's folder, an
/// absolute path, a `file://` or other URL), with its 1-based line number; `problem` says why
/// a line cannot be an entry (too long), and then `location` is empty.
public struct LocalPlaylistEntry: Equatable, Sendable {
    public var line: Int
    public var location: String
    public var problem: String?

    public init(line: Int, location: String, problem: String? = nil) {
        self.line = line
        self.location = location
        self.problem = problem
    }
}

/// The entries of a playlist file's bytes, in order: M3U (every line that is neither blank nor
/// a `#` comment; `#EXTINF` titles are not kept) or PLS (`File1=`, `File2=`, … by number).
/// Text that is not UTF-8 is read as Windows-1252, as station playlists are. Throws
/// `.tooLarge` beyond `limits.maximumBytes`, and `.malformed` for a PLS file with neither a
/// `[playlist]` section nor a `FileN=` line. Pure.
public func readLocalPlaylist(
    _ bytes: [UInt8], format: PlaylistFormat, limits: PlaylistLimits = .stored
) throws(StreamFormatError) -> [LocalPlaylistEntry] {
    guard bytes.count <= limits.maximumBytes else {
        throw StreamFormatError(.tooLarge, "the playlist is larger than \(limits.maximumBytes) bytes")
    }
    let raw: [RawPlaylistEntry]
    switch format {
    case .m3u: raw = readM3UEntries(bytes, limits: limits)
    case .pls: raw = try readPLSEntries(bytes, limits: limits)
    case .xspf: throw StreamFormatError(.malformed, "XSPF playlist files in a music folder are not read")
    }
    return raw.prefix(limits.maximumEntries).map { LocalPlaylistEntry(line: $0.line, location: $0.location, problem: $0.problem) }
}

/// The format of a playlist file by its name's suffix (`.m3u`/`.m3u8`: M3U, `.pls`: PLS, any
/// letter case), nil for any other.
public func localPlaylistFormat(ofName name: String) -> PlaylistFormat? {
    guard let dot = name.lastIndex(of: ".") else { return nil }
    switch name[name.index(after: dot)...].lowercased() {
    case "m3u", "m3u8": return .m3u
    case "pls": return .pls
    default: return nil
    }
}
