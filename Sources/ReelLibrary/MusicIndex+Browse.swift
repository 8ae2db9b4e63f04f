// The music index read as a tree of folders and as a set of tag values: what a front end that
// shows the music folders as directories (MPD's database) asks of it.
import Foundation
import GRDB
import GRDBSQLite
import ReelModel

/// Threads: as `MusicIndex`, any thread; each call blocks for one read (a consistent snapshot).
/// Every listing shows files present only (not those of a missing music folder).
extension MusicIndex {
    /// The files present directly in `folder` ("" for the music folder itself) of `root`, by path.
    public func files(root: String, in folder: String) throws(ReelError) -> [MusicTrack] {
        try files(root: root, folder: folder, directly: true)
    }

    /// The folders directly in `folder` ("" for the music folder itself) of `root` that hold
    /// files or playlist files (at any depth), by name.
    public func subfolders(root: String, of folder: String) throws(ReelError) -> [MusicSubfolder] {
        let prefix = folder.isEmpty ? "" : folder + "/"
        let start = prefix.unicodeScalars.count + 1
        return try store.reading("list the folders of \(folder) in \(root)") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT substr(path, ?, instr(substr(path, ?), '/') - 1) AS name, max(mtime_ns)
                        FROM (
                          SELECT path, mtime_ns FROM music_files
                          WHERE root = ? AND path >= ? AND path < ? AND missing = 0 AND instr(substr(path, ?), '/') > 0
                          UNION ALL
                          SELECT path, mtime_ns FROM music_playlists
                          WHERE root = ? AND path >= ? AND path < ? AND missing = 0 AND instr(substr(path, ?), '/') > 0)
                        GROUP BY name ORDER BY name
                        """),
                arguments: StatementArguments(
                    [start, start] + Self.range(root, prefix) + [start] + Self.range(root, prefix) + [start])
            ).map { row in MusicSubfolder(name: row[0], modified: Double(row[1] as Int64) / 1_000_000_000) }
        }
    }

    /// Every file present under `folder` ("" for all of `root`), at any depth, by path.
    public func files(root: String, under folder: String) throws(ReelError) -> [MusicTrack] {
        try files(root: root, folder: folder, directly: false)
    }

    /// The files present under `folder` of `root`, by path: only those directly in it, or all.
    private func files(root: String, folder: String, directly: Bool) throws(ReelError) -> [MusicTrack] {
        let prefix = folder.isEmpty ? "" : folder + "/"
        let depth = directly ? " AND instr(substr(path, ?), '/') = 0" : ""
        var arguments = Self.range(root, prefix)
        if directly { arguments.append(prefix.unicodeScalars.count + 1) }
        return try store.reading("list the files \(directly ? "of" : "under") \(folder) in \(root)") { db in
            try Self.tracks(
                Row.fetchCursor(
                    db.cachedStatement(
                        sql: """
                            SELECT \(Self.trackColumns) FROM music_files
                            WHERE root = ? AND path >= ? AND path < ? AND missing = 0\(depth)
                            ORDER BY path
                            """),
                    arguments: StatementArguments(arguments)))
        }
    }

    /// Whether `folder` of `root` holds a file or a playlist file present (at any depth); "" is
    /// the music folder, which is there when it holds one.
    public func hasFolder(root: String, _ folder: String) throws(ReelError) -> Bool {
        let prefix = folder.isEmpty ? "" : folder + "/"
        return try store.reading("look for \(folder) in \(root)") { db in
            try Bool.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM music_files WHERE root = ? AND path >= ? AND path < ? AND missing = 0)
                          OR EXISTS (SELECT 1 FROM music_playlists WHERE root = ? AND path >= ? AND path < ? AND missing = 0)
                        """),
                arguments: StatementArguments(Self.range(root, prefix) + Self.range(root, prefix))) ?? false
        }
    }

    /// The files present at these paths of `root` (those the index has), by path; a path given
    /// several times (a playlist naming one file often) is looked up once. One query per 500
    /// distinct paths, its rows read straight from SQLite (`track(at:)`).
    public func tracks(root: String, relativePaths: [String]) throws(ReelError) -> [String: MusicTrack] {
        var seen = Set<String>(minimumCapacity: relativePaths.count)
        let distinct = relativePaths.filter { seen.insert($0).inserted }
        guard !distinct.isEmpty else { return [:] }
        return try store.reading("read \(distinct.count) music files") { db in
            var found: [String: MusicTrack] = Dictionary(minimumCapacity: distinct.count)
            for start in stride(from: 0, to: distinct.count, by: 500) {
                let chunk = distinct[start..<min(start + 500, distinct.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
                let statement = try db.cachedStatement(
                    sql: "SELECT \(Self.trackColumns) FROM music_files WHERE root = ? AND path IN (\(marks))")
                statement.arguments = StatementArguments([root] + Array(chunk))
                let rows = try Row.fetchCursor(statement)
                while try rows.next() != nil {
                    let track = Self.track(at: statement.sqliteStatement)
                    found[track.relativePath] = track
                }
            }
            return found
        }
    }

    /// The index's file at each of `distinctPaths` of `root` (nil: not indexed), in the order
    /// given; each path given once (`PlaylistMusicLines.files`). Found by `forEachNumberedRow`:
    /// a few paths by one query per 500 that joins the paths, numbered in the query's text, to
    /// the index (SQLite hands back each row with its path's number); paths numbering half the
    /// table's rows or more by reading the table once and matching each row's path by its
    /// bytes. Each track's `root` and `relativePath` are the strings given (no string made for
    /// them per row).
    ///
    /// Each track is made in its place in the array, and only the paths not found are set to
    /// nil after the read: an array of 10,000 nils made first (each copied whole, as
    /// `Array(repeating:count:)` does) cost about 1 ms of a listing of 10,000 files.
    public func tracks(root: String, distinctPaths: [String]) throws(ReelError) -> [MusicTrack?] {
        let count = distinctPaths.count
        guard count > 0 else { return [] }
        var failure: ReelError?
        let found = [MusicTrack?](unsafeUninitializedCapacity: count) { buffer, initialized in
            let slots = buffer.baseAddress!
            var made = [Bool](repeating: false, count: count)
            do throws(ReelError) {
                try forEachTrack(root: root, distinctPaths: distinctPaths) { number, track in
                    if made[number] {
                        slots[number] = track
                    } else {
                        (slots + number).initialize(to: track)
                        made[number] = true
                    }
                }
            } catch {
                for number in 0..<count where made[number] { (slots + number).deinitialize(count: 1) }
                initialized = 0
                failure = error
                return
            }
            for number in 0..<count where !made[number] { (slots + number).initialize(to: nil) }
            initialized = count
        }
        if let failure { throw failure }
        return found
    }

    /// Hands `body` the index's file at each of `distinctPaths` of `root` that it has, with the
    /// path's number (its index in `distinctPaths`), in no set order; each path given once
    /// (`PlaylistMusicLines.files`). The rows are found as `tracks(root:distinctPaths:)` finds
    /// them (`forEachNumberedRow`); each track's `root` and `relativePath` are the strings given.
    /// For a caller that keeps each track in a place of its own (a playlist entry's box): no
    /// array of every track is made in between. On a failure, `body` may have had some of them.
    public func forEachTrack(
        root: String, distinctPaths: [String], _ body: (_ number: Int, _ track: consuming MusicTrack) -> Void
    ) throws(ReelError) {
        guard !distinctPaths.isEmpty else { return }
        try store.reading("read \(distinctPaths.count) music files") { db in
            _ = try Self.forEachNumberedRow(
                root: root, distinctPaths: distinctPaths, full: Self.fullNumberedPathsSQL, columns: Self.knownPathTrackColumns,
                in: db
            ) { number, statement in
                body(number, Self.track(at: statement, firstColumn: 1, root: root, relativePath: distinctPaths[number]))
            }
        }
    }

    /// Binds `text` to parameter `index` of `statement` (SQLite copies it).
    static func bind(_ text: String, at index: CInt, of statement: SQLiteStatement, in db: Database) throws {
        var text = text
        let code = text.isEmpty
            ? sqlite3_bind_text(statement, index, "", 0, transient)  // text, not NULL
            : text.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    sqlite3_bind_text(statement, index, chars.baseAddress, CInt(chars.count), transient)
                }
            }
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
        }
    }

    /// SQLite's `SQLITE_TRANSIENT`: a bound value is copied.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// Paths per query of `tracks(root:distinctPaths:)` (SQLite allows 32,766 arguments).
    static let pathsPerQuery = 500

    /// `trackColumns` with `root` and `path` as NULL, for rows whose root and path the caller
    /// has (`forEachTrack`: `track(at:firstColumn:root:relativePath:)` does not read them), so
    /// SQLite does not copy out two texts per row it is not asked for.
    static let knownPathTrackColumns = trackColumns.replacingOccurrences(of: "id, root, path,", with: "id, NULL, NULL,")

    /// `numberedPathsSQL(pathsPerQuery, columns: knownPathTrackColumns)`, made once.
    static let fullNumberedPathsSQL = numberedPathsSQL(pathsPerQuery, columns: knownPathTrackColumns)

    /// How `forEachNumberedRow` finds the rows of many paths.
    enum PathLookup: Equatable {
        /// `numberedPathsSQL`, `pathsPerQuery` paths at a time: two B-tree seeks per path (the
        /// `(root, path)` index, then the row).
        case seek
        /// Every row of the table read once, in rowid order, each row's path matched against
        /// the paths asked in memory (`MusicPathNumbers`).
        case scan
    }

    /// Fewer paths than this are always sought: the scan's choice is not worth its query.
    static let minimumScanPaths = 256

    /// `.scan` when `count` paths number at least half the table's rows, else `.seek`. Reading
    /// and matching a row costs about half of seeking one (a C program on the database of
    /// `bench/playlists`' 10,000 files, the nine columns of `queueFiles`, best CPU time of 40:
    /// 10,000 paths sought 7.9 ms, every row read and matched 5.1 ms; 5,000 paths 3.8 ms against
    /// 3.9 ms; 1,000 paths 0.7 ms against 3.0 ms). The rows are counted by the span of their
    /// ids (two seeks): never fewer than the rows, and as many while files are updated in place
    /// (`write(files:)` keeps a path's id), so a table with gaps in its ids is only sought more
    /// often than it need be.
    static func pathLookup(count: Int, in db: Database) throws -> PathLookup {
        guard count >= minimumScanPaths else { return .seek }
        let span = try Int64.fetchOne(
            db.cachedStatement(
                sql: "SELECT (SELECT max(id) FROM music_files) - (SELECT min(id) FROM music_files) + 1")) ?? 0
        return span > 0 && Int64(count) * 2 >= span ? .scan : .seek
    }

    /// Hands `body` each row of `distinctPaths` of `root` that the index has, standing on a
    /// first column that `body` does not read, then `columns` (of `music_files`); the row's
    /// path's number (its index in `distinctPaths`) is given with it. Each path the index has is
    /// handed once (a path given twice: once per number); in the order of `distinctPaths` when
    /// sought, in the table's rowid order when scanned. The paths are matched as SQLite's
    /// `path = ?` matches them, byte for byte (no case or Unicode rule). The paths are bound
    /// as they are, no argument values made.
    ///
    /// `lookup` (nil: `pathLookup(count:in:)`) says how; `full` is the SQL of a whole batch of
    /// the seeks, made once. Returns how the rows were found.
    @discardableResult
    static func forEachNumberedRow(
        root: String, distinctPaths: [String], full: String, columns: String, in db: Database,
        lookup: PathLookup? = nil, _ body: (_ number: Int, _ statement: SQLiteStatement) throws -> Void
    ) throws -> PathLookup {
        let lookup = try lookup ?? pathLookup(count: distinctPaths.count, in: db)
        switch lookup {
        case .seek: try seekNumberedRows(root: root, distinctPaths: distinctPaths, full: full, columns: columns, in: db, body)
        case .scan: try scanNumberedRows(root: root, distinctPaths: distinctPaths, columns: columns, in: db, body)
        }
        return lookup
    }

    /// `forEachNumberedRow` by `.seek`: `numberedPathsSQL` over `distinctPaths`,
    /// `pathsPerQuery` at a time.
    private static func seekNumberedRows(
        root: String, distinctPaths: [String], full: String, columns: String, in db: Database,
        _ body: (_ number: Int, _ statement: SQLiteStatement) throws -> Void
    ) throws {
        for start in stride(from: 0, to: distinctPaths.count, by: pathsPerQuery) {
            let count = min(pathsPerQuery, distinctPaths.count - start)
            let sql = count == pathsPerQuery ? full : numberedPathsSQL(count, columns: columns)
            let statement = try db.cachedStatement(sql: sql).sqliteStatement
            sqlite3_reset(statement)
            defer { sqlite3_reset(statement) }
            try bind(root, at: 1, of: statement, in: db)
            for number in 0..<count {
                try bind(distinctPaths[start + number], at: CInt(number + 2), of: statement, in: db)
            }
            try forEachRow(of: statement, in: db) { try body(start + Int(sqlite3_column_int64(statement, 0)), statement) }
        }
    }

    /// `forEachNumberedRow` by `.scan`: every row of `root`, read in rowid order (`NOT INDEXED`:
    /// not through the `(root, path)` index, which would seek each row), its path (the first
    /// column) matched against `distinctPaths` by its bytes.
    private static func scanNumberedRows(
        root: String, distinctPaths: [String], columns: String, in db: Database,
        _ body: (_ number: Int, _ statement: SQLiteStatement) throws -> Void
    ) throws {
        let numbers = MusicPathNumbers(distinctPaths)
        let statement = try db.cachedStatement(
            sql: "SELECT path, \(columns) FROM music_files NOT INDEXED WHERE root = ?1"
        ).sqliteStatement
        sqlite3_reset(statement)
        defer { sqlite3_reset(statement) }
        try bind(root, at: 1, of: statement, in: db)
        try forEachRow(of: statement, in: db) {
            // (A path is never NULL: `music_files.path` is NOT NULL.)
            let path = UnsafeRawBufferPointer(
                start: sqlite3_column_text(statement, 0), count: Int(sqlite3_column_bytes(statement, 0)))
            try numbers.forEachNumber(of: path) { number in try body(number, statement) }
        }
    }

    /// Steps `statement` to its end, calling `body` on each row.
    private static func forEachRow(of statement: SQLiteStatement, in db: Database, _ body: () throws -> Void) throws {
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage)
            }
            try body()
        }
    }

    /// `count` paths (arguments 2…) numbered 0..<count, joined to the files of root (argument
    /// 1): each row is the path's number, then `columns` (of `music_files`; a `NULL` stays one).
    static func numberedPathsSQL(_ count: Int, columns: String = trackColumns) -> String {
        let values = (0..<count).map { "(\($0), ?\($0 + 2))" }.joined(separator: ", ")
        let columns = columns.split(separator: ",").map { column in
            let name = column.trimmingCharacters(in: .whitespacesAndNewlines)
            return name == "NULL" ? name : "f." + name
        }
        return """
            WITH wanted(number, path) AS (VALUES \(values))
            SELECT wanted.number, \(columns.joined(separator: ", "))
            FROM wanted CROSS JOIN music_files AS f ON f.root = ?1 AND f.path = wanted.path
            """
    }

    /// The files present that satisfy every condition (all files present with none), in id
    /// order: the candidates of a tag search, which the caller checks with its own rule.
    public func tracks(matching conditions: [MusicTagCondition]) throws(ReelError) -> [MusicTrack] {
        var clauses = ["missing = 0"]
        var arguments: [DatabaseValueConvertible] = []
        var indexed: String?
        // Texts of three or more characters in Title, Artist or Album also go to the trigram
        // index (`music_fts`), which finds the few candidates without reading every row.
        var trigramTerms: [String] = []
        func trigram(_ column: MusicTagColumn, _ folded: String) {
            let needle = LibraryStore.searchNeedle(folded)
            guard let name = Self.trigramColumn(column),
                needle.unicodeScalars.count >= LibraryStore.minimumIndexedQueryLength
            else { return }
            trigramTerms.append("\(name) : \(LibraryStore.phrase(needle))")
        }
        for condition in conditions {
            switch condition {
            case .equals(let column, let value):
                if column != .album { trigram(column, LibrarySchema.fold(value)) }
                switch column {
                case .album:
                    // The album index: folded text first, then the exact text.
                    clauses.append("album_fold = ? AND album = ?")
                    arguments += [LibrarySchema.fold(value), value]
                    indexed = indexed ?? "music_album_tracks"
                case .albumArtistOrArtist:
                    clauses.append("group_artist = ?")
                    arguments.append(value)
                default:
                    clauses.append("\(Self.column(column)) = ?")
                    arguments.append(value)
                }
            case .containsFolded(let column, let value):
                guard let folded = Self.foldedColumn(column) else { continue }
                trigram(column, value)
                // A file without the tag has '' (or, for the title, its file name): require the tag.
                clauses.append("\(Self.column(column)) IS NOT NULL AND instr(\(folded), ?) > 0")
                arguments.append(value)
            }
        }
        if !trigramTerms.isEmpty {
            clauses.append("id IN (SELECT rowid FROM music_fts WHERE music_fts MATCH ?)")
            arguments.append(trigramTerms.joined(separator: " AND "))
        }
        let sql = """
            SELECT \(Self.trackColumns) FROM music_files \(indexed.map { "INDEXED BY \($0)" } ?? "")
            WHERE \(clauses.joined(separator: " AND ")) ORDER BY id
            """
        return try store.reading("search the music index by tag") { db in
            try Self.tracks(Row.fetchCursor(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments)))
        }
    }

    /// The distinct values of one tag among the files present, "" standing for the files that
    /// lack it (MPD lists those as an empty value), unordered. Album and AlbumArtist-else-Artist
    /// come from the browsing table (a row per album), the others from the files.
    public func distinctValues(of column: MusicTagColumn) throws(ReelError) -> [String] {
        let sql: String
        switch column {
        case .album: sql = "SELECT DISTINCT album_key FROM music_albums"
        case .albumArtistOrArtist: sql = "SELECT DISTINCT artist_key FROM music_albums"
        default: sql = "SELECT DISTINCT coalesce(\(Self.column(column)), '') FROM music_files WHERE missing = 0"
        }
        return try store.reading("list the values of a tag") { db in
            try String.fetchAll(db.cachedStatement(sql: sql))
        }
    }

    /// The distinct combinations of several tags among the files present ("" for a tag a file
    /// lacks), unordered: `list TAG group TAG…`. Album with AlbumArtist-else-Artist comes from
    /// the browsing table (a row per album); other combinations from the files.
    public func distinctValues(of columns: [MusicTagColumn]) throws(ReelError) -> [[String]] {
        guard !columns.isEmpty else { return [] }
        let sql: String
        if Set(columns) == [.album, .albumArtistOrArtist], columns.count == 2 {
            let names = columns.map { $0 == .album ? "album_key" : "artist_key" }
            sql = "SELECT DISTINCT \(names.joined(separator: ", ")) FROM music_albums"
        } else {
            let names = columns.map { "coalesce(\(Self.column($0)), '')" }
            sql = "SELECT DISTINCT \(names.joined(separator: ", ")) FROM music_files WHERE missing = 0"
        }
        return try store.reading("list the values of tags") { db in
            try Row.fetchAll(db.cachedStatement(sql: sql)).map { row in
                (0..<columns.count).map { row[$0] as String }
            }
        }
    }

    /// Songs, their length, distinct Artist tags and the Album tags, as MPD's `stats` counts them.
    public func tagStats() throws(ReelError) -> MusicTagStats {
        try store.reading("count the music files by tag") { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*), count(DISTINCT artist), total(CAST(round(coalesce(duration, 0) * 1000) AS INTEGER))
                    FROM music_files WHERE missing = 0
                    """)!
            let albums = try String.fetchAll(db, sql: "SELECT DISTINCT album FROM music_albums WHERE album IS NOT NULL")
            return MusicTagStats(
                artists: row[1], albums: albums, songs: row[0], durationMilliseconds: Int64(row[2] as Double))
        }
    }

    // MARK: Helpers

    /// The tracks of a cursor over `trackColumns` rows (read in place, not copied first).
    private static func tracks(_ rows: RowCursor) throws -> [MusicTrack] {
        var tracks: [MusicTrack] = []
        while let row = try rows.next() { tracks.append(track(row)) }
        return tracks
    }

    /// `root`, then the bounds of the paths that start with `prefix` ("" for all).
    private static func range(_ root: String, _ prefix: String) -> [DatabaseValueConvertible] {
        // SQLite orders every BLOB after every TEXT: an upper bound above any path.
        guard !prefix.isEmpty else { return [root, "", Data([0xFF])] }
        // Paths under `A/` are those from `A/` up to (not including) `A0`: `0` follows `/`.
        return [root, prefix, String(prefix.dropLast()) + "0"]
    }

    private static func column(_ column: MusicTagColumn) -> String {
        switch column {
        case .title: "title"
        case .artist: "artist"
        case .album: "album"
        case .genre: "genre"
        case .date: "date"
        case .albumArtistOrArtist: "group_artist"
        }
    }

    /// The column of `music_fts` that holds a tag folded.
    private static func trigramColumn(_ column: MusicTagColumn) -> String? {
        switch column {
        case .title: "title_fold"
        case .artist: "artist_fold"
        case .album: "album_fold"
        case .albumArtistOrArtist, .genre, .date: nil
        }
    }

    private static func foldedColumn(_ column: MusicTagColumn) -> String? {
        switch column {
        case .title: "title_fold"
        case .artist: "artist_fold"
        case .album: "album_fold"
        case .albumArtistOrArtist: "group_fold"
        case .genre, .date: nil
        }
    }
}
