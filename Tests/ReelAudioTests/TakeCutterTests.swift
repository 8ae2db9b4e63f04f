import ReelAudio
import Testing

/// The cutting rules of a session, without I/O: segments join exactly, triggers include their
/// pre-roll and end after the hold, short takes are discarded, aligned segments start on the clock.
@Suite struct TakeCutterTests {
    let rate: Int64 = 48000

    /// Feeds `signal` in chunks; returns every step.
    func cut(_ cutter: inout TakeCutter, frames: Int64, chunk: Int64 = 4800, signal: (Int64) -> Int16 = { _ in 0 }) -> [TakeStep] {
        var steps: [TakeStep] = []
        var position: Int64 = 0
        while position < frames && !cutter.isFinished {
            let count = min(chunk, frames - position)
            let samples = (0..<count).map { signal(position + $0) }
            steps += samples.withUnsafeBufferPointer { cutter.feed($0, at: position) }
            position += count
        }
        return steps
    }

    /// The frames each take got, from the steps (pre-roll included), and whether it was kept.
    func takes(_ steps: [TakeStep], firstOpenAt: Int64? = 0) -> [(range: Range<Int64>, keep: Bool)] {
        var result: [(Range<Int64>, Bool)] = []
        var start = firstOpenAt
        var expected = firstOpenAt ?? 0
        for step in steps {
            switch step {
            case .open(let frame):
                #expect(start == nil, "a take opened while another was open")
                start = frame
                expected = frame
            case .write(let range):
                #expect(range.lowerBound == expected, "a gap or an overlap inside a take at \(range)")
                expected = range.upperBound
            case .close(let frame, let keep):
                #expect(frame == expected, "a take closed at \(frame) after being given frames up to \(expected)")
                result.append((start!..<frame, keep))
                start = nil
            }
        }
        return result
    }

    @Test func segmentsJoinExactlyAndTheLastEndsAtTheLimit() {
        var cutter = TakeCutter(
            plan: .segments(.every(seconds: 10, sampleRate: 48000)), start: 0, endFrame: 35 * rate, channels: 1)
        let steps = cut(&cutter, frames: 40 * rate, chunk: 4801)
        #expect(cutter.isFinished)
        let result = takes(steps)
        #expect(result.map(\.range) == [0..<480_000, 480_000..<960_000, 960_000..<1_440_000, 1_440_000..<1_680_000])
        #expect(result.allSatisfy { $0.keep })
    }

    @Test func aStopClosesTheOpenSegmentAfterWhatItWasGiven() {
        var cutter = TakeCutter(plan: .segments(.every(seconds: 10, sampleRate: 48000)), start: 0, endFrame: nil, channels: 1)
        var steps = cut(&cutter, frames: 25 * rate, chunk: 4800)
        steps += cutter.finish(keep: true)
        #expect(takes(steps).map(\.range) == [0..<480_000, 480_000..<960_000, 960_000..<1_200_000])
        #expect(cutter.finish(keep: true).isEmpty, "a second finish does nothing")
    }

    @Test func aSegmentBoundaryOnAChunkEdgeOpensTheNextOnce() {
        var cutter = TakeCutter(plan: .segments(SegmentPlan(firstFrames: 4800, frames: 9600)), start: 0, endFrame: nil, channels: 1)
        let steps = cut(&cutter, frames: 4800 * 5, chunk: 4800) + cutter.finish(keep: true)
        #expect(takes(steps).map(\.range) == [0..<4800, 4800..<14400, 14400..<24000])
        #expect(steps.last == .close(at: 24000, keep: true), "a stop on a boundary opens no empty take")
    }

    @Test func aPrerollStartsTheFirstTakeBeforeTheFirstFrameFed() {
        var cutter = TakeCutter(plan: .single, start: 1000, endFrame: nil, channels: 1)
        let samples = [Int16](repeating: 0, count: 500)
        let steps = samples.withUnsafeBufferPointer { cutter.feed($0, at: 3000) }
        #expect(steps == [.write(1000..<3500)], "the frames before the chunk come from history")
    }

    @Test func alignedSegmentsEndTheFirstOnTheNextBoundary() {
        // 10:59:30 into an hour-aligned series of hours: the first lasts 30 s.
        let plan = SegmentPlan.aligned(seconds: 3600, unitSeconds: 3600, wallClock: 10 * 3600 + 59 * 60 + 30, sampleRate: 48000)
        #expect(plan.firstFrames == 30 * 48000)
        #expect(plan.frames == 3600 * 48000)
        // Quarter hours, at 10:07:00.25: the first ends at 10:15.
        let quarter = SegmentPlan.aligned(seconds: 900, unitSeconds: 3600, wallClock: 36000 + 420.25, sampleRate: 8000)
        #expect(quarter.firstFrames == Int64((480 - 0.25) * 8000))
        // On the boundary itself: a whole segment.
        #expect(SegmentPlan.aligned(seconds: 60, unitSeconds: 60, wallClock: 120, sampleRate: 1000).firstFrames == 60_000)
    }

    @Test func theThresholdFollowsDBFS() {
        #expect(TriggerPlan.threshold(dBFS: 0) == 32768)
        #expect(TriggerPlan.threshold(dBFS: -6.0206) == 16384)
        #expect(TriggerPlan.threshold(dBFS: -40) == 328)
        #expect(TriggerPlan.threshold(dBFS: -200) == 1)
    }

    /// Bursts at 3 s, 10 s and 20 s (1 s each, loud), silence between.
    static func bursts(_ frame: Int64) -> Int16 {
        let second = Double(frame) / 48000
        for start in [3.0, 10.0, 20.0] where second >= start && second < start + 1 {
            return Int16(8000 + frame % 1000)
        }
        return 0
    }

    @Test func threeBurstsGiveThreeTakesWithPrerollAndHold() {
        let plan = TriggerPlan(threshold: 1000, holdFrames: 2 * rate, prerollFrames: rate / 2, minFrames: rate / 10)
        var cutter = TakeCutter(plan: .triggered(plan), start: 0, endFrame: nil, channels: 1)
        let steps = cut(&cutter, frames: 30 * rate, chunk: 4801, signal: Self.bursts) + cutter.finish(keep: true)
        let result = takes(steps, firstOpenAt: nil)
        #expect(result.map(\.range) == [
            (3 * rate - rate / 2)..<(4 * rate + 2 * rate),
            (10 * rate - rate / 2)..<(11 * rate + 2 * rate),
            (20 * rate - rate / 2)..<(21 * rate + 2 * rate),
        ])
        #expect(result.allSatisfy { $0.keep })
    }

    @Test func aClickShorterThanMinLengthIsDiscarded() {
        let plan = TriggerPlan(threshold: 1000, holdFrames: rate, prerollFrames: rate, minFrames: rate / 2)
        var cutter = TakeCutter(plan: .triggered(plan), start: 0, endFrame: nil, channels: 1)
        // A 10 ms click at 2 s, then a 1 s sound at 5 s.
        let steps = cut(&cutter, frames: 10 * rate, chunk: 1000) { frame in
            (frame >= 2 * rate && frame < 2 * rate + 480) || (frame >= 5 * rate && frame < 6 * rate) ? 20000 : 0
        }
        let result = takes(steps, firstOpenAt: nil)
        #expect(result.map(\.keep) == [false, true])
        #expect(result.map(\.range.lowerBound) == [rate, 4 * rate])
    }

    @Test func thePrerollNeverReachesIntoThePreviousTakeOrBeforeTheSession() {
        let plan = TriggerPlan(threshold: 1000, holdFrames: rate / 10, prerollFrames: 5 * rate, minFrames: 0)
        var cutter = TakeCutter(plan: .triggered(plan), start: rate, endFrame: nil, channels: 1)
        var steps: [TakeStep] = []
        var position = rate
        while position < 8 * rate {
            let samples = (0..<Int64(4800)).map { frame -> Int16 in
                let f = position + frame
                return (f >= 2 * rate && f < 3 * rate) || (f >= 4 * rate && f < 5 * rate) ? -20000 : 0
            }
            steps += samples.withUnsafeBufferPointer { cutter.feed($0, at: position) }
            position += 4800
        }
        let result = takes(steps, firstOpenAt: nil)
        #expect(result.map(\.range) == [rate..<(3 * rate + rate / 10), (3 * rate + rate / 10)..<(5 * rate + rate / 10)])
    }

    @Test func theSessionLimitClosesATriggeredTake() {
        let plan = TriggerPlan(threshold: 1000, holdFrames: rate, prerollFrames: 0, minFrames: 0)
        var cutter = TakeCutter(plan: .triggered(plan), start: 0, endFrame: 3 * rate, channels: 1)
        let steps = cut(&cutter, frames: 10 * rate) { $0 >= 2 * rate ? 5000 : 0 }
        #expect(cutter.isFinished)
        #expect(takes(steps, firstOpenAt: nil).map(\.range) == [(2 * rate)..<(3 * rate)])
    }

    @Test func stereoTriggersOnEitherChannel() {
        let plan = TriggerPlan(threshold: 1000, holdFrames: 10, prerollFrames: 0, minFrames: 0)
        var cutter = TakeCutter(plan: .triggered(plan), start: 0, endFrame: nil, channels: 2)
        var samples = [Int16](repeating: 0, count: 200)
        samples[2 * 50 + 1] = 1000  // frame 50, right channel
        let steps = samples.withUnsafeBufferPointer { cutter.feed($0, at: 0) }
        #expect(steps == [.open(50), .write(50..<61), .close(at: 61, keep: true)])
    }
}
