// A take's loudness (EBU R128, libebur128), measured from the samples as they are recorded.

import CEBUR128
import ReelModel

/// Integrated loudness (EBU R128 / ITU BS.1770) and sample peak of 16-bit interleaved frames,
/// fed as they are captured; at the end of the take, the ReplayGain 2.0 gain that brings it to
/// −18 LUFS. libebur128 is loaded with `dlopen` the first time a meter is made (see `CEBUR128`):
/// a daemon that never records does not map it. One owner at a time (the capture's writer
/// thread while recording, then whoever reads the result once the writer has finished).
public final class LoudnessMeter: @unchecked Sendable {
    /// ReplayGain 2.0's reference loudness.
    public static let referenceLUFS = -18.0

    private var state: UnsafeMutablePointer<ebur128_state>?
    private let channels: Int
    /// Why the meter does not measure (libebur128 missing, a format it refuses); nil when it does.
    public let unavailable: String?

    public init(format: PCMFormat) {
        channels = format.channels
        if let error = reel_ebur128_load() {
            unavailable = String(cString: error)
            return
        }
        let mode = Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue)
        state = reel_ebur128_init(UInt32(format.channels), UInt(format.sampleRate), mode)
        unavailable = state == nil ? "libebur128 refused \(format.channels) channels at \(format.sampleRate) Hz" : nil
    }

    deinit {
        if state != nil { reel_ebur128_destroy(&state) }
    }

    /// Adds `frames` interleaved 16-bit frames.
    public func add(_ buffer: UnsafeRawPointer, frames: Int) {
        guard let state, frames > 0 else { return }
        _ = reel_ebur128_add_frames_short(state, buffer.assumingMemoryBound(to: Int16.self), frames)
    }

    /// The integrated loudness in LUFS; nil when nothing above the gate was heard (silence, or
    /// under 400 ms) or the meter is unavailable.
    public var loudness: Double? {
        guard let state else { return nil }
        var value = 0.0
        guard reel_ebur128_loudness_global(state, &value) == 0, value.isFinite else { return nil }
        return value
    }

    /// The largest sample as a fraction of full scale, over every channel.
    public var peak: Double? {
        guard let state else { return nil }
        var largest = 0.0
        for channel in 0..<channels {
            var value = 0.0
            guard reel_ebur128_sample_peak(state, UInt32(channel), &value) == 0 else { return nil }
            largest = max(largest, value)
        }
        return largest
    }

    /// The ReplayGain 2.0 track gain: −18 LUFS − loudness, with the peak; nil when not measured.
    public var replayGain: ReplayGainValue? {
        loudness.map { ReplayGainValue(gain: Self.referenceLUFS - $0, peak: peak) }
    }
}

/// A recording's encoder that also feeds a `LoudnessMeter` with every frame it writes.
public final class LoudnessMeasuringWriter: RecordingWriter {
    let writer: RecordingWriter
    let meter: LoudnessMeter

    public init(_ writer: RecordingWriter, meter: LoudnessMeter) {
        self.writer = writer
        self.meter = meter
    }

    public func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError) {
        try writer.write(buffer, frames: frames)
        meter.add(buffer, frames: frames)
    }

    public func flush() throws(ReelError) { try writer.flush() }
    public func sync() throws(ReelError) { try writer.sync() }
    public func close() throws(ReelError) { try writer.close() }
}
