// A schedule: when it fires, what it does, and how its last firing went (`protocol.md`, v3).

/// One schedule (`Schedule` in `protocol.md`). `when` is kept as written and parsed by the core
/// (`CalendarExpression`); `next` and `last.at` are instants (seconds since the epoch), which
/// front ends write as local ISO-8601 with the offset.
public struct Schedule: Equatable, Sendable {
    public var id: Int
    public var name: String
    public var when: String
    public var enabled: Bool
    public var action: ScheduleAction
    /// When it fires next; nil when disabled or when it never fires again.
    public var next: Int64?
    public var last: ScheduleRun?

    public init(
        id: Int, name: String, when: String, enabled: Bool, action: ScheduleAction, next: Int64? = nil, last: ScheduleRun? = nil
    ) {
        self.id = id
        self.name = name
        self.when = when
        self.enabled = enabled
        self.action = action
        self.next = next
        self.last = last
    }
}

/// How a firing went.
public enum ScheduleResult: String, Equatable, Sendable {
    case ok, missed, failed
}

/// The last firing: when it was due (seconds since the epoch), how it went, and what happened in
/// words (`started 4 min late: recording the remaining 56 min`, `reeld was not running at 07:00`).
public struct ScheduleRun: Equatable, Sendable {
    public var at: Int64
    public var result: ScheduleResult
    public var message: String
    /// The error reason of a failure (`busy` when the recorder was taken), for front ends.
    public var reason: ErrorReason?

    public init(at: Int64, result: ScheduleResult, message: String, reason: ErrorReason? = nil) {
        self.at = at
        self.result = result
        self.message = message
        self.reason = reason
    }
}

/// What a schedule does.
public enum ScheduleAction: Equatable, Sendable {
    case play(SchedulePlay)
    case record(ScheduleRecord)
    /// Stops the player, fading out over `fadeOut` seconds first.
    case stop(fadeOut: Double?)
}

/// `play`: what to play (as `player.play`: the queue becomes it), at which volume, fading in,
/// and for how long.
public struct SchedulePlay: Equatable, Sendable {
    public enum Target: Equatable, Sendable {
        case url(String)
        /// An absolute path inside the media roots.
        case file(String)
        /// A recording's item id.
        case item(String)
        /// A stored playlist's name.
        case playlist(String)
        /// An album of the music folders, as `music.albums` names it.
        case album(String)
    }

    public var target: Target
    /// 0–100, set before playing.
    public var volume: Int?
    /// Seconds over which the sound rises from silence.
    public var fadeIn: Double?
    /// Seconds after which the player stops (if it still plays what this started).
    public var stopAfter: Double?

    public init(target: Target, volume: Int? = nil, fadeIn: Double? = nil, stopAfter: Double? = nil) {
        self.target = target
        self.volume = volume
        self.fadeIn = fadeIn
        self.stopAfter = stopAfter
    }
}

/// `record`: a take of `duration` seconds into `folderPath` (the root when nil), named `name`
/// (strftime fields filled in at the start; a taken name gets ` (2)`), in `format`.
public struct ScheduleRecord: Equatable, Sendable {
    public enum Source: Equatable, Sendable {
        case capture
        case url(String)
    }

    public var duration: Double
    public var source: Source
    public var folderPath: String?
    public var name: String?
    public var format: String?

    public init(duration: Double, source: Source = .capture, folderPath: String? = nil, name: String? = nil, format: String? = nil) {
        self.duration = duration
        self.source = source
        self.folderPath = folderPath
        self.name = name
        self.format = format
    }
}
