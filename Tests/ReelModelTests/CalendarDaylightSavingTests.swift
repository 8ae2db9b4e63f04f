import ReelModel
import Testing

/// The planner on the days the clocks change, in the system's tzdata (Europe/Berlin and
/// America/New_York in 2026): a skipped time fires at the end of the gap, a repeated time at its
/// first occurrence only, and a planner started anywhere (a restart) finds the same instants.
@Suite struct CalendarDaylightSavingTests {
    let berlin = NamedTimeZone("Europe/Berlin")!
    let newYork = NamedTimeZone("America/New_York")!

    static func utc(_ text: String) -> Int64 {
        // "2026-03-29 01:00:00" read as UTC.
        let parts = text.split(whereSeparator: { "- :".contains($0) }).map { Int($0)! }
        return LocalDateTime(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4], second: parts[5]).localSeconds
    }

    /// The firings of `text` after `from` (UTC) in `zone`, as local ISO-8601 with the offset.
    func firings(_ text: String, in zone: any TimeZoneRules, after from: String, count: Int) throws -> [String] {
        let expression = try CalendarExpression(parsing: text)
        var instant = Self.utc(from)
        var found: [String] = []
        for _ in 0..<count {
            guard let next = expression.next(after: instant, in: zone) else { break }
            #expect(next > instant)
            found.append(CivilTime.iso8601(next, in: zone))
            instant = next
        }
        return found
    }

    @Test func theZonesAreInTheTzdata() {
        #expect(NamedTimeZone("Europe/Berlin") != nil)
        #expect(NamedTimeZone("Nowhere/Atlantis") == nil)
        #expect(berlin.utcOffset(at: Self.utc("2026-01-15 12:00:00")) == 3600)
        #expect(berlin.utcOffset(at: Self.utc("2026-07-15 12:00:00")) == 7200)
    }

    @Test func berlinSpringForwardASkippedTimeFiresAtTheEndOfTheGap() throws {
        // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00 UTC).
        #expect(try firings("*-*-* 02:30", in: berlin, after: "2026-03-27 12:00:00", count: 4) == [
            "2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00",
        ])
        // Every quarter hour: the four times of the gap fire once, together, at 03:00.
        #expect(try firings("*:0/15", in: berlin, after: "2026-03-29 00:30:00", count: 4) == [
            "2026-03-29T01:45:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T03:15:00+02:00", "2026-03-29T03:30:00+02:00",
        ])
        // A time after the gap on that day is not moved.
        #expect(try firings("*-*-* 03:30", in: berlin, after: "2026-03-28 12:00:00", count: 1) == ["2026-03-29T03:30:00+02:00"])
    }

    @Test func berlinFallBackARepeatedTimeFiresAtItsFirstOccurrenceOnly() throws {
        // 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00 UTC); 02:00-02:59 happens twice.
        #expect(try firings("*-*-* 02:30", in: berlin, after: "2026-10-24 12:00:00", count: 3) == [
            "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00", "2026-10-27T02:30:00+01:00",
        ])
        #expect(try firings("hourly", in: berlin, after: "2026-10-24 23:30:00", count: 3) == [
            "2026-10-25T02:00:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T04:00:00+01:00",
        ])
    }

    @Test func aPlannerStartedInTheRepeatedHourDoesNotFireItAgain() throws {
        // A restart at 02:15 CET (the second 02:15): 02:30 fired at its first occurrence an hour ago.
        #expect(try firings("*-*-* 02:30", in: berlin, after: "2026-10-25 01:15:00", count: 1) == ["2026-10-26T02:30:00+01:00"])
        // A restart at 02:15 CEST (the first pass): 02:30 CEST is still ahead.
        #expect(try firings("*-*-* 02:30", in: berlin, after: "2026-10-25 00:15:00", count: 1) == ["2026-10-25T02:30:00+02:00"])
        // A restart inside the gap's day, after it: the next is tomorrow's.
        #expect(try firings("*-*-* 02:30", in: berlin, after: "2026-03-29 01:00:00", count: 1) == ["2026-03-30T02:30:00+02:00"])
    }

    @Test func newYorkSpringForward() throws {
        // 2026-03-08: 02:00 EST becomes 03:00 EDT (07:00 UTC).
        #expect(try firings("Sun 02:30", in: newYork, after: "2026-03-01 12:00:00", count: 2) == [
            "2026-03-08T03:00:00-04:00", "2026-03-15T02:30:00-04:00",
        ])
        #expect(try firings("*-*-* 02:00:00", in: newYork, after: "2026-03-07 12:00:00", count: 2) == [
            "2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00",
        ])
    }

    @Test func newYorkFallBack() throws {
        // 2026-11-01: 02:00 EDT becomes 01:00 EST (06:00 UTC); 01:00-01:59 happens twice.
        #expect(try firings("*-*-* 01:30", in: newYork, after: "2026-10-31 12:00:00", count: 2) == [
            "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00",
        ])
        #expect(try firings("*:0/30", in: newYork, after: "2026-11-01 04:50:00", count: 5) == [
            "2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00",
            "2026-11-01T02:30:00-05:00", "2026-11-01T03:00:00-05:00",
        ])
        // A one-time in the repeated hour: its first occurrence.
        #expect(try firings("2026-11-01 01:15", in: newYork, after: "2026-10-31 12:00:00", count: 2) == ["2026-11-01T01:15:00-04:00"])
        // A one-time in a gap: the end of it.
        #expect(try firings("2026-03-08 02:10:30", in: newYork, after: "2026-03-01 12:00:00", count: 1) == ["2026-03-08T03:00:00-04:00"])
    }

    @Test func everyMinuteAcrossBothTransitionsNeverRepeatsOrGoesBack() throws {
        for (zone, from) in [(berlin, "2026-03-29 00:00:00"), (berlin, "2026-10-25 00:00:00"), (newYork, "2026-03-08 06:00:00"), (newYork, "2026-11-01 04:00:00")] {
            let expression = try CalendarExpression(parsing: "minutely")
            var instant = Self.utc(from)
            var fired: [Int64] = []
            for _ in 0..<240 {
                let next = try #require(expression.next(after: instant, in: zone))
                fired.append(next)
                instant = next
            }
            #expect(zip(fired, fired.dropFirst()).allSatisfy { $0 < $1 })
            // Four hours of minutes, less the skipped hour or without the repeated one: never 60 s apart across it twice.
            #expect(fired.allSatisfy { $0 % 60 == 0 })
        }
    }
}
