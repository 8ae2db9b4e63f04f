// An output that takes and plays no frames while the player plays (`OutputStallWatch`): pure
// rules, then the engine with a fake device that stops taking audio.

import Foundation
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio

@Suite struct OutputStallTests {
    let second: UInt64 = 1_000_000_000

    @Test func anOutputThatTakesAndPlaysNothingForTwoSecondsHasStalledUntilItMovesAgain() {
        var watch = OutputStallWatch()
        let start: UInt64 = 1_000 * second
        #expect(watch.observe(written: 4196, audible: 100, at: start) == nil)
        // Playing: the frames heard move, however slowly.
        #expect(watch.observe(written: 4296, audible: 200, at: start + second) == nil)
        // Stuck since start + 1 s: not yet at 2 s, then a stall, said once.
        #expect(watch.observe(written: 4296, audible: 200, at: start + 2 * second) == nil)
        #expect(watch.observe(written: 4296, audible: 200, at: start + 3 * second - 1) == nil)
        #expect(watch.observe(written: 4296, audible: 200, at: start + 3 * second) == .began(seconds: 2))
        #expect(watch.stalled)
        #expect(watch.observe(written: 4296, audible: 200, at: start + 9 * second) == nil)
        // It plays again 8.6 s after it stopped: the end, with how long it lasted.
        let again = start + 9 * second + 600_000_000
        #expect(watch.observe(written: 4296, audible: 201, at: again) == .ended(seconds: 8.6))
        #expect(!watch.stalled)
        // And a new stall needs another 2 s from there.
        #expect(watch.observe(written: 4296, audible: 201, at: again + second) == nil)
        #expect(watch.observe(written: 4296, audible: 201, at: again + 2 * second) == .began(seconds: 2))
        // Taking frames again ends it too (a device whose delay says nothing yet).
        #expect(watch.observe(written: 5000, audible: 201, at: again + 3 * second) == .ended(seconds: 3))
    }

    @Test func anOutputThatTakesFramesOrReportsNoDelayIsWatchedByBothCounts() {
        // A device that ran dry takes the runner's frames (silence while a stream waits) at
        // once: the frames heard may stay, the frames written move. No stall, however long.
        var watch = OutputStallWatch()
        for step in 0..<10 {
            #expect(watch.observe(written: Int64(step) * 1024, audible: 0, at: UInt64(step) * second) == nil)
        }
        // PulseAudio's plugin while its server does not answer: no delay reported (heard =
        // written), and nothing taken. A stall all the same.
        #expect(watch.observe(written: 20_000, audible: 20_000, at: 20 * second) == nil)
        #expect(watch.observe(written: 20_000, audible: 20_000, at: 23 * second) == .began(seconds: 3))
    }

    @Test func aResetEndsTheStallInProgressAndStartsAfresh() {
        var watch = OutputStallWatch()
        #expect(watch.reset(at: 0) == nil)
        _ = watch.observe(written: 70, audible: 7, at: 10 * second)
        #expect(watch.observe(written: 70, audible: 7, at: 13 * second) == .began(seconds: 3))
        // Paused 5 s after it stopped playing.
        #expect(watch.reset(at: 15 * second) == 5)
        #expect(!watch.stalled)
        // Resumed: the same frames are a new start, not a stall since 10 s.
        #expect(watch.observe(written: 70, audible: 7, at: 100 * second) == nil)
        #expect(watch.observe(written: 70, audible: 7, at: 101 * second) == nil)
        #expect(OutputStallWatch.describe(8.64) == "8.6 s")
        #expect(OutputStallWatch.describe(2) == "2.0 s")
    }

    /// A device that plays what it is given about as fast as it is played (each write of a
    /// 1024-frame period takes 20 ms), then takes nothing and plays nothing, reporting
    /// `delayWhileStalled` frames queued (PulseAudio's plugin reports none while its server does
    /// not answer), until the test lets it go on.
    @Test(arguments: [4096, 0])
    func theEngineCountsAnOutputThatStopsTakingAudioAndThePositionHoldsStill(delayWhileStalled: Int) throws {
        let tone = StallingTone(seconds: 60, waits: 0)
        let harness = PlaybackEngineTests.Harness()
        harness.device.script { $0.writeDelayMicroseconds = 20_000 }
        _ = try harness.run(timeout: 10) { .load(ReaderBox(tone), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        #expect(harness.waitUntil(timeout: 30) { _ in harness.device.state.framesWritten > 44100 })
        harness.device.script { state in
            state.delayFrames = delayWhileStalled
            state.fullAfterFrames = state.framesWritten
        }
        #expect(harness.waitUntil(timeout: 30) { $0.counters.stalls == 1 }, "no stall counted: \(harness.engine.snapshot.counters)")
        let during = harness.engine.snapshot
        #expect(during.activity == .playing)
        #expect(during.counters.xruns == 0, "a stall is no underrun")
        let held = during.position(at: monotonicNanoseconds())
        usleep(500_000)
        // (Interpolated from the last measurement, a millisecond old at most: a few frames.)
        let later = harness.engine.snapshot.position(at: monotonicNanoseconds())
        #expect(abs(later - held) < 0.05, "the position moved from \(held) to \(later) s while nothing played")
        // It plays again: counted once, and the position moves on.
        harness.device.script { state in
            state.delayFrames = 0
            state.fullAfterFrames = nil
        }
        #expect(harness.waitUntil(timeout: 30) { $0.position(at: monotonicNanoseconds()) > held + 0.5 })
        #expect(harness.engine.snapshot.counters.stalls == 1)
        _ = harness.run { .stop($0) }
    }
}
