// Marks of recordings in the library database (migration "marks"): frame offsets and labels.

import GRDB
import ReelModel

extension LibrarySchema {
    /// The "marks" migration: a recording's marks, a row each, gone with their recording.
    /// Existing data is untouched (a new table).
    static let marksSQL = """
        CREATE TABLE marks (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          item TEXT NOT NULL REFERENCES items(id) ON DELETE CASCADE,
          frame INTEGER NOT NULL CHECK (frame >= 0),
          label TEXT
        );
        CREATE INDEX marks_item ON marks (item, frame);
        """
}

/// A stored mark with its row id (for moving it to another take).
public struct StoredMark: Equatable, Sendable {
    public var id: Int64
    public var mark: Mark
}

extension LibraryStore {
    /// Adds a mark to recording `id` at `frame` (from its first frame). Committed (and synced)
    /// when this returns. `not_found`, `not_a_recording`.
    @discardableResult
    public func addMark(recording id: String, frame: Int64, label: String?) throws(ReelError) -> StoredMark {
        try writing("keep a mark in recording \(id)") { db in
            let target = try self.resolve(.id(id), db)
            guard target.row.kind == .recording else {
                throw ReelError(.notARecording, "\(target.path) is a folder, not a recording; marks are made in recordings")
            }
            try db.execute(
                sql: "INSERT INTO marks (item, frame, label) VALUES (?, ?, ?)", arguments: [id, max(0, frame), label])
            return StoredMark(
                id: db.lastInsertedRowID, mark: Mark(frame: max(0, frame), label: label, sampleRate: target.row.sampleRate ?? 0))
        }
    }

    /// An item as `item(_:)` reads it, a recording with its marks (`library.get`), in one read.
    public func itemWithMarks(_ reference: ItemReference) throws(ReelError) -> Item {
        if let item = try branchItem(reference) { return item }
        return try reading("read \(reference)") { db in
            let found = try self.resolve(reference, db)
            var item = found.item
            if found.row.kind == .recording { item.marks = try Self.marks(ofRecording: found.row.id, db).map(\.mark) }
            return item
        }
    }

    /// Recording `id`'s marks by frame (then in the order they were made); none for a folder.
    public func marks(ofRecording id: String) throws(ReelError) -> [StoredMark] {
        try reading("read the marks of recording \(id)") { db in try Self.marks(ofRecording: id, db) }
    }

    static func marks(ofRecording id: String, _ db: Database) throws -> [StoredMark] {
        let rate = try Int.fetchOne(db, sql: "SELECT sample_rate FROM items WHERE id = ?", arguments: [id]) ?? 0
        return try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, frame, label FROM marks WHERE item = ? ORDER BY frame, id"), arguments: [id]
        ).map { row in StoredMark(id: row[0], mark: Mark(frame: row[1], label: row[2], sampleRate: rate)) }
    }

    /// Moves marks to recording `to`, each to its new frame (the recorder: a mark made just
    /// before a segment's end that falls in the next segment). One transaction.
    public func moveMarks(_ moves: [(id: Int64, frame: Int64)], to recording: String) throws(ReelError) {
        guard !moves.isEmpty else { return }
        try writing("move marks to recording \(recording)") { db in
            for move in moves {
                try db.execute(
                    sql: "UPDATE marks SET item = ?, frame = ? WHERE id = ?", arguments: [recording, max(0, move.frame), move.id])
            }
        }
    }

    /// Sets marks' frames in their recording (the recorder: a mark past a take's end goes to its end).
    public func setMarkFrames(_ moves: [(id: Int64, frame: Int64)]) throws(ReelError) {
        guard !moves.isEmpty else { return }
        try writing("move marks") { db in
            for move in moves {
                try db.execute(sql: "UPDATE marks SET frame = ? WHERE id = ?", arguments: [max(0, move.frame), move.id])
            }
        }
    }

    static let chaptersCopyPrefix = ".chapters-"

    /// How `chaptersCopyPath` names its files in `audio/`: a prefix and a suffix around the id.
    public static var chaptersCopyName: (prefix: String, suffix: String) { (chaptersCopyPrefix, partialImportSuffix) }

    /// A temporary path in `audio/` beside recording `id`'s file, where its chapters are written
    /// into a copy before it is renamed over the file, or the journal of their in-place write
    /// (ReelTags' `ChapterWriter`). A journal left by a crash is finished at the daemon's start
    /// before `reconcile`; what is left there then, `reconcile` removes (the file itself was
    /// never touched).
    public func chaptersCopyPath(forRecording id: String) -> String {
        "\(audioDirectory)/\(Self.chaptersCopyPrefix)\(id)\(Self.partialImportSuffix)"
    }
}
