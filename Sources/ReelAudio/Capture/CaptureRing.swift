// The buffer between the capture thread and the writer, so slow storage never stalls capture.

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A single-producer, single-consumer ring of interleaved frames. The capture thread puts
/// (never waiting: what does not fit is refused and counted by the caller), the writer takes.
/// A put that brings the ring to `wakeFrames` wakes a writer waiting on it, so the writer wakes
/// when there is a batch to encode (not at every period, and not on a timer that races the
/// capture thread's reads); `wake` cuts a wait short for the writer's commands. The lock is held
/// only to copy.
final class CaptureRing: @unchecked Sendable {
    let capacityFrames: Int
    let bytesPerFrame: Int
    /// Frames held at which a put wakes the waiting `take`.
    let wakeFrames: Int
    private let storage: UnsafeMutableRawPointer
    private let lock = ConditionLock()
    private var readIndex = 0  // in frames, modulo capacity
    private var count = 0  // frames held
    private var closed = false
    /// Set by `wake`, cleared by the `take` it ends.
    private var wakeRequested = false

    init(capacityFrames: Int, bytesPerFrame: Int, wakeFrames: Int = 1) {
        precondition(capacityFrames > 0 && bytesPerFrame > 0)
        self.capacityFrames = capacityFrames
        self.wakeFrames = min(max(wakeFrames, 1), capacityFrames)
        self.bytesPerFrame = bytesPerFrame
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacityFrames * bytesPerFrame, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    /// Frames held now.
    var framesHeld: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }

    /// Copies in as many of `frames` as fit; returns how many. Never waits.
    func put(_ source: UnsafeRawPointer, frames: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let accepted = min(frames, capacityFrames - count)
        var copied = 0
        while copied < accepted {
            let writeIndex = (readIndex + count) % capacityFrames
            let run = min(accepted - copied, capacityFrames - writeIndex)
            (storage + writeIndex * bytesPerFrame).copyMemory(
                from: source + copied * bytesPerFrame, byteCount: run * bytesPerFrame)
            count += run
            copied += run
        }
        // No system call unless the writer waits (glibc's signal without waiters is a check).
        if accepted > 0 && count >= wakeFrames { lock.signal() }
        return accepted
    }

    /// Ends a `take` waiting on the empty ring now (it returns 0), or the next one at once.
    func wake() {
        lock.lock()
        wakeRequested = true
        lock.broadcast()
        lock.unlock()
    }

    /// Copies out up to `maxFrames`. An empty ring first waits until a `put` brings it to
    /// `wakeFrames`, for at most `timeoutMilliseconds` (cut short by `close` and `wake`). Returns 0 when still empty, or
    /// when closed and empty (see `isDrained`).
    func take(into destination: UnsafeMutableRawPointer, maxFrames: Int, timeoutMilliseconds: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        if count == 0 && !closed && !wakeRequested {
            let deadline = ConditionLock.deadline(inMilliseconds: timeoutMilliseconds)
            while count < wakeFrames && !closed && !wakeRequested {
                if !lock.wait(until: deadline) { break }
            }
        }
        wakeRequested = false
        let taken = min(maxFrames, count)
        var copied = 0
        while copied < taken {
            let run = min(taken - copied, capacityFrames - readIndex)
            (destination + copied * bytesPerFrame).copyMemory(
                from: storage + readIndex * bytesPerFrame, byteCount: run * bytesPerFrame)
            readIndex = (readIndex + run) % capacityFrames
            count -= run
            copied += run
        }
        return taken
    }

    /// No more frames will be put; a waiting `take` returns.
    func close() {
        lock.lock()
        closed = true
        lock.broadcast()
        lock.unlock()
    }

    /// Closed and everything taken.
    var isDrained: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed && count == 0
    }
}
