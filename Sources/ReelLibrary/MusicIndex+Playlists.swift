// The playlist files of the music folders in the index: their paths and stamps, written by a
// scan, read as a folder's `playlist:` entries.
import Foundation
import GRDB
import ReelModel

extension LibrarySchema {
    /// `music_playlists`: one row per playlist file (`.m3u`, `.m3u8`, `.pls`) of a music folder,
    /// keyed like `music_files` by the folder as configured and the path under it, with the
    /// file's size and mtime (nanoseconds) as the scan saw them, and `missing` when its music
    /// folder is gone (kept, hidden, as its audio files are). Only the stamp is kept: the lines
    /// are read from the file when it is listed or loaded.
    static let musicPlaylistsSQL = """
        CREATE TABLE music_playlists (
          root TEXT NOT NULL,
          path TEXT NOT NULL,
          size INTEGER NOT NULL,
          mtime_ns INTEGER NOT NULL,
          missing INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (root, path)
        ) WITHOUT ROWID;
        """
}

/// A playlist file a scan found, to be written to the index.
public struct ScannedPlaylistFile: Sendable, Equatable {
    public var relativePath: String
    public var stamp: MusicFileStamp

    public init(relativePath: String, stamp: MusicFileStamp) {
        self.relativePath = relativePath
        self.stamp = stamp
    }
}

/// Threads: as `MusicIndex`, any thread; each call blocks for one transaction or one read.
/// Listings show the playlist files of present music folders only.
extension MusicIndex {
    // MARK: Writing

    /// Brings a music folder's playlist files up to date in one transaction: `found` are
    /// written (inserted, or their stamp updated; present again), `gone` removed.
    ///
    /// - Returns: how many rows changed (written with a new stamp, or removed).
    @discardableResult
    public func writePlaylists(root: String, found: [ScannedPlaylistFile], gone: [String]) throws(ReelError) -> Int {
        guard !found.isEmpty || !gone.isEmpty else { return 0 }
        return try store.writing("write \(found.count) playlist files of \(root) to the index") { db in
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO music_playlists (root, path, size, mtime_ns, missing) VALUES (?, ?, ?, ?, 0)
                    ON CONFLICT (root, path) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns, missing = 0
                    WHERE size <> excluded.size OR mtime_ns <> excluded.mtime_ns OR missing <> 0
                    """)
            let delete = try db.cachedStatement(sql: "DELETE FROM music_playlists WHERE root = ? AND path = ?")
            var changed = 0
            for file in found {
                try upsert.execute(arguments: [root, file.relativePath, file.stamp.size, file.stamp.modifiedNanoseconds])
                changed += db.changesCount
            }
            for path in gone {
                try delete.execute(arguments: [root, path])
                changed += db.changesCount
            }
            return changed
        }
    }

    // MARK: Reading

    /// The playlist files the index has of a music folder at `relativePath` or under it ("" for
    /// all of them), present or missing, with their stamps, by relative path.
    public func indexedPlaylists(root: String, under relativePath: String = "") throws(ReelError) -> [String: MusicFileStamp] {
        try store.reading("read the playlist files of \(root)") { db in
            var files: [String: MusicFileStamp] = [:]
            let rows: RowCursor
            if relativePath.isEmpty {
                rows = try Row.fetchCursor(
                    db, sql: "SELECT path, size, mtime_ns FROM music_playlists WHERE root = ?", arguments: [root])
            } else {
                rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT path, size, mtime_ns FROM music_playlists
                        WHERE root = ? AND (path = ? OR (path > ? AND path < ?))
                        """,
                    arguments: [root, relativePath, relativePath + "/", relativePath + "0"])
            }
            while let row = try rows.next() {
                files[row[0]] = MusicFileStamp(size: row[1], modifiedNanoseconds: row[2])
            }
            return files
        }
    }

    /// The playlist file at `relativePath` of `root`, present or missing, or nil.
    public func playlist(root: String, relativePath: String) throws(ReelError) -> MusicPlaylistFile? {
        try store.reading("read the playlist file \(relativePath) of \(root)") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.playlistColumns) FROM music_playlists WHERE root = ? AND path = ?"),
                arguments: [root, relativePath]
            ).map(Self.playlist)
        }
    }

    /// The playlist files present directly in `folder` ("" for the top) of `root`, by path.
    public func playlists(root: String, in folder: String) throws(ReelError) -> [MusicPlaylistFile] {
        try playlists(root: root, folder: folder, directly: true)
    }

    /// Every playlist file present under `folder` ("" for all of `root`), at any depth, by path.
    public func playlists(root: String, under folder: String) throws(ReelError) -> [MusicPlaylistFile] {
        try playlists(root: root, folder: folder, directly: false)
    }

    private func playlists(root: String, folder: String, directly: Bool) throws(ReelError) -> [MusicPlaylistFile] {
        let prefix = folder.isEmpty ? "" : folder + "/"
        var arguments: [DatabaseValueConvertible] = [root, prefix]
        arguments.append(prefix.isEmpty ? Data([0xFF]) : String(prefix.dropLast()) + "0")
        let depth = directly ? " AND instr(substr(path, ?), '/') = 0" : ""
        if directly { arguments.append(prefix.unicodeScalars.count + 1) }
        return try store.reading("list the playlist files \(directly ? "of" : "under") \(folder) in \(root)") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(Self.playlistColumns) FROM music_playlists
                        WHERE root = ? AND path >= ? AND path < ? AND missing = 0\(depth)
                        ORDER BY path
                        """),
                arguments: StatementArguments(arguments)
            ).map(Self.playlist)
        }
    }

    static let playlistColumns = "root, path, size, mtime_ns, missing"

    static func playlist(_ row: Row) -> MusicPlaylistFile {
        MusicPlaylistFile(
            root: row[0], relativePath: row[1], size: row[2],
            modified: MusicFileStamp(size: row[2], modifiedNanoseconds: row[3]).modified, missing: row[4])
    }
}
