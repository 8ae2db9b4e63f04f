// The schedules' rules as a value: what is next, what is due at a given time, what was missed.

import ReelModel

/// A schedule as saved: the schedule, and the last instant through which its firings are dealt
/// with (fired, missed, or before it was made or enabled). Nothing at or before
/// `handledThrough` fires again, whatever the clock does.
public struct StoredSchedule: Equatable, Sendable {
    public var schedule: Schedule
    public var handledThrough: Int64

    public init(schedule: Schedule, handledThrough: Int64) {
        self.schedule = schedule
        self.handledThrough = handledThrough
    }
}

/// Every schedule with its parsed `when` and its next firing, and the rules of firing: pure (the
/// time is given to each call, the zone at `init`), so that tests run days of schedules in
/// milliseconds. `ScheduleController` keeps one on its queue.
///
/// - `next` is the first firing after `handledThrough` (`CalendarExpression.next`), so a clock
///   set back fires nothing twice and a clock set forward makes what it jumped over due.
/// - `takeDue(now:)` deals with each schedule whose `next` has come: the latest of its firings
///   up to `now` is carried out if it is not too late (`Due.fire`), else it is `missed`; earlier
///   ones are passed over. An alarm (play, stop) more than `alarmGrace` late is missed; a
///   recording whose window is still open starts late for what remains.
public struct ScheduleBook: Sendable {
    /// How late an alarm (play or stop) may still fire: 5 minutes.
    public static let alarmGrace: Double = 300

    public let zone: any TimeZoneRules
    private var entries: [Int: Entry] = [:]

    struct Entry: Sendable {
        var stored: StoredSchedule
        var expression: CalendarExpression
    }

    /// What `takeDue` decided for one schedule.
    public enum Due: Equatable, Sendable {
        /// Carry out `action` now for the firing due at `at`, `late` seconds after it; a recording
        /// lasts `duration` (what remains of its window).
        case fire(id: Int, at: Int64, late: Double, action: ScheduleAction)
        /// Too late: `last` already says so.
        case missed(id: Int, at: Int64)
    }

    public init(zone: any TimeZoneRules) {
        self.zone = zone
    }

    /// Every schedule in id order, with `next` filled in.
    public var schedules: [Schedule] { entries.keys.sorted().compactMap { entries[$0]?.stored.schedule } }

    public func schedule(id: Int) -> Schedule? { entries[id]?.stored.schedule }

    public func stored(id: Int) -> StoredSchedule? { entries[id]?.stored }

    /// The earliest `next` of the enabled schedules: when the timer must wake.
    public var nextDeadline: Int64? { entries.values.compactMap(\.stored.schedule.next).min() }

    /// Parses `when`; a one-time that has passed or a time that never comes is an error.
    public func parse(_ when: String, now: Double) throws(ReelError) -> CalendarExpression {
        let expression: CalendarExpression
        do throws(CalendarExpressionError) {
            expression = try CalendarExpression(parsing: when)
        } catch {
            throw ReelError(.outOfRange, "when: \(error.message)")
        }
        guard expression.next(after: Self.whole(now), in: zone) != nil else {
            if let once = expression.oneTime {
                throw ReelError(.outOfRange, "when: \(once) has passed (it is \(CivilTime.iso8601(Self.whole(now), in: zone)) now)")
            }
            throw ReelError(.outOfRange, "when: \"\(when)\" never comes")
        }
        return expression
    }

    /// Puts a schedule in (a new one, or one loaded at start); `next` is planned from its
    /// `handledThrough`. A stored `when` that no longer parses keeps the schedule, disabled in
    /// effect (`next` nil), with `last` saying why.
    public mutating func insert(_ stored: StoredSchedule) {
        var stored = stored
        guard let expression = try? CalendarExpression(parsing: stored.schedule.when) else {
            stored.schedule.next = nil
            stored.schedule.last = ScheduleRun(
                at: stored.handledThrough, result: .failed, message: "\"\(stored.schedule.when)\" cannot be read as a time")
            entries[stored.schedule.id] = Entry(stored: stored, expression: (try? CalendarExpression(parsing: "2000-01-01 00:00"))!)
            return
        }
        var entry = Entry(stored: stored, expression: expression)
        plan(&entry)
        entries[stored.schedule.id] = entry
    }

    /// Changes what is given; a new `when`, or enabling, starts from `now` (what passed while it
    /// was disabled or meant another time does not fire).
    public mutating func update(
        id: Int, name: String?, when: String?, enabled: Bool?, action: ScheduleAction?, now: Double
    ) throws(ReelError) -> StoredSchedule {
        guard var entry = entries[id] else { throw ReelError(.notFound, "no schedule with id \(id)") }
        if let when {
            entry.expression = try parse(when, now: now)
            entry.stored.schedule.when = when
            entry.stored.handledThrough = max(entry.stored.handledThrough, Self.whole(now))
        }
        if let name { entry.stored.schedule.name = name }
        if let action { entry.stored.schedule.action = action }
        if let enabled {
            if enabled && !entry.stored.schedule.enabled {
                entry.stored.handledThrough = max(entry.stored.handledThrough, Self.whole(now))
            }
            entry.stored.schedule.enabled = enabled
        }
        plan(&entry)
        entries[id] = entry
        return entry.stored
    }

    @discardableResult
    public mutating func remove(id: Int) -> StoredSchedule? {
        entries.removeValue(forKey: id)?.stored
    }

    /// Sets how the firing went (after the action answered).
    public mutating func setLast(id: Int, _ run: ScheduleRun) -> StoredSchedule? {
        entries[id]?.stored.schedule.last = run
        return entries[id]?.stored
    }

    /// Deals with every schedule due at `now` (seconds since the epoch, wall clock): returns
    /// what to carry out and what was missed, each schedule's `handledThrough` moved to the
    /// firing dealt with and its `next` planned after it.
    public mutating func takeDue(now: Double) -> [Due] {
        var due: [Due] = []
        for id in entries.keys.sorted() {
            guard var entry = entries[id], entry.stored.schedule.enabled, let next = entry.stored.schedule.next, Double(next) <= now
            else { continue }
            let window: Double
            if case .record(let record) = entry.stored.schedule.action { window = record.duration } else { window = Self.alarmGrace }
            // The latest firing up to now; a long downtime starts the search a window before now.
            var at = next
            let searchFrom = Int64(now - window) - 86_400
            if at < searchFrom, let later = entry.expression.next(after: searchFrom, in: zone), Double(later) <= now { at = later }
            while let later = entry.expression.next(after: at, in: zone), Double(later) <= now { at = later }
            entry.stored.handledThrough = at
            let late = now - Double(at)
            if late < window {
                due.append(.fire(id: id, at: at, late: late, action: entry.stored.schedule.action))
            } else {
                entry.stored.schedule.last = ScheduleRun(at: at, result: .missed, message: Self.missedMessage(entry.stored.schedule.action, late: late))
                due.append(.missed(id: id, at: at))
            }
            plan(&entry)
            entries[id] = entry
        }
        return due
    }

    private func plan(_ entry: inout Entry) {
        entry.stored.schedule.next =
            entry.stored.schedule.enabled ? entry.expression.next(after: entry.stored.handledThrough, in: zone) : nil
    }

    static func missedMessage(_ action: ScheduleAction, late: Double) -> String {
        if case .record = action {
            return "missed: its window had closed when reeld could start it (\(spoken(late)) late; reeld was not running or the clock was changed)"
        }
        return "missed: \(spoken(late)) late, more than 5 min (reeld was not running or the clock was changed)"
    }

    /// Whole seconds, rounded down (the instant a time belongs to).
    static func whole(_ time: Double) -> Int64 { Int64(time.rounded(.down)) }

    /// `45 s`, `4 min 10 s`, `3 h 12 min`, `2 d 3 h`.
    public static func spoken(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return total % 60 == 0 ? "\(total / 60) min" : "\(total / 60) min \(total % 60) s" }
        if total < 86_400 { return total / 60 % 60 == 0 ? "\(total / 3600) h" : "\(total / 3600) h \(total / 60 % 60) min" }
        return total / 3600 % 24 == 0 ? "\(total / 86_400) d" : "\(total / 86_400) d \(total / 3600 % 24) h"
    }
}
