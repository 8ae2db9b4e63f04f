// What the queue takes of a playlist's indexed files, read straight from the index's rows.
import GRDB
import GRDBSQLite
import ReelModel

/// What a queue entry of an indexed file is made of (`MusicIndex.queueFiles(root:distinctPaths:_:)`):
/// its length, format and the tags an entry shows, and whether its music folder is missing.
/// Nothing else of the row is read (no stamp, sort tags or ReplayGain values).
public struct MusicQueueFile: Sendable, Equatable {
    public var id: Int64
    public var duration: Double?
    public var codec: String
    public var sampleRate: Int
    public var channels: Int
    public var title: String?
    public var artist: String?
    public var album: String?
    /// Its music folder is not there now (a USB disk unplugged): kept, not playable.
    public var missing: Bool

    public init(
        id: Int64, duration: Double?, codec: String, sampleRate: Int, channels: Int, title: String?, artist: String?,
        album: String?, missing: Bool
    ) {
        self.id = id
        self.duration = duration
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.title = title
        self.artist = artist
        self.album = album
        self.missing = missing
    }

    /// The same values of a track read whole.
    public init(_ track: MusicTrack) {
        self.init(
            id: track.id, duration: track.audio.duration, codec: track.audio.codec, sampleRate: track.audio.sampleRate,
            channels: track.audio.channels, title: track.audio.tags.title, artist: track.audio.tags.artist,
            album: track.audio.tags.album, missing: track.missing)
    }
}

extension MusicIndex {
    /// The columns of a `MusicQueueFile`, in its order.
    static let queueFileColumns = "id, duration, codec, sample_rate, channels, title, artist, album, missing"

    /// `numberedPathsSQL(pathsPerQuery, columns: queueFileColumns)`, made once.
    static let fullNumberedQueueFilesSQL = numberedPathsSQL(pathsPerQuery, columns: queueFileColumns)

    /// Calls `body` with each of `distinctPaths` of `root` that the index has (by its number in
    /// `distinctPaths`; in no set order: in the table's row order when it is read whole) and what
    /// a queue entry takes of it; a path the index does not have is not called with. As
    /// `tracks(root:distinctPaths:)` (`forEachNumberedRow`), but only the nine columns an entry needs
    /// are read, into a value on the stack: a playlist of 10,000 files makes no array of rows.
    /// `body` runs inside the read (on the calling thread): it must not use the index.
    public func queueFiles(
        root: String, distinctPaths: [String], _ body: (_ number: Int, _ file: MusicQueueFile) -> Void
    ) throws(ReelError) {
        guard !distinctPaths.isEmpty else { return }
        try store.reading("read \(distinctPaths.count) music files") { db in
            _ = try Self.forEachNumberedRow(
                root: root, distinctPaths: distinctPaths, full: Self.fullNumberedQueueFilesSQL,
                columns: Self.queueFileColumns, in: db
            ) { number, statement in
                body(number, Self.queueFile(at: statement))
            }
        }
    }

    /// The `MusicQueueFile` of the row `statement` stands on (the path's number, then
    /// `queueFileColumns`).
    private static func queueFile(at statement: SQLiteStatement) -> MusicQueueFile {
        func text(_ column: CInt) -> String? {
            sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : String(sqliteStatement: statement, index: column)
        }
        return MusicQueueFile(
            id: sqlite3_column_int64(statement, 1),
            duration: sqlite3_column_type(statement, 2) == SQLITE_NULL ? nil : sqlite3_column_double(statement, 2),
            codec: String(sqliteStatement: statement, index: 3), sampleRate: Int(sqlite3_column_int64(statement, 4)),
            channels: Int(sqlite3_column_int64(statement, 5)), title: text(6), artist: text(7), album: text(8),
            missing: sqlite3_column_int64(statement, 9) != 0)
    }
}
