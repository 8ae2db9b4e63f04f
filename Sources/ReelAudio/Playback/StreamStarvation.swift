// What the engine does while a stream's decoder waits for the network, and when its audio comes
// again: pure rules, tested without a device.

/// The engine's rules for a source that has nothing yet (`isWaitingForData`: a stream whose
/// server dropped, stalled or is slower than real time).
///
/// While it waits, silence keeps the device playing, but only up to `lowWater` frames queued:
/// what the device needs to start (its start threshold, one period) and no more. The source is
/// asked again every `pollMilliseconds`, not when the device next has room, so audio that comes
/// is written at once instead of after seconds of queued silence.
///
/// When audio comes again and the listener hears only silence (every frame of the source written
/// was heard), the silence still queued is dropped and the audio starts at once (`rejoin`); while
/// some of the source's audio is still to be heard, cutting it would be heard, so the new audio
/// follows what is queued.
enum StreamStarvation {
    /// How often the source is asked again while enough silence is queued.
    static let pollMilliseconds = 20

    /// The frames the device is kept at while the source waits: its start threshold (a period).
    static func lowWater(periodFrames: Int) -> Int { max(periodFrames, 1) }

    /// The silence written at a time: a tenth of a period.
    static func fillerFrames(periodFrames: Int) -> Int { max(periodFrames / 10, 1) }

    enum Step: Equatable {
        /// Write this many frames of silence: the device holds less than `lowWater`.
        case fill(frames: Int)
        /// Enough is queued: ask the source again after this many milliseconds (a command wakes
        /// the engine sooner).
        case wait(milliseconds: Int)
    }

    /// The step while the source waits, the device holding `queuedFrames` (its delay).
    static func whileWaiting(queuedFrames: Int, periodFrames: Int, sampleRate: Int) -> Step {
        let low = lowWater(periodFrames: periodFrames)
        if queuedFrames < low { return .fill(frames: fillerFrames(periodFrames: periodFrames)) }
        // Sooner when the queue reaches the low-water mark before the next poll.
        let untilLow = (queuedFrames - low) * 1000 / max(sampleRate, 1)
        return .wait(milliseconds: max(1, min(pollMilliseconds, untilLow)))
    }

    enum Rejoin: Equatable {
        /// The audio follows what the device holds.
        case follow
        /// Drop what the device holds (silence only) and start with the audio now.
        case restart
    }

    /// Audio came again after silence was written: `queuedFrames` the device holds,
    /// `unheardSourceFrames` of them the source's (the rest silence). Less silence than one
    /// filler write is not worth a restart of the device.
    static func rejoin(queuedFrames: Int, unheardSourceFrames: Int64, periodFrames: Int) -> Rejoin {
        unheardSourceFrames <= 0 && queuedFrames > fillerFrames(periodFrames: periodFrames) ? .restart : .follow
    }
}
