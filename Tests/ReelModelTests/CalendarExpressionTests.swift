import ReelModel
import Testing

@Suite struct CalendarExpressionTests {
    let utc = FixedOffsetZone(seconds: 0)

    /// 2026-12-01 (a Tuesday) 00:00:00 UTC.
    let tuesday: Int64 = 1_796_083_200

    func next(_ text: String, after instant: Int64, count: Int = 1) throws -> [String] {
        let expression = try CalendarExpression(parsing: text)
        var instant = instant
        var found: [String] = []
        for _ in 0..<count {
            guard let next = expression.next(after: instant, in: utc) else { break }
            found.append(CivilTime.iso8601(next, in: utc))
            instant = next
        }
        return found
    }

    @Test func oneTimeFiresOnceToTheMinuteOrSecond() throws {
        #expect(try next("2026-12-01 07:30", after: tuesday, count: 3) == ["2026-12-01T07:30:00+00:00"])
        #expect(try next("2026-12-01 07:30:15", after: tuesday) == ["2026-12-01T07:30:15+00:00"])
        #expect(try next("2026-12-01 07:30", after: tuesday + 8 * 3600) == [])
        #expect(try CalendarExpression(parsing: "2026-12-01 07:30").isOneTime)
        #expect(try !CalendarExpression(parsing: "Mon..Fri 07:00").isOneTime)
    }

    @Test func weekdaysWithATime() throws {
        #expect(try next("Mon..Fri 07:00", after: tuesday, count: 5) == [
            "2026-12-01T07:00:00+00:00", "2026-12-02T07:00:00+00:00", "2026-12-03T07:00:00+00:00",
            "2026-12-04T07:00:00+00:00", "2026-12-07T07:00:00+00:00",
        ])
        #expect(try next("Sat,Sun 09:30", after: tuesday, count: 3) == [
            "2026-12-05T09:30:00+00:00", "2026-12-06T09:30:00+00:00", "2026-12-12T09:30:00+00:00",
        ])
        #expect(try next("monday,Wed..fri 7:05:09", after: tuesday, count: 2) == ["2026-12-02T07:05:09+00:00", "2026-12-03T07:05:09+00:00"])
    }

    @Test func shorthandsAndWildcards() throws {
        #expect(try next("*-*-* 06:30", after: tuesday, count: 2) == ["2026-12-01T06:30:00+00:00", "2026-12-02T06:30:00+00:00"])
        #expect(try next("daily", after: tuesday, count: 2) == ["2026-12-02T00:00:00+00:00", "2026-12-03T00:00:00+00:00"])
        #expect(try next("weekly", after: tuesday) == ["2026-12-07T00:00:00+00:00"])
        #expect(try next("monthly", after: tuesday) == ["2027-01-01T00:00:00+00:00"])
        #expect(try next("hourly", after: tuesday, count: 2) == ["2026-12-01T01:00:00+00:00", "2026-12-01T02:00:00+00:00"])
        #expect(try next("*:0/20", after: tuesday, count: 4) == [
            "2026-12-01T00:20:00+00:00", "2026-12-01T00:40:00+00:00", "2026-12-01T01:00:00+00:00", "2026-12-01T01:20:00+00:00",
        ])
        #expect(try next("*-*-1,15 08..18/5:00", after: tuesday, count: 4) == [
            "2026-12-01T08:00:00+00:00", "2026-12-01T13:00:00+00:00", "2026-12-01T18:00:00+00:00", "2026-12-15T08:00:00+00:00",
        ])
        #expect(try next("12-25 08:00", after: tuesday) == ["2026-12-25T08:00:00+00:00"])
        #expect(try next("Fri *-*-13", after: tuesday) == ["2027-08-13T00:00:00+00:00"])
        #expect(try next("*-02-29 12:00", after: tuesday) == ["2028-02-29T12:00:00+00:00"])
    }

    @Test func aTimeThatNeverComesIsNil() throws {
        #expect(try next("*-02-30 12:00", after: tuesday) == [])
        #expect(try next("Mon 2026-12-01", after: tuesday) == [])  // a Tuesday
    }

    @Test(arguments: [
        ("", "the time is empty"),
        ("Mon..Fry 07:00", "\"Fry\" is not a weekday"),
        ("Fri..Mon 07:00", "a range of weekdays goes from Monday towards Sunday"),
        ("25:00", "hour 25 is out of range (0..23)"),
        ("07:60", "minute 60 is out of range (0..59)"),
        ("2026-13-01 07:00", "month 13 is out of range (1..12)"),
        ("2026-02-30 07:00", "2026-02-30 is not a date: that month has 28 days"),
        ("07.30", "\"07.30\" is not a weekday (Mon..Sun), a date (2026-12-01, *-*-*) or a time (07:30)"),
        ("07:30 Mon", "weekdays come first"),
        ("07:30 2026-12-01", "the date goes before the time"),
        ("07:30 08:30", "has two times"),
        ("daily 07:00", "\"daily\" stands alone"),
        ("Mon daily", "\"daily\" stands alone"),
        ("7:30:15.5", "fractions of a second are not taken"),
        ("*-*-~1", "the end of a month"),
        ("@1700000000", "Unix times are not taken"),
        ("*:*/0", "\"0\" is not a step"),
        ("10..5:00", "the range 10..5 goes backwards"),
        ("a:00", "\"a\" is not a valid hour"),
        ("1:2:3:4", "is not a time"),
        ("2026-12", "month 2026 is out of range"),
        ("1-2-3-4", "is not a date"),
        ("Mon Tue Wed Thu", "has 4 parts"),
    ])
    func badTextIsAnErrorNamingThePart(text: String, message: String) {
        do {
            let parsed = try CalendarExpression(parsing: text)
            Issue.record("\"\(text)\" parsed as \(parsed)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }
}
