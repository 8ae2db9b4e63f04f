// The sleep timer: stop the player after a while, fading out first (`player.sleep`).

import Dispatch
import ReelAudio
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// The sleep timer's state, under `PlayerController.sleep`'s lock.
struct SleepTimerState {
    /// When the player stops (seconds since the epoch, wall clock); nil: no timer.
    var at: Double?
    /// Which timer is set: a cancel or a new timer makes the earlier one's work do nothing.
    var generation = 0
    /// The fade-out has begun (a cancel puts the level back).
    var fading = false
}

extension PlayerState {
    func with(sleepAt: Double?) -> PlayerState {
        var state = self
        state.sleepAt = sleepAt
        return state
    }
}

extension PlayerController {
    /// The longest sleep timer: a day.
    public static let longestSleep: Double = 86_400

    /// Stops the player `after` seconds from now, fading out over the last `fadeOut` seconds
    /// (at most `after`); the level is back to full for the next play. A new timer replaces the
    /// one set. Replies with when it stops (`sleepAt`). Timed on the monotonic clock: a change
    /// of the wall clock does not move it (`sleepAt` is the wall-clock time it was set for).
    public func sleep(after: Double, fadeOut: Double = 0, reply: @escaping @Sendable (Result<Double?, ReelError>) -> Void) {
        guard after.isFinite, after > 0, after <= Self.longestSleep else {
            reply(.failure(ReelError(.outOfRange, "after must be more than 0 and at most 86400 seconds, not \(after)")))
            return
        }
        guard fadeOut.isFinite, fadeOut >= 0, fadeOut <= after else {
            reply(.failure(ReelError(.outOfRange, "fadeOut must be from 0 to after (\(after) s), not \(fadeOut)")))
            return
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let at = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + after
        let (generation, wasFading) = sleep.withLock { state -> (Int, Bool) in
            let fading = state.fading
            state.generation += 1
            state.at = at
            state.fading = false
            return (state.generation, fading)
        }
        if wasFading { fade(from: 1, to: 1, seconds: 0) }
        publishState()
        work.asyncAfter(deadline: .now() + (after - fadeOut)) { [self] in
            guard sleep.withLock({ state -> Bool in
                guard state.generation == generation else { return false }
                state.fading = true
                return true
            }) else { return }
            fadeOutAndStop(seconds: fadeOut, cancelled: { [self] in sleep.withLock { $0.generation != generation } }) { [self] _ in
                let current = sleep.withLock { state -> Bool in
                    guard state.generation == generation else { return false }
                    state.at = nil
                    state.fading = false
                    return true
                }
                if current { publishState() }
            }
        }
        reply(.success(at))
    }

    /// Cancels the sleep timer (a fade-out under way is undone at once). Replies with nil.
    public func cancelSleep(reply: @escaping @Sendable (Result<Double?, ReelError>) -> Void) {
        let wasFading = sleep.withLock { state -> Bool in
            let fading = state.fading
            state.generation += 1
            state.at = nil
            state.fading = false
            return fading
        }
        if wasFading { fade(from: 1, to: 1, seconds: 0) }
        publishState()
        reply(.success(nil))
    }
}
