// The recorder's published state: the value of the `recorder.state` stream.

/// The recorder's activity.
public enum RecorderActivity: String, Equatable, Sendable {
    case idle, recording
}

/// A snapshot of the recorder (`RecorderState` in `protocol.md`).
public struct RecorderState: Equatable, Sendable {
    public var state: RecorderActivity
    /// The recording being made (while recording), or the last one made (when idle), as it was
    /// when it started or finished.
    public var item: Item?
    /// Seconds captured so far.
    public var elapsed: Double
    /// Peak and RMS level of the last tenth of a second, in dBFS; nil when idle.
    public var peak: Double?
    public var rms: Double?
    public var format: AudioFormat?
    /// Overruns of this recording (the device's, and audio dropped because the disk was too slow).
    public var overruns: Int
    /// Why the last recording ended by itself (`disk_full`, `device_unavailable`); nil after a
    /// normal stop and while recording.
    public var error: ReelError?

    public init(
        state: RecorderActivity = .idle, item: Item? = nil, elapsed: Double = 0, peak: Double? = nil,
        rms: Double? = nil, format: AudioFormat? = nil, overruns: Int = 0, error: ReelError? = nil
    ) {
        self.state = state
        self.item = item
        self.elapsed = elapsed
        self.peak = peak
        self.rms = rms
        self.format = format
        self.overruns = overruns
        self.error = error
    }

    public static let idle = RecorderState()
}
