// A mutex with a condition variable: the lock of a thread that sleeps until another wakes it.

#if canImport(Glibc)
import Glibc
#endif

/// A mutex and a condition variable whose timed waits use the monotonic clock, for the queues
/// and rings an audio, capture or writer thread sleeps on (`Locked` is the lock of a plain
/// value). Any thread may lock; `wait` is called with the lock held.
///
/// Both live in memory of their own (pointers), not in stored properties, for the reason
/// `Locked` gives: a stored property passed `inout` costs a dynamic exclusivity check at every
/// lock, and its address is not promised to stay put.
public final class ConditionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }

    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// With the lock held: sleeps until a signal (or a spurious wake-up: callers loop on their
    /// condition).
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// With the lock held: sleeps until a signal or `deadline` (see `deadline(inMilliseconds:)`);
    /// false once the deadline has passed (or when it is no time at all: never a loop that spins).
    @discardableResult
    public func wait(until deadline: timespec) -> Bool {
        var deadline = deadline
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    /// Wakes one thread waiting (a check, no system call, when none is).
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every thread waiting.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// The monotonic time `milliseconds` from now (now, for a negative count), for `wait(until:)`.
    public static func deadline(inMilliseconds milliseconds: Int) -> timespec {
        let milliseconds = max(milliseconds, 0)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nanoseconds = Int(now.tv_nsec) + (milliseconds % 1000) * 1_000_000
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + milliseconds / 1000 + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return deadline
    }
}
