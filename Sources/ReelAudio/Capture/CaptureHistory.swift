// The last seconds captured, kept in memory for pre-roll: a take can begin before its trigger.

import ReelModel

/// A ring of the last `capacityFrames` frames captured, addressed by device frame number.
/// Owned by the capture engine's writer thread; not thread-safe.
final class CaptureHistory {
    let capacityFrames: Int
    let bytesPerFrame: Int
    private let storage: UnsafeMutableRawPointer
    /// The frame after the last one appended.
    private(set) var endFrame: Int64 = 0
    private var held = 0

    init(capacityFrames: Int, bytesPerFrame: Int) {
        self.capacityFrames = max(capacityFrames, 1)
        self.bytesPerFrame = bytesPerFrame
        storage = UnsafeMutableRawPointer.allocate(byteCount: self.capacityFrames * bytesPerFrame, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// The oldest frame still held.
    var startFrame: Int64 { endFrame - Int64(held) }

    /// Appends `frames` frames that begin at `position` (which must be `endFrame`, or the history
    /// restarts there).
    func append(_ source: UnsafeRawPointer, frames: Int, at position: Int64) {
        if position != endFrame {
            held = 0
            endFrame = position
        }
        // Only the last capacity's worth is kept.
        var copied = max(0, frames - capacityFrames)
        endFrame += Int64(copied)
        while copied < frames {
            let writeIndex = Int(endFrame % Int64(capacityFrames))
            let run = min(frames - copied, capacityFrames - writeIndex)
            (storage + writeIndex * bytesPerFrame).copyMemory(from: source + copied * bytesPerFrame, byteCount: run * bytesPerFrame)
            copied += run
            endFrame += Int64(run)
            held = min(capacityFrames, held + run)
        }
    }

    /// Calls `body` with the held frames of `range` in order, in at most two runs. Frames not held
    /// (too old, or not yet appended) are left out; returns how many were given.
    @discardableResult
    func read(_ range: Range<Int64>, _ body: (UnsafeRawPointer, Int) throws(ReelError) -> Void) throws(ReelError) -> Int {
        let lower = max(range.lowerBound, startFrame)
        let upper = min(range.upperBound, endFrame)
        guard lower < upper else { return 0 }
        var frame = lower
        while frame < upper {
            let index = Int(frame % Int64(capacityFrames))
            let run = min(Int(upper - frame), capacityFrames - index)
            try body(storage + index * bytesPerFrame, run)
            frame += Int64(run)
        }
        return Int(upper - lower)
    }
}
