// The monotonic clock: time for intervals and timed waits, unmoved by changes of the wall clock.

#if canImport(Glibc)
import Glibc
#endif

/// Initializes a condition variable whose timed waits use the monotonic clock.
public func initializeMonotonicCondition(_ condition: inout pthread_cond_t) {
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(&condition, &attributes)
    pthread_condattr_destroy(&attributes)
}

/// Monotonic time in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
