// The music folders' index in the library database: its writes (a scan's batches) and its reads
// (artists, albums, an album's tracks, search, figures).
import Foundation
import GRDB
import GRDBSQLite
import ReelModel

/// A file's size and modification time: what tells a scan whether the file changed since it
/// was read (both equal: unchanged, not read again).
public struct MusicFileStamp: Hashable, Sendable {
    public var size: Int64
    /// Modification time, nanoseconds since the epoch (compared exactly).
    public var modifiedNanoseconds: Int64

    public init(size: Int64, modifiedNanoseconds: Int64) {
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
    }

    /// Seconds since the epoch, as `MusicTrack.modified`.
    public var modified: Double { Double(modifiedNanoseconds) / 1_000_000_000 }
}

/// A file a scan read, to be written to the index.
public struct ScannedMusicFile: Sendable {
    /// The music folder as configured.
    public var root: String
    /// `/`-separated, no leading `/`.
    public var relativePath: String
    public var stamp: MusicFileStamp
    public var audio: ScannedAudio
    /// The id of an indexed file this one is (a move the scan recognised): that row takes this
    /// path and keeps its id. Nil for a new or changed file, which is written at its path.
    public var replacing: Int64?

    public init(
        root: String, relativePath: String, stamp: MusicFileStamp, audio: ScannedAudio, replacing: Int64? = nil
    ) {
        self.root = root
        self.relativePath = relativePath
        self.stamp = stamp
        self.audio = audio
        self.replacing = replacing
    }
}

/// A file (or folder) a scan could not read, with the stamp it had then.
public struct MusicFileFailure: Sendable, Equatable {
    public var root: String
    public var relativePath: String
    public var stamp: MusicFileStamp
    public var reason: String

    public init(root: String, relativePath: String, stamp: MusicFileStamp, reason: String) {
        self.root = root
        self.relativePath = relativePath
        self.stamp = stamp
        self.reason = reason
    }
}

/// What the index holds of one file, for a scan to compare with the disk.
public struct MusicIndexedFile: Sendable, Equatable {
    public var id: Int64
    public var stamp: MusicFileStamp
    public var missing: Bool
}

/// A file's place in the index: its music folder and its path there.
private struct MusicFileKey: Hashable {
    var root: String
    var path: String
}

/// The index of the music folders' audio files, in the library database (`music_files`,
/// `music_failures`, `music_fts`; see `LibrarySchema.musicSQL`).
///
/// Its one job: the index's reads and writes. Walking the folders and reading tags is
/// `MusicScanner`'s. Threads: like `LibraryStore`, any thread may call, every call blocks for
/// its database access; writes run on the store's writer (one transaction per call, all or
/// nothing), reads on its reader connections (a consistent snapshot each).
///
/// Browsing (`artists`, `albums`, `tracks`, `search`, `stats`) shows the files present: those
/// of a missing music folder (`setMissing`) stay in the index, with their ids, and come back
/// when it returns; `track(id:)` and `track(root:relativePath:)` find them too, marked missing.
/// Listings are ordered under the library's case rule (`LibrarySchema.fold`), then by exact
/// text, so the order is total and stable; albums and artists group by exact tag text.
public final class MusicIndex: Sendable {
    public let store: LibraryStore

    public init(store: LibraryStore) {
        self.store = store
    }

    // MARK: Writing

    /// Writes a batch in one transaction: each file is inserted, or updated in place if its path
    /// is indexed (keeping its id, and clearing `missing`), or, with `replacing`, moved onto its
    /// new path under its old id; a written file leaves the failures. Each failure replaces any
    /// earlier one of its path. Batches of a few hundred files make a scan's writes cheap (one
    /// commit, one fsync each).
    ///
    /// Files without `replacing` are written `upsertRows` to a statement (one multi-row upsert):
    /// every statement that fires the triggers opens a statement savepoint, and FTS5 writes its
    /// pending terms to disk at each savepoint, so one statement per file made the trigram index
    /// write (and later merge) a tiny segment per file: a first scan of 20,000 files spent about
    /// two fifths of its writing time there (`bench/music`, docs/performance.md).
    ///
    /// - Returns: the ids of `files`, in order.
    @discardableResult
    public func write(files: [ScannedMusicFile], failures: [MusicFileFailure] = []) throws(ReelError) -> [Int64] {
        try store.writing("write \(files.count) music files to the index") { db in
            let move = try db.cachedStatement(sql: Self.moveSQL)
            let clearPath = try db.cachedStatement(sql: "DELETE FROM music_files WHERE root = ? AND path = ? AND id <> ?")
            let clearFailure = try db.cachedStatement(sql: "DELETE FROM music_failures WHERE root = ? AND path = ?")
            var ids = [Int64?](repeating: nil, count: files.count)
            var upserts: [Int] = []
            for (position, file) in files.enumerated() {
                guard let old = file.replacing else {
                    upserts.append(position)
                    continue
                }
                try clearPath.execute(arguments: [file.root, file.relativePath, old])
                if let id = try Int64.fetchOne(move, arguments: Self.values(file) + [old]) {
                    ids[position] = id
                } else {
                    upserts.append(position)
                }
            }
            var start = 0
            while start < upserts.count {
                let chunk = upserts[start..<min(start + Self.upsertRows, upserts.count)]
                start = chunk.endIndex
                let sql = Self.upsertSQL(rows: chunk.count)
                let statement = try chunk.count == Self.upsertRows ? db.cachedStatement(sql: sql) : db.makeStatement(sql: sql)
                var arguments = StatementArguments()
                for position in chunk { arguments += Self.values(files[position]) }
                var written: [MusicFileKey: Int64] = [:]
                let rows = try Row.fetchCursor(statement, arguments: arguments)
                while let row = try rows.next() {
                    written[MusicFileKey(root: row[1], path: row[2])] = row[0]
                }
                for position in chunk {
                    ids[position] = written[MusicFileKey(root: files[position].root, path: files[position].relativePath)]
                }
            }
            var result: [Int64] = []
            result.reserveCapacity(files.count)
            for (position, file) in files.enumerated() {
                guard let id = ids[position] else {
                    throw ReelError(.ioError, "cannot index \(file.relativePath): the database returned no id")
                }
                result.append(id)
                try clearFailure.execute(arguments: [file.root, file.relativePath])
            }
            let failed = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO music_failures (root, path, size, mtime_ns, reason) VALUES (?, ?, ?, ?, ?)")
            for failure in failures {
                try failed.execute(arguments: [
                    failure.root, failure.relativePath, failure.stamp.size, failure.stamp.modifiedNanoseconds,
                    failure.reason,
                ])
            }
            return result
        }
    }

    /// Marks every file of a music folder missing (its disk is gone) or present again.
    ///
    /// Gone, the folder itself is listed among the failures (`failures()`, by its path) with
    /// `reason`, and the failures of its files are forgotten: they no longer say anything true
    /// (the next scan after the folder returns reads those files again, and lists again those
    /// that still fail). Back, the folder leaves the failures.
    ///
    /// - Returns: how many files changed state.
    @discardableResult
    public func setMissing(root: String, _ missing: Bool, reason: String? = nil) throws(ReelError) -> Int {
        try store.writing("mark the music folder \(root) \(missing ? "missing" : "present")") { db in
            // `missing = 1` as a literal lets SQLite use the partial index `music_missing`.
            try db.execute(
                sql: missing
                    ? "UPDATE music_files SET missing = 1 WHERE root = ? AND missing = 0"
                    : "UPDATE music_files SET missing = 0 WHERE root = ? AND missing = 1",
                arguments: [root])
            let changed = db.changesCount
            try db.execute(
                sql: "UPDATE music_playlists SET missing = ? WHERE root = ? AND missing <> ?",
                arguments: [missing, root, missing])
            if missing {
                let kept = try Int.fetchOne(db, sql: "SELECT count(*) FROM music_files WHERE root = ?", arguments: [root]) ?? 0
                try db.execute(sql: "DELETE FROM music_failures WHERE root = ?", arguments: [root])
                let why = reason.map { ": \($0)" } ?? ""
                let files = kept == 0 ? "" : "; its \(kept) \(kept == 1 ? "file is" : "files are") kept, hidden until it comes back"
                try db.execute(
                    sql: "INSERT INTO music_failures (root, path, size, mtime_ns, reason) VALUES (?, '', 0, 0, ?)",
                    arguments: [root, "the music folder is missing\(why)\(files)"])
            } else {
                try db.execute(sql: "DELETE FROM music_failures WHERE root = ? AND path = ''", arguments: [root])
            }
            return changed
        }
    }

    /// A file or a folder renamed or moved (as a file watcher sees it: `from` is gone, `to` is
    /// there), in one transaction: the file at `from`, and every file under `from/`, takes the
    /// same path under `to`, keeping its id and tags; files the index had at the destination
    /// go (the move replaced them). Untagged files get the title of their new name.
    ///
    /// - Returns: how many files moved (0 if the index has nothing at `from`).
    @discardableResult
    public func move(root: String, from: String, toRoot: String? = nil, to: String) throws(ReelError) -> Int {
        let toRoot = toRoot ?? root
        if root == toRoot, from == to { return 0 }
        return try store.writing("move \(from) to \(to) in the music index") { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, path, title IS NULL FROM music_files
                    WHERE root = ? AND (path = ? OR (path > ? AND path < ?))
                    """,
                arguments: [root, from, from + "/", from + "0"])
            // Playlist files move with their folder (or alone), replacing any at the destination.
            let playlists = try String.fetchAll(
                db,
                sql: "SELECT path FROM music_playlists WHERE root = ? AND (path = ? OR (path > ? AND path < ?))",
                arguments: [root, from, from + "/", from + "0"])
            if !playlists.isEmpty {
                try db.execute(
                    sql: "DELETE FROM music_playlists WHERE root = ? AND (path = ? OR (path > ? AND path < ?))",
                    arguments: [toRoot, to, to + "/", to + "0"])
                let movePlaylist = try db.cachedStatement(
                    sql: "UPDATE music_playlists SET root = ?, path = ? WHERE root = ? AND path = ?")
                for old in playlists {
                    let path = to + String(decoding: old.utf8.dropFirst(from.utf8.count), as: UTF8.self)
                    try movePlaylist.execute(arguments: [toRoot, path, root, old])
                }
            }
            guard !rows.isEmpty else { return playlists.count }
            // What the move replaced at the destination (never a moving file: a folder cannot
            // move into itself).
            try db.execute(
                sql: "DELETE FROM music_files WHERE root = ? AND (path = ? OR (path > ? AND path < ?))",
                arguments: [toRoot, to, to + "/", to + "0"])
            let update = try db.cachedStatement(sql: "UPDATE music_files SET root = ?, path = ? WHERE id = ?")
            let retitle = try db.cachedStatement(sql: "UPDATE music_files SET title_fold = ? WHERE id = ?")
            let clearFailure = try db.cachedStatement(sql: "DELETE FROM music_failures WHERE root = ? AND path = ?")
            for row in rows {
                let id: Int64 = row[0]
                let old: String = row[1]
                let path = to + String(decoding: old.utf8.dropFirst(from.utf8.count), as: UTF8.self)
                try update.execute(arguments: [toRoot, path, id])
                if row[2] { try retitle.execute(arguments: [LibrarySchema.fold(Self.stem(of: path)), id]) }
                try clearFailure.execute(arguments: [toRoot, path])
            }
            return rows.count + playlists.count
        }
    }

    /// Removes files from the index (gone from their folder), in one transaction.
    ///
    /// - Returns: how many were removed.
    @discardableResult
    public func remove(ids: [Int64]) throws(ReelError) -> Int {
        guard !ids.isEmpty else { return 0 }
        return try store.writing("remove \(ids.count) music files from the index") { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM music_files WHERE id = ?")
            var removed = 0
            for id in ids {
                try statement.execute(arguments: [id])
                removed += db.changesCount
            }
            return removed
        }
    }

    /// Forgets failures (files gone, or folders readable again).
    public func removeFailures(root: String, relativePaths: [String]) throws(ReelError) {
        guard !relativePaths.isEmpty else { return }
        try store.writing("forget \(relativePaths.count) music scan failures") { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM music_failures WHERE root = ? AND path = ?")
            for path in relativePaths { try statement.execute(arguments: [root, path]) }
        }
    }

    /// Removes the files and failures of every music folder not in `roots` (a folder taken out
    /// of the configuration).
    ///
    /// - Returns: how many files were removed.
    @discardableResult
    public func removeRoots(notIn roots: [String]) throws(ReelError) -> Int {
        try store.writing("drop music folders no longer configured") { db in
            let known = try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT root FROM music_files UNION SELECT DISTINCT root FROM music_failures
                    UNION SELECT DISTINCT root FROM music_playlists
                    """)
            var removed = 0
            for root in known where !roots.contains(root) {
                try db.execute(sql: "DELETE FROM music_files WHERE root = ?", arguments: [root])
                removed += db.changesCount
                try db.execute(sql: "DELETE FROM music_failures WHERE root = ?", arguments: [root])
                try db.execute(sql: "DELETE FROM music_playlists WHERE root = ?", arguments: [root])
            }
            return removed
        }
    }

    // MARK: Reading for a scan

    /// Every indexed file of a music folder, by relative path.
    public func indexedFiles(root: String) throws(ReelError) -> [String: MusicIndexedFile] {
        try store.reading("read the index of \(root)") { db in
            var files: [String: MusicIndexedFile] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT path, id, size, mtime_ns, missing FROM music_files WHERE root = ?", arguments: [root])
            while let row = try rows.next() {
                files[row[0]] = MusicIndexedFile(
                    id: row[1], stamp: MusicFileStamp(size: row[2], modifiedNanoseconds: row[3]), missing: row[4])
            }
            return files
        }
    }

    /// The indexed files of a music folder at `relativePath` or under it (a file, or a folder
    /// and everything in it; "" is the whole folder), by relative path.
    public func indexedFiles(root: String, under relativePath: String) throws(ReelError) -> [String: MusicIndexedFile] {
        if relativePath.isEmpty { return try indexedFiles(root: root) }
        return try store.reading("read the index of \(relativePath) in \(root)") { db in
            var files: [String: MusicIndexedFile] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT path, id, size, mtime_ns, missing FROM music_files
                    WHERE root = ? AND (path = ? OR (path > ? AND path < ?))
                    """,
                arguments: [root, relativePath, relativePath + "/", relativePath + "0"])
            while let row = try rows.next() {
                files[row[0]] = MusicIndexedFile(
                    id: row[1], stamp: MusicFileStamp(size: row[2], modifiedNanoseconds: row[3]), missing: row[4])
            }
            return files
        }
    }

    /// The failures of a music folder at `relativePath` or under it ("" for all of them).
    public func failedFiles(root: String, under relativePath: String) throws(ReelError) -> [String: MusicFileStamp] {
        if relativePath.isEmpty { return try failedFiles(root: root) }
        return try store.reading("read the scan failures of \(relativePath) in \(root)") { db in
            var files: [String: MusicFileStamp] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT path, size, mtime_ns FROM music_failures
                    WHERE root = ? AND (path = ? OR (path > ? AND path < ?))
                    """,
                arguments: [root, relativePath, relativePath + "/", relativePath + "0"])
            while let row = try rows.next() {
                files[row[0]] = MusicFileStamp(size: row[1], modifiedNanoseconds: row[2])
            }
            return files
        }
    }

    /// The failures of a music folder, with the stamp each file had when it failed.
    public func failedFiles(root: String) throws(ReelError) -> [String: MusicFileStamp] {
        try store.reading("read the scan failures of \(root)") { db in
            var files: [String: MusicFileStamp] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT path, size, mtime_ns FROM music_failures WHERE root = ?", arguments: [root])
            while let row = try rows.next() {
                files[row[0]] = MusicFileStamp(size: row[1], modifiedNanoseconds: row[2])
            }
            return files
        }
    }

    // MARK: Reading

    /// The file with this id, present or missing; `not_found` if the index has none.
    public func track(id: Int64) throws(ReelError) -> MusicTrack {
        let track = try store.reading("read the music file \(id)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.trackColumns) FROM music_files WHERE id = ?"), arguments: [id]
            ).map(Self.track)
        }
        guard let track else { throw ReelError(.notFound, "no music file with id \(id); it may have been removed") }
        return track
    }

    /// The file at `relativePath` under the music folder `root` (as configured), or nil.
    public func track(root: String, relativePath: String) throws(ReelError) -> MusicTrack? {
        try store.reading("read \(relativePath) of \(root)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.trackColumns) FROM music_files WHERE root = ? AND path = ?"),
                arguments: [root, relativePath]
            ).map(Self.track)
        }
    }

    /// The tracks of an album (its Album tag, and the artist it is grouped under: AlbumArtist,
    /// else Artist; nil for tracks with neither), in disc then track order (a missing disc
    /// number counts as disc 1, tracks without a number come after the numbered ones of their
    /// disc), then by path.
    public func tracks(inAlbum album: String, albumArtist: String?) throws(ReelError) -> [MusicTrack] {
        try store.reading("list the tracks of \(album)") { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(Self.trackColumns) FROM music_files INDEXED BY music_album_tracks
                    WHERE album_fold = ? AND album = ? AND group_fold = ? AND group_artist IS ? AND missing = 0
                    ORDER BY coalesce(disc, 1), track IS NULL, track, path
                    """)
            let rows = try Row.fetchCursor(
                statement,
                arguments: [LibrarySchema.fold(album), album, LibrarySchema.fold(albumArtist ?? ""), albumArtist])
            var tracks: [MusicTrack] = []
            while let row = try rows.next() { tracks.append(Self.track(row)) }
            return tracks
        }
    }

    /// Albums (files with an Album tag), grouped by Album and the artist they are listed under
    /// (AlbumArtist, else Artist), ordered by name under the case rule, then by artist. With
    /// `artist`, only the albums listed under that artist (exact text).
    public func albums(ofArtist artist: String? = nil) throws(ReelError) -> [MusicAlbum] {
        try store.reading("list the albums") { db in
            let rows: RowCursor
            if let artist {
                rows = try Row.fetchCursor(
                    db.cachedStatement(
                        sql: """
                            SELECT \(Self.albumColumns) FROM music_albums INDEXED BY music_album_artist
                            WHERE group_fold = ? AND group_artist = ? AND album IS NOT NULL
                            ORDER BY album_fold, album
                            """),
                    arguments: [LibrarySchema.fold(artist), artist])
            } else {
                rows = try Row.fetchCursor(
                    db.cachedStatement(
                        sql: """
                            SELECT \(Self.albumColumns) FROM music_albums INDEXED BY music_album_order
                            WHERE album IS NOT NULL
                            ORDER BY album_fold, album, group_fold, group_artist
                            """))
            }
            var albums: [MusicAlbum] = []
            while let row = try rows.next() {
                albums.append(
                    MusicAlbum(
                        name: row[0], albumArtist: row[1], date: row[2], trackCount: row[3],
                        duration: Double(row[4] as Int64) / 1000, hasCover: (row[5] as Int64) > 0))
            }
            return albums
        }
    }

    /// Artists: the AlbumArtist, else Artist, of the files that have one, with how many
    /// distinct albums and files each has; ordered by name under the case rule, then by exact
    /// text. Read from `music_albums` (a row per album and artist), not from every file.
    public func artists() throws(ReelError) -> [MusicArtist] {
        try store.reading("list the artists") { db in
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT group_artist, count(album), sum(tracks) FROM music_albums INDEXED BY music_album_artist
                        WHERE group_artist IS NOT NULL
                        GROUP BY group_fold, group_artist ORDER BY group_fold, group_artist
                        """))
            var artists: [MusicArtist] = []
            while let row = try rows.next() {
                artists.append(MusicArtist(name: row[0], albumCount: row[1], trackCount: row[2]))
            }
            return artists
        }
    }

    /// Files present whose title (else file name), artist or album contains `text` under the
    /// library's case rule, in the order a person browses them (`searchOrder`): by artist
    /// (AlbumArtist, else Artist; files without one last), album, disc and track, then path.
    ///
    /// Paging is by that order: `nextCursor` holds the order's values of the last file returned
    /// (`MusicSearchCursor`), so across pages a file whose tags stay the same comes once and
    /// is never skipped, whatever else was written or removed in between; a file added or
    /// retagged meanwhile comes on a later page if it now sorts after the cursor. A text of three
    /// or more code points finds its candidates in the trigram index (`music_fts`); a shorter
    /// one scans the narrow `music_search` index. Every match is read and sorted (SQLite keeps
    /// only the best `limit` + 1 while it sorts).
    ///
    /// - Parameters:
    ///   - limit: 1…500 (`out_of_range` otherwise).
    ///   - cursor: the `nextCursor` of the previous page of the same text; another is `out_of_range`.
    public func search(
        text: String, limit: Int = LibraryStore.defaultSearchLimit, cursor: String? = nil
    ) throws(ReelError) -> MusicSearchPage {
        guard (1...LibraryStore.maximumSearchLimit).contains(limit) else {
            throw ReelError(
                .outOfRange, "a search limit of \(limit) is out of range; use 1 to \(LibraryStore.maximumSearchLimit)")
        }
        let needle = LibraryStore.searchNeedle(LibrarySchema.fold(text))
        // The cursor is bound to this search of music files, not to a search of the tree.
        let key = "music:" + needle
        let after = try cursor.map { cursor throws(ReelError) in try MusicSearchCursor.decode(cursor, query: key) }
            ?? MusicSearchCursor.Key.start
        return try store.reading("search music for \"\(text)\"") { db in
            let statement: Statement
            var arguments: StatementArguments
            if needle.unicodeScalars.count >= LibraryStore.minimumIndexedQueryLength {
                statement = try db.cachedStatement(sql: Self.indexedSearchSQL)
                arguments = [LibraryStore.phrase(needle), needle, needle, needle]
            } else {
                statement = try db.cachedStatement(sql: Self.scanSearchSQL)
                arguments = [needle, needle, needle]
            }
            arguments += after.arguments
            arguments += [limit + 1]
            let rows = try Row.fetchAll(statement, arguments: arguments)
            let tracks = rows.prefix(limit).map(Self.track)
            var next: String?
            if rows.count > limit {
                let last = MusicSearchCursor.Key(rows[limit - 1], from: Self.trackColumnCount)
                next = MusicSearchCursor.encode(after: last, query: key)
            }
            return MusicSearchPage(tracks: tracks, nextCursor: next)
        }
    }

    /// Figures of the files present, from `music_albums`: artists as `artists()` counts them,
    /// distinct Album tags, files, and their total duration (summed in milliseconds).
    public func stats() throws(ReelError) -> MusicStats {
        try store.reading("count the music files") { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(DISTINCT group_artist), count(DISTINCT album), total(tracks), total(duration_ms)
                    FROM music_albums
                    """)!
            return MusicStats(
                artists: row[0], albums: row[1], songs: Int(row[2] as Double), totalDuration: (row[3] as Double) / 1000)
        }
    }

    /// The files and folders the last scans could not read, with why, by path.
    public func failures() throws(ReelError) -> [MusicScanFailure] {
        try store.reading("list the music scan failures") { db in
            try Row.fetchAll(db, sql: "SELECT root, path, reason FROM music_failures ORDER BY root, path").map { row in
                MusicScanFailure(path: Self.join(row[0], row[1]), reason: row[2])
            }
        }
    }

    /// How many files of a music folder the index holds, and how many of them are missing.
    public func count(root: String) throws(ReelError) -> (files: Int, missing: Int) {
        try store.reading("count the files of \(root)") { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT count(*), total(missing) FROM music_files WHERE root = ?", arguments: [root])!
            return (row[0], Int(row[1] as Double))
        }
    }

    // MARK: SQL

    static let trackColumns = """
        id, root, path, size, mtime_ns, codec, sample_rate, channels, duration, title, artist, album, \
        album_artist, track, disc, date, genre, has_cover, missing
        """

    /// The columns of a `MusicAlbum`, from `music_albums`.
    static let albumColumns = "album, group_artist, date, tracks, duration_ms, covers"

    static let writtenColumns = """
        root, path, size, mtime_ns, codec, sample_rate, channels, duration, title, artist, album, album_artist, \
        track, disc, date, genre, has_cover, group_artist, title_fold, artist_fold, album_fold, group_fold, \
        \(LibrarySchema.replayGainColumns)
        """

    /// Files written by one upsert statement (`write`): 100 × 27 arguments, well under SQLite's
    /// limit of 32,766.
    static let upsertRows = 100

    static let writtenColumnCount = writtenColumns.split(separator: ",").count

    /// Insert, or update in place at the same path (keeping the id), `rows` files at once;
    /// arguments: `values` of each file in turn. Returns `id, root, path` of each file written.
    static func upsertSQL(rows: Int) -> String {
        let row = "(" + Array(repeating: "?", count: writtenColumnCount).joined(separator: ", ") + ")"
        return """
            INSERT INTO music_files (\(writtenColumns))
            VALUES \(Array(repeating: row, count: rows).joined(separator: ", "))
            ON CONFLICT (root, path) DO UPDATE SET
              size = excluded.size, mtime_ns = excluded.mtime_ns, codec = excluded.codec,
              sample_rate = excluded.sample_rate, channels = excluded.channels, duration = excluded.duration,
              title = excluded.title, artist = excluded.artist, album = excluded.album,
              album_artist = excluded.album_artist, track = excluded.track, disc = excluded.disc,
              date = excluded.date, genre = excluded.genre, has_cover = excluded.has_cover, missing = 0,
              group_artist = excluded.group_artist, title_fold = excluded.title_fold,
              artist_fold = excluded.artist_fold, album_fold = excluded.album_fold, group_fold = excluded.group_fold,
              \(LibrarySchema.replayGainColumns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            RETURNING id, root, path
            """
    }

    /// A known file onto a new path, keeping its id; arguments: `values`, then the id.
    static let moveSQL = """
        UPDATE music_files SET
          root = ?, path = ?, size = ?, mtime_ns = ?, codec = ?, sample_rate = ?, channels = ?, duration = ?,
          title = ?, artist = ?, album = ?, album_artist = ?, track = ?, disc = ?, date = ?, genre = ?,
          has_cover = ?, group_artist = ?, title_fold = ?, artist_fold = ?, album_fold = ?, group_fold = ?,
          \(LibrarySchema.replayGainColumns.split(separator: ",").map { "\($0.trimmingCharacters(in: .whitespaces)) = ?" }
            .joined(separator: ", ")),
          missing = 0
        WHERE id = ?
        RETURNING id
        """

    /// How many columns `trackColumns` names (a search row's order values follow them).
    static let trackColumnCount = trackColumns.split(separator: ",").count

    /// The order of search results over `music_files` (columns prefixed with `table`): files
    /// with an artist first, then artist and album as `albums` orders them (case-insensitive,
    /// then exact), disc (none is 1) and track (none after the numbered ones) as `tracks`,
    /// the path, and the id, so that the order is total. Every term is non-null, so that a row
    /// value compares it with a cursor (`MusicSearchCursor.Key` holds the same nine values).
    static func searchOrder(_ table: String = "") -> String {
        let t = table.isEmpty ? "" : table + "."
        return """
            \(t)group_artist IS NULL, \(t)group_fold, coalesce(\(t)group_artist, ''), \(t)album_fold, \
            coalesce(\(t)album, ''), coalesce(\(t)disc, 1), coalesce(\(t)track, \(Int64.max)), \(t)path, \(t)id
            """
    }

    /// Search by the trigram index; arguments: the FTS5 phrase, the needle three times, the
    /// cursor's nine values, the limit. CROSS JOIN keeps the index the outer loop (only the
    /// candidates are read from `music_files`); `instr` keeps the result exactly the substring
    /// rule even if the index said more; the matches after the cursor are sorted.
    static let indexedSearchSQL = """
        SELECT \(trackColumns.split(separator: ",").map { "m." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")),
          \(searchOrder("m"))
        FROM music_fts f CROSS JOIN music_files m ON m.id = f.rowid
        WHERE f.music_fts MATCH ? AND m.missing = 0
          AND (instr(m.title_fold, ?) > 0 OR instr(m.artist_fold, ?) > 0 OR instr(m.album_fold, ?) > 0)
          AND (\(searchOrder("m"))) > (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ORDER BY \(searchOrder("m")) LIMIT ?
        """

    /// Search by scanning, for texts too short for trigrams; arguments: the needle three times,
    /// the cursor's nine values, the limit. The narrow index `music_search` is scanned for the
    /// matches; the table is read only for them, and they are sorted.
    static let scanSearchSQL = """
        SELECT \(trackColumns), \(searchOrder()) FROM music_files
        WHERE id IN (
          SELECT id FROM music_files INDEXED BY music_search
          WHERE missing = 0 AND (instr(title_fold, ?) > 0 OR instr(artist_fold, ?) > 0 OR instr(album_fold, ?) > 0))
          AND (\(searchOrder())) > (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ORDER BY \(searchOrder()) LIMIT ?
        """

    /// The arguments of `writtenColumns` for a file: tags as read, "" as NULL, and the derived
    /// columns (`LibrarySchema.musicSQL`).
    static func values(_ file: ScannedMusicFile) -> StatementArguments {
        let tags = file.audio.tags
        let title = present(tags.title)
        let artist = present(tags.artist)
        let album = present(tags.album)
        let albumArtist = present(tags.albumArtist)
        let group = albumArtist ?? artist
        return [
            file.root, file.relativePath, file.stamp.size, file.stamp.modifiedNanoseconds, file.audio.codec,
            file.audio.sampleRate, file.audio.channels, file.audio.duration, title, artist, album, albumArtist,
            tags.track, tags.disc, present(tags.date), present(tags.genre), file.audio.hasEmbeddedCover, group,
            LibrarySchema.fold(title ?? stem(of: file.relativePath)), LibrarySchema.fold(artist ?? ""),
            LibrarySchema.fold(album ?? ""), LibrarySchema.fold(group ?? ""),
        ] + LibrarySchema.replayGainValues(file.audio.replayGain)
    }

    /// A tag with text, else nil (an empty tag is no tag).
    static func present(_ tag: String?) -> String? {
        guard let tag, !tag.isEmpty else { return nil }
        return tag
    }

    /// A path's last component without its extension.
    static func stem(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// A music folder's path joined with a path under it; the folder itself for "".
    static func join(_ root: String, _ relativePath: String) -> String {
        if relativePath.isEmpty { return root }
        return root.hasSuffix("/") ? root + relativePath : root + "/" + relativePath
    }

    /// A row of `trackColumns`.
    static func track(_ row: Row) -> MusicTrack {
        let tags = TrackTags(
            title: row[9], artist: row[10], album: row[11], albumArtist: row[12], track: row[13], disc: row[14],
            date: row[15], genre: row[16])
        let audio = ScannedAudio(
            tags: tags, codec: row[5], sampleRate: row[6], channels: row[7], duration: row[8],
            hasEmbeddedCover: row[17])
        let stamp = MusicFileStamp(size: row[3], modifiedNanoseconds: row[4])
        return MusicTrack(
            id: row[0], root: row[1], relativePath: row[2], size: stamp.size, modified: stamp.modified, audio: audio,
            missing: row[18])
    }

    /// The row of `trackColumns` that `statement` stands on, read column by column from SQLite
    /// (the same values as `track(_:)`, without a copied row or a generic decode of each value:
    /// a playlist of 10,000 entries reads 10,000 rows).
    static func track(at statement: SQLiteStatement) -> MusicTrack {
        track(at: statement, firstColumn: 0, root: nil, relativePath: nil)
    }

    /// `track(at:)` of the `trackColumns` from column `firstColumn` on; `root` and
    /// `relativePath`, when given, are the row's (known to the caller: not read again).
    ///
    /// One SQLite call per column where one tells: a text's pointer is NULL only for NULL (an
    /// empty text is a pointer to its terminating NUL), and a number's type is asked only when
    /// it reads 0 (what NULL reads as). A listing of 10,000 files makes 200,000 of these calls.
    static func track(at statement: SQLiteStatement, firstColumn: CInt, root: String?, relativePath: String?) -> MusicTrack {
        func text(_ column: CInt) -> String? {
            sqlite3_column_text(statement, column + firstColumn).map { String(cString: $0) }
        }
        func isNull(_ index: CInt) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }
        func integer(_ column: CInt) -> Int? {
            let index = column + firstColumn
            let value = sqlite3_column_int64(statement, index)
            return value == 0 && isNull(index) ? nil : Int(value)
        }
        func int64(_ column: CInt) -> Int64 { sqlite3_column_int64(statement, column + firstColumn) }
        let duration = sqlite3_column_double(statement, 8 + firstColumn)
        let tags = TrackTags(
            title: text(9), artist: text(10), album: text(11), albumArtist: text(12), track: integer(13), disc: integer(14),
            date: text(15), genre: text(16))
        let audio = ScannedAudio(
            tags: tags, codec: String(sqliteStatement: statement, index: 5 + firstColumn), sampleRate: Int(int64(6)),
            channels: Int(int64(7)),
            duration: duration == 0 && isNull(8 + firstColumn) ? nil : duration,
            hasEmbeddedCover: int64(17) != 0)
        let stamp = MusicFileStamp(size: int64(3), modifiedNanoseconds: int64(4))
        return MusicTrack(
            id: int64(0), root: root ?? String(sqliteStatement: statement, index: 1 + firstColumn),
            relativePath: relativePath ?? String(sqliteStatement: statement, index: 2 + firstColumn), size: stamp.size,
            modified: stamp.modified, audio: audio, missing: int64(18) != 0)
    }
}
