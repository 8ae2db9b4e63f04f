// The clock output when the ALSA device is off: takes frames at the speed they would be heard.

import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A `PCMOutput` with no sound card: it takes frames up to its buffer ahead of `CLOCK_MONOTONIC`
/// and "plays" them at the sample rate, so the engine runs at real time and its positions mean
/// what they mean on a device. With only pipe outputs on, this is what paces them; snapserver's
/// reader runs on the same system clock, so the two never drift apart.
///
/// The clock starts with the first frame written after `prepare`. If the writer falls behind
/// (nothing queued), the clock waits for it rather than counting an underrun: the next frame is
/// "heard" when it is written. Every method runs on the audio thread.
final class RealTimeClock: PCMOutput {
    let name = "the pipe outputs' clock"
    private var rate = 48000
    private var periodFrames = 2400
    private var bufferFrames = 12000
    private var written: Int64 = 0
    private var startedAt: UInt64?
    private var isOpen = false

    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        rate = max(format.sampleRate, 1)
        periodFrames = max(rate * timing.periodMicroseconds / 1_000_000, 1)
        bufferFrames = max(rate * timing.bufferMicroseconds / 1_000_000, 2 * periodFrames)
        isOpen = true
        _ = prepare()
        return PCMConfiguration(format: format, periodFrames: periodFrames, bufferFrames: bufferFrames)
    }

    func prepare() -> Int32 {
        written = 0
        startedAt = nil
        return 0
    }

    func resume() -> Int32 { 0 }

    func drop() { _ = prepare() }

    func close() {
        _ = prepare()
        isOpen = false
    }

    func start() -> Int32 {
        if startedAt == nil && written > 0 { startedAt = monotonicNanoseconds() }
        return 0
    }

    /// Frames "heard" by `now`; never more than were written (the clock waits for the writer).
    private func played(now: UInt64) -> Int64 {
        guard let startedAt else { return 0 }
        let elapsed = Int64((now &- startedAt) / 1000) * Int64(rate) / 1_000_000
        if elapsed > written {
            // Ran dry: restart the count so that the last frame written is heard now.
            self.startedAt = now &- UInt64(written) * 1_000_000_000 / UInt64(rate)
            return written
        }
        return elapsed
    }

    func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int {
        guard isOpen else { return -Int(EBADFD) }
        let now = monotonicNanoseconds()
        if startedAt == nil { startedAt = now }
        let room = Int64(bufferFrames) - (written - played(now: now))
        // Room in whole periods, as a sound card's pointer moves: taking a few frames whenever a
        // few have played would keep the thread busy writing crumbs.
        guard room >= Int64(min(frames, periodFrames)) else { return -Int(EAGAIN) }
        let taken = Int(min(Int64(frames), room))
        written += Int64(taken)
        return taken
    }

    func delay() -> Int {
        guard isOpen else { return -Int(EBADFD) }
        return Int(written - played(now: monotonicNanoseconds()))
    }

    func wait(timeoutMilliseconds: Int) -> Int32 {
        wait(timeoutMilliseconds: timeoutMilliseconds, wakeDescriptor: -1)
    }

    /// Sleeps until a period fits in the buffer, a command arrives, or the timeout.
    func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32) -> Int32 {
        let queued = written - played(now: monotonicNanoseconds())
        let excess = queued - Int64(bufferFrames - periodFrames)
        guard excess > 0 else { return 1 }
        let milliseconds = min(Int(excess * 1000 / Int64(rate)) + 1, max(timeoutMilliseconds, 1))
        var descriptor = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, wakeDescriptor >= 0 ? 1 : 0, Int32(milliseconds))
    }
}
