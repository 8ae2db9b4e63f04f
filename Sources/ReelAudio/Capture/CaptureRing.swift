// The buffer between the capture thread and the writer, so slow storage never stalls capture.

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A single-producer, single-consumer ring of interleaved frames. The capture thread puts
/// (never waiting: what does not fit is refused and counted by the caller), the writer takes.
/// A put does not wake the writer: it drains the ring on its own rhythm (an empty ring makes it
/// sleep a fixed time), so the two threads wake independently and seldom. The lock is held only
/// to copy.
final class CaptureRing: @unchecked Sendable {
    let capacityFrames: Int
    let bytesPerFrame: Int
    private let storage: UnsafeMutableRawPointer
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var readIndex = 0  // in frames, modulo capacity
    private var count = 0  // frames held
    private var closed = false

    init(capacityFrames: Int, bytesPerFrame: Int) {
        precondition(capacityFrames > 0 && bytesPerFrame > 0)
        self.capacityFrames = capacityFrames
        self.bytesPerFrame = bytesPerFrame
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacityFrames * bytesPerFrame, alignment: 16)
        pthread_mutex_init(&mutex, nil)
        initializeMonotonicCondition(&condition)
    }

    deinit {
        storage.deallocate()
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Frames held now.
    var framesHeld: Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return count
    }

    /// Copies in as many of `frames` as fit; returns how many. Never waits.
    func put(_ source: UnsafeRawPointer, frames: Int) -> Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
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
        return accepted
    }

    /// Copies out up to `maxFrames`. An empty ring first waits `timeoutMilliseconds` (cut short
    /// by `close`). Returns 0 when still empty, or when closed and empty (see `isDrained`).
    func take(into destination: UnsafeMutableRawPointer, maxFrames: Int, timeoutMilliseconds: Int) -> Int {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if count == 0 && !closed {
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanoseconds = Int(deadline.tv_nsec) + timeoutMilliseconds * 1_000_000
            deadline.tv_sec += nanoseconds / 1_000_000_000
            deadline.tv_nsec = nanoseconds % 1_000_000_000
            while !closed {
                if pthread_cond_timedwait(&condition, &mutex, &deadline) == ETIMEDOUT { break }
            }
        }
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
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Closed and everything taken.
    var isDrained: Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return closed && count == 0
    }
}
