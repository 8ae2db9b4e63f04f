// What the audio thread publishes: enough to compute the audible position at any moment.

import ReelModel

/// The engine's state, written by the audio thread after every change and every period, read by
/// anyone. The position is interpolated between measurements, so readers never touch the device.
public struct PlaybackSnapshot: Sendable, Equatable {
    public var activity: PlayerActivity = .stopped
    /// The track audible now (the `load` or `lineUp` token), so the controller can tell which
    /// queue entry is playing and whose track ended.
    public var token: Int? = nil
    /// The tracks the engine holds, in playing order: the audible one first, then those written
    /// to the device or lined up after it. Empty when stopped.
    public var lined: [Int] = []
    public var format: AudioFormat? = nil
    /// What the device was given (opened for), nil while it is closed.
    public var output: OutputFormat? = nil
    public var sampleRate: Int = 0
    /// The audible track's frames: exact, or an estimate while `frameCountIsEstimate` (an MP3
    /// without a Xing/Info tag whose frames are being counted); nil when not known.
    public var frameCount: Int64? = nil
    public var frameCountIsEstimate = false
    /// The frame audible at `measuredAt`: frames handed to the device minus its delay.
    public var audibleFrame: Int64 = 0
    /// The frame after the last one handed to the device.
    public var writtenFrame: Int64 = 0
    /// Monotonic nanoseconds of the last measurement.
    public var measuredAt: UInt64 = 0
    /// Changes whenever the position jumps (load, seek, pause, failure), so readers know when a
    /// smaller position is a jump and not measurement jitter.
    public var epoch: Int = 0
    /// How far interpolation may run ahead of a measurement (about one period).
    public var interpolationLimitFrames: Int64 = 0
    public var counters = XrunCounters()
    /// True once playback stopped because the last track held was played to its end (not by a
    /// command or a failure); false again at the next start.
    public var reachedEnd = false
    /// Why playback last stopped or paused on its own; nil after a successful start, resume or
    /// seek, after `stop`, and after `clearError`.
    public var error: ReelError? = nil

    public init() {}

    /// The audible position in seconds at monotonic time `now`.
    public func position(at now: UInt64) -> Double {
        guard sampleRate > 0 else { return 0 }
        var frame = audibleFrame
        if activity == .playing, now > measuredAt {
            let elapsed = Int64(Double(now - measuredAt) * Double(sampleRate) / 1e9)
            frame += min(elapsed, interpolationLimitFrames)
            frame = min(frame, writtenFrame)
        }
        return Double(max(frame, 0)) / Double(sampleRate)
    }

    public var duration: Double? {
        guard sampleRate > 0, let frameCount else { return nil }
        return Double(frameCount) / Double(sampleRate)
    }
}

/// A command to the engine. Each carries a reply, called once on the audio thread when the
/// command has taken effect (or failed).
public enum PlaybackCommand: Sendable {
    public typealias Reply = @Sendable (Result<PlaybackSnapshot, ReelError>) -> Void

    /// Replace the current track and everything lined up after it. `startPlaying: false` loads
    /// it paused at `startFrame`.
    case load(ReaderBox, token: Int, startFrame: Int64, startPlaying: Bool, Reply)
    /// Makes `next` the track that follows the track `after` (nil: nothing follows it), dropping
    /// whatever was lined up after `after`. When what is dropped was already written to the
    /// device, the device is dropped and refilled from the audible frame, so what plays is always
    /// what was asked. Fails with `not_found` when `after` is no longer held (it ended).
    case lineUp(after: Int, next: TrackBox?, Reply)
    case pause(Reply)
    case resume(Reply)
    case toggle(Reply)
    case stop(Reply)
    case seek(SeekTarget, Reply)
    /// The software volume: applied to every frame written from now on. While playing, what
    /// the device holds is replaced from the audible frame, so the change is heard at once
    /// (ramped over a few milliseconds, without a click), whatever the buffer's length.
    case setGain(volume: Int, muted: Bool, Reply)
    /// The ReplayGain (a linear factor; 1: none) of tracks the engine holds, by token; tracks
    /// not named keep theirs. It multiplies the volume's gain for that track's frames. A change
    /// to the audible track's is heard at once, ramped as a volume change is; one to a track
    /// already written after it refills from the audible frame.
    case setReplayGain([Int: Double], Reply)
    /// Turns outputs on and off (`OutputSet` ids; those not named are off). A pipe joins or
    /// leaves at once; turning the ALSA device on or off while playing reopens the clock and
    /// refills from the audible frame.
    case selectOutputs(Set<Int>, Reply)
    /// Forgets why playback last stopped or paused on its own (`error`); publishes only when
    /// there was an error.
    case clearError(Reply)
    /// A fade over seconds after the volume (`FadeRamp`), from the next frame written.
    case fade(FadeRamp.Request)
    case shutdown(@Sendable () -> Void)
}

/// Moves a reader to the audio thread, which owns it from then on.
public struct ReaderBox: @unchecked Sendable {
    public let reader: AudioFileReader
    /// The track's ReplayGain, a linear factor (1: none).
    public let replayGain: Double
    public init(_ reader: AudioFileReader, replayGain: Double = 1) {
        self.reader = reader
        self.replayGain = replayGain
    }
}

/// A track to line up: a reader at its first frame, the token that names it, and its
/// ReplayGain (a linear factor; 1: none).
public struct TrackBox: @unchecked Sendable {
    public let reader: AudioFileReader
    public let token: Int
    public let replayGain: Double
    public init(_ reader: AudioFileReader, token: Int, replayGain: Double = 1) {
        self.reader = reader
        self.token = token
        self.replayGain = replayGain
    }
}
