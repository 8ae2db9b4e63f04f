// Stored playlists: list, read, save the queue, edit, rename, delete; loading is in +Load.

import Dispatch
import Logging
internal import ReelLibrary
import ReelModel
import ReelStreamFormats

#if canImport(Glibc)
import Glibc
#endif

/// The stored playlists (`playlists.*`, MPD's stored playlist commands): `NAME.m3u` files in
/// `playlist_dir` in MPD's format (`PlaylistFiles`, `PlaylistPaths`), so a user may point it at
/// MPD's `playlist_directory`. Every change rewrites one file atomically and publishes the
/// playlist's name on `changes`; a line that names nothing now stays in the file (reported as
/// `missing`, skipped by `load`); a broken line stays as it was. Renaming or moving a recording
/// (or a folder of them) rewrites the playlists that name it.
///
/// Threads: every method may be called from any thread; the work runs on one serial queue (so
/// edits of one playlist never interleave) and `reply` is called there.
public final class PlaylistStore: @unchecked Sendable {
    public typealias Reply<Value> = @Sendable (Result<Value, ReelError>) -> Void

    /// One event per change: the names of the playlists it changed (both names for a rename,
    /// in one event, so that a reader sees a rename as one change).
    public let changes = EventFeed<[String]>()
    public let paths: PlaylistPaths
    public var directory: String { files.directory }

    /// Only touched on `queue`.
    var files: PlaylistFiles
    let store: LibraryStore
    let player: PlayerController
    let logger: Logger
    let queue = DispatchQueue(label: "reel.playlists")
    /// The last playlist `load` or `get` read, kept while its file has not changed
    /// (`PlaylistFiles.Stamp`), with what was made of it while the library is unchanged
    /// (`indexGeneration`): loading it again reads nothing from the index
    /// (`ReadPlaylist.made`), nor does listing it again (`ReadPlaylist.musicTargets`). Only
    /// touched on `queue`.
    var lastRead: ReadPlaylist?
    private var libraryConsumer: EventFeed<LibraryUpdate>.Consumer?

    init(
        directory: String, paths: PlaylistPaths, store: LibraryStore, player: PlayerController,
        logger: Logger
    ) {
        files = PlaylistFiles(directory: directory)
        self.paths = paths
        self.store = store
        self.player = player
        self.logger = logger
        files.removeLeftovers()
    }

    /// The one rule for keeping what was read from the index and the library: the count of
    /// their committed writes (`LibraryStore.writesCommitted`: a scan's step, a tag or folder
    /// change, a recording). What was read after it was taken holds while it is unchanged.
    /// Take it *before* reading: a write committed meanwhile makes the next use read again.
    var indexGeneration: Int { store.writesCommitted }

    /// Follows the library: a recording or folder renamed or moved is renamed in the playlists.
    func follow(_ updates: EventFeed<LibraryUpdate>) {
        let queue = self.queue
        libraryConsumer = updates.addConsumer { [weak self] in
            queue.async { [weak self] in
                guard let self, let consumer = self.libraryConsumer else { return }
                let batch = updates.take(for: consumer)
                self.follow(batch.events.flatMap(\.changes))
            }
        }
    }

    /// Runs `body` on the queue and replies there.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws(ReelError) -> Value, reply: @escaping Reply<Value>) {
        queue.async {
            do throws(ReelError) {
                reply(.success(try body()))
            } catch {
                reply(.failure(error))
            }
        }
    }

    // MARK: Reads

    /// Every playlist, by name; `withLengths` reads each file to count its entries (MPD's
    /// `listplaylists` does not need them: 0 then).
    public func list(withLengths: Bool = true, reply: @escaping Reply<[PlaylistSummary]>) {
        run({ [self] () throws(ReelError) in
            try files.list().map { file throws(ReelError) in
                let length = withLengths ? ((try? files.read(file.name))?.entries.count ?? 0) : 0
                return PlaylistSummary(name: file.name, length: length, modified: file.modified)
            }
        }, reply: reply)
    }

    /// A window of the playlist `name`: `count` entries from `start` (all when nil); with
    /// `describe`, each with what it names now (`PlaylistEntry.Target`), else all `.missing`
    /// (MPD's `listplaylist` needs the lines only).
    public func get(
        _ name: String, start: Int = 0, count: Int? = nil, describe: Bool = true, reply: @escaping Reply<PlaylistListing>
    ) {
        run({ [self] () throws(ReelError) in
            let source = try self.source(name, locating: describe)
            let lines = source.uris
            guard start >= 0, start <= lines.count else {
                throw ReelError(.outOfRange, "start \(start) is outside the playlist \(name) (0…\(lines.count))")
            }
            if let count, count < 0 { throw ReelError(.outOfRange, "count \(count) is negative") }
            let end = count.map { min(start + $0, lines.count) } ?? lines.count
            guard describe else {
                return PlaylistListing(
                    name: name, length: lines.count,
                    entries: (start..<end).map { PlaylistEntry(position: $0, uri: lines[$0], target: .missing) },
                    brokenLines: source.brokenLines)
            }
            // The whole of a stored playlist: its files as read (not hashed again), and what they
            // name as the index had them when no scan has run since.
            var kept: ReadPlaylist?
            if start == 0, end == lines.count, case .stored(let read) = source { kept = read }
            let generation = indexGeneration
            let known = kept?.musicTargets.flatMap { $0.generation == generation ? $0.targets : nil }
            let (entries, targets) = self.entries(
                lines[start..<end], locations: source.locations[start..<end],
                music: start == 0 && end == lines.count ? source.music : nil, targets: known)
            if known == nil, let targets, let kept, lastRead?.name == kept.name, lastRead?.stamp == kept.stamp {
                lastRead?.musicTargets = (generation, targets)
            }
            return PlaylistListing(
                name: name, length: lines.count, entries: entries,
                brokenLines: source.brokenLines)
        }, reply: reply)
    }

    // MARK: Changes

    /// Saves the queue as `name` (`create` refuses a name taken; `replace` and `append` make it
    /// when there is none).
    public func save(_ name: String, mode: PlaylistSaveMode = .create, reply: @escaping Reply<PlaylistSummary>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            let lines = try player.listQueue().entries.map(paths.line(of:))
            var playlist: StoredPlaylist
            switch mode {
            case .create:
                guard !files.exists(name) else { throw ReelError(.nameTaken, "a playlist named \(name) exists already") }
                playlist = StoredPlaylist(entries: lines)
            case .replace:
                playlist = StoredPlaylist(entries: lines)
            case .append:
                playlist = files.exists(name) ? try files.read(name) : StoredPlaylist()
                playlist.lines += lines.map { .entry($0) }
            }
            try write(name, playlist)
            return summary(name, playlist)
        }, reply: reply)
    }

    /// Adds lines (as `PlaylistPaths` names things) to `name` at entry position `position`
    /// (nil: at the end), making the playlist when there is none (as MPD's `playlistadd`).
    public func add(_ name: String, lines: [String], at position: Int? = nil, reply: @escaping Reply<PlaylistSummary>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            return try insert(lines, into: name, at: position)
        }, reply: reply)
    }

    /// Adds what `addition` stands for (a file, a recording or a folder's, a track, an album, a
    /// URL) to `name`, as `add(_:lines:)`. The addition is checked as the queue checks it.
    public func add(_ name: String, _ addition: QueueAddition, at position: Int? = nil, reply: @escaping Reply<PlaylistSummary>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            let lines = try player.resolve(addition).map { paths.line(source: $0.source, codec: $0.format?.codec) }
            return try insert(lines, into: name, at: position)
        }, reply: reply)
    }

    private func insert(_ lines: [String], into name: String, at position: Int?) throws(ReelError) -> PlaylistSummary {
        for line in lines {
            guard !line.isEmpty, !line.hasPrefix("#"), !line.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\0" }) else {
                throw ReelError(.invalidName, "\(line.debugDescription) cannot be a playlist entry")
            }
        }
        var playlist = files.exists(name) ? try files.read(name) : StoredPlaylist()
        let count = playlist.entries.count
        let at = position ?? count
        guard at >= 0, at <= count else {
            throw ReelError(.outOfRange, "position \(at) is outside the playlist \(name) (0…\(count))")
        }
        let index = lineIndex(ofEntry: at, in: playlist)
        playlist.lines.insert(contentsOf: lines.map { .entry($0) }, at: index)
        try write(name, playlist)
        return summary(name, playlist)
    }

    /// Removes the entries at `positions` (MPD's `playlistdelete`); every position must be in
    /// the playlist, else nothing changes.
    public func remove(_ name: String, positions: [Int], reply: @escaping Reply<PlaylistSummary>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            var playlist = try files.read(name)
            let entryLines = entryLineIndices(playlist)
            for position in positions where position < 0 || position >= entryLines.count {
                throw ReelError(.outOfRange, "position \(position) is outside the playlist \(name) (0…\(entryLines.count - 1))")
            }
            for index in Set(positions.map { entryLines[$0] }).sorted(by: >) { playlist.lines.remove(at: index) }
            try write(name, playlist)
            return summary(name, playlist)
        }, reply: reply)
    }

    /// Moves the entry at `from` to `to` (MPD's `playlistmove`).
    public func move(_ name: String, from: Int, to: Int, reply: @escaping Reply<PlaylistSummary>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            var playlist = try files.read(name)
            let entryLines = entryLineIndices(playlist)
            for position in [from, to] where position < 0 || position >= entryLines.count {
                throw ReelError(.outOfRange, "position \(position) is outside the playlist \(name) (0…\(entryLines.count - 1))")
            }
            // Entries move among the entry lines; comments and broken lines stay where they are.
            var entries = entryLines.map { playlist.lines[$0] }
            entries.insert(entries.remove(at: from), at: to)
            for (slot, index) in entryLines.enumerated() { playlist.lines[index] = entries[slot] }
            try write(name, playlist)
            return summary(name, playlist)
        }, reply: reply)
    }

    /// Empties `name` (`not_found` when there is none, as MPD's `playlistclear`).
    public func clear(_ name: String, reply: @escaping Reply<PlaylistSummary>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            guard files.exists(name) else { throw ReelError(.notFound, "no playlist named \(name)") }
            let playlist = StoredPlaylist()
            try write(name, playlist)
            return summary(name, playlist)
        }, reply: reply)
    }

    public func rename(_ name: String, to newName: String, reply: @escaping Reply<PlaylistSummary>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            try PlaylistFiles.check(name: newName)
            lastRead = nil
            try files.rename(name, to: newName)
            changes.publish([name, newName])
            let playlist = (try? files.read(newName)) ?? StoredPlaylist()
            return summary(newName, playlist)
        }, reply: reply)
    }

    public func delete(_ name: String, reply: @escaping Reply<Void>) {
        run({ [self] () throws(ReelError) in
            try PlaylistFiles.check(name: name)
            lastRead = nil
            try files.remove(name)
            changes.publish([name])
        }, reply: reply)
    }

    // MARK: Helpers (on the queue)

    /// For a read: a name that cannot be a playlist's names none (`not_found`, as MPD answers).
    func checkExisting(_ name: String) throws(ReelError) {
        do {
            try PlaylistFiles.check(name: name)
        } catch {
            throw ReelError(.notFound, "no playlist named \(name) (\(error.message))")
        }
    }

    func write(_ name: String, _ playlist: StoredPlaylist) throws(ReelError) {
        // (A write renames a new file over the old one, which its stamp would tell; this is plainer.)
        if lastRead?.name == name { lastRead = nil }
        try files.write(name, playlist)
        changes.publish([name])
    }

    func summary(_ name: String, _ playlist: StoredPlaylist) -> PlaylistSummary {
        PlaylistSummary(
            name: name, length: playlist.entries.count,
            modified: files.modificationTime(files.path(of: name)) ?? 0)
    }

    /// The index in `lines` of each entry, in order.
    private func entryLineIndices(_ playlist: StoredPlaylist) -> [Int] {
        playlist.lines.indices.filter { if case .entry = playlist.lines[$0] { true } else { false } }
    }

    /// Where an entry inserted at entry position `position` goes in `lines`.
    private func lineIndex(ofEntry position: Int, in playlist: StoredPlaylist) -> Int {
        let indices = entryLineIndices(playlist)
        return position < indices.count ? indices[position] : playlist.lines.count
    }

    // MARK: Following the library

    /// Rewrites the lines naming a recording (or a recording in a folder) renamed or moved.
    func follow(_ libraryChanges: [LibraryChange]) {
        var renames: [(old: String, new: String, prefix: Bool)] = []
        for change in libraryChanges where change.kind == .renamed || change.kind == .moved {
            guard let oldPath = change.oldPath else { continue }
            switch change.item.kind {
            case .recording:
                let codec = change.item.format?.codec
                renames.append((paths.line(recording: oldPath, codec: codec), paths.line(recording: change.item.path, codec: codec), false))
            case .folder where !change.item.readOnly:
                renames.append((paths.recordingsDirectory + oldPath + "/", paths.recordingsDirectory + change.item.path + "/", true))
            default:
                break
            }
        }
        guard !renames.isEmpty, let names = try? files.list().map(\.name) else { return }
        for name in names {
            guard var playlist = try? files.read(name) else { continue }
            var changed = 0
            for index in playlist.lines.indices {
                guard case .entry(let line) = playlist.lines[index] else { continue }
                for rename in renames {
                    if rename.prefix ? line.hasPrefix(rename.old) : line == rename.old {
                        playlist.lines[index] = .entry(rename.new + line.dropFirst(rename.old.count))
                        changed += 1
                        break
                    }
                }
            }
            guard changed > 0 else { continue }
            do throws(ReelError) {
                try write(name, playlist)
                logger.info("renamed recordings in a playlist", metadata: ["playlist": "\(name)", "entries": "\(changed)"])
            } catch {
                logger.error("cannot rewrite a playlist after a rename", metadata: ["playlist": "\(name)", "error": "\(error)"])
            }
        }
    }
}

/// A playlist as `PlaylistStore.read(_:locating:)` read it: its entries' lines and, once asked
/// for, what each names (`PlaylistPaths.location`).
struct ReadPlaylist {
    var name: String
    var stamp: PlaylistFiles.Stamp
    /// The file's entries and broken lines, each distinct line once.
    var lines: StoredPlaylistEntries
    var entries: [String] { lines.entries }
    var locations: [PlaylistPaths.Location]?
    /// The music folders' files the lines name, each once (made with `locations`).
    var music: PlaylistMusicLines?
    /// The entries `load` made of those files, kept for the next `load` of the whole playlist
    /// while the library has not been written since (`PlaylistStore.additions(for:_:making:)`).
    var made: MadeEntries?
    /// What each of `music.files` named when the index was at `generation`
    /// (`PlaylistStore.indexGeneration`): a listing of the whole playlist takes them while the
    /// library is unchanged.
    var musicTargets: (generation: Int, targets: [ReelModel.PlaylistEntry.Target])?
}

extension PlaylistStore {
    /// The playlist `name`, its entries and (with `locating`) what each line names; from
    /// `lastRead` when the file has not changed since, which it then becomes. On `queue`.
    /// Each distinct line is located once (`StoredPlaylistEntries.distinct`), and a line
    /// repeating it takes its location.
    func read(_ name: String, locating: Bool) throws(ReelError) -> ReadPlaylist {
        let known = lastRead?.name == name ? lastRead : nil
        let (lines, stamp) = try files.entries(of: name, unlessStamped: known?.stamp)
        var read: ReadPlaylist
        if let lines {
            read = ReadPlaylist(name: name, stamp: stamp ?? PlaylistFiles.Stamp(stat()), lines: lines, locations: nil)
        } else {
            read = known!
        }
        if locating, read.locations == nil {
            let distinct = read.lines.distinct.map(paths.location(of:))
            read.locations = read.lines.distinctOfEntry.map { distinct[$0] }
            read.music = PlaylistMusicLines(
                distinct: read.lines.distinct, locations: distinct, allASCII: read.lines.allASCII,
                distinctOfLine: read.lines.distinctOfEntry)
        }
        // A file changed too recently to tell the next change is read again next time.
        lastRead = stamp == nil ? nil : read
        return read
    }
}
