// Threads of our own for blocking I/O (audio devices, the network, the event loops, file
// watches, timers), off Swift's cooperative pool, each named for top and /proc.

#if canImport(Glibc)
import Glibc
#endif

public enum OSThread {
    /// Starts `body` on a new pthread. With `realtime`, asks for real-time scheduling (granted to
    /// root or with an rtprio limit; without it the thread runs at normal priority).
    public static func start(name: String, realtime: Bool, _ body: @escaping @Sendable () -> Void) -> pthread_t {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            let name: String
            let realtime: Bool
            init(_ body: @escaping @Sendable () -> Void, _ name: String, _ realtime: Bool) {
                self.body = body
                self.name = name
                self.realtime = realtime
            }
        }
        let named: @Sendable () -> Void = {
            nameThisThread(name)
            body()
        }
        let box = Unmanaged.passRetained(Box(named, name, realtime)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            if box.realtime {
                var parameters = sched_param()
                parameters.sched_priority = 10
                _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
            }
            box.body()
            return nil
        }, box)
        precondition(created == 0, "cannot start the \(name) thread: error \(created)")
        return thread
    }

    /// Names the calling thread (15 bytes at most) for top, /proc and the benchmarks' per-thread
    /// figures, through /proc/thread-self/comm (Glibc's pthread_setname_np is not visible here).
    public static func nameThisThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
}
