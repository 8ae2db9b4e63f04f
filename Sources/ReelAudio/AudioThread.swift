// A dedicated OS thread for blocking audio I/O, off Swift's cooperative pool.

#if canImport(Glibc)
import Glibc
#endif

enum AudioThread {
    /// Starts `body` on a new pthread, asking for real-time scheduling (granted to root or with
    /// an rtprio limit; without it the thread runs at normal priority).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            let name: String
            init(_ body: @escaping @Sendable () -> Void, _ name: String) {
                self.body = body
                self.name = name
            }
        }
        let box = Unmanaged.passRetained(Box(body, name)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            var parameters = sched_param()
            parameters.sched_priority = 10
            _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
            box.body()
            return nil
        }, box)
        precondition(created == 0, "cannot start the \(name) thread: error \(created)")
        return thread
    }
}
