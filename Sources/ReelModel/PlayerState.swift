// The player's published state: the value of the `player.state` stream.

/// What the player is playing from.
public enum PlayerSource: Equatable, Sendable {
    /// A file given by absolute path.
    case file(path: String)
    /// A recording of the library tree.
    case item(id: String, path: String, name: String)
}

extension PlayerSource {
    /// How messages name it: a file by its path, a recording by its tree path (never the
    /// library's internal audio file).
    public var displayName: String {
        switch self {
        case .file(let path): path
        case .item(_, let path, _): path
        }
    }
}

/// The player's activity.
public enum PlayerActivity: String, Equatable, Sendable {
    case stopped, playing, paused
}

/// A snapshot of the player (`PlayerState` in `protocol.md`).
public struct PlayerState: Equatable, Sendable {
    public var state: PlayerActivity
    /// Seconds; what is audible now.
    public var position: Double
    /// Seconds, or nil when nothing is loaded.
    public var duration: Double?
    public var source: PlayerSource?
    /// The queue entry being played (its id), or nil.
    public var entry: Int?
    public var format: AudioFormat?
    /// Monotonic seconds at which `position` was true.
    public var timestamp: Double
    /// Underruns recovered since the daemon started.
    public var underruns: Int
    /// The last device or decoding failure that paused or stopped playback; cleared by the next
    /// successful play or resume.
    public var error: ReelError?
    /// `duration` is an estimate: an MP3 without a Xing/Info tag whose frames are being counted.
    public var durationEstimated: Bool
    /// What the device was given: the file's own rate and channels, 16 bits for 16-bit and lossy
    /// sources, 32 for 24- and 32-bit and floating-point ones (ALSA converts further only where
    /// the device takes neither); nil while the device is closed (stopped).
    public var output: OutputFormat?
    /// The ReplayGain applied to what is audible, in dB (its tags' gain with the preamp and
    /// clipping prevention, or the missing-tags preamp); nil when ReplayGain is off or nothing is
    /// loaded.
    public var gain: Double?
    /// When the sleep timer stops the player (seconds since the epoch); nil: no sleep timer.
    public var sleepAt: Double? = nil

    public init(
        state: PlayerActivity = .stopped, position: Double = 0, duration: Double? = nil,
        source: PlayerSource? = nil, entry: Int? = nil, format: AudioFormat? = nil, timestamp: Double = 0,
        underruns: Int = 0, error: ReelError? = nil, durationEstimated: Bool = false, output: OutputFormat? = nil,
        gain: Double? = nil
    ) {
        self.output = output
        self.gain = gain
        self.state = state
        self.position = position
        self.duration = duration
        self.source = source
        self.entry = entry
        self.format = format
        self.timestamp = timestamp
        self.underruns = underruns
        self.error = error
        self.durationEstimated = durationEstimated
    }

    public static let stopped = PlayerState()
}
