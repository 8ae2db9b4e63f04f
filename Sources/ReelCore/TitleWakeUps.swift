// When the player looks again at what a stream has on air: one wake-up at a time.

/// The wake-ups the player schedules for a stream's next title (the frame from which a title
/// decoded ahead is heard): at most one is pending. Every title the decoder marks, every engine
/// change and every wake-up itself asks for the next title's time; a request for the same
/// entry no earlier than the pending one is already served by it (that one looks, then asks
/// for the title after), so the wake-ups stay one however many titles come. An earlier request,
/// or one for another entry, replaces the pending one: the replaced one does nothing when it
/// comes (`fire` is false).
///
/// Without it each request scheduled a wake-up of its own that scheduled the next when it came:
/// one more endless chain per title, all waking at every title change (a station that sends its
/// title every few seconds had thousands after an hour, and the daemon's memory grew with them).
///
/// A value; the player keeps it under its `shared` lock.
struct TitleWakeUps: Equatable {
    struct Pending: Equatable {
        var serial: Int
        var entry: Int
        /// When it comes (monotonic nanoseconds).
        var due: UInt64
    }

    /// The wake-up scheduled and not come yet, nil when none is.
    private(set) var pending: Pending?
    /// Wake-ups scheduled so far (their serials), and those that came, replaced or not.
    private(set) var scheduled = 0
    private(set) var came = 0

    /// Entry `entry` wants a look at `due`: the serial of a wake-up to schedule then, or nil when
    /// the pending one serves it (the same entry, due no later).
    mutating func request(entry: Int, at due: UInt64) -> Int? {
        if let pending, pending.entry == entry, pending.due <= due { return nil }
        scheduled += 1
        pending = Pending(serial: scheduled, entry: entry, due: due)
        return scheduled
    }

    /// Wake-up `serial` came: true when it is the pending one (the player looks, and none is
    /// pending any more); false for one replaced since, which does nothing.
    mutating func fire(_ serial: Int) -> Bool {
        came += 1
        guard pending?.serial == serial else { return false }
        pending = nil
        return true
    }
}
