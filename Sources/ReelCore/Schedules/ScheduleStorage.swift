// Where the schedules are kept: the library's SQLite (`LibraryStore+Schedules`), or memory in tests.

internal import ReelLibrary
import ReelAudio
import ReelModel
import ReelProtocol
import ReelRuntime

/// Keeps the schedules across restarts. Called on the schedules' queue only.
public protocol ScheduleStorage: Sendable {
    func loadSchedules() throws(ReelError) -> [StoredSchedule]
    /// Adds a schedule (its id is ignored) and returns the id it was given.
    func addSchedule(_ stored: StoredSchedule) throws(ReelError) -> Int
    func saveSchedule(_ stored: StoredSchedule) throws(ReelError)
    func removeSchedule(id: Int) throws(ReelError)
}

/// The schedules in the library database's `schedules` table; the action as its JSON text.
struct LibraryScheduleStorage: ScheduleStorage {
    let store: LibraryStore

    func loadSchedules() throws(ReelError) -> [StoredSchedule] {
        try store.schedules().map { row in
            let action: ScheduleAction
            var last = row.lastAt.map { at in
                ScheduleRun(
                    at: at, result: ScheduleResult(rawValue: row.lastResult ?? "") ?? .failed, message: row.lastMessage ?? "",
                    reason: row.lastReason.flatMap(ErrorReason.init(rawValue:)))
            }
            if let json = try? JSONValue.parse(Array(row.action.utf8)), let parsed = try? ScheduleAction(json: json) {
                action = parsed
            } else {
                // Unreadable (written by a later reeld?): kept, never fired.
                action = .stop(fadeOut: nil)
                last = ScheduleRun(at: row.handledThrough, result: .failed, message: "its action cannot be read: \(row.action)")
                return StoredSchedule(
                    schedule: Schedule(id: row.id, name: row.name, when: row.when, enabled: false, action: action, last: last),
                    handledThrough: row.handledThrough)
            }
            return StoredSchedule(
                schedule: Schedule(id: row.id, name: row.name, when: row.when, enabled: row.enabled, action: action, last: last),
                handledThrough: row.handledThrough)
        }
    }

    func addSchedule(_ stored: StoredSchedule) throws(ReelError) -> Int {
        try store.addSchedule(row(stored))
    }

    func saveSchedule(_ stored: StoredSchedule) throws(ReelError) {
        try store.updateSchedule(row(stored))
    }

    func removeSchedule(id: Int) throws(ReelError) {
        try store.removeSchedule(id: id)
    }

    private func row(_ stored: StoredSchedule) -> ScheduleRow {
        let schedule = stored.schedule
        return ScheduleRow(
            id: schedule.id, name: schedule.name, when: schedule.when, enabled: schedule.enabled, action: schedule.action.json.jsonString,
            handledThrough: stored.handledThrough, lastAt: schedule.last?.at, lastResult: schedule.last?.result.rawValue,
            lastMessage: schedule.last?.message, lastReason: schedule.last?.reason?.rawValue)
    }
}

/// Schedules in memory: for tests, and a daemon whose library cannot keep them.
public final class MemoryScheduleStorage: ScheduleStorage, @unchecked Sendable {
    private let rows = Locked([Int: StoredSchedule]())
    private let nextID = Locked(1)

    public init() {}

    public func loadSchedules() throws(ReelError) -> [StoredSchedule] {
        rows.withLock { $0.values.sorted { $0.schedule.id < $1.schedule.id } }
    }

    public func addSchedule(_ stored: StoredSchedule) throws(ReelError) -> Int {
        let id = nextID.withLock { id -> Int in
            defer { id += 1 }
            return id
        }
        var stored = stored
        stored.schedule.id = id
        rows.withLock { $0[id] = stored }
        return id
    }

    public func saveSchedule(_ stored: StoredSchedule) throws(ReelError) {
        rows.withLock { $0[stored.schedule.id] = stored }
    }

    public func removeSchedule(id: Int) throws(ReelError) {
        rows.withLock { $0[id] = nil }
    }
}
