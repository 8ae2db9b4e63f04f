// MPD's database read from the music index and the recordings tree: what a URI names, a
// directory's contents, every song under one, all in MPD's order.

import ReelCore
import ReelModel

/// MPD's database over the core's catalog (`MusicCatalog`): the music folders' index and the
/// recordings tree, laid out as MPD's directories and URIs.
///
/// Threads: made and used inside `MusicController.browse`, on the core's read queue (each call
/// blocks for its queries), never on the event loop.
struct MPDDatabase {
    let view: MPDLibraryView
    let catalog: MusicCatalog

    /// A directory of the database.
    enum Directory {
        case root
        case recordings(Item)
        /// `path` relative to the music folder `root`, "" for the folder itself.
        case music(root: String, path: String)
    }

    /// What a URI names.
    enum Entry {
        case directory(Directory)
        case recording(Item)
        case music(MusicTrack)
    }

    /// A song and where it comes from.
    struct Song {
        var song: MPDSong
        var source: Source
    }

    enum Source {
        case recording(Item)
        case music(MusicTrack)
    }

    /// The entry a target names; `not_found` when there is none.
    func entry(_ target: MPDLibraryView.Target) throws(ReelError) -> Entry {
        switch target {
        case .root:
            return .directory(.root)
        case .folder(let path), .treeItem(let path):
            let item = try catalog.recordingOrFolder(fileTreePath: path)
            return item.kind == .recording ? .recording(item) : .directory(.recordings(item))
        case .music(let root, let path):
            if !path.isEmpty, let track = try catalog.track(root: root, relativePath: path), !track.missing {
                return .music(track)
            }
            // A single music folder's top is the root (its URI ""); several have one each.
            if path.isEmpty, view.musicDirectory(ofRoot: root).isEmpty { return .directory(.root) }
            if !path.isEmpty {
                guard try catalog.hasFolder(root: root, path) else { throw ReelError(.notFound, "No such directory") }
            }
            return .directory(.music(root: root, path: path))
        case .file, .unsupported:
            throw ReelError(.notFound, "No such directory")
        }
    }

    // MARK: Listing

    /// A playlist file of a music folder as a directory lists it: its URI and mtime.
    typealias PlaylistFile = (uri: String, modified: String)

    /// One directory's songs, playlist files and subdirectories, each in MPD's order (songs by
    /// URI, playlist files by URI, then directories by name, collated).
    func contents(
        of directory: Directory
    ) throws(ReelError) -> (songs: [Song], playlists: [PlaylistFile], directories: [(uri: String, modified: String?, directory: Directory)]) {
        var songs: [Song] = []
        var playlists: [PlaylistFile] = []
        var directories: [(uri: String, modified: String?, directory: Directory)] = []
        switch directory {
        case .root:
            if let single = view.musicFolders.first, single.directory.isEmpty {
                songs += try catalog.files(root: single.root, in: "").map(song)
                playlists += try catalog.playlists(root: single.root, in: "").map(playlistFile)
                for folder in try catalog.subfolders(root: single.root, of: "") where folder.name != view.recordingsDirectory {
                    directories.append((folder.name, isoTime(Int(folder.modified)), .music(root: single.root, path: folder.name)))
                }
            } else {
                for folder in view.musicFolders {
                    let newest = try catalog.subfolders(root: folder.root, of: "").map(\.modified).max()
                    let top = try catalog.files(root: folder.root, in: "").map(\.modified).max()
                    let modified = [newest, top].compactMap { $0 }.max()
                    directories.append((folder.directory, modified.map { isoTime(Int($0)) }, .music(root: folder.root, path: "")))
                }
            }
            let root = try catalog.rootFolder()
            directories.append((view.recordingsDirectory, root.created, .recordings(root)))
        case .recordings(let folder):
            let items = try catalog.items(inFolder: folder.id)
            for item in items where !item.readOnly {
                // (The music folders' branch of the tree is not part of `Recordings`.)
                switch item.kind {
                case .recording: songs.append(Song(song: view.song(of: item), source: .recording(item)))
                case .folder: directories.append((view.directoryURI(ofFolder: item.path), item.created, .recordings(item)))
                case .track, .playlist: break
                }
            }
        case .music(let root, let path):
            songs += try catalog.files(root: root, in: path).map(song)
            playlists += try catalog.playlists(root: root, in: path).map(playlistFile)
            for folder in try catalog.subfolders(root: root, of: path) {
                let child = path.isEmpty ? folder.name : path + "/" + folder.name
                directories.append((view.musicURI(root: root, path: child), isoTime(Int(folder.modified)), .music(root: root, path: child)))
            }
        }
        songs = songs.sortedByCollation { $0.song.uri[...] }
        playlists = playlists.sortedByCollation { $0.uri[...] }
        directories = directories.sortedByCollation { Self.lastComponent($0.uri) }
        return (songs, playlists, directories)
    }

    private func playlistFile(_ file: MusicPlaylistFile) -> PlaylistFile {
        (view.musicURI(root: file.root, path: file.relativePath), isoTime(Int(file.modified)))
    }

    /// A playlist file as `lsinfo`/`listallinfo` (with its time) and `listall` print it.
    private static func write(_ playlist: PlaylistFile, songInfo: Bool, into response: inout MPDResponse) {
        response.field("playlist", playlist.uri)
        if songInfo { response.field("Last-Modified", playlist.modified) }
    }

    /// `lsinfo`/`listall`/`listallinfo` of a directory: its songs, its playlist files, then each
    /// subdirectory (and, when recursive, the subdirectory's own contents right after it).
    /// With `header`, a directory other than the root first names itself (as `listall` and
    /// `listallinfo` do).
    func write(
        _ directory: Directory, recursive: Bool, songInfo: Bool, tags: MPDTagSet, into response: inout MPDResponse,
        header: Bool = false
    ) throws(ReelError) {
        if recursive, case .music(let root, let path) = directory {
            // A whole music subtree in one query, laid out in Swift.
            let tree = MPDMusicTree(base: path)
            for track in try catalog.files(root: root, under: path) { tree.insert(track) }
            for playlist in try catalog.playlists(root: root, under: path) { tree.insert(playlist) }
            if header {
                response.field("directory", view.musicURI(root: root, path: path))
                if songInfo { response.field("Last-Modified", isoTime(Int(tree.modified))) }
            }
            writeTree(tree, root: root, path: path, songInfo: songInfo, tags: tags, into: &response)
            return
        }
        if header, case .recordings(let folder) = directory {
            response.field("directory", view.directoryURI(ofFolder: folder.path))
            if songInfo { response.field("Last-Modified", folder.created) }
        }
        let (songs, playlists, directories) = try contents(of: directory)
        for song in songs {
            if songInfo { song.song.write(into: &response, tags: tags) } else { response.field("file", song.song.uri) }
        }
        for playlist in playlists { Self.write(playlist, songInfo: songInfo, into: &response) }
        for child in directories {
            response.field("directory", child.uri)
            if let modified = child.modified, songInfo { response.field("Last-Modified", modified) }
            if recursive { try write(child.directory, recursive: true, songInfo: songInfo, tags: tags, into: &response) }
        }
    }

    private func writeTree(
        _ tree: MPDMusicTree, root: String, path: String, songInfo: Bool, tags: MPDTagSet, into response: inout MPDResponse
    ) {
        let songs = tree.files.map { view.song(of: $0) }.sortedByCollation { $0.uri[...] }
        for song in songs {
            if songInfo { song.write(into: &response, tags: tags) } else { response.field("file", song.uri) }
        }
        let playlists = tree.playlists.map(playlistFile).sortedByCollation { $0.uri[...] }
        for playlist in playlists { Self.write(playlist, songInfo: songInfo, into: &response) }
        for name in Array(tree.children.keys).sortedByCollation({ $0[...] }) {
            // The recordings tree hides a single music folder's own folder of its name.
            if path.isEmpty, name == view.recordingsDirectory, view.musicDirectory(ofRoot: root).isEmpty { continue }
            let child = tree.children[name]!
            let childPath = path.isEmpty ? name : path + "/" + name
            response.field("directory", view.musicURI(root: root, path: childPath))
            if songInfo { response.field("Last-Modified", isoTime(Int(child.modified))) }
            writeTree(child, root: root, path: childPath, songInfo: songInfo, tags: tags, into: &response)
        }
    }

    // MARK: Songs

    /// Every song under `directory`, in `listall` order (unless `sorted` is false: the caller
    /// filters first and sorts what is left with `sortedForListing`). `query`'s conditions narrow
/// the     /// music files read (`MusicCatalog.candidates(for:)`: the caller still filters them); recordings are all read.
    func songs(
        under directory: Directory, query: MusicQuery = .all, sorted: Bool = true
    ) throws(ReelError) -> [Song] {
        var found: [Song] = []
        switch directory {
        case .root:
            if query.indexConditions.isEmpty {
                for folder in view.musicFolders {
                    found += try catalog.files(root: folder.root, under: "").compactMap(visibleSong)
                }
            } else {
                found += try catalog.candidates(for: query).compactMap { track in
                    view.musicFolders.contains { $0.root == track.root } ? visibleSong(track) : nil
                }
            }
            try collectRecordings(in: try catalog.rootFolder(), into: &found)
        case .recordings(let folder):
            try collectRecordings(in: folder, into: &found)
        case .music(let root, let path):
            found += try catalog.files(root: root, under: path).compactMap(visibleSong)
        }
        return sorted ? Self.sortedForListing(found) : found
    }

    /// The song of an entry that is one.
    func song(of entry: Entry) -> Song? {
        switch entry {
        case .recording(let item): Song(song: view.song(of: item), source: .recording(item))
        case .music(let track): song(track)
        case .directory: nil
        }
    }

    private func song(_ track: MusicTrack) -> Song {
        Song(song: view.song(of: track), source: .music(track))
    }

    /// A music file's song, unless the recordings tree hides it (a single music folder's own
    /// folder named like the recordings directory).
    private func visibleSong(_ track: MusicTrack) -> Song? {
        if view.musicDirectory(ofRoot: track.root).isEmpty,
            track.relativePath.hasPrefix(view.recordingsDirectory + "/")
        {
            return nil
        }
        return song(track)
    }

    private func collectRecordings(in folder: Item, into found: inout [Song]) throws(ReelError) {
        var folders = [folder]
        while let next = folders.popLast() {
            for item in try catalog.items(inFolder: next.id) where !item.readOnly {
                switch item.kind {
                case .recording: found.append(Song(song: view.song(of: item), source: .recording(item)))
                case .folder: folders.append(item)
                case .track, .playlist: break
                }
            }
        }
    }

    /// Songs in `listall` order: in each directory its songs first, then its subdirectories,
    /// each collated by name.
    static func sortedForListing(_ songs: [Song]) -> [Song] {
        // Sorts positions, not the (large) songs: moving those would cost more than comparing.
        let keys = songs.map { $0.song.uri.split(separator: "/", omittingEmptySubsequences: false).map(MPDCollationKey.init) }
        let order = keys.indices.sorted { a, b in
            let (x, y) = (keys[a], keys[b])
            var index = 0
            while true {
                let xIsFile = index == x.count - 1
                let yIsFile = index == y.count - 1
                if xIsFile != yIsFile { return xIsFile }
                if x[index].name != y[index].name { return x[index] < y[index] }
                if xIsFile { return false }
                index += 1
            }
        }
        return order.map { songs[$0] }
    }

    static func lastComponent(_ uri: String) -> Substring {
        uri.split(separator: "/").last ?? uri[...]
    }
}

/// A music folder's files (and playlist files) laid out as folders, with each folder's newest
/// file time.
final class MPDMusicTree {
    var files: [MusicTrack] = []
    var playlists: [MusicPlaylistFile] = []
    var children: [String: MPDMusicTree] = [:]
    var modified: Double = 0
    private let baseCount: Int

    init(base: String) {
        baseCount = base.isEmpty ? 0 : base.split(separator: "/").count
    }

    private init(baseCount: Int) {
        self.baseCount = baseCount
    }

    func insert(_ track: MusicTrack) {
        let node = folder(of: track.relativePath, modified: track.modified)
        node.files.append(track)
    }

    func insert(_ playlist: MusicPlaylistFile) {
        let node = folder(of: playlist.relativePath, modified: playlist.modified)
        node.playlists.append(playlist)
    }

    /// The node of the folder holding `relativePath` (made as needed), each folder on the way
    /// taking `modified` if it is newer.
    private func folder(of relativePath: String, modified: Double) -> MPDMusicTree {
        let parts = relativePath.split(separator: "/").dropFirst(baseCount)
        var node = self
        for part in parts.dropLast() {
            node.modified = max(node.modified, modified)
            let name = String(part)
            if let child = node.children[name] {
                node = child
            } else {
                let child = MPDMusicTree(baseCount: 0)
                node.children[name] = child
                node = child
            }
        }
        node.modified = max(node.modified, modified)
        return node
    }
}
