// Playlist files inside the music folders (`Folder/list.m3u`): found by the music index, read
// from disk when listed or loaded, their entries relative to their own folder.

internal import ReelLibrary
import ReelModel
import ReelStreamFormats

#if canImport(Glibc)
import Glibc
#endif

extension PlaylistStore {
    /// What a playlist name names: a stored playlist (`playlist_dir`), else a playlist file of a
    /// music folder by its MPD URI (`Folder/list.m3u`), as MPD looks them up.
    enum Source {
        /// A stored playlist as `read(_:locating:)` read it (its locations when asked for).
        case stored(ReadPlaylist)
        case folder([FolderPlaylistEntries.Resolved])

        /// The entries as a listing shows them (a stored playlist's lines; a playlist file's
        /// entries resolved against its folder).
        var uris: [String] {
            switch self {
            case .stored(let read): read.entries
            case .folder(let entries): entries.map(\.uri)
            }
        }

        /// What each entry names (a stored playlist's only when read `locating`).
        var locations: [PlaylistPaths.Location] {
            switch self {
            case .stored(let read): read.locations ?? []
            case .folder(let entries): entries.map(\.location)
            }
        }

        /// The music folders' files the entries name, each once: a stored playlist's as read
        /// (kept while its file does not change), a playlist file's made now.
        var music: PlaylistMusicLines {
            switch self {
            case .stored(let read): read.music ?? PlaylistMusicLines(locations[...])
            case .folder(let entries): PlaylistMusicLines(entries.map(\.location)[...])
            }
        }

        /// A stored playlist's broken lines (none for a playlist file: its lines are only read).
        var brokenLines: [PlaylistBrokenLine] {
            guard case .stored(let read) = self else { return [] }
            return read.lines.brokenLines.map { PlaylistBrokenLine(line: $0.line, reason: $0.reason) }
        }
    }

    /// The playlist `name`: the stored one of that name if there is one, else the playlist file
    /// of a music folder at that URI; `not_found` (as a stored playlist's) when neither is there.
    /// On `queue`.
    /// With `locating`, a stored playlist's entries are located too (`Source.locations`).
    func source(_ name: String, locating: Bool) throws(ReelError) -> Source {
        if (try? PlaylistFiles.check(name: name)) != nil, files.exists(name) {
            return .stored(try read(name, locating: locating))
        }
        if let entries = try folderPlaylist(name) { return .folder(entries) }
        try checkExisting(name)
        return .stored(try read(name, locating: locating))
    }

    /// The entries of the playlist file of a music folder at the URI `name`, resolved
    /// (`FolderPlaylistEntries`); nil when the index has no playlist file there (present).
    /// An absolute path outside the music folders names nothing unless it lies in a media root
    /// (`media_roots`); an entry whose line is too long is skipped and logged.
    func folderPlaylist(_ name: String) throws(ReelError) -> [FolderPlaylistEntries.Resolved]? {
        guard case .music(let root, let path) = paths.location(of: name), MusicPlaylistFile.isPlaylistName(path),
            let format = localPlaylistFormat(ofName: path),
            let file = try MusicIndex(store: store).playlist(root: root, relativePath: path), !file.missing
        else { return nil }
        guard let bytes = try Self.readPlaylistFile(file.path, insideOf: player.mediaRoots.musicDirectories) else {
            return nil
        }
        let entries: [LocalPlaylistEntry]
        do {
            entries = try readLocalPlaylist(bytes, format: format)
        } catch {
            throw ReelError(.corruptFile, "cannot read the playlist file \(name): \(error.message)")
        }
        let resolver = FolderPlaylistEntries(paths: paths, root: root, playlistPath: path)
        var resolved: [FolderPlaylistEntries.Resolved] = []
        resolved.reserveCapacity(entries.count)
        for entry in entries {
            if let problem = entry.problem {
                logger.notice(
                    "skipped a line of a playlist file", metadata: ["playlist": "\(name)", "line": "\(entry.line)", "reason": "\(problem)"])
                continue
            }
            var one = resolver.resolve(entry.location)
            if case .file(let outside) = one.location { one.location = checkOutside(outside) }
            resolved.append(one)
        }
        return resolved
    }

    /// What each entry of a playlist item of the `/Music` branch adds (`queue.add` and
    /// `player.play` of the item), or why it adds nothing; `not_found` when the index has no
    /// such playlist file. Any thread (it reads only what never changes: the paths, the index,
    /// the media roots).
    func additions(ofPlaylistItem item: Item) throws(ReelError) -> [Result<QueueAddition, ReelError>] {
        guard let location = store.musicBranch?.musicLocation(ofTreePath: item.path),
            let entries = try folderPlaylist(paths.line(root: location.root, path: location.relativePath))
        else { throw ReelError(.notFound, "no playlist file at \(item.path)") }
        return additions(for: entries.map(\.uri)[...], locations: entries.map(\.location)[...], indexedOnly: true).perLine
    }

    /// A file outside the music folders named by a playlist file: played only inside a media
    /// root (a playlist in a music folder is not a client: with no media root it reaches no
    /// other file).
    private func checkOutside(_ path: String) -> PlaylistPaths.Location {
        guard !player.mediaRoots.roots.isEmpty else {
            return .invalid("\(path) is outside the music folders")
        }
        do throws(ReelError) {
            try player.mediaRoots.check(path)
            return .file(path)
        } catch {
            return .invalid(error.message)
        }
    }

    /// A playlist file's bytes (at most the stored playlists' limit and one more byte, so that
    /// the parser reports a larger one), nil when it is not there or its real path is not inside
    /// one of `folders` (resolved music folders).
    static func readPlaylistFile(_ path: String, insideOf folders: [String]) throws(ReelError) -> [UInt8]? {
        guard let real = MediaRoots.resolve(path),
            folders.contains(where: { real.hasPrefix($0 == "/" ? "/" : $0 + "/") })
        else { return nil }
        let fd = open(real, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw ReelError(.ioError, "cannot read the playlist file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= PlaylistLimits.stored.maximumBytes {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReelError(.ioError, "cannot read the playlist file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }
}
