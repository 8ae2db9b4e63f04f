// Threads of our own for blocking I/O (audio devices, the network, the event loops, file
// watches, timers), off Swift's cooperative pool, each named for top and /proc.

#if canImport(Glibc)
import Glibc
#endif

public enum OSThread {
    /// Starts `body` on a new pthread, at normal scheduling (not the caller's). With `realtime`,
    /// asks for real-time scheduling (granted to root or with an rtprio limit; without it the
    /// thread runs at normal priority). With `startingRealtime`, the thread is created at that
    /// real-time priority where allowed (else normal), so that it gets a CPU at once on a busy
    /// machine; `body` lowers it (`lowerToNormal`) when its urgent part is done.
    public static func start(
        name: String, realtime: Bool, startingRealtime: Int32? = nil, _ body: @escaping @Sendable () -> Void
    ) -> pthread_t {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            let name: String
            let realtime: Bool
            /// The real-time priority the thread was created at, if any.
            var createdAt: Int32?
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
        let made = Box(named, name, realtime)
        made.createdAt = startingRealtime
        let box = Unmanaged.passRetained(made).toOpaque()
        var thread = pthread_t()
        // Normal scheduling, whatever the creating thread's: a thread started during a start's
        // real-time stretch (`raiseToRealtime`) does not keep it for its whole life.
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        var parameters = sched_param()
        pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
        let run: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            // Created real-time by its attributes (which cannot carry SCHED_RESET_ON_FORK): the
            // flag is added before anything of the body runs.
            if let priority = box.createdAt, OSThread.isRealtime { _ = OSThread.setRealtime(priority: priority) }
            if box.realtime { _ = OSThread.raiseToRealtime(priority: OSThread.audioPriority) }
            box.body()
            return nil
        }
        var created = EPERM
        if let startingRealtime {
            parameters.sched_priority = startingRealtime
            pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
            pthread_attr_setschedparam(&attributes, &parameters)
            created = pthread_create(&thread, &attributes, run, box)
        }
        if created == EPERM {
            // Normal scheduling (also when real-time is not allowed here).
            parameters.sched_priority = 0
            pthread_attr_setschedpolicy(&attributes, SCHED_OTHER)
            pthread_attr_setschedparam(&attributes, &parameters)
            created = pthread_create(&thread, &attributes, run, box)
        }
        precondition(created == 0, "cannot start the \(name) thread: error \(created)")
        return thread
    }

    /// The real-time priority (SCHED_FIFO) of the audio threads (`start(name:realtime: true)`).
    public static let audioPriority: Int32 = 10
    /// The real-time priority of a stream's start, below the audio threads: the opener's and the
    /// decoding thread's short work between a station's first bytes and its first decoded audio
    /// (`raiseToRealtime`), so that on a busy machine it does not wait for a CPU behind every
    /// other process at each step.
    public static let startPriority: Int32 = 5

    /// Asks real-time scheduling (SCHED_FIFO) at `priority` for the calling thread: true when it
    /// was granted (to root, or within an rtprio limit: the system unit's `LimitRTPRIO`), false
    /// when the thread runs on as it did (also when it runs real-time already: then there is
    /// nothing to lower).
    @discardableResult
    public static func raiseToRealtime(priority: Int32) -> Bool {
        guard !isRealtime else { return false }
        return setRealtime(priority: priority)
    }

    /// Linux's SCHED_RESET_ON_FORK (not in the Glibc module): a thread or process that a
    /// real-time thread creates starts at normal scheduling, whatever way it is created.
    static let resetOnFork: Int32 = 0x4000_0000

    /// SCHED_FIFO at `priority` for the calling thread, with SCHED_RESET_ON_FORK: what it
    /// creates does not inherit real-time scheduling. That includes a worker thread libdispatch
    /// makes when this thread queues work and no worker is idle (it inherits its creator's
    /// scheduling and would run every later queue's work real-time for its whole life).
    /// Through the system call, which is what the kernel keeps per thread (glibc's
    /// `pthread_setschedparam` would cache the policy word, flag included).
    static func setRealtime(priority: Int32) -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = priority
        return sched_setscheduler(0, SCHED_FIFO | resetOnFork, &parameters) == 0
    }

    /// The calling thread back at normal scheduling (SCHED_OTHER), after `raiseToRealtime`.
    public static func lowerToNormal() {
        var parameters = sched_param()
        parameters.sched_priority = 0
        _ = sched_setscheduler(0, SCHED_OTHER, &parameters)
    }

    /// The calling thread runs at real-time priority (as the kernel has it: not glibc's cached
    /// copy, which a thread created by a real-time one may still show).
    public static var isRealtime: Bool {
        let policy = sched_getscheduler(0) & ~resetOnFork
        return policy == SCHED_FIFO || policy == SCHED_RR
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
