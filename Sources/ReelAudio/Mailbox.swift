// Commands from the control side to an audio thread.

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A multi-producer, single-consumer queue with a condition variable, so that an idle audio
/// thread sleeps until a command arrives and a busy one drains it without blocking.
///
/// A post also makes `wakeDescriptor` (the read end of a pipe) readable until the next `take`
/// that returns messages, so a consumer blocked in `poll` on a device (waiting for room for its
/// next period) wakes for a command at once instead of after the period.
final class Mailbox<Message>: @unchecked Sendable {
    private let lock = ConditionLock()
    private var messages: [Message] = []
    /// Readable while messages wait; -1 if no pipe could be made (consumers then wake on their
    /// own timeouts).
    let wakeDescriptor: Int32
    private let wakeWriter: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        } else {
            ends = [-1, -1]
        }
        wakeDescriptor = ends[0]
        wakeWriter = ends[1]
    }

    deinit {
        if wakeDescriptor >= 0 {
            close(wakeDescriptor)
            close(wakeWriter)
        }
    }

    /// Called from any thread.
    func post(_ message: Message) {
        lock.lock()
        messages.append(message)
        if messages.count == 1 && wakeWriter >= 0 {
            var byte: UInt8 = 1
            _ = write(wakeWriter, &byte, 1)
        }
        lock.signal()
        lock.unlock()
    }

    /// Called by the consumer: everything queued, waiting for the first message if `wait`.
    func take(wait: Bool) -> [Message] {
        lock.lock()
        defer { lock.unlock() }
        while wait && messages.isEmpty {
            lock.wait()
        }
        guard !messages.isEmpty else { return [] }
        if wakeDescriptor >= 0 {
            var byte: UInt8 = 0
            _ = read(wakeDescriptor, &byte, 1)
        }
        let taken = messages
        messages.removeAll(keepingCapacity: true)
        return taken
    }

    /// Called by the consumer: everything queued, waiting up to `milliseconds` for the first
    /// message; empty if none came.
    func take(waitingAtMostMilliseconds milliseconds: Int) -> [Message] {
        lock.lock()
        if messages.isEmpty {
            let deadline = ConditionLock.deadline(inMilliseconds: milliseconds)
            while messages.isEmpty && lock.wait(until: deadline) {}
        }
        lock.unlock()
        return take(wait: false)
    }
}
