// An event loop of our own on epoll: one thread that waits on descriptors, runs tasks and timers.

import CEpoll
import Dispatch
import Glibc
import NIOCore
import ReelAudio
import ReelRuntime

/// Something registered with a `PollLoop`, told when its descriptor is ready. Called on the
/// loop's thread only.
protocol PollHandler: AnyObject {
    /// `events` are epoll's bits (`EPOLLIN`, `EPOLLOUT`, `EPOLLHUP`, `EPOLLERR`).
    func pollReady(_ events: UInt32)
}

/// One thread, one epoll descriptor: the control socket's connections register their
/// descriptors here and are called back when they can read or write. It is a NIO `EventLoop`
/// (`execute`, `scheduleTask`, promises), so what is written for an event loop — the push hub,
/// `NIOLoopBound`, the method table's deferred replies — runs on it unchanged.
///
/// Why not a NIO channel: a request on the control socket costs three system calls (wait, read,
/// write) however it is served, and NIO's channel pipeline added as much user time again per
/// request (framing handler, pooled buffers, pipeline traversals, flush bookkeeping). Here a
/// readable descriptor is read into one buffer shared by every connection, its lines are
/// handed over as bytes in place, and a reply is sent at once with one `send`.
///
/// Threads: `execute` and `scheduleTask` may be called from any thread (a lock and, when the
/// loop sleeps, one write to an eventfd to wake it); everything else on the loop's thread.
final class PollLoop: EventLoop, @unchecked Sendable {
    let name: String
    private let epoll: Int32
    private let wakeDescriptor: Int32
    private let shared = Locked(Shared())
    private var handlers: [PollHandler?] = []
    /// Tasks the loop hands itself (`execute` on its own thread): no lock, no wake-up.
    private var localTasks: [() -> Void] = []
    private var thread = pthread_t()
    /// Whether the thread was started, and whether it was joined.
    private let lifecycle = Locked((started: false, joined: false))
    /// Bytes a connection reads into before it frames them; shared, since one runs at a time.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private var preciseWait = true

    /// What other threads hand to the loop, under `shared`'s lock.
    private struct Shared {
        var tasks: [() -> Void] = []
        var timers = TimerHeap()
        /// The loop is in (or about to enter) `epoll_wait` and must be woken for new work.
        var sleeping = false
        /// A wake-up was written to the eventfd and not yet read.
        var wakePending = false
        var stopping = false
        var nextTimerNumber: UInt64 = 0
    }

    /// A task to run at a deadline; `cancelled` and `done` are read and written under the lock.
    final class Timer {
        let deadline: NIODeadline
        let number: UInt64
        let run: () -> Void
        var cancelled = false
        init(deadline: NIODeadline, number: UInt64, run: @escaping () -> Void) {
            self.deadline = deadline
            self.number = number
            self.run = run
        }
    }

    /// Timers by deadline (then by the order they were made): a binary heap.
    struct TimerHeap {
        private var heap: [Timer] = []
        var earliest: Timer? { heap.first }
        var isEmpty: Bool { heap.isEmpty }

        private static func before(_ a: Timer, _ b: Timer) -> Bool {
            a.deadline < b.deadline || (a.deadline == b.deadline && a.number < b.number)
        }

        mutating func insert(_ timer: Timer) {
            heap.append(timer)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard Self.before(heap[child], heap[parent]) else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func removeEarliest() -> Timer? {
            guard !heap.isEmpty else { return nil }
            heap.swapAt(0, heap.count - 1)
            let timer = heap.removeLast()
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var first = parent
                if left < heap.count, Self.before(heap[left], heap[first]) { first = left }
                if right < heap.count, Self.before(heap[right], heap[first]) { first = right }
                if first == parent { break }
                heap.swapAt(parent, first)
                parent = first
            }
            return timer
        }

        mutating func removeAll() -> [Timer] {
            defer { heap = [] }
            return heap
        }
    }

    /// Makes the epoll and wake-up descriptors; the thread starts with `start()`.
    init(name: String) throws {
        self.name = name
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else {
            throw SocketSetupError("cannot create the \(name) event loop: \(String(cString: strerror(errno)))")
        }
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wakeDescriptor >= 0 else {
            let error = String(cString: strerror(errno))
            Glibc.close(epoll)
            throw SocketSetupError("cannot create the \(name) event loop's wake-up descriptor: \(error)")
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = wakeDescriptor
        epoll_ctl(epoll, EPOLL_CTL_ADD, wakeDescriptor, &event)
    }

    deinit {
        Glibc.close(wakeDescriptor)
        Glibc.close(epoll)
        readBuffer.deallocate()
    }

    /// Starts the loop's thread (once).
    func start() {
        guard !lifecycle.withLock({ value in defer { value.started = true }; return value.started }) else { return }
        thread = OSThread.start(name: name, realtime: false) { [self] in run() }
    }

    // MARK: Descriptors (on the loop's thread)

    /// Watches `fd` for `events` (epoll bits), calling `handler` when it is ready.
    func register(_ fd: Int32, events: UInt32, handler: PollHandler) throws {
        preconditionInEventLoop()
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0 else {
            throw SocketSetupError("cannot watch a descriptor: \(String(cString: strerror(errno)))")
        }
        let index = Int(fd)
        if index >= handlers.count { handlers.append(contentsOf: repeatElement(nil, count: index + 1 - handlers.count)) }
        handlers[index] = handler
    }

    /// Changes what `fd` is watched for.
    func modify(_ fd: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event)
    }

    /// Stops watching `fd` (call before closing it).
    func deregister(_ fd: Int32) {
        epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
        let index = Int(fd)
        if index < handlers.count { handlers[index] = nil }
    }

    // MARK: The loop

    private func run() {
        thread = pthread_self()  // the same value `pthread_create` stores, before any task asks
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var tasks: [() -> Void] = []
        while true {
            // Take the tasks and the timers that are due, and how long to sleep otherwise. The
            // lock is taken once per turn; the clock is read only while timers are set.
            var timeout: Int64 = -1  // nanoseconds; -1: until woken
            let hasLocalTasks = !localTasks.isEmpty
            let stopping = shared.withLock { shared -> Bool in
                swap(&tasks, &shared.tasks)
                if !shared.timers.isEmpty {
                    let now = NIODeadline.now()
                    while let earliest = shared.timers.earliest, earliest.deadline <= now {
                        let timer = shared.timers.removeEarliest()!
                        if !timer.cancelled { tasks.append(timer.run) }
                    }
                    if let earliest = shared.timers.earliest {
                        timeout = max(0, (earliest.deadline - now).nanoseconds)
                    }
                }
                if hasLocalTasks || !tasks.isEmpty { timeout = 0 }
                shared.sleeping = timeout != 0
                return shared.stopping
            }
            if stopping { break }
            if hasLocalTasks {
                var local: [() -> Void] = []
                swap(&local, &localTasks)
                for task in local { task() }
            }
            for task in tasks { task() }
            tasks.removeAll(keepingCapacity: true)
            // Tasks the loop gave itself meanwhile run at the next turn, without sleeping.
            if !localTasks.isEmpty { timeout = 0 }

            let count = events.withUnsafeMutableBufferPointer { buffer in
                wait(into: buffer, timeout: timeout)
            }
            // `sleeping` stays set until the next turn: a task handed over meanwhile may write
            // one wake-up too many, which costs that thread a write and this loop one turn.
            guard count > 0 else { continue }
            for index in 0..<Int(count) {
                let event = events[index]
                let fd = event.data.fd
                if fd == wakeDescriptor {
                    var value: UInt64 = 0
                    _ = Glibc.read(wakeDescriptor, &value, 8)
                    shared.withLock { $0.wakePending = false }
                    continue
                }
                let slot = Int(fd)
                guard slot < handlers.count, let handler = handlers[slot] else { continue }
                handler.pollReady(event.events)
            }
        }
        // Stopped: timers and tasks that did not run are dropped.
        shared.withLock { shared in
            _ = shared.timers.removeAll()
            shared.tasks = []
        }
        localTasks = []
    }

    /// `epoll_pwait2` with a nanosecond timeout (Linux 5.11 and later); `epoll_wait` in
    /// milliseconds, rounded up, where it is missing.
    private func wait(into buffer: UnsafeMutableBufferPointer<epoll_event>, timeout: Int64) -> Int32 {
        if preciseWait {
            var result: Int32
            if timeout < 0 {
                result = epoll_pwait2(epoll, buffer.baseAddress, Int32(buffer.count), nil, nil)
            } else {
                var time = timespec(tv_sec: Int(timeout / 1_000_000_000), tv_nsec: Int(timeout % 1_000_000_000))
                result = epoll_pwait2(epoll, buffer.baseAddress, Int32(buffer.count), &time, nil)
            }
            if result >= 0 || errno != ENOSYS { return result }
            preciseWait = false
        }
        let milliseconds = timeout < 0 ? -1 : Int32(min((timeout + 999_999) / 1_000_000, Int64(Int32.max)))
        return epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), milliseconds)
    }

    /// Wakes the loop if it sleeps (call after handing it work, outside the lock).
    private func wakeIfNeeded(_ needed: Bool) {
        guard needed else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, 8)
    }

    // MARK: EventLoop

    var inEventLoop: Bool { pthread_equal(pthread_self(), thread) != 0 }

    func execute(_ task: @escaping @Sendable () -> Void) {
        if inEventLoop {
            localTasks.append(task)
            return
        }
        let wake = shared.withLock { shared -> Bool in
            shared.tasks.append(task)
            guard shared.sleeping, !shared.wakePending else { return false }
            shared.wakePending = true
            return true
        }
        wakeIfNeeded(wake)
    }

    @discardableResult
    func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        let promise: EventLoopPromise<T> = makePromise()
        // From the loop itself no wake-up is needed: it reads the timers before it sleeps again.
        let fromLoop = inEventLoop
        let (timer, wake) = shared.withLock { shared -> (Timer, Bool) in
            shared.nextTimerNumber += 1
            let timer = Timer(deadline: deadline, number: shared.nextTimerNumber) {
                do { promise.succeed(try task()) } catch { promise.fail(error) }
            }
            let wasEarliest = shared.timers.earliest.map { deadline < $0.deadline } ?? true
            shared.timers.insert(timer)
            guard !fromLoop, wasEarliest, shared.sleeping, !shared.wakePending else { return (timer, false) }
            shared.wakePending = true
            return (timer, true)
        }
        wakeIfNeeded(wake)
        let shared = self.shared
        return Scheduled(promise: promise) {
            shared.withLock { _ in timer.cancelled = true }
        }
    }

    @discardableResult
    func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
        scheduleTask(deadline: .now() + delay, task)
    }

    /// Stops the thread; `callback` runs on `queue` once it has exited.
    func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable (Error?) -> Void) {
        DispatchQueue.global().async {
            self.stop()
            queue.async { callback(nil) }
        }
    }

    /// Stops the thread and waits for it to exit (not from the loop itself). Work handed to
    /// the loop afterwards is dropped.
    func stop() {
        shared.withLock { $0.stopping = true }
        var one: UInt64 = 1
        _ = Glibc.write(wakeDescriptor, &one, 8)
        guard !inEventLoop else { return }
        let join = lifecycle.withLock { value -> Bool in
            defer { if value.started { value.joined = true } }
            return value.started && !value.joined
        }
        if join { pthread_join(thread, nil) }
    }
}
