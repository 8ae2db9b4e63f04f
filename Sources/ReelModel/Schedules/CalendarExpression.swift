// A schedule's `when`: one time, or the part of systemd's OnCalendar= syntax people write.

/// When a schedule fires, parsed from its text (`when` in `protocol.md`):
///
/// - one time: `2026-12-01 07:30` or `2026-12-01 07:30:15`;
/// - a shorthand: `minutely`, `hourly`, `daily`, `weekly` (Monday 00:00), `monthly` (the 1st,
///   00:00), `yearly`/`annually` (1 January, 00:00);
/// - `[WEEKDAYS] [DATE] [TIME]`, at least one of them, as systemd's `OnCalendar=` writes them:
///   WEEKDAYS a comma list of days or ranges (`Mon..Fri`, `Sat,Sun`, `Mon,Wed..Fri`; English,
///   short or long, any case); DATE `YEAR-MONTH-DAY` or `MONTH-DAY`; TIME `HOUR:MINUTE` or
///   `HOUR:MINUTE:SECOND`. Each number may be `*` (any), a value, a comma list, a range `a..b`
///   or a repetition `a/step`, `*/step` or `a..b/step` (`*:0/15`: every quarter hour). An
///   omitted date is every day, an omitted time is 00:00:00, omitted seconds are 0.
///
/// Times are on the wall clock of the zone the schedule is planned in; see `next(after:in:)`
/// for days the clocks change. Not taken (an error names it): systemd's `~` (days from the end
/// of a month), time zone suffixes, fractions of a second, Unix times (`@…`).
public struct CalendarExpression: Equatable, Sendable, CustomStringConvertible {
    /// The text as written (leading and trailing spaces removed).
    public let text: String
    /// ISO weekdays (1 Monday … 7 Sunday); nil: any day.
    let weekdays: Set<Int>?
    let years: FieldValues
    let months: FieldValues
    let days: FieldValues
    let hours: FieldValues
    let minutes: FieldValues
    let seconds: FieldValues

    public var description: String { text }

    /// One date and time, which happens once (`2026-12-01 07:30`); the rest repeat.
    public var isOneTime: Bool {
        weekdays == nil && [years, months, days, hours, minutes, seconds].allSatisfy { $0.single != nil }
    }

    /// The wall-clock time of a one-time expression.
    public var oneTime: LocalDateTime? {
        guard isOneTime, let y = years.single, let mo = months.single, let d = days.single, let h = hours.single,
            let mi = minutes.single, let s = seconds.single
        else { return nil }
        return LocalDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }

    /// Parses `text`; throws a `CalendarExpressionError` naming the part that is wrong.
    public init(parsing text: String) throws(CalendarExpressionError) {
        self = try CalendarParser(text).parse()
    }

    init(
        text: String, weekdays: Set<Int>?, years: FieldValues, months: FieldValues, days: FieldValues,
        hours: FieldValues, minutes: FieldValues, seconds: FieldValues
    ) {
        self.text = text
        self.weekdays = weekdays
        self.years = years
        self.months = months
        self.days = days
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }
}

/// What is wrong with a `when`, as a sentence that names the part (`"Fry" is not a weekday`).
public struct CalendarExpressionError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The values one field of a calendar expression takes: any, or a sorted list.
struct FieldValues: Equatable, Sendable {
    /// Sorted ascending without repeats; nil: every value of the field.
    let values: [Int]?

    static let any = FieldValues(values: nil)

    var single: Int? { values?.count == 1 ? values?.first : nil }

    func contains(_ value: Int) -> Bool { values.map { $0.contains(value) } ?? true }

    /// The values in `range`, in order.
    func each(in range: ClosedRange<Int>) -> [Int] {
        guard let values else { return Array(range) }
        return values.filter { range.contains($0) }
    }
}
