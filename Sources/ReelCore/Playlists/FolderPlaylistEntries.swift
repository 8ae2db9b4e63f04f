// How the entries of a playlist file in a music folder name things: relative to the playlist's
// own folder, as MPD reads them.

import ReelModel

/// Resolves the entries of a playlist file lying in a music folder (`Folder/list.m3u`), by
/// MPD's rules, and Reel's rule that such a file never reaches outside the music folders:
/// - a relative entry is a path from the playlist's own folder (`01 Dawn.flac`,
///   `../Other/02.flac`); `.` and `..` parts are resolved in the text. One that climbs out of
///   the music folder names nothing (`invalid`); its `uri` is the path MPD shows for it (the
///   climbing parts dropped: `../../../etc/passwd` in `A/B` shows as `etc/passwd`);
/// - an absolute path (`/…`, `file:///…`), its `.`/`..` resolved, is a file of the music folder
///   it lies in, else a file outside them (`file`: the core plays it only inside a media root);
/// - an `http`/`https` URL is a stream; another scheme names nothing.
///
/// A `music` location still has to be a file the index has (present) to be played: the index
/// holds only files whose real path is inside a music folder, so a symlink out is never one.
/// Pure value.
public struct FolderPlaylistEntries: Sendable, Equatable {
    /// An entry resolved: the URI MPD shows for it, and what it names.
    public struct Resolved: Sendable, Equatable {
        public var uri: String
        public var location: PlaylistPaths.Location

        public init(uri: String, location: PlaylistPaths.Location) {
            self.uri = uri
            self.location = location
        }
    }

    public let paths: PlaylistPaths
    /// The playlist's music folder, as configured.
    public let root: String
    /// The playlist's folder under `root` ("" for the top), `/`-separated.
    public let folder: String

    /// The entries of the playlist file at `relativePath` of `root`.
    public init(paths: PlaylistPaths, root: String, playlistPath relativePath: String) {
        self.paths = paths
        self.root = root
        folder = relativePath.split(separator: "/").dropLast().joined(separator: "/")
    }

    /// What `entry` (as written in the file) names.
    public func resolve(_ entry: String) -> Resolved {
        if entry.hasPrefix("file://") { return absolute(String(entry.dropFirst("file://".count)), written: entry) }
        if entry.hasPrefix("/") { return absolute(entry, written: entry) }
        if let scheme = entry.firstRange(of: "://"), !entry[..<scheme.lowerBound].contains("/") {
            let name = entry[..<scheme.lowerBound].lowercased()
            guard name == "http" || name == "https" else {
                return Resolved(uri: entry, location: .invalid("\(entry) is not an http or https URL"))
            }
            return Resolved(uri: entry, location: .url(entry))
        }
        let base = folder.isEmpty ? [] : folder.split(separator: "/").map(String.init)
        let (parts, climbed) = Self.normalized(base + entry.split(separator: "/", omittingEmptySubsequences: true).map(String.init))
        let path = parts.joined(separator: "/")
        let uri = paths.line(root: root, path: path)
        if climbed {
            return Resolved(uri: uri, location: .invalid("\(entry) climbs out of the music folder"))
        }
        guard !path.isEmpty else { return Resolved(uri: uri, location: .invalid("\(entry) names the music folder itself")) }
        return Resolved(uri: uri, location: .music(root: root, path: path))
    }

    /// An absolute path: a file of the music folder it lies in, or one outside them.
    private func absolute(_ path: String, written: String) -> Resolved {
        let (parts, _) = Self.normalized(path.split(separator: "/").map(String.init))
        let normal = "/" + parts.joined(separator: "/")
        if let (root, relative) = paths.musicLocation(ofFile: normal) {
            return Resolved(uri: paths.line(root: root, path: relative), location: .music(root: root, path: relative))
        }
        return Resolved(uri: normal, location: .file(normal))
    }

    /// Path parts with `.` and empty parts dropped and `..` taking away the part before it;
    /// `climbed` when a `..` had nothing to take away (it is dropped, as MPD drops it).
    static func normalized(_ parts: [String]) -> (parts: [String], climbed: Bool) {
        var out: [String] = []
        var climbed = false
        for part in parts {
            switch part {
            case "", ".": continue
            case "..":
                if out.isEmpty { climbed = true } else { out.removeLast() }
            default: out.append(part)
            }
        }
        return (out, climbed)
    }
}
