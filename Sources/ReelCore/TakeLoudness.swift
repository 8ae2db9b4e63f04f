// A take's ReplayGain: its loudness measured while it is recorded, kept with its item.

import Logging
import ReelAudio
import ReelModel
import ReelRuntime

/// Gives each take's encoder a `LoudnessMeter` (through `makeWriter`, the capture engine's
/// writer factory) and, when the take is finished, its ReplayGain (−18 LUFS − its integrated
/// loudness, and its sample peak), which the recorder keeps with the recording's item, where the
/// player reads it. A take too short or too quiet to measure keeps none (the missing-tags preamp applies).
///
/// Threads: `makeWriter` runs where the capture engine starts a take, the meter is fed on its
/// writer thread, `finish` runs where the take is finished, after the writer thread ended.
final class TakeLoudness: @unchecked Sendable {
    private let current = Locked<LoudnessMeter?>(nil)

    /// The live encoder of `request`, feeding a new meter.
    func makeWriter(_ request: CaptureRequest) throws(ReelError) -> RecordingWriter {
        let writer = try CaptureEngine.liveWriter(request)
        let meter = LoudnessMeter(format: request.format)
        current.withLock { $0 = meter }
        return LoudnessMeasuringWriter(writer, meter: meter)
    }

    /// The finished take's gain (once per take; nil when it was not measured: too short or
    /// too quiet, or libebur128 missing, which is logged). The caller keeps it with the take's
    /// final row (`LibraryStore.updateRecording(…replayGain:)`), in the same commit.
    func finish(recording id: String, logger: Logger) -> ReplayGainValue? {
        guard let meter = current.withLock({ meter in defer { meter = nil }; return meter }) else { return nil }
        if let reason = meter.unavailable {
            logger.warning("cannot measure the recording's loudness", metadata: ["item": "\(id)", "error": "\(reason)"])
            return nil
        }
        return meter.replayGain
    }
}
