// The schedules: kept in the library, planned on the wall clock, fired by one timer.

import Dispatch
import Logging
import ReelAudio
import ReelModel

/// Carries out a schedule's action (`ScheduleActions` on the player and recorder; a fake in
/// tests). `remaining` is how long a recording lasts (what is left of its window). The reply
/// says in words what was done, or the error; it may be called on any thread.
public protocol SchedulePerformer: Sendable {
    func perform(
        _ action: ScheduleAction, scheduleID: Int, remaining: Double?, reply: @escaping @Sendable (Result<String, ReelError>) -> Void)
}

/// The schedules (`schedules.*` in `protocol.md`): add, change, remove, list, and the firing.
///
/// One timer (`ScheduleClock`) is armed for the earliest `next` of all schedules; nothing polls.
/// When it fires, or the wall clock is set, `ScheduleBook.takeDue` says what is due now, what is
/// carried out late and what was missed; each is saved, carried out, and its result saved as
/// `last`. At `start`, the same call deals with what fell due while reeld was not running.
///
/// Threads: every method may be called from any thread; the book, the storage and the timer's
/// deadline are touched on `queue` (`reel.schedules`) only, and replies are called there.
/// Every change is published to `changes` (the whole list, built once), which front ends take
/// on their own threads.
public final class ScheduleController: @unchecked Sendable {
    public typealias Reply<Value> = @Sendable (Result<Value, ReelError>) -> Void

    /// Every schedule, after each change (an add, an edit, a firing and its result).
    public let changes = StateFeed<[Schedule]>([])
    /// The zone `when` is read in and `next` is written in.
    public let zone: any TimeZoneRules

    let queue = DispatchQueue(label: "reel.schedules")
    private let storage: any ScheduleStorage
    private let clock: any ScheduleClock
    private let performer: any SchedulePerformer
    private let logger: Logger
    /// Only on `queue`.
    private var book: ScheduleBook

    public init(
        storage: any ScheduleStorage, clock: any ScheduleClock, zone: any TimeZoneRules, performer: any SchedulePerformer,
        logger: Logger
    ) {
        self.storage = storage
        self.clock = clock
        self.zone = zone
        self.performer = performer
        self.logger = logger
        book = ScheduleBook(zone: zone)
    }

    /// Loads the schedules, deals with what fell due while reeld was down, and arms the timer.
    public func start() {
        queue.sync {
            do throws(ReelError) {
                for stored in try storage.loadSchedules() { book.insert(stored) }
            } catch {
                logger.error("cannot read the schedules; none will fire", metadata: ["error": "\(error.message)"])
            }
            clock.start { [weak self] clockSet in
                guard let self else { return }
                queue.async { self.wake(clockSet: clockSet) }
            }
            wake(clockSet: false)
            changed()
        }
    }

    public func shutdown() {
        clock.stop()
    }

    /// Every schedule, in id order. Any thread.
    public var schedules: [Schedule] { changes.latest.value }

    /// Adds a schedule; `when` is checked (`out_of_range` naming what is wrong) and the first
    /// firing is after now.
    public func add(when: String, action: ScheduleAction, name: String?, enabled: Bool, reply: @escaping Reply<Schedule>) {
        queue.async { [self] in
            do throws(ReelError) {
                let now = clock.now()
                _ = try book.parse(when, now: now)
                var stored = StoredSchedule(
                    schedule: Schedule(id: 0, name: name ?? Self.defaultName(action), when: when, enabled: enabled, action: action),
                    handledThrough: ScheduleBook.whole(now))
                stored.schedule.id = try storage.addSchedule(stored)
                book.insert(stored)
                logger.info("schedule added", metadata: ["id": "\(stored.schedule.id)", "when": "\(when)"])
                changed()
                reply(.success(book.schedule(id: stored.schedule.id)!))
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// Changes what is given (nil: kept). A new `when` or enabling plans from now on.
    public func update(
        id: Int, name: String? = nil, when: String? = nil, enabled: Bool? = nil, action: ScheduleAction? = nil,
        reply: @escaping Reply<Schedule>
    ) {
        queue.async { [self] in
            do throws(ReelError) {
                var changedBook = book
                let stored = try changedBook.update(id: id, name: name, when: when, enabled: enabled, action: action, now: clock.now())
                try storage.saveSchedule(stored)
                book = changedBook
                changed()
                reply(.success(stored.schedule))
            } catch {
                reply(.failure(error))
            }
        }
    }

    public func remove(id: Int, reply: @escaping Reply<Void>) {
        queue.async { [self] in
            do throws(ReelError) {
                guard book.schedule(id: id) != nil else { throw ReelError(.notFound, "no schedule with id \(id)") }
                try storage.removeSchedule(id: id)
                book.remove(id: id)
                changed()
                reply(.success(()))
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// Waits until what was asked before has been dealt with (tests).
    func flush() { queue.sync {} }

    // MARK: Firing (on `queue`)

    private func wake(clockSet: Bool) {
        let now = clock.now()
        if clockSet { logger.notice("the wall clock was set; schedules planned again") }
        let due = book.takeDue(now: now)
        for item in due {
            switch item {
            case .missed(let id, let at):
                logger.warning("schedule missed", metadata: ["id": "\(id)", "at": "\(CivilTime.iso8601(at, in: zone))"])
                save(id)
            case .fire(let id, let at, let late, let action):
                save(id)
                fire(id: id, at: at, late: late, action: action)
            }
        }
        clock.wake(at: book.nextDeadline)
        if !due.isEmpty || clockSet { changed() }
    }

    private func fire(id: Int, at: Int64, late: Double, action: ScheduleAction) {
        var remaining: Double?
        var lateness = ""
        if case .record(let record) = action {
            remaining = record.duration - late
            if late >= 1 {
                lateness = "started \(ScheduleBook.spoken(late)) late (reeld was not running or the clock was changed): "
                    + "recording the remaining \(ScheduleBook.spoken(record.duration - late)); "
            }
        } else if late >= 1 {
            lateness = "\(ScheduleBook.spoken(late)) late; "
        }
        logger.info("schedule fires", metadata: ["id": "\(id)", "at": "\(CivilTime.iso8601(at, in: zone))", "late": "\(late)"])
        let prefix = lateness
        performer.perform(action, scheduleID: id, remaining: remaining) { [weak self] result in
            guard let self else { return }
            queue.async {
                let run: ScheduleRun =
                    switch result {
                    case .success(let message): ScheduleRun(at: at, result: .ok, message: prefix + message)
                    case .failure(let error): ScheduleRun(at: at, result: .failed, message: prefix + error.message, reason: error.reason)
                    }
                if run.result == .failed {
                    self.logger.warning("schedule failed", metadata: ["id": "\(id)", "error": "\(run.message)"])
                }
                guard self.book.setLast(id: id, run) != nil else { return }
                self.save(id)
                self.changed()
            }
        }
    }

    private func save(_ id: Int) {
        guard let stored = book.stored(id: id) else { return }
        do throws(ReelError) {
            try storage.saveSchedule(stored)
        } catch {
            logger.error("cannot save a schedule", metadata: ["id": "\(id)", "error": "\(error.message)"])
        }
    }

    private func changed() {
        clock.wake(at: book.nextDeadline)
        changes.publish(book.schedules)
    }

    static func defaultName(_ action: ScheduleAction) -> String {
        switch action {
        case .play(let play):
            switch play.target {
            case .url(let url): "play \(url)"
            case .file(let path): "play \(path.split(separator: "/").last.map(String.init) ?? path)"
            case .item(let id): "play item \(id)"
            case .playlist(let name): "play playlist \(name)"
            case .album(let album): "play album \(album)"
            }
        case .record(let record): "record \(ScheduleBook.spoken(record.duration))"
        case .stop: "stop"
        }
    }
}
