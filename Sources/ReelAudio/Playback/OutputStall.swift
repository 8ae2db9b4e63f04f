// Noticing an output that takes no audio while the player plays: pure rules, tested without a
// device.

/// An output that holds frames and plays none of them for `thresholdNanoseconds` while the player
/// plays has stalled: its sound server (PulseAudio, PipeWire) or its device stopped taking audio.
/// The device never runs dry, so no underrun is counted, and the position (what was heard)
/// holds still; without this nothing would say why. A stream keeps being received meanwhile, so
/// it plays on afterwards that much further behind live. The runner logs when a stall starts and
/// when it ends and counts it (`XrunCounters.stalls`).
///
/// Fed each time the runner measures the device while playing (not while it drains: some
/// devices report their own latency as delay after they ran dry). A value; the audio thread's.
struct OutputStallWatch {
    /// How long an output may hold frames without playing any before it counts as stalled: far
    /// longer than any device's start (PulseAudio's plugin takes a few hundred ms) or period.
    static let thresholdNanoseconds: UInt64 = 2_000_000_000

    enum Event: Equatable {
        /// The output has played nothing for `seconds` (the threshold, or a little more).
        case began(seconds: Double)
        /// It plays again, after `seconds` without playing anything.
        case ended(seconds: Double)
    }

    /// The frames heard when last measured, and since when they have not moved.
    private var audible: Int64?
    private var since: UInt64 = 0
    /// A stall began and has not ended.
    private(set) var stalled = false

    /// The device was measured at `now` (monotonic ns): `audible` frames of it heard, `queued`
    /// still held. A stall begins once the frames heard have not moved for the threshold while
    /// some are held; it ends when they move (or the device holds none: it ran dry, which its
    /// own underrun says).
    mutating func observe(audible: Int64, queued: Int, at now: UInt64) -> Event? {
        guard audible == self.audible, queued > 0 else {
            let wasStalled = stalled
            let from = since
            self.audible = audible
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
            audible = nil
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
