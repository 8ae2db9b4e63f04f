// The clock deadlines and reconnection delays are measured on.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `CLOCK_MONOTONIC`, the clock reeld stamps `PlayerState.timestamp` with: on one machine the
/// two can be compared.
public enum MonotonicClock {
    /// Monotonic seconds. Any thread.
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
