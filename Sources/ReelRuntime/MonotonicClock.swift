// The monotonic clock: time for intervals, unmoved by changes of the wall clock (timed waits on
// it: `ConditionLock`).

#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
