// The music folders as the read-only `/Music` branch of the library tree.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// The music folders seen as one branch of the tree, `/Music`, beside the recordings: one tree
/// for the user, two kinds of storage underneath. With one music folder the branch holds its
/// contents; with several, one folder each, named by the music folder's last component (a second
/// folder with the same name gets ` (2)`, in configuration order).
///
/// Ids: a folder is `music:` and its path under `/Music` (`music:/` is the branch,
/// `music:/Trane/Blue Train` a folder, `music:/Trane/Blue Train/side.m3u` a playlist file); a
/// track is `track:` and the index's id (`track:42`), kept across renames and moves the index sees. Everything here is read-only (`read_only`).
///
/// Pure naming, and items built from the index's rows; any thread.
public struct MusicBranch: Sendable {
    /// The branch's name at the root of the tree.
    public static let name = "Music"
    public static let path = "/Music"
    public static let folderIDPrefix = "music:"
    public static let trackIDPrefix = "track:"
    /// The branch's own id.
    public static let rootID = "music:/"

    /// A music folder as configured, and its name in the branch (unused with one music folder).
    public struct Root: Sendable, Equatable {
        public var folder: String
        public var name: String
    }

    public let roots: [Root]

    /// `musicFolders` as configured (absolute, a trailing `/` dropped, as the index names them).
    public init(musicFolders: [String]) {
        // A name already given (`/b/Music (2)` after `/a/Music`, `/c/Music`) takes the next number.
        var taken = Set<String>()
        roots = musicFolders.map { folder in
            let base = folder.split(separator: "/").last.map(String.init) ?? "Music"
            var name = base
            var count = 1
            while taken.contains(name) {
                count += 1
                name = "\(base) (\(count))"
            }
            taken.insert(name)
            return Root(folder: folder, name: name)
        }
    }

    // MARK: Naming

    /// Whether a reference names something in the branch (by id or tree path). Cheap: no lookup.
    public static func contains(_ reference: ItemReference) -> Bool {
        switch reference {
        case .id(let id): id.hasPrefix(folderIDPrefix) || id.hasPrefix(trackIDPrefix)
        case .path(let path): subPath(ofTreePath: path) != nil
        }
    }

    /// The path under `/Music` (`""` for the branch itself) of a tree path in the branch; nil for a
    /// path outside it. Repeated and trailing slashes are ignored, as everywhere in the tree.
    public static func subPath(ofTreePath path: String) -> String? {
        let names = path.split(separator: "/", omittingEmptySubsequences: true)
        guard names.first == Substring(name) else { return nil }
        return names.dropFirst().joined(separator: "/")
    }

    /// The path under `/Music` a folder id names, or nil.
    static func subPath(ofFolderID id: String) -> String? {
        guard id.hasPrefix(folderIDPrefix) else { return nil }
        return id.dropFirst(folderIDPrefix.count).split(separator: "/", omittingEmptySubsequences: true)
            .joined(separator: "/")
    }

    /// The index id a track id names, or nil.
    static func trackID(of id: String) -> Int64? {
        guard id.hasPrefix(trackIDPrefix) else { return nil }
        return Int64(id.dropFirst(trackIDPrefix.count))
    }

    static func folderID(ofSubPath sub: String) -> String { sub.isEmpty ? rootID : folderIDPrefix + "/" + sub }
    static func treePath(ofSubPath sub: String) -> String { sub.isEmpty ? path : path + "/" + sub }

    /// Where a path under `/Music` lies: the branch itself (several music folders), or a music
    /// folder and the path under it (`""` for the folder itself). Nil when it names no music folder.
    enum Place: Equatable {
        case branch
        case inFolder(Root, relative: String)
    }

    func place(ofSubPath sub: String) -> Place? {
        if roots.count == 1 { return .inFolder(roots[0], relative: sub) }
        if sub.isEmpty { return .branch }
        let first = sub.prefix { $0 != "/" }
        guard let root = roots.first(where: { $0.name == first }) else { return nil }
        return .inFolder(root, relative: String(sub.dropFirst(first.count).drop { $0 == "/" }))
    }

    /// The path under `/Music` of a file or folder under a music folder.
    func subPath(of root: Root, relative: String) -> String {
        if roots.count == 1 { return relative }
        return relative.isEmpty ? root.name : root.name + "/" + relative
    }

    // MARK: Items

    /// The folder at a path under `/Music`; `created` is `modified` (seconds since the epoch)
    /// when given, else its directory's modification time.
    func folderItem(subPath sub: String, modified: Double? = nil) -> Item {
        let parent: String
        if sub.isEmpty {
            parent = LibrarySchema.rootID
        } else {
            let slash = sub.lastIndex(of: "/")
            parent = Self.folderID(ofSubPath: slash.map { String(sub[..<$0]) } ?? "")
        }
        let name = sub.isEmpty ? Self.name : String(sub[(sub.lastIndex(of: "/").map { sub.index(after: $0) } ?? sub.startIndex)...])
        var directory: String?
        switch place(ofSubPath: sub) {
        case .inFolder(let root, let relative): directory = relative.isEmpty ? root.folder : root.folder + "/" + relative
        case .branch: directory = roots.first?.folder
        case nil: directory = nil
        }
        return Item(
            id: Self.folderID(ofSubPath: sub), kind: .folder, name: name, parent: parent,
            path: Self.treePath(ofSubPath: sub),
            created: modified.map { Timestamp.iso8601(Int($0)) } ?? directory.map(Self.modified) ?? Timestamp.iso8601(0),
            readOnly: true)
    }

    /// A track of the index as an item; nil for a file of a music folder the branch does not
    /// have (no longer configured).
    func trackItem(_ track: MusicTrack) -> Item? {
        guard let root = roots.first(where: { $0.folder == track.root }) else { return nil }
        let sub = subPath(of: root, relative: track.relativePath)
        let slash = sub.lastIndex(of: "/")
        let audio = track.audio
        return Item(
            id: Self.trackIDPrefix + String(track.id), kind: .track,
            name: String(sub[(slash.map { sub.index(after: $0) } ?? sub.startIndex)...]),
            parent: Self.folderID(ofSubPath: slash.map { String(sub[..<$0]) } ?? ""),
            path: Self.treePath(ofSubPath: sub), created: Timestamp.iso8601(Int(track.modified)),
            duration: audio.duration,
            format: AudioFormat(codec: audio.codec, sampleRate: audio.sampleRate, channels: audio.channels),
            size: track.size, readOnly: true, file: track.path, tags: track.displayTags)
    }

    /// A playlist file of the index as an item (kind `playlist`, id `music:` and its path under
    /// `/Music`); nil for one of a music folder the branch does not have.
    func playlistItem(_ file: MusicPlaylistFile) -> Item? {
        guard let root = roots.first(where: { $0.folder == file.root }) else { return nil }
        let sub = subPath(of: root, relative: file.relativePath)
        let slash = sub.lastIndex(of: "/")
        return Item(
            id: Self.folderID(ofSubPath: sub), kind: .playlist,
            name: String(sub[(slash.map { sub.index(after: $0) } ?? sub.startIndex)...]),
            parent: Self.folderID(ofSubPath: slash.map { String(sub[..<$0]) } ?? ""),
            path: Self.treePath(ofSubPath: sub), created: Timestamp.iso8601(Int(file.modified)), size: file.size,
            readOnly: true, file: file.path)
    }

    /// The music folder and path there of a branch item's tree path (a playlist item's file), or
    /// nil when it lies in none.
    public func musicLocation(ofTreePath path: String) -> (root: String, relativePath: String)? {
        guard let sub = Self.subPath(ofTreePath: path), case .inFolder(let root, let relative) = place(ofSubPath: sub),
            !relative.isEmpty
        else { return nil }
        return (root.folder, relative)
    }

    /// A directory's modification time, ISO 8601 (the epoch if it cannot be read).
    private static func modified(_ directory: String) -> String {
        var info = stat()
        guard stat(directory, &info) == 0 else { return Timestamp.iso8601(0) }
        return Timestamp.iso8601(Int(info.st_mtim.tv_sec))
    }
}
