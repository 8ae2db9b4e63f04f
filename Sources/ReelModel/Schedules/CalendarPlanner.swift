// The next time a calendar expression fires, on the wall clock of a zone, across the days the
// clocks change.

extension CalendarExpression {
    /// How many years ahead `next` looks before it says "never" (`*-02-29` needs 8 at most).
    static let yearsAhead = 400

    /// The first instant after `instant` (seconds since the epoch, strictly later) at which this
    /// expression fires on `zone`'s wall clock; nil when it never fires again (a one-time that is
    /// past, or a date that does not exist such as `*-02-30`).
    ///
    /// Wall-clock times the clocks skip (02:30 on a night they go from 02:00 to 03:00) fire at the
    /// first moment after the gap (03:00:00); wall-clock times the clocks repeat (02:30 on a night
    /// they go back from 03:00 to 02:00) fire at their first occurrence only. Firing instants
    /// never decrease as wall-clock times increase, so the first matching wall-clock time at or
    /// after `instant`'s that fires after `instant` is the answer.
    public func next(after instant: Int64, in zone: any TimeZoneRules) -> Int64? {
        let local = instant + Int64(zone.utcOffset(at: instant))
        let startDay = Int(CivilTime.floorDivide(local, 86_400))
        let startSecond = Int(local - Int64(startDay) * 86_400)
        let start = CivilTime.date(days: startDay)
        let lastYear = min(9999, start.year + CalendarExpression.yearsAhead)
        guard start.year <= lastYear else { return nil }
        for year in years.each(in: start.year...lastYear) {
            for month in months.each(in: (year == start.year ? start.month : 1)...12) {
                let firstDay = year == start.year && month == start.month ? start.day : 1
                let monthLength = CivilTime.daysInMonth(year: year, month: month)
                guard firstDay <= monthLength else { continue }
                for day in days.each(in: firstDay...monthLength) {
                    let dayNumber = CivilTime.days(year: year, month: month, day: day)
                    if let weekdays, !weekdays.contains(CivilTime.weekday(days: dayNumber)) { continue }
                    if let found = firstFiring(onDay: dayNumber, from: dayNumber == startDay ? startSecond : 0, after: instant, in: zone) {
                        return found
                    }
                }
            }
        }
        return nil
    }

    /// The earliest firing of a time of day at or after `fromSecond` of local day `dayNumber`
    /// that is later than `instant`.
    private func firstFiring(onDay dayNumber: Int, from fromSecond: Int, after instant: Int64, in zone: any TimeZoneRules) -> Int64? {
        for hour in hours.each(in: fromSecond / 3600...23) {
            let minuteFloor = hour * 3600 >= fromSecond ? 0 : (fromSecond - hour * 3600) / 60
            for minute in minutes.each(in: minuteFloor...59) {
                let base = hour * 3600 + minute * 60
                let secondFloor = base >= fromSecond ? 0 : fromSecond - base
                for second in seconds.each(in: secondFloor...59) {
                    let wall = Int64(dayNumber) * 86_400 + Int64(base + second)
                    let firing = CalendarExpression.instant(ofLocal: wall, in: zone)
                    if firing > instant { return firing }
                }
            }
        }
        return nil
    }

    /// The instant a wall-clock time (seconds since 1970-01-01 00:00 of the wall clock) fires in
    /// `zone`: its first occurrence when the clocks repeat it, the end of the gap (the first
    /// instant whose wall clock is later) when the clocks skip it.
    public static func instant(ofLocal wall: Int64, in zone: any TimeZoneRules) -> Int64 {
        // The offsets in force two days either side; zones change offset months apart.
        let before = zone.utcOffset(at: wall - 172_800)
        let after = zone.utcOffset(at: wall + 172_800)
        var candidates: [Int64] = []
        for offset in Set([before, after]) {
            let instant = wall - Int64(offset)
            if zone.utcOffset(at: instant) == offset { candidates.append(instant) }
        }
        if let first = candidates.min() { return first }
        // A gap: `wall - after` is before it (read with the earlier offset), `wall - before` after.
        var low = wall - Int64(max(before, after))
        var high = wall - Int64(min(before, after))
        let offsetBefore = zone.utcOffset(at: low)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if zone.utcOffset(at: middle) == offsetBefore { low = middle } else { high = middle }
        }
        return high
    }
}
