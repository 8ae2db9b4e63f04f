// The playback engine: one audio thread that owns the PCM and the decoder.

import Logging
import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// Plays tracks on a dedicated thread, joining consecutive tracks of one format sample-exactly.
/// The control side posts `PlaybackCommand`s (from any thread) and reads `snapshot`; the audio
/// thread performs them between periods, and a command wakes it from its wait for the device,
/// so each takes effect at once; it reports every change through `onChange`.
///
/// Gapless: the control side lines up the next track (`lineUp`) while the current one plays;
/// when the current track's decoder ends, the next one's frames follow in the same device
/// buffer. The audible track (`snapshot.token`) switches when its first frame is heard (frames
/// written minus the device's delay), not when it is decoded. A track of another format waits
/// until the device has played out everything (drained, not dropped), then the device reopens.
///
/// Pause drops what the device has queued and rewinds the decoder to the audible frame, so
/// pausing is immediate and resuming continues exactly where the sound stopped.
public final class PlaybackEngine: @unchecked Sendable {
    public typealias ChangeHandler = @Sendable (PlaybackSnapshot) -> Void
    /// Called with a track's token when the engine starts decoding it and nothing is lined up
    /// after it: the control side answers with `lineUp(after: token, …)`.
    public typealias WantsNextHandler = @Sendable (Int) -> Void

    private let mailbox = Mailbox<PlaybackCommand>()
    private let published = Locked(PlaybackSnapshot())
    private var thread: pthread_t?
    private let runner: PlaybackRunner
    /// What plays, for the recorder (`source: "player"`): the decoded frames as they are heard.
    public let tap: PlayerTap

    /// - Parameters:
    ///   - device: the playback PCM, or an `OutputSet` of the device and pipe outputs; from now
    ///     on touched only by the audio thread.
    ///   - onChange: called on the audio thread after each discrete change (start, pause, seek,
    ///     a new audible track, end, failure); it must not block.
    ///   - onWantsNext: called on the audio thread when a track starts decoding with nothing
    ///     lined up after it; it must not block.
    public init(
        device: PCMOutput, timing: PCMTiming = PCMTiming(), logger: Logger,
        onWantsNext: @escaping WantsNextHandler = { _ in }, onChange: @escaping ChangeHandler
    ) {
        let tap = PlayerTap()
        self.tap = tap
        runner = PlaybackRunner(
            device: device as? OutputSet ?? OutputSet(device: device), timing: timing, mailbox: mailbox, published: published, logger: logger,
            onChange: onChange, onWantsNext: onWantsNext, tap: tap)
    }

    public func start() {
        let runner = self.runner
        thread = OSThread.start(name: "reel-playback", realtime: true) { runner.run() }
    }

    /// Posts a command; its reply comes on the audio thread.
    public func send(_ command: PlaybackCommand) {
        mailbox.post(command)
    }

    /// The latest published state. Any thread.
    public var snapshot: PlaybackSnapshot { published.current }

    /// The latest state and the audible position now, in seconds. Any thread.
    ///
    /// Devices consume in bursts (PulseAudio takes several periods at once), so a fresh
    /// measurement can land a little behind what interpolation already reported. Between jumps
    /// the position reported here never goes backwards.
    public func currentPosition(at now: UInt64 = monotonicNanoseconds()) -> (snapshot: PlaybackSnapshot, position: Double) {
        let snapshot = published.current
        let measured = snapshot.position(at: now)
        let position = reported.withLock { floor -> Double in
            if floor.epoch == snapshot.epoch && snapshot.activity == .playing {
                floor.position = max(floor.position, measured)
            } else {
                floor = (snapshot.epoch, measured)
            }
            return floor.position
        }
        return (snapshot, position)
    }

    private let reported = Locked<(epoch: Int, position: Double)>((0, 0))

    /// Stops playback, closes the device and ends the thread.
    public func shutdown() {
        guard let thread else { return }
        mailbox.post(.shutdown({}))
        pthread_join(thread, nil)
        self.thread = nil
    }
}
