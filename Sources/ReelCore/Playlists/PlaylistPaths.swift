// How a stored playlist's lines name things: MPD's URIs (music folder paths, Recordings/…, URLs).

import ReelModel

/// The names a playlist line uses, as MPD's `playlist_directory` holds them, so that a user can
/// share one with MPD: a file of the music folder by its path there (`Artist/Album/01.flac`;
/// with several music folders, under each one's top-level directory), a recording by its tree
/// path under the recordings directory with its file's extension
/// (`Recordings/Meetings/Standup.flac`), a URL as it is, any other file by its absolute path.
/// Pure value.
public struct PlaylistPaths: Sendable, Equatable {
    /// `mpd_recordings_dir`.
    public let recordingsDirectory: String
    /// The music folders as configured, and each one's top-level directory ("" when there is
    /// only one: its contents are the root).
    public let musicFolders: [(root: String, directory: String)]

    public init(recordingsDirectory: String, musicRoots: [String]) {
        self.recordingsDirectory = recordingsDirectory
        musicFolders = Self.musicFolders(musicRoots, besides: recordingsDirectory)
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.recordingsDirectory == b.recordingsDirectory
            && a.musicFolders.map(\.root) == b.musicFolders.map(\.root)
            && a.musicFolders.map(\.directory) == b.musicFolders.map(\.directory)
    }

    /// The top-level directory of each music folder: none for one (it is the root); for
    /// several, each one's last path component, ` (2)`, ` (3)`… added to a name already taken
    /// (the recordings directory's included), in the configuration's order.
    public static func musicFolders(_ roots: [String], besides recordings: String) -> [(root: String, directory: String)] {
        guard roots.count > 1 else { return roots.map { ($0, "") } }
        var taken: Set<String> = [recordings]
        var folders: [(root: String, directory: String)] = []
        for root in roots {
            let base = root.split(separator: "/").last.map(String.init) ?? "Music"
            var name = base
            var number = 2
            while taken.contains(name) {
                name = "\(base) (\(number))"
                number += 1
            }
            taken.insert(name)
            folders.append((root, name))
        }
        return folders
    }

    /// What a line names.
    public enum Location: Sendable, Equatable {
        /// A file of the music folder `root` (as configured), by its path there.
        case music(root: String, path: String)
        /// A recording by its tree path with the file's extension (`/Meetings/Standup.flac`).
        case recording(treePath: String)
        case url(String)
        /// An absolute path outside the music folders.
        case file(String)
        /// Nothing Reel can play: why.
        case invalid(String)
    }

    /// What `line` (a playlist entry) names. One pass over its bytes (a 10,000-line playlist
    /// is located when it is first read: `StoredPlaylistEntries` hands over each distinct line
    /// once); strings are compared only for the first part (the recordings directory, a music
    /// folder's directory), as before.
    public func location(of line: String) -> Location {
        var bytes = line
        let shape = bytes.withUTF8 { LineShape($0) }
        switch shape {
        case .fileURL where line.hasPrefix("file://"):
            return fileLocation(String(line.dropFirst("file://".count)))
        case .absolute where line.hasPrefix("/"):
            return fileLocation(line)
        case .url:
            return .url(line)
        case .emptyOrDotPart:
            return .invalid("\(line) is not a path of the music folder (an empty, . or .. part)")
        case .relative(let firstEnd):
            return relativeLocation(line, firstEnd: firstEnd)
        case .fileURL, .absolute:
            // A combining mark after the prefix's last character: not the prefix (as before).
            return location(notPrefixed: line)
        }
    }

    /// What a line's bytes look like, read in one pass.
    private enum LineShape {
        /// `file://…`, `/…` (by their bytes: a combining mark after them is checked as a string).
        case fileURL, absolute
        /// A scheme (`http://…`): "://" before any other "/".
        case url
        /// A relative path with an empty, `.` or `..` part.
        case emptyOrDotPart
        /// A relative path; the byte offset where its first part ends.
        case relative(firstEnd: Int)

        init(_ line: UnsafeBufferPointer<UInt8>) {
            let count = line.count
            let slash = UInt8(ascii: "/")
            let fileScheme: StaticString = "file://"
            if count >= fileScheme.utf8CodeUnitCount,
                (0..<fileScheme.utf8CodeUnitCount).allSatisfy({ line[$0] == fileScheme.utf8Start[$0] })
            {
                self = .fileURL
                return
            }
            if count > 0, line[0] == slash {
                self = .absolute
                return
            }
            self = Self(relative: line)
        }

        /// A line that does not start with `/` or `file://`.
        init(relative line: UnsafeBufferPointer<UInt8>) {
            let count = line.count
            let slash = UInt8(ascii: "/")
            let dot = UInt8(ascii: ".")
            var firstEnd = -1
            var partStart = 0
            var index = 0
            while true {
                let atEnd = index == count
                if atEnd || line[index] == slash {
                    let length = index - partStart
                    if firstEnd < 0, length > 0, !atEnd, line[index - 1] == UInt8(ascii: ":"), index + 1 < count,
                        line[index + 1] == slash
                    {
                        self = .url
                        return
                    }
                    if length == 0 || (length <= 2 && line[partStart] == dot && line[index - 1] == dot) {
                        self = .emptyOrDotPart
                        return
                    }
                    if firstEnd < 0 { firstEnd = index }
                    if atEnd { break }
                    partStart = index + 1
                }
                index += 1
            }
            self = .relative(firstEnd: firstEnd)
        }
    }

    /// A line starting with `/` or `file://` bytes followed by a combining mark (which makes
    /// them another character): read as a relative line.
    private func location(notPrefixed line: String) -> Location {
        var bytes = line
        switch bytes.withUTF8({ LineShape(relative: $0) }) {
        case .url: return .url(line)
        case .relative(let firstEnd): return relativeLocation(line, firstEnd: firstEnd)
        default: return .invalid("\(line) is not a path of the music folder (an empty, . or .. part)")
        }
    }

    /// A relative line with no empty, `.` or `..` part, its first part ending at byte `firstEnd`.
    private func relativeLocation(_ line: String, firstEnd offset: Int) -> Location {
        let utf8 = line.utf8
        let firstEnd = utf8.index(utf8.startIndex, offsetBy: offset)
        let first = line[..<firstEnd]
        if first == recordingsDirectory {
            guard firstEnd < line.endIndex else { return .invalid("\(line) is the recordings directory, not a recording") }
            return .recording(treePath: String(line[firstEnd...]))
        }
        guard let folder = musicFolders.first else {
            return .invalid("\(line) names a music folder file, and no music folder is configured")
        }
        if folder.directory.isEmpty { return .music(root: folder.root, path: line) }
        guard firstEnd < line.endIndex, let named = musicFolders.first(where: { $0.directory == first }) else {
            return .invalid("\(line) is in none of the music folders")
        }
        return .music(root: named.root, path: String(line[line.index(after: firstEnd)...]))
    }

    private func fileLocation(_ path: String) -> Location {
        if let (root, relative) = musicLocation(ofFile: path) { return .music(root: root, path: relative) }
        return .file(path)
    }

    /// The music folder and relative path of an absolute file path inside one, or nil.
    public func musicLocation(ofFile path: String) -> (root: String, path: String)? {
        for folder in musicFolders {
            let base = folder.root.hasSuffix("/") ? folder.root : folder.root + "/"
            if path.hasPrefix(base), path.count > base.count {
                let relative = String(path.dropFirst(base.count))
                guard !relative.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else { return nil }
                return (folder.root, relative)
            }
        }
        return nil
    }

    /// The line for a file of a music folder.
    public func line(root: String, path: String) -> String {
        let directory = musicFolders.first { $0.root == root }?.directory ?? ""
        return directory.isEmpty ? path : directory + "/" + path
    }

    /// The line for a recording (its tree path, its codec).
    public func line(recording path: String, codec: String?) -> String {
        recordingsDirectory + path + "." + Item.fileExtension(codec: codec)
    }

    /// The line for a queue entry's source (`save`): a music folder file by its path there, a
    /// recording by its tree path, a URL as it is, any other file by its absolute path.
    public func line(of entry: QueueEntry) -> String { line(source: entry.source, codec: entry.format?.codec) }

    /// The line for a source (a recording's extension from its codec).
    public func line(source: PlayerSource, codec: String?) -> String {
        switch source {
        case .file(let path):
            if let (root, relative) = musicLocation(ofFile: path) { return line(root: root, path: relative) }
            return path
        case .item(_, let path, _):
            return line(recording: path, codec: codec)
        case .url(let url, _, _):
            return url
        }
    }

    /// The line for a music file the index has.
    public func line(of track: MusicTrack) -> String { line(root: track.root, path: track.relativePath) }

    /// The absolute path of a music folder file.
    public static func absolutePath(root: String, path: String) -> String {
        root.hasSuffix("/") ? root + path : root + "/" + path
    }
}
