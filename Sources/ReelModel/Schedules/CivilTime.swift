// Calendar arithmetic on days and seconds since 1970-01-01, proleptic Gregorian, no time zone.

/// A date and time of day as a clock on the wall shows it (no zone): what a schedule's `when`
/// names. Pure arithmetic; safe on any thread.
public struct LocalDateTime: Equatable, Comparable, Sendable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The wall-clock value as seconds since 1970-01-01 00:00:00 of the same wall clock.
    public var localSeconds: Int64 {
        Int64(CivilTime.days(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    public init(localSeconds: Int64) {
        let days = CivilTime.floorDivide(localSeconds, 86_400)
        let secondOfDay = Int(localSeconds - days * 86_400)
        let (y, m, d) = CivilTime.date(days: Int(days))
        self.init(year: y, month: m, day: d, hour: secondOfDay / 3600, minute: secondOfDay / 60 % 60, second: secondOfDay % 60)
    }

    public static func < (a: LocalDateTime, b: LocalDateTime) -> Bool { a.localSeconds < b.localSeconds }

    /// `2026-12-01 07:30:00`.
    public var description: String {
        "\(CivilTime.pad(year, 4))-\(CivilTime.pad(month))-\(CivilTime.pad(day)) \(CivilTime.pad(hour)):\(CivilTime.pad(minute)):\(CivilTime.pad(second))"
    }
}

/// Days since the epoch from a date and back (Howard Hinnant's `days_from_civil`), weekdays,
/// month lengths and ISO-8601 text.
public enum CivilTime {
    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    /// Days from 1970-01-01 to the given date.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01.
    public static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// ISO weekday of the day `days` after 1970-01-01 (a Thursday): 1 is Monday, 7 Sunday.
    public static func weekday(days: Int) -> Int {
        ((days % 7 + 7 + 3) % 7) + 1
    }

    public static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// `instant` (seconds since the epoch, UTC) as local ISO-8601 with its offset in `zone`:
    /// `2026-12-01T07:30:00+01:00`.
    public static func iso8601(_ instant: Int64, in zone: any TimeZoneRules) -> String {
        let offset = zone.utcOffset(at: instant)
        let local = LocalDateTime(localSeconds: instant + Int64(offset))
        let sign = offset < 0 ? "-" : "+"
        let magnitude = abs(offset)
        return "\(pad(local.year, 4))-\(pad(local.month))-\(pad(local.day))T\(pad(local.hour)):\(pad(local.minute)):\(pad(local.second))"
            + "\(sign)\(pad(magnitude / 3600)):\(pad(magnitude / 60 % 60))"
    }

    /// The instant of `2026-12-01T07:30:00+01:00` (what `iso8601` writes); nil for other text.
    public static func instant(iso8601 text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count == 25, bytes[4] == 45, bytes[7] == 45, bytes[10] == 84, bytes[13] == 58, bytes[16] == 58,
            bytes[19] == 43 || bytes[19] == 45, bytes[22] == 58
        else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? { Int(String(decoding: bytes[from..<(from + count)], as: UTF8.self)) }
        guard let y = number(0, 4), let mo = number(5, 2), let d = number(8, 2), let h = number(11, 2), let mi = number(14, 2),
            let s = number(17, 2), let oh = number(20, 2), let om = number(23, 2)
        else { return nil }
        let offset = (oh * 3600 + om * 60) * (bytes[19] == 45 ? -1 : 1)
        return LocalDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s).localSeconds - Int64(offset)
    }

    static func pad(_ value: Int, _ width: Int = 2) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
