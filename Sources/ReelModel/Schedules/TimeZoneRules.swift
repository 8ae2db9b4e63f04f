// The time zone a schedule's wall-clock times are read in: the system's tzdata through the C
// library.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A time zone's rule: the offset from UTC in force at an instant. Everything else (the wall
/// clock of an instant, the instant of a wall clock, gaps and repeats) follows from it
/// (`CalendarExpression.instant(of:in:)`). Injected, so that tests can read schedules in any zone.
public protocol TimeZoneRules: Sendable {
    /// Seconds east of UTC in force at `instant` (seconds since the epoch).
    func utcOffset(at instant: Int64) -> Int
}

/// The machine's local time zone as the C library reads it (`TZ`, else `/etc/localtime`) from
/// the system's tzdata: what reeld plans in. The C library is used rather than Foundation's
/// `TimeZone` because it reads the tzdata the system updates (Debian's `tzdata` package), the
/// same the rest of the machine (cron, systemd, `date`) follows; Foundation on Linux answers from
/// ICU's own copy of the rules, which would disagree after a tzdata update. Safe on any thread.
public struct SystemTimeZone: TimeZoneRules {
    public init() {}

    public func utcOffset(at instant: Int64) -> Int {
        var seconds = time_t(instant)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 0 }
        return Int(parts.tm_gmtoff)
    }
}

/// A named zone of the tzdata (`Europe/Berlin`), read through the C library by setting `TZ`
/// for the call. `TZ` is the process's, so each call holds a process-wide lock and puts the
/// old value back; a `localtime_r` elsewhere in the process at the same moment would see the
/// named zone. For tests and tools: reeld itself plans in `SystemTimeZone` and never sets `TZ`.
public struct NamedTimeZone: TimeZoneRules {
    public let identifier: String

    /// Nil when the tzdata has no such zone (`/usr/share/zoneinfo/NAME` is missing): the C
    /// library would silently read it as UTC.
    public init?(_ identifier: String) {
        guard !identifier.isEmpty, !identifier.hasPrefix("/"), !identifier.contains(".."),
            access("/usr/share/zoneinfo/" + identifier, R_OK) == 0
        else { return nil }
        self.identifier = identifier
    }

    public func utcOffset(at instant: Int64) -> Int {
        NamedTimeZone.lock.withLock {
            let previous = getenv("TZ").map { String(cString: $0) }
            setenv("TZ", identifier, 1)
            tzset()
            var seconds = time_t(instant)
            var parts = tm()
            let offset = localtime_r(&seconds, &parts) != nil ? Int(parts.tm_gmtoff) : 0
            if let previous { setenv("TZ", previous, 1) } else { unsetenv("TZ") }
            tzset()
            return offset
        }
    }

    private static let lock = ZoneLock()
}

/// A mutex for `NamedTimeZone` (ReelModel has no Synchronization import elsewhere).
private final class ZoneLock: @unchecked Sendable {
    private var mutex = pthread_mutex_t()

    init() { pthread_mutex_init(&mutex, nil) }

    func withLock<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }
}

/// A zone with a fixed offset (UTC, or any constant): for tests that need no transitions.
public struct FixedOffsetZone: TimeZoneRules {
    public let offset: Int
    public init(seconds offset: Int) { self.offset = offset }
    public func utcOffset(at instant: Int64) -> Int { offset }
}
