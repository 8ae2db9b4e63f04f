// The schedules' one timer: a deadline on the wall clock, and word when the clock is set.

import CTimerFD
import Dispatch
import ReelAudio
import ReelModel
import ReelRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The wall clock the schedules run on: the time, one deadline, and a call when the deadline
/// comes or the clock is set. Injected, so that tests drive the time (`ScheduleControllerTests`).
public protocol ScheduleClock: AnyObject, Sendable {
    /// Seconds since the epoch on the wall clock (CLOCK_REALTIME).
    func now() -> Double
    /// Calls `handler` (on a thread of the clock's) at each deadline, with `clockSet` true when
    /// it wakes because the wall clock was set instead.
    func start(_ handler: @escaping @Sendable (_ clockSet: Bool) -> Void)
    /// The next deadline (seconds since the epoch), replacing the earlier one; nil: none.
    func wake(at deadline: Int64?)
    func stop()
}

/// `ScheduleClock` on a `timerfd` of CLOCK_REALTIME armed at an absolute time with
/// TFD_TIMER_CANCEL_ON_SET: the kernel wakes the thread at the deadline on the wall clock
/// (whatever the clock does in between), and also when the clock is set (NTP's first setting
/// on a Pi without a real-time clock, `date -s`), which is how a jump is detected: no polling,
/// no comparison of clocks. With no deadline the timer is disarmed and the thread sleeps in
/// `read` until one is set. Thread: one of its own, asleep in `read` but for each firing.
public final class WallClockTimer: ScheduleClock, @unchecked Sendable {
    private let descriptor: Int32
    private let state = Locked(State())
    private let stopped = DispatchSemaphore(value: 0)

    private struct State {
        var deadline: Int64?
        var stopping = false
        var running = false
        /// Times the thread woke (deadlines and clock settings), for the idle cost's figure.
        var wakeUps = 0
    }

    public init() {
        descriptor = timerfd_create(CLOCK_REALTIME, Int32(TFD_CLOEXEC))
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// How many times the timer's thread has woken since `start`.
    public var wakeUps: Int { state.withLock { $0.wakeUps } }

    public func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    public func start(_ handler: @escaping @Sendable (_ clockSet: Bool) -> Void) {
        guard descriptor >= 0 else { return }
        state.withLock { $0.running = true }
        // Detached: `stop` waits for `run` to end through `stopped`, not by joining.
        pthread_detach(OSThread.start(name: "reel-schedules", realtime: false) { [self] in run(handler) })
    }

    public func wake(at deadline: Int64?) {
        state.withLock { state in
            state.deadline = deadline
            arm(deadline)
        }
    }

    public func stop() {
        let running = state.withLock { state -> Bool in
            state.stopping = true
            // A deadline in the past wakes the thread at once.
            if state.running { arm(1) }
            return state.running
        }
        if running { stopped.wait() }
    }

    /// Sets the timer (under the state's lock): absolute, cancelled when the clock is set.
    private func arm(_ deadline: Int64?) {
        var spec = itimerspec()
        if let deadline { spec.it_value.tv_sec = time_t(max(deadline, 1)) }
        timerfd_settime(descriptor, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &spec, nil)
    }

    private func run(_ handler: @escaping @Sendable (_ clockSet: Bool) -> Void) {
        var expirations: UInt64 = 0
        while true {
            let count = read(descriptor, &expirations, 8)
            let error = count < 0 ? errno : 0
            let stopping = state.withLock { state -> Bool in
                state.wakeUps += 1
                return state.stopping
            }
            if stopping { break }
            if count < 0 && error == EINTR { continue }
            if count < 0 && error == ECANCELED {
                // The clock was set: the timer stays armed; re-arm it (the deadline may now be past).
                state.withLock { arm($0.deadline) }
                handler(true)
            } else if count == 8 {
                handler(false)
            } else {
                break
            }
        }
        state.withLock { $0.running = false }
        stopped.signal()
    }
}
