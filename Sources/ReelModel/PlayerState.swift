// The player's published state: the value of the `player.state` stream.

/// What the player is playing from.
public enum PlayerSource: Equatable, Sendable {
    /// A file given by absolute path.
    case file(path: String)
    /// A recording of the library tree.
    case item(id: String, path: String, name: String)
    /// An http(s) URL, as the client gave it (also after redirects); `name` is the station's
    /// (`icy-name`) and `title` what is on air (ICY `StreamTitle`, or a client's `addtagid`),
    /// each once known.
    case url(String, name: String?, title: String?)
}

extension PlayerSource {
    /// How messages name it: a file by its path, a recording by its tree path (never the
    /// library's internal audio file).
    public var displayName: String {
        switch self {
        case .file(let path): path
        case .item(_, let path, _): path
        case .url(let url, _, _): url
        }
    }
}

/// A URL source's connection (`PlayerState.stream`).
public struct StreamStatus: Equatable, Sendable {
    public enum State: String, Equatable, Sendable {
        /// Before the first response (DNS, connect, TLS, the headers).
        case connecting
        /// Connected, but the decoder is waiting for bytes.
        case buffering
        case playing
        /// The connection dropped or stalled; a new one is being made.
        case reconnecting
    }

    public var state: State
    /// Kilobits a second, when the server or the decoder says.
    public var bitrate: Int?
    /// Seconds of the stream received and not yet played.
    public var buffered: Double
    /// Connections made again after a drop, since the source started.
    public var reconnects: Int

    public init(state: State = .connecting, bitrate: Int? = nil, buffered: Double = 0, reconnects: Int = 0) {
        self.state = state
        self.bitrate = bitrate
        self.buffered = buffered
        self.reconnects = reconnects
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
    /// A stream without a length (no `Content-Length`): no duration; `position` is the audio
    /// played since it connected.
    public var live: Bool = false
    /// A URL source's connection; nil for a file.
    public var stream: StreamStatus? = nil

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
