// The recorder's published state: the value of the `recorder.state` stream.

/// The recorder's activity.
public enum RecorderActivity: String, Equatable, Sendable {
    /// `armed`: a triggered session listens for sound above its level, no take open.
    case idle, recording, armed
}

/// The session a take belongs to when it is one of many (segments, triggered takes).
public struct RecorderSeries: Equatable, Sendable {
    /// Takes kept so far in the session.
    public var takes: Int
    /// When the session began, ISO 8601 UTC.
    public var started: String

    public init(takes: Int, started: String) {
        self.takes = takes
        self.started = started
    }
}

/// The disk the recorder writes to, while recording.
public struct RecorderDisk: Equatable, Sendable {
    public var freeBytes: Int64
    /// Seconds until the free space reaches the floor (`keep.minFreeBytes`, else 0) at the
    /// current take's data rate; nil before the rate is known.
    public var secondsLeft: Double?

    public init(freeBytes: Int64, secondsLeft: Double?) {
        self.freeBytes = freeBytes
        self.secondsLeft = secondsLeft
    }
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
    /// The session, for segmented and triggered recording; nil otherwise and when idle.
    public var series: RecorderSeries?
    /// Free space while recording; nil when idle.
    public var disk: RecorderDisk?
    /// A triggered session's level, in dBFS (the meter's threshold line); nil otherwise.
    public var threshold: Double?

    public init(
        state: RecorderActivity = .idle, item: Item? = nil, elapsed: Double = 0, peak: Double? = nil,
        rms: Double? = nil, format: AudioFormat? = nil, overruns: Int = 0, error: ReelError? = nil,
        series: RecorderSeries? = nil, disk: RecorderDisk? = nil, threshold: Double? = nil
    ) {
        self.series = series
        self.disk = disk
        self.threshold = threshold
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
