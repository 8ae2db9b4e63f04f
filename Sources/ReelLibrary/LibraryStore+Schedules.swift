// The schedules' table in the library database (migration "schedules"): rows in, rows out.

import GRDB
import ReelModel

/// One row of `schedules`: the schedule as text and numbers; the action is JSON text, which the
/// core writes and reads (`ScheduleAction.json`), so the store knows nothing of its shape.
public struct ScheduleRow: Equatable, Sendable {
    public var id: Int
    public var name: String
    public var when: String
    public var enabled: Bool
    public var action: String
    /// Seconds since the epoch through which firings are dealt with.
    public var handledThrough: Int64
    public var lastAt: Int64?
    public var lastResult: String?
    public var lastMessage: String?
    public var lastReason: String?

    public init(
        id: Int, name: String, when: String, enabled: Bool, action: String, handledThrough: Int64, lastAt: Int64? = nil,
        lastResult: String? = nil, lastMessage: String? = nil, lastReason: String? = nil
    ) {
        self.id = id
        self.name = name
        self.when = when
        self.enabled = enabled
        self.action = action
        self.handledThrough = handledThrough
        self.lastAt = lastAt
        self.lastResult = lastResult
        self.lastMessage = lastMessage
        self.lastReason = lastReason
    }
}

extension LibrarySchema {
    /// The "schedules" migration: one row per schedule, ids never reused.
    static let schedulesSQL = """
        CREATE TABLE schedules (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          name TEXT NOT NULL,
          "when" TEXT NOT NULL,
          enabled INTEGER NOT NULL,
          action TEXT NOT NULL,
          handled_through INTEGER NOT NULL,
          last_at INTEGER,
          last_result TEXT,
          last_message TEXT,
          last_reason TEXT
        );
        """
}

extension LibraryStore {
    /// Every schedule, in id order.
    public func schedules() throws(ReelError) -> [ScheduleRow] {
        try reading("read the schedules") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM schedules ORDER BY id").map { row in
                ScheduleRow(
                    id: row["id"], name: row["name"], when: row["when"], enabled: row["enabled"], action: row["action"],
                    handledThrough: row["handled_through"], lastAt: row["last_at"], lastResult: row["last_result"],
                    lastMessage: row["last_message"], lastReason: row["last_reason"])
            }
        }
    }

    /// Adds a schedule (its `id` is ignored); returns the id it was given.
    public func addSchedule(_ row: ScheduleRow) throws(ReelError) -> Int {
        try writing("save the schedule") { db in
            try db.execute(
                sql: """
                    INSERT INTO schedules (name, "when", enabled, action, handled_through, last_at, last_result, last_message, last_reason)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [row.name, row.when, row.enabled, row.action, row.handledThrough, row.lastAt, row.lastResult, row.lastMessage, row.lastReason])
            return Int(db.lastInsertedRowID)
        }
    }

    /// Writes every column of the schedule `row.id`; `not_found` when there is none.
    public func updateSchedule(_ row: ScheduleRow) throws(ReelError) {
        try writing("save the schedule") { db in
            try db.execute(
                sql: """
                    UPDATE schedules SET name = ?, "when" = ?, enabled = ?, action = ?, handled_through = ?, last_at = ?,
                      last_result = ?, last_message = ?, last_reason = ? WHERE id = ?
                    """,
                arguments: [
                    row.name, row.when, row.enabled, row.action, row.handledThrough, row.lastAt, row.lastResult, row.lastMessage, row.lastReason,
                    row.id,
                ])
            guard db.changesCount == 1 else { throw ReelError(.notFound, "no schedule with id \(row.id)") }
        }
    }

    public func removeSchedule(id: Int) throws(ReelError) {
        try writing("remove the schedule") { db in
            try db.execute(sql: "DELETE FROM schedules WHERE id = ?", arguments: [id])
            guard db.changesCount == 1 else { throw ReelError(.notFound, "no schedule with id \(id)") }
        }
    }
}
