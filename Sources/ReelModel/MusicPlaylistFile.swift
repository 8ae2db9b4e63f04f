// Playlist files found in the music folders (`.m3u`, `.m3u8`, `.pls`): what the index knows of one.

/// A playlist file lying in a music folder, as the music index records it (its path and
/// stamp; its lines are read from the file when it is listed or loaded, relative to its own
/// folder). MPD shows these as `playlist:` entries of their directory.
public struct MusicPlaylistFile: Equatable, Sendable {
    /// The music folder (`music_dirs` entry) it lies in.
    public var root: String
    /// Its path under `root`, `/`-separated, without a leading `/`.
    public var relativePath: String
    public var size: Int64
    /// Modification time, seconds since the epoch (with nanoseconds).
    public var modified: Double
    /// Its music folder is not there now: kept, not listed.
    public var missing: Bool

    public init(root: String, relativePath: String, size: Int64, modified: Double, missing: Bool = false) {
        self.root = root
        self.relativePath = relativePath
        self.size = size
        self.modified = modified
        self.missing = missing
    }

    /// The file's absolute path.
    public var path: String { root.hasSuffix("/") ? root + relativePath : root + "/" + relativePath }

    /// The suffixes of the playlist files a music folder's index records (lowercase; compared
    /// case-insensitively).
    public static let suffixes: Set<String> = ["m3u", "m3u8", "pls"]

    /// Whether a file name has one of `suffixes`.
    public static func isPlaylistName(_ name: String) -> Bool {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.utf8.startIndex else { return false }
        let suffix = name.utf8[name.utf8.index(after: dot)...]
        guard (3...4).contains(suffix.count) else { return false }
        return suffixes.contains(String(decoding: suffix, as: UTF8.self).lowercased())
    }
}
