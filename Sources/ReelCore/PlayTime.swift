// The time the player has spent playing (MPD's `stats` `playtime`).

/// Seconds spent playing: the stretches from each change to playing to the next change away
/// from it (paused, stopped, a failure), summed, and the one running now. A pure value over
/// monotonic nanoseconds; `PlayerController` keeps one and feeds it every change of the
/// engine's activity.
struct PlayTimeCounter: Sendable, Equatable {
    /// Nanoseconds of the stretches that ended.
    private var ended: UInt64 = 0
    /// When the stretch running now began; nil when not playing.
    private var since: UInt64?

    /// The player is now playing or not, at monotonic time `now`. Saying the same twice changes
    /// nothing (a stretch runs on from its start).
    mutating func update(playing: Bool, at now: UInt64) {
        if playing {
            if since == nil { since = now }
        } else if let start = since {
            ended += now > start ? now - start : 0
            since = nil
        }
    }

    /// The seconds spent playing up to `now`.
    func seconds(at now: UInt64) -> Double {
        let running = since.map { now > $0 ? now - $0 : 0 } ?? 0
        return Double(ended + running) / 1e9
    }
}
