// Where a recorder session's takes begin and end, frame by frame: segments and level triggers.

#if canImport(Glibc)
import Glibc
#endif

/// How a session's captured frames are cut into takes.
public enum TakePlan: Sendable, Equatable {
    /// One take, the whole session.
    case single
    /// A new take at every boundary of the plan, sample-contiguous.
    case segments(SegmentPlan)
    /// A take while the level is above a threshold (with pre-roll and hold).
    case triggered(TriggerPlan)
}

/// Segment lengths in frames: the first may be shorter (aligned to the wall clock), every later
/// one is `frames` long.
public struct SegmentPlan: Sendable, Equatable {
    public var firstFrames: Int64
    public var frames: Int64

    public init(firstFrames: Int64, frames: Int64) {
        precondition(firstFrames > 0 && frames > 0)
        self.firstFrames = firstFrames
        self.frames = frames
    }

    /// Every segment `seconds` long.
    public static func every(seconds: Double, sampleRate: Int) -> SegmentPlan {
        let frames = max(1, Int64((seconds * Double(sampleRate)).rounded()))
        return SegmentPlan(firstFrames: frames, frames: frames)
    }

    /// Segments that begin on the wall clock: at the times whose offset from the start of their
    /// `unitSeconds` unit (a minute, an hour, a local day) is a multiple of `seconds`. The first
    /// segment ends at the next such time after `wallClock` (seconds since the epoch, in the
    /// zone the units are counted in); later ones are `seconds` of frames long (they follow the
    /// capture device's clock from there).
    public static func aligned(seconds: Int, unitSeconds: Int, wallClock: Double, sampleRate: Int) -> SegmentPlan {
        precondition(seconds > 0 && unitSeconds > 0 && unitSeconds % seconds == 0)
        let offset = wallClock.truncatingRemainder(dividingBy: Double(unitSeconds))
        let intoSegment = offset.truncatingRemainder(dividingBy: Double(seconds))
        let left = Double(seconds) - intoSegment
        let segment = Int64(seconds) * Int64(sampleRate)
        let first = max(1, min(segment, Int64((left * Double(sampleRate)).rounded())))
        return SegmentPlan(firstFrames: first, frames: segment)
    }
}

/// A level-activated take: it starts at the first sample whose magnitude reaches `threshold`
/// (with `prerollFrames` before it), ends `holdFrames` after the last such sample, and is kept
/// only when the sound in it (from the trigger to the last loud sample) is at least `minFrames`.
public struct TriggerPlan: Sendable, Equatable {
    /// A 16-bit sample magnitude (1…32768).
    public var threshold: Int32
    public var holdFrames: Int64
    public var prerollFrames: Int64
    public var minFrames: Int64

    public init(threshold: Int32, holdFrames: Int64, prerollFrames: Int64, minFrames: Int64) {
        self.threshold = max(1, threshold)
        self.holdFrames = max(0, holdFrames)
        self.prerollFrames = max(0, prerollFrames)
        self.minFrames = max(0, minFrames)
    }

    /// The magnitude of a 16-bit sample at `dBFS` (0 dBFS is 32768).
    public static func threshold(dBFS: Double) -> Int32 {
        let amplitude = 32768 * pow(10, dBFS / 20)
        return Int32(max(1, min(32768, amplitude.rounded())))
    }
}

/// One step of cutting, in device frames (counted from when the device was opened).
public enum TakeStep: Sendable, Equatable {
    /// A take begins at this frame (possibly before the chunk fed: the pre-roll, from history).
    case open(Int64)
    /// These frames go to the open take (the part before the chunk fed comes from history).
    case write(Range<Int64>)
    /// The open take ends before this frame; `keep` false discards it (too short, cancelled).
    case close(at: Int64, keep: Bool)
}

/// The cutting state machine of one session. Pure: fed the frames in order, it says where takes
/// open, what they get and where they close. No I/O, no clock; the writer thread owns one.
public struct TakeCutter: Sendable {
    public let plan: TakePlan
    /// The session's last frame + 1 (its `maxDuration`), if limited.
    public private(set) var endFrame: Int64?
    private let channels: Int
    /// The first frame not yet given to the open take (or, while armed, not yet scanned).
    private var next: Int64
    private var open = false
    /// Segments: the next take opens at the first frame written after a boundary (a stop right on
    /// a boundary leaves no empty take).
    private var opensAtNextWrite = false
    /// Segments: where the open take ends.
    private var boundary: Int64 = 0
    /// Triggered: the open take's trigger and last loud frame; no pre-roll before `floor`.
    private var trigger: Int64 = 0
    private var lastLoud: Int64 = 0
    private var floor: Int64
    public private(set) var isFinished = false

    /// - Parameters:
    ///   - start: the session's first frame. For `single` and `segments`, the first take is
    ///     already open there (it may be before the first chunk fed: pre-roll from history).
    ///   - endFrame: the session ends before this frame.
    public init(plan: TakePlan, start: Int64, endFrame: Int64?, channels: Int) {
        self.plan = plan
        self.endFrame = endFrame
        self.channels = max(1, channels)
        next = start
        floor = start
        switch plan {
        case .single:
            open = true
        case .segments(let segments):
            open = true
            boundary = start + segments.firstFrames
        case .triggered:
            open = false
        }
    }

    /// Ends the session before `frame` (a stop while the writer is behind the capture).
    public mutating func limit(to frame: Int64) {
        endFrame = min(endFrame ?? frame, frame)
    }

    /// Whether a take is open.
    public var isTakeOpen: Bool { open }

    /// Feeds `samples` (interleaved 16-bit, whole frames) that begin at frame `position`.
    public mutating func feed(_ samples: UnsafeBufferPointer<Int16>, at position: Int64) -> [TakeStep] {
        guard !isFinished else { return [] }
        var steps: [TakeStep] = []
        let frames = Int64(samples.count / channels)
        var end = position + frames
        if let endFrame { end = min(end, endFrame) }
        switch plan {
        case .single:
            if next < end {
                steps.append(.write(next..<end))
                next = end
            }
        case .segments(let segments):
            while next < end {
                if opensAtNextWrite {
                    opensAtNextWrite = false
                    open = true
                    steps.append(.open(next))
                }
                let stop = min(end, boundary)
                steps.append(.write(next..<stop))
                next = stop
                guard next == boundary else { break }
                if let endFrame, boundary >= endFrame { break }
                steps.append(.close(at: boundary, keep: true))
                open = false
                opensAtNextWrite = true
                boundary += segments.frames
            }
        case .triggered(let plan):
            cutTriggered(samples, position: position, end: end, plan: plan, steps: &steps)
        }
        if let endFrame, end >= endFrame {
            steps += close(at: endFrame)
            isFinished = true
        }
        return steps
    }

    /// Ends the session where it is (a stop or a cancel): closes the open take after what it was given.
    public mutating func finish(keep: Bool) -> [TakeStep] {
        guard !isFinished else { return [] }
        isFinished = true
        opensAtNextWrite = false
        guard open else { return [] }
        open = false
        return [.close(at: next, keep: keep && keeps)]
    }

    private mutating func close(at frame: Int64) -> [TakeStep] {
        guard open else { return [] }
        open = false
        return [.close(at: max(frame, next), keep: keeps)]
    }

    /// Whether the open take is long enough to keep.
    private var keeps: Bool {
        guard case .triggered(let plan) = plan else { return true }
        return lastLoud + 1 - trigger >= plan.minFrames
    }

    private mutating func cutTriggered(
        _ samples: UnsafeBufferPointer<Int16>, position: Int64, end: Int64, plan: TriggerPlan, steps: inout [TakeStep]
    ) {
        var frame = max(position, next)
        while frame < end {
            if !open {
                // Armed: look for the first loud frame.
                guard let loud = firstLoud(samples, position: position, from: frame, to: end, threshold: plan.threshold) else {
                    next = end
                    return
                }
                let start = max(loud - plan.prerollFrames, floor)
                open = true
                trigger = loud
                lastLoud = loud
                next = start
                steps.append(.open(start))
                frame = loud + 1
            } else {
                // Recording: follow the last loud frame until `hold` has passed without one.
                let index = Int(frame - position) * channels
                if isLoud(samples, index, plan.threshold) { lastLoud = frame }
                let closing = lastLoud + 1 + plan.holdFrames
                if frame + 1 >= closing {
                    let stop = closing
                    if stop > next { steps.append(.write(next..<stop)) }
                    next = stop
                    steps.append(.close(at: stop, keep: keeps))
                    open = false
                    floor = stop
                    frame = stop
                    continue
                }
                frame += 1
            }
        }
        if open && end > next {
            steps.append(.write(next..<end))
            next = end
        }
    }

    private func firstLoud(
        _ samples: UnsafeBufferPointer<Int16>, position: Int64, from: Int64, to: Int64, threshold: Int32
    ) -> Int64? {
        var frame = from
        while frame < to {
            if isLoud(samples, Int(frame - position) * channels, threshold) { return frame }
            frame += 1
        }
        return nil
    }

    private func isLoud(_ samples: UnsafeBufferPointer<Int16>, _ index: Int, _ threshold: Int32) -> Bool {
        for channel in 0..<channels {
            let sample = Int32(samples[index + channel])
            if (sample < 0 ? -sample : sample) >= threshold { return true }
        }
        return false
    }
}
