import ReelCore
import ReelModel
import Testing

/// The schedules' rules with the time given to each call: a day of firing in milliseconds,
/// downtime, clock jumps, restarts and the days the clocks change.
@Suite struct ScheduleBookTests {
    static let utc = FixedOffsetZone(seconds: 0)
    /// 2026-12-01 (a Tuesday) 00:00:00 UTC.
    static let day: Int64 = 1_796_083_200

    static let play = ScheduleAction.play(SchedulePlay(target: .file("/music/alarm.flac")))

    func book(_ whens: [String], action: ScheduleAction = play, from start: Int64 = day, zone: any TimeZoneRules = utc) -> ScheduleBook {
        var book = ScheduleBook(zone: zone)
        for (index, when) in whens.enumerated() {
            book.insert(
                StoredSchedule(schedule: Schedule(id: index + 1, name: when, when: when, enabled: true, action: action), handledThrough: start))
        }
        return book
    }

    @Test func aDayOfFiftySchedulesFiresEachOnTimeOnceAndNeverEarly() throws {
        let whens = (0..<50).map { index -> String in
            switch index % 5 {
            case 0: "*:\(index)/15"
            case 1: "Mon..Fri \(index % 24):\(index)"
            case 2: "hourly"
            case 3: "*-*-* \(index % 24):00:\(index % 60)"
            default: "Tue \(index % 24):\(index):30"
            }
        }
        var book = book(whens)
        var fired: [Int: [Int64]] = [:]
        var now = Double(Self.day)
        while let deadline = book.nextDeadline, deadline < Self.day + 86_400 {
            #expect(Double(deadline) > now || fired.isEmpty)
            now = Double(deadline)
            for due in book.takeDue(now: now) {
                guard case .fire(let id, let at, let late, _) = due else {
                    Issue.record("\(due) missed on time")
                    continue
                }
                #expect(late == 0)
                fired[id, default: []].append(at)
            }
        }
        for (index, when) in whens.enumerated() {
            let expression = try CalendarExpression(parsing: when)
            var expected: [Int64] = []
            var instant = Self.day
            while let next = expression.next(after: instant, in: Self.utc), next < Self.day + 86_400 {
                expected.append(next)
                instant = next
            }
            #expect(fired[index + 1] ?? [] == expected, "\(when)")
        }
        #expect(fired.values.map(\.count).reduce(0, +) > 50 * 2)
    }

    @Test func anAlarmUpToFiveMinutesLateFiresAndLaterIsMissed() {
        var late = book(["*-*-* 07:00"])
        let seven = Self.day + 7 * 3600
        #expect(late.takeDue(now: Double(seven + 240)) == [.fire(id: 1, at: seven, late: 240, action: Self.play)])
        var missed = book(["*-*-* 07:00"])
        #expect(missed.takeDue(now: Double(seven + 301)) == [.missed(id: 1, at: seven)])
        #expect(missed.schedule(id: 1)?.last?.result == .missed)
        #expect(missed.schedule(id: 1)?.last?.message.contains("5 min 1 s late") == true)
        #expect(missed.schedule(id: 1)?.next == seven + 86_400)
    }

    @Test func aRecordingWhoseWindowIsOpenStartsLateAndOneWhoseWindowClosedIsMissed() {
        let record = ScheduleAction.record(ScheduleRecord(duration: 3600))
        let eight = Self.day + 20 * 3600
        var open = book(["Tue 20:00"], action: record)
        #expect(open.takeDue(now: Double(eight + 720)) == [.fire(id: 1, at: eight, late: 720, action: record)])
        var closed = book(["Tue 20:00"], action: record)
        #expect(closed.takeDue(now: Double(eight + 3601)) == [.missed(id: 1, at: eight)])
        #expect(closed.schedule(id: 1)?.last?.message.contains("window had closed") == true)
    }

    @Test func aLongDowntimeDealsOnlyWithTheLatestFiring() {
        var book = book(["*:0/15"])
        // Three days down: one firing dealt with (the last, missed), not 288.
        let due = book.takeDue(now: Double(Self.day + 3 * 86_400 + 600))
        #expect(due == [.missed(id: 1, at: Self.day + 3 * 86_400)])
        #expect(book.schedule(id: 1)?.next == Self.day + 3 * 86_400 + 900)
    }

    @Test func aClockSetBackFiresNothingTwice() {
        var book = book(["*-*-* 07:00"])
        let seven = Self.day + 7 * 3600
        #expect(book.takeDue(now: Double(seven)).count == 1)
        // The clock goes back to 06:30 and runs through 07:00 again.
        #expect(book.takeDue(now: Double(seven - 1800)).isEmpty)
        #expect(book.takeDue(now: Double(seven)).isEmpty)
        #expect(book.nextDeadline == seven + 86_400)
    }

    @Test func aClockSetForwardMakesWhatItJumpedOverDueOnceAndNothingEarly() {
        var book = book(["*-*-* 07:00", "*-*-* 07:10", "*-*-* 12:00"])
        let seven = Self.day + 7 * 3600
        // Nothing is due a second before.
        #expect(book.takeDue(now: Double(seven) - 0.001).isEmpty)
        // From 06:00 to 07:12: the 07:00 alarm is 12 min late (missed), 07:10 fires 2 min late, 12:00 waits.
        let due = book.takeDue(now: Double(seven + 720))
        #expect(due == [.missed(id: 1, at: seven), .fire(id: 2, at: seven + 600, late: 120, action: Self.play)])
        #expect(book.nextDeadline == Self.day + 12 * 3600)
    }

    @Test func aRestartInTheMiddleKeepsWhatWasDealtWith() throws {
        var before = book(["*:0/15", "*-*-* 07:00"])
        let seven = Self.day + 7 * 3600
        _ = before.takeDue(now: Double(seven))
        // Saved and loaded by another reeld a minute later: the same plan, nothing fired again.
        var after = ScheduleBook(zone: Self.utc)
        for id in [1, 2] { after.insert(try #require(before.stored(id: id))) }
        #expect(after.schedules == before.schedules)
        #expect(after.takeDue(now: Double(seven + 60)).isEmpty)
        #expect(after.nextDeadline == seven + 900)
    }

    @Test func enablingDoesNotFireWhatPassedWhileDisabled() throws {
        var book = book(["*-*-* 07:00"])
        _ = try book.update(id: 1, name: nil, when: nil, enabled: false, action: nil, now: Double(Self.day))
        #expect(book.nextDeadline == nil)
        #expect(book.takeDue(now: Double(Self.day + 7 * 3600 + 60)).isEmpty)
        let enabled = try book.update(id: 1, name: nil, when: nil, enabled: true, action: nil, now: Double(Self.day + 7 * 3600 + 60))
        #expect(enabled.schedule.next == Self.day + 86_400 + 7 * 3600)
    }

    @Test func aBadOrPastWhenIsAnErrorThatChangesNothing() {
        let book = book([])
        #expect(throws: ReelError(.outOfRange, "when: \"Fry\" is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)")) {
            try book.parse("Mon..Fry 07:00", now: Double(Self.day))
        }
        #expect(throws: ReelError(.outOfRange, "when: 2026-11-30 07:00:00 has passed (it is 2026-12-01T00:00:00+00:00 now)")) {
            try book.parse("2026-11-30 07:00", now: Double(Self.day))
        }
        #expect(throws: ReelError(.outOfRange, "when: \"*-02-30\" never comes")) { try book.parse("*-02-30", now: Double(Self.day)) }
        #expect(book.schedules.isEmpty)
    }

    @Test func berlinsSkippedAndRepeatedHoursThroughTheBook() throws {
        let berlin = try #require(NamedTimeZone("Europe/Berlin"))
        // 2026-03-28 12:00 UTC; daily 02:30 fires at 03:00 CEST on the 29th.
        let saturday = LocalDateTime(year: 2026, month: 3, day: 28, hour: 12).localSeconds
        var spring = book(["*-*-* 02:30"], from: saturday, zone: berlin)
        let gapEnd = LocalDateTime(year: 2026, month: 3, day: 29, hour: 1).localSeconds
        #expect(spring.nextDeadline == gapEnd)
        #expect(spring.takeDue(now: Double(gapEnd)).count == 1)
        #expect(CivilTime.iso8601(try #require(spring.nextDeadline), in: berlin) == "2026-03-30T02:30:00+02:00")
        // 2026-10-25: 02:30 CEST fires; the second 02:30 (CET) does not.
        let october = LocalDateTime(year: 2026, month: 10, day: 24, hour: 12).localSeconds
        var autumn = book(["*-*-* 02:30"], from: october, zone: berlin)
        let first = LocalDateTime(year: 2026, month: 10, day: 25, hour: 0, minute: 30).localSeconds
        #expect(autumn.nextDeadline == first)
        #expect(autumn.takeDue(now: Double(first)).count == 1)
        #expect(autumn.takeDue(now: Double(first + 3600)).isEmpty)
        #expect(CivilTime.iso8601(try #require(autumn.nextDeadline), in: berlin) == "2026-10-26T02:30:00+01:00")
    }
}
