// Commands from the control side to an audio thread.

#if canImport(Glibc)
import Glibc
#endif

/// A multi-producer, single-consumer queue with a condition variable, so that an idle audio
/// thread sleeps until a command arrives and a busy one drains it without blocking.
final class Mailbox<Message>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var messages: [Message] = []

    init() {
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Called from any thread.
    func post(_ message: Message) {
        pthread_mutex_lock(&mutex)
        messages.append(message)
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Called by the consumer: everything queued, waiting for the first message if `wait`.
    func take(wait: Bool) -> [Message] {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while wait && messages.isEmpty {
            pthread_cond_wait(&condition, &mutex)
        }
        let taken = messages
        messages.removeAll(keepingCapacity: true)
        return taken
    }
}

/// A value guarded by a mutex, readable from any thread.
public final class Locked<Value>: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(&mutex, nil)
    }

    deinit { pthread_mutex_destroy(&mutex) }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body(&value)
    }

    public var current: Value { withLock { $0 } }
}

/// Monotonic time in nanoseconds.
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
