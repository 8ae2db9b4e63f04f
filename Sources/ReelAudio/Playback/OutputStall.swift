// Noticing an output that takes no audio while the player plays: pure rules, tested without a
// device.

/// An output that takes no frames and plays none for `thresholdNanoseconds` while the player
/// plays has stalled: its sound server (PulseAudio, PipeWire) or its device stopped taking audio.
/// The device never runs dry, so no underrun is counted, and the position (what was heard)
/// holds still; without this nothing would say why. A stream keeps being received meanwhile, so
/// it plays on afterwards that much further behind live. The runner logs when a stall starts and
/// when it ends and counts it (`XrunCounters.stalls`).
///
/// Both counts are watched, the frames written and the frames heard: PulseAudio's ALSA plugin
/// reports no delay at all while its server does not answer, so the frames heard (written less
/// the delay) would not show it alone; a device that ran dry takes frames again at once (the
/// runner writes silence while a stream waits), so it is no stall.
///
/// Fed each time the runner measures the device while playing (not while it drains: some
/// devices report their own latency as delay after they ran dry). A value; the audio thread's.
struct OutputStallWatch {
    /// How long an output may take and play nothing before it counts as stalled: far longer
    /// than any device's start (PulseAudio's plugin takes a few hundred ms) or period (500 ms).
    static let thresholdNanoseconds: UInt64 = 2_000_000_000

    enum Event: Equatable {
        /// The output has taken and played nothing for `seconds` (the threshold, or a little more).
        case began(seconds: Double)
        /// It takes or plays frames again, after `seconds` without.
        case ended(seconds: Double)
    }

    /// The frames written and heard when last measured, and since when neither has moved.
    private var frames: (written: Int64, audible: Int64)?
    private var since: UInt64 = 0
    /// A stall began and has not ended.
    private(set) var stalled = false

    /// The device was measured at `now` (monotonic ns): `written` frames handed to it, `audible`
    /// of them heard. A stall begins once neither has moved for the threshold; it ends when
    /// either moves.
    mutating func observe(written: Int64, audible: Int64, at now: UInt64) -> Event? {
        guard let frames, frames == (written, audible) else {
            let wasStalled = stalled
            let from = since
            self.frames = (written, audible)
            since = now
            stalled = false
            return wasStalled ? .ended(seconds: Self.seconds(now &- from)) : nil
        }
        guard !stalled, now &- since >= Self.thresholdNanoseconds else { return nil }
        stalled = true
        return .began(seconds: Self.seconds(now &- since))
    }

    /// The player stopped playing (paused, stopped, draining, the device closed): nothing is
    /// watched until the next `observe`, which starts afresh. The stall in progress, if any,
    /// ends here: its length (nil when there was none).
    mutating func reset(at now: UInt64) -> Double? {
        defer {
            frames = nil
            stalled = false
        }
        return stalled ? Self.seconds(now &- since) : nil
    }

    private static func seconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e9 }

    /// Seconds to a tenth, for the log ("8.6 s").
    static func describe(_ seconds: Double) -> String {
        let tenths = Int((max(seconds, 0) * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) s"
    }
}
