// A value behind a mutex: the lock of a plain value, for the audio threads and the controllers
// (`ConditionLock` is the lock a thread sleeps on).

#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a mutex, readable from any thread.
///
/// The mutex and the value live in memory of their own (pointers), not in stored properties:
/// a stored property passed `inout` (`&mutex`, `body(&value)`) costs a dynamic exclusivity
/// check on every lock, unlock and access, and this is taken on every command and every
/// period.
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    public init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    public var current: Value { withLock { $0 } }
}
