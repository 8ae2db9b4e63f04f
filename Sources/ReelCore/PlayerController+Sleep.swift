// The sleep timer: stop the player after a while, fading out first (`player.sleep`).

import Dispatch
import ReelAudio
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// The sleep timer's state and a scheduled play's `stopAfter`, under `PlayerController.sleep`'s
/// lock. Both are saved with the player's state (`SavedPlayerState.sleep`/`.stop`) and armed
/// again after a restart (`PlayerStopTimers.restored`).
struct SleepTimerState {
    /// When the player stops (seconds since the epoch, wall clock); nil: no timer.
    var at: Double?
    /// The fade-out before that stop, in seconds.
    var fadeOut: Double = 0
    /// Which timer is set: a cancel or a new timer makes the earlier one's work do nothing.
    var generation = 0
    /// The fade-out has begun (a cancel puts the level back).
    var fading = false
    /// A scheduled play's `stopAfter`: nil when none is set.
    var stop: ScheduledStop?
}

/// A scheduled play's stop: at `at` (wall clock), the player stops if it still plays one of the
/// queue entries that play put there (`entries`, by id); a user who chose something else keeps it.
struct ScheduledStop: Equatable, Sendable {
    var at: Double
    var entries: Set<Int>
    /// Tells this stop from one set later (only the latest acts).
    var generation: Int
}

/// What a restart does with the timers saved with the player (pure: `now` is given).
///
/// A timer still ahead is armed again for what remains (a fade-out longer than that is cut to
/// it: it ends at the same wall time). A timer that fell due while reeld was down has happened:
/// the player comes back stopped rather than resuming what the timer would have stopped (a sleep
/// timer always; `stopAfter` when the saved current entry is one of its entries). Nothing stops
/// late at start: a stop of the past is never carried out after the player came back.
enum PlayerStopTimers {
    struct Restored: Equatable {
        /// Seconds from now and the fade-out, or nil.
        var sleep: (after: Double, fadeOut: Double)?
        /// Seconds from now, or nil.
        var stopAfter: Double?
        /// A timer fell due while down: the player does not resume playing.
        var stopped: Bool

        static func == (a: Restored, b: Restored) -> Bool {
            a.sleep?.after == b.sleep?.after && a.sleep?.fadeOut == b.sleep?.fadeOut && a.stopAfter == b.stopAfter
                && a.stopped == b.stopped
        }
    }

    static func restored(sleep: SavedSleep?, stop: SavedStop?, current: Int?, now: Double) -> Restored {
        var result = Restored(sleep: nil, stopAfter: nil, stopped: false)
        if let sleep {
            if sleep.at > now {
                let after = sleep.at - now
                result.sleep = (after, min(sleep.fadeOut, after))
            } else {
                result.stopped = true
            }
        }
        if let stop {
            if stop.at > now {
                result.stopAfter = stop.at - now
            } else if let current, stop.positions.contains(current) {
                result.stopped = true
            }
        }
        return result
    }
}

/// The wall clock now, in seconds since the epoch.
func wallClockNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
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
    /// one set. Replies with when it stops (`sleepAt`), once the player's state with it is saved.
    /// Timed on the monotonic clock: a change of the wall clock does not move it (`sleepAt` is the
    /// wall-clock time it was set for); after a restart, it is armed again for that wall time.
    public func sleep(after: Double, fadeOut: Double = 0, reply: @escaping @Sendable (Result<Double?, ReelError>) -> Void) {
        let reply = saves.after(reply)  // answered once saved: a restart keeps what was answered
        guard after.isFinite, after > 0, after <= Self.longestSleep else {
            reply(.failure(ReelError(.outOfRange, "after must be more than 0 and at most 86400 seconds, not \(after)")))
            return
        }
        guard fadeOut.isFinite, fadeOut >= 0, fadeOut <= after else {
            reply(.failure(ReelError(.outOfRange, "fadeOut must be from 0 to after (\(after) s), not \(fadeOut)")))
            return
        }
        let at = wallClockNow() + after
        armSleep(at: at, after: after, fadeOut: fadeOut)
        reply(.success(at))
    }

    /// Sets the sleep timer for `at` (wall clock), `after` seconds from now, with a fade-out
    /// (at most `after`); publishes it (the state file saves it).
    func armSleep(at: Double, after: Double, fadeOut: Double) {
        let (generation, wasFading) = sleep.withLock { state -> (Int, Bool) in
            let fading = state.fading
            state.generation += 1
            state.at = at
            state.fadeOut = fadeOut
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
                    state.fadeOut = 0
                    state.fading = false
                    return true
                }
                if current { publishState() }
            }
        }
    }

    /// Cancels the sleep timer (a fade-out under way is undone at once). Replies with nil.
    public func cancelSleep(reply: @escaping @Sendable (Result<Double?, ReelError>) -> Void) {
        let wasFading = sleep.withLock { state -> Bool in
            let fading = state.fading
            state.generation += 1
            state.at = nil
            state.fadeOut = 0
            state.fading = false
            return fading
        }
        if wasFading { fade(from: 1, to: 1, seconds: 0) }
        publishState()
        reply(.success(nil))
    }
}

extension PlayerController {
    /// A scheduled play's `stopAfter`: stops the player `after` seconds from now if it then still
    /// plays one of the entries the queue holds now (what that play put there). Replaces a stop
    /// set earlier; saved with the player's state, so a restart keeps it (`PlayerStopTimers`).
    func stopPlaying(after: Double) {
        let entries = Set(shared.withLock { $0.queue.allEntries.map(\.id) })
        armStop(at: wallClockNow() + after, after: after, entries: entries)
    }

    /// Sets the scheduled stop for `at` (wall clock), `after` seconds from now.
    func armStop(at: Double, after: Double, entries: Set<Int>) {
        let generation = sleep.withLock { state -> Int in
            let generation = (state.stop?.generation ?? 0) + 1
            state.stop = ScheduledStop(at: at, entries: entries, generation: generation)
            return generation
        }
        publishState()  // the state file saves it
        work.asyncAfter(deadline: .now() + max(0, after)) { [self] in
            let stop = sleep.withLock { state -> ScheduledStop? in
                guard let stop = state.stop, stop.generation == generation else { return nil }
                state.stop = nil
                return stop
            }
            guard let stop else { return }
            let current = state
            if current.state == .playing, let entry = current.entry, stop.entries.contains(entry) {
                self.stop { _ in }
            } else {
                publishState()
            }
        }
    }

    /// Arms again the timers saved with the player (after `restore` made the queue, whose
    /// entry at position p has id `id(p)`).
    func rearmTimers(_ restored: PlayerStopTimers.Restored, saved: SavedPlayerState, id: (Int) -> Int?) {
        if let sleep = restored.sleep, let at = saved.sleep?.at {
            armSleep(at: at, after: sleep.after, fadeOut: sleep.fadeOut)
        }
        if let after = restored.stopAfter, let stop = saved.stop {
            armStop(at: stop.at, after: after, entries: Set(stop.positions.compactMap(id)))
        }
    }
}
