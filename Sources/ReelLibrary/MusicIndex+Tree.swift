// The index's files by folder: what the `/Music` branch of the tree lists.

import GRDB
import ReelModel

extension MusicIndex {
    /// The present files under `relativePath` (a folder's path under the music folder `root`,
    /// `""` for all of it), at any depth, in path order. Reads the `(root, path)` index's range
    /// for the folder, not the table.
    public func files(root: String, under relativePath: String) throws(ReelError) -> [MusicTrack] {
        try store.reading("list \(relativePath.isEmpty ? root : relativePath) of the music folders") { db in
            if relativePath.isEmpty {
                return try Row.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT \(Self.trackColumns) FROM music_files WHERE root = ? AND missing = 0 ORDER BY path"),
                    arguments: [root]
                ).map(Self.track)
            }
            // Every path that starts with "folder/": from "folder/" up to (not including)
            // "folder0", "0" being the character after "/".
            return try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(Self.trackColumns) FROM music_files
                        WHERE root = ? AND path >= ? AND path < ? AND missing = 0 ORDER BY path
                        """),
                arguments: [root, relativePath + "/", relativePath + "0"]
            ).map(Self.track)
        }
    }
}
