import Foundation
import Logging
@testable import ReelCore
import ReelModel
import Testing

/// A wall clock the test sets: `advance` runs the timer's handler as the deadline would,
/// `set` as a clock setting would.
final class FakeScheduleClock: ScheduleClock, @unchecked Sendable {
    private let lock = NSLock()
    private var time: Double
    private var handler: (@Sendable (Bool) -> Void)?
    private(set) var deadline: Int64?

    init(_ time: Double) { self.time = time }

    func now() -> Double { lock.withLock { time } }
    func start(_ handler: @escaping @Sendable (Bool) -> Void) { lock.withLock { self.handler = handler } }
    func wake(at deadline: Int64?) { lock.withLock { self.deadline = deadline } }
    func stop() {}

    /// Moves to the deadline (or `to`) and fires, as the timer would.
    func advance(to target: Double? = nil) {
        let handler = lock.withLock { () -> (@Sendable (Bool) -> Void)? in
            time = target ?? Double(deadline ?? Int64(time))
            return self.handler
        }
        handler?(false)
    }

    /// Moves the time without firing (while no reeld runs).
    func setTime(_ target: Double) { lock.withLock { time = target } }

    func set(to target: Double) {
        let handler = lock.withLock { () -> (@Sendable (Bool) -> Void)? in
            time = target
            return self.handler
        }
        handler?(true)
    }
}

/// Answers every action at once with `result`, and remembers them.
final class FakePerformer: SchedulePerformer, @unchecked Sendable {
    private let lock = NSLock()
    private var done: [(ScheduleAction, Double?)] = []
    var result: Result<String, ReelError> = .success("done")

    var performed: [(ScheduleAction, Double?)] { lock.withLock { done } }

    func perform(_ action: ScheduleAction, scheduleID: Int, remaining: Double?, reply: @escaping @Sendable (Result<String, ReelError>) -> Void) {
        let result = lock.withLock { () -> Result<String, ReelError> in
            done.append((action, remaining))
            return self.result
        }
        reply(result)
    }
}

@Suite struct ScheduleControllerTests {
    static let day = Double(ScheduleBookTests.day)
    let storage = MemoryScheduleStorage()
    let clock = FakeScheduleClock(ScheduleControllerTests.day)
    let performer = FakePerformer()

    func controller() -> ScheduleController {
        let controller = ScheduleController(
            storage: storage, clock: clock, zone: ScheduleBookTests.utc, performer: performer, logger: Logger(label: "test"))
        controller.start()
        return controller
    }

    func add(_ controller: ScheduleController, _ when: String, _ action: ScheduleAction = ScheduleBookTests.play) throws -> Schedule {
        let done = Awaited<Result<Schedule, ReelError>>()
        controller.add(when: when, action: action, name: nil, enabled: true) { done.put($0) }
        return try #require(done.get()).get()
    }

    @Test func aScheduleFiresAtItsTimeAndSaysHowItWent() throws {
        let controller = controller()
        let added = try add(controller, "*-*-* 07:00")
        #expect(added.next == Int64(Self.day) + 7 * 3600)
        #expect(added.name == "play alarm.flac")
        #expect(clock.deadline == added.next)
        clock.advance()
        controller.flush()
        controller.flush()
        #expect(performer.performed.count == 1)
        let schedule = try #require(controller.schedules.first)
        #expect(schedule.last == ScheduleRun(at: added.next!, result: .ok, message: "done"))
        #expect(schedule.next == added.next! + 86_400)
        #expect(clock.deadline == schedule.next)
    }

    @Test func aFailureIsSavedWithItsReason() throws {
        performer.result = .failure(ReelError(.busy, "already recording /Take; stop it first (reel record stop)"))
        let controller = controller()
        _ = try add(controller, "*-*-* 20:00", .record(ScheduleRecord(duration: 10)))
        clock.advance()
        controller.flush()
        controller.flush()
        let last = try #require(controller.schedules.first?.last)
        #expect(last.result == .failed)
        #expect(last.reason == .busy)
        #expect(try storage.loadSchedules().first?.schedule.last == last)
    }

    @Test func aRestartAfterDowntimeStartsALateRecordingForWhatRemainsAndMissesAnAlarm() throws {
        do {
            let first = controller()
            _ = try add(first, "*-*-* 07:00")
            _ = try add(first, "*-*-* 07:00", .record(ScheduleRecord(duration: 3600)))
            first.shutdown()
        }
        // reeld comes back at 07:20.
        clock.setTime(Self.day + 7 * 3600 + 1200)
        let second = controller()
        second.flush()
        second.flush()
        let schedules = second.schedules
        #expect(schedules[0].last?.result == .missed)
        #expect(schedules[1].last?.result == .ok)
        #expect(schedules[1].last?.message.hasPrefix("started 20 min late") == true)
        #expect(performer.performed.count == 1)
        #expect(performer.performed.first?.1 == 2400)
        #expect(schedules.allSatisfy { $0.next == Int64(Self.day) + 86_400 + 7 * 3600 })
    }

    @Test func aClockSetBackAndForthFiresNothingTwice() throws {
        let controller = controller()
        _ = try add(controller, "*-*-* 07:00")
        clock.advance()
        controller.flush()
        clock.set(to: Self.day + 6 * 3600)
        controller.flush()
        clock.set(to: Self.day + 7 * 3600 + 10)
        controller.flush()
        controller.flush()
        #expect(performer.performed.count == 1)
        #expect(clock.deadline == Int64(Self.day) + 86_400 + 7 * 3600)
    }

    @Test func badInputIsAClearErrorAndChangesNothing() throws {
        let controller = controller()
        let done = Awaited<Result<Schedule, ReelError>>()
        controller.add(when: "Mon..Fry 7:00", action: ScheduleBookTests.play, name: nil, enabled: true) { done.put($0) }
        #expect(throws: ReelError(.outOfRange, "when: \"Fry\" is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)")) {
            try done.get()?.get()
        }
        let removed = Awaited<Result<Void, ReelError>>()
        controller.remove(id: 42) { removed.put($0) }
        #expect(throws: ReelError(.notFound, "no schedule with id 42")) { try removed.get()?.get() }
        #expect(controller.schedules.isEmpty)
        #expect(try storage.loadSchedules().isEmpty)
    }

    @Test func removingAndDisablingDisarm() throws {
        let controller = controller()
        let schedule = try add(controller, "*-*-* 07:00")
        let updated = Awaited<Result<Schedule, ReelError>>()
        controller.update(id: schedule.id, enabled: false) { updated.put($0) }
        #expect(try updated.get()?.get().next == nil)
        #expect(clock.deadline == nil)
        let removed = Awaited<Result<Void, ReelError>>()
        controller.remove(id: schedule.id) { removed.put($0) }
        _ = removed.get()
        #expect(controller.schedules.isEmpty)
    }
}

/// Schedules on a real core: kept in the library across a restart, fired by the real timer on
/// the wall clock, and a scheduled recording while a manual one runs.
@Suite(.serialized) struct ScheduleCoreTests {
    static func localWhen(_ instant: Int64) -> String {
        LocalDateTime(localSeconds: instant + Int64(SystemTimeZone().utcOffset(at: instant))).description
    }

    @Test func schedulesAreKeptInTheLibraryAcrossARestart() throws {
        let (core, directory) = try makeCore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        core.start(resume: .no)
        let added = Awaited<Result<Schedule, ReelError>>()
        core.schedules.add(
            when: "Mon..Fri 07:00", action: .play(SchedulePlay(target: .file("/x.flac"), volume: 30, fadeIn: 60, stopAfter: 3600)),
            name: "wake", enabled: true
        ) { added.put($0) }
        let schedule = try #require(added.get()).get()
        core.shutdown()
        let again = try makeCore(at: directory)
        again.start(resume: .no)
        defer { again.shutdown() }
        #expect(again.schedules.schedules == [schedule])
    }

    @Test func aScheduledRecordingWhileAManualOneRunsFailsBusyAndTheTimerWakesOnlyWhenDue() throws {
        let (core, directory) = try makeCore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        core.start(resume: .no)
        defer { core.shutdown() }
        let manual = Awaited<Result<RecorderState, ReelError>>()
        core.recorder.start(RecordingRequest(name: "manual")) { manual.put($0) }
        _ = try #require(manual.get()).get()
        let due = Int64(Date().timeIntervalSince1970) + 2
        let added = Awaited<Result<Schedule, ReelError>>()
        core.schedules.add(
            when: Self.localWhen(due), action: .record(ScheduleRecord(duration: 10, name: "show %Y")), name: nil, enabled: true
        ) { added.put($0) }
        #expect(try #require(added.get()).get().next == due)
        var last: ScheduleRun?
        let deadline = Date().addingTimeInterval(20)
        while last == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            last = core.schedules.schedules.first?.last
        }
        #expect(last?.result == .failed)
        #expect(last?.reason == .busy)
        #expect(last?.message.contains("already recording /manual") == true)
        #expect(core.recorder.state.item?.name == "manual")
    }
    @Test func aScheduledRecordingOfTenSecondsMakesAnItemOfTenSeconds() throws {
        let (core, directory) = try makeCore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        core.start(resume: .no)
        defer { core.shutdown() }
        let due = Int64(Date().timeIntervalSince1970) + 2
        let added = Awaited<Result<Schedule, ReelError>>()
        core.schedules.add(
            when: Self.localWhen(due), action: .record(ScheduleRecord(duration: 10, name: "show %Y")), name: nil, enabled: true
        ) { added.put($0) }
        _ = try #require(added.get()).get()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, core.schedules.schedules.first?.last == nil || core.recorder.isRecording {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let last = try #require(core.schedules.schedules.first?.last)
        #expect(last.result == .ok, "\(last.message)")
        let item = try #require(core.recorder.state.item)
        var parts = tm()
        var now = time(nil)
        localtime_r(&now, &parts)
        #expect(item.name == "show \(parts.tm_year + 1900)")
        let duration = try #require(item.duration)
        #expect(abs(duration - 10) <= 0.1, "\(duration) s")
    }
}
