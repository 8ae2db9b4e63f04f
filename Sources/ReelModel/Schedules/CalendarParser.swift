// The parser of `CalendarExpression`: the words, then each field, with errors that name the part.

struct CalendarParser {
    let text: String

    init(_ text: String) {
        self.text = String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    static let shorthands: [String: String] = [
        "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
        "weekly": "Mon *-*-* 00:00:00", "monthly": "*-*-01 00:00:00", "yearly": "*-01-01 00:00:00",
        "annually": "*-01-01 00:00:00",
    ]

    static let weekdayNames: [String: Int] = [
        "mon": 1, "monday": 1, "tue": 2, "tuesday": 2, "wed": 3, "wednesday": 3, "thu": 4, "thursday": 4,
        "fri": 5, "friday": 5, "sat": 6, "saturday": 6, "sun": 7, "sunday": 7,
    ]

    func parse() throws(CalendarExpressionError) -> CalendarExpression {
        guard !text.isEmpty else { throw CalendarExpressionError("the time is empty: write one time (2026-12-01 07:30) or a calendar expression (Mon..Fri 07:00, daily)") }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if words.count == 1, let expanded = CalendarParser.shorthands[words[0].lowercased()] {
            let parsed = try CalendarParser(expanded).parse()
            return CalendarExpression(
                text: text, weekdays: parsed.weekdays, years: parsed.years, months: parsed.months, days: parsed.days,
                hours: parsed.hours, minutes: parsed.minutes, seconds: parsed.seconds)
        }
        guard words.count <= 3 else {
            throw CalendarExpressionError("\"\(text)\" has \(words.count) parts: write at most weekdays, a date and a time (Mon..Fri *-*-* 07:00)")
        }
        var weekdays: Set<Int>?
        var date: (FieldValues, FieldValues, FieldValues)?
        var time: (FieldValues, FieldValues, FieldValues)?
        for (index, word) in words.enumerated() {
            if word.hasPrefix("@") { throw CalendarExpressionError("\"\(word)\": Unix times are not taken; write a date and time (2026-12-01 07:30)") }
            if word.contains("~") { throw CalendarExpressionError("\"\(word)\": days counted from the end of a month (~) are not taken") }
            if CalendarParser.shorthands[word.lowercased()] != nil {
                throw CalendarExpressionError("\"\(word)\" stands alone; it takes no other parts (every day at 07:00 is *-*-* 07:00)")
            }
            if word.contains(":") {
                guard time == nil else { throw CalendarExpressionError("\"\(text)\" has two times") }
                time = try parseTime(word)
            } else if word.contains("-") {
                guard date == nil, time == nil else {
                    throw CalendarExpressionError(time != nil ? "\"\(word)\": the date goes before the time" : "\"\(text)\" has two dates")
                }
                date = try parseDate(word)
            } else if word.first?.isLetter == true {
                guard index == 0 else {
                    throw CalendarExpressionError("\"\(word)\": weekdays come first (Mon..Fri 07:00)")
                }
                weekdays = try parseWeekdays(word)
            } else {
                throw CalendarExpressionError(
                    "\"\(word)\" is not a weekday (Mon..Sun), a date (2026-12-01, *-*-*) or a time (07:30)")
            }
        }
        let (years, months, days) = date ?? (.any, .any, .any)
        let (hours, minutes, seconds) = time ?? (FieldValues(values: [0]), FieldValues(values: [0]), FieldValues(values: [0]))
        let expression = CalendarExpression(
            text: text, weekdays: weekdays, years: years, months: months, days: days, hours: hours, minutes: minutes,
            seconds: seconds)
        if let once = expression.oneTime, once.day > CivilTime.daysInMonth(year: once.year, month: once.month) {
            throw CalendarExpressionError(
                "\(CivilTime.pad(once.year, 4))-\(CivilTime.pad(once.month))-\(CivilTime.pad(once.day)) is not a date: that month has \(CivilTime.daysInMonth(year: once.year, month: once.month)) days")
        }
        return expression
    }

    func parseWeekdays(_ word: String) throws(CalendarExpressionError) -> Set<Int> {
        var result = Set<Int>()
        for item in word.split(separator: ",", omittingEmptySubsequences: false) {
            let ends = CalendarParser.rangeEnds(String(item))
            guard ends.count <= 2, !item.isEmpty else { throw CalendarExpressionError("\"\(word)\": \"\(item)\" is not a weekday or a range of them (Mon..Fri)") }
            var numbers: [Int] = []
            for end in ends {
                guard let number = CalendarParser.weekdayNames[end.lowercased()] else {
                    throw CalendarExpressionError("\"\(end)\" is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)")
                }
                numbers.append(number)
            }
            if numbers.count == 2 {
                guard numbers[0] <= numbers[1] else {
                    throw CalendarExpressionError("\"\(item)\": a range of weekdays goes from Monday towards Sunday (write Fri..Sun,Mon)")
                }
                result.formUnion(numbers[0]...numbers[1])
            } else {
                result.insert(numbers[0])
            }
        }
        return result
    }

    func parseDate(_ word: String) throws(CalendarExpressionError) -> (FieldValues, FieldValues, FieldValues) {
        // Split on "-" but not on the ".." of a range.
        let parts = word.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 3:
            return (
                try parseField(parts[0], name: "year", range: 1970...9999, in: word),
                try parseField(parts[1], name: "month", range: 1...12, in: word),
                try parseField(parts[2], name: "day", range: 1...31, in: word)
            )
        case 2:
            return (
                .any, try parseField(parts[0], name: "month", range: 1...12, in: word),
                try parseField(parts[1], name: "day", range: 1...31, in: word)
            )
        default:
            throw CalendarExpressionError("\"\(word)\" is not a date: write YEAR-MONTH-DAY (2026-12-01, *-*-01) or MONTH-DAY")
        }
    }

    func parseTime(_ word: String) throws(CalendarExpressionError) -> (FieldValues, FieldValues, FieldValues) {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3 else {
            throw CalendarExpressionError("\"\(word)\" is not a time: write HOUR:MINUTE or HOUR:MINUTE:SECOND (07:30, 07:30:15)")
        }
        if parts.count == 3, parts[2].contains(".") && CalendarParser.rangeEnds(parts[2]).count == 1 {
            throw CalendarExpressionError("\"\(word)\": fractions of a second are not taken")
        }
        return (
            try parseField(parts[0], name: "hour", range: 0...23, in: word),
            try parseField(parts[1], name: "minute", range: 0...59, in: word),
            parts.count == 3 ? try parseField(parts[2], name: "second", range: 0...59, in: word) : FieldValues(values: [0])
        )
    }

    /// `*`, `5`, `1,15`, `1..5`, `0/15`, `*/15`, `8..18/2`, and comma lists of those.
    func parseField(_ field: String, name: String, range: ClosedRange<Int>, in word: String) throws(CalendarExpressionError) -> FieldValues {
        guard !field.isEmpty else { throw CalendarExpressionError("\"\(word)\": the \(name) is missing") }
        if field == "*" { return .any }
        var values = Set<Int>()
        for item in field.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            let stepParts = item.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard stepParts.count <= 2 else { throw CalendarExpressionError("\"\(word)\": \"\(item)\" is not a valid \(name)") }
            var step = 1
            if stepParts.count == 2 {
                guard let parsed = Int(stepParts[1]), parsed > 0, stepParts[1].allSatisfy(\.isASCII) else {
                    throw CalendarExpressionError("\"\(word)\": \"\(stepParts[1])\" is not a step (a whole number above 0)")
                }
                step = parsed
            }
            let base = stepParts[0]
            var low: Int
            var high: Int
            if base == "*" {
                guard stepParts.count == 2 else { throw CalendarExpressionError("\"\(word)\": * stands alone in a list") }
                (low, high) = (range.lowerBound, range.upperBound)
            } else {
                let ends = CalendarParser.rangeEnds(base)
                guard ends.count <= 2 else { throw CalendarExpressionError("\"\(word)\": \"\(item)\" is not a valid \(name)") }
                var numbers: [Int] = []
                for end in ends {
                    guard !end.isEmpty, end.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(end) else {
                        throw CalendarExpressionError("\"\(word)\": \"\(end.isEmpty ? item : end)\" is not a valid \(name)")
                    }
                    guard range.contains(number) else {
                        throw CalendarExpressionError("\"\(word)\": \(name) \(end) is out of range (\(range.lowerBound)..\(range.upperBound))")
                    }
                    numbers.append(number)
                }
                low = numbers[0]
                high = numbers.count == 2 ? numbers[1] : (stepParts.count == 2 ? range.upperBound : numbers[0])
                guard low <= high else { throw CalendarExpressionError("\"\(word)\": the range \(base) goes backwards") }
            }
            values.formUnion(stride(from: low, through: high, by: step))
        }
        return FieldValues(values: values.sorted())
    }

    /// `a..b` as `["a", "b"]`; a text without `..` as itself.
    static func rangeEnds(_ text: String) -> [String] {
        var ends: [String] = []
        var current = ""
        var rest = Substring(text)
        while let first = rest.first {
            if rest.hasPrefix("..") {
                ends.append(current)
                current = ""
                rest = rest.dropFirst(2)
            } else {
                current.append(first)
                rest = rest.dropFirst()
            }
        }
        ends.append(current)
        return ends
    }
}
