// A scripted PCMOutput for testing the engine's policy without a sound card.

import Glibc
import ReelAudio
import ReelModel
import ReelRuntime

/// Accepts writes instantly (like ALSA's `null` device) and returns scripted errors in order.
/// Anything it is asked that the test did not expect is recorded in `calls` for assertions.
final class FakeOutput: PCMOutput, @unchecked Sendable {
    let name = "fake"
    private let lock = Locked(State())

    struct State {
        var calls: [String] = []
        var writeResults: [Int] = []  // negative errno to return instead of writing, in order
        var resumeResults: [Int32] = []
        var openError: ReelError?
        var written: [UInt8] = []
        var framesWritten = 0
        var delayFrames = 0
        var bytesPerFrame = 0
        var isOpen = false
        var writeDelayMicroseconds: UInt32 = 0
        /// Once this many frames are written, the device is full (-EAGAIN) until it is raised.
        var fullAfterFrames: Int?
        /// A drop takes back what the device queued (`delayFrames`) from `written`, as a real
        /// device never plays it: `written` is then what was heard.
        var dropDiscardsQueued = false
        /// Once this many frames are written, the next write answers -EPIPE (an underrun). With
        /// `prepareDropsQueued`, the prepare that follows discards what the device holds
        /// (`delayFrames`) from `written`, as PulseAudio's ALSA plugin does (its prepare makes a
        /// new stream without what its server held); without, it keeps and plays it (PipeWire's
        /// plugin keeps its stream). Either way the device holds nothing from then on.
        var underrunAfterFrames: Int?
        var prepareDropsQueued = false
        var underrunPending = false
        /// What the device holds once it reports that underrun (a server that played on until
        /// it ran dry holds only what was written since), when it differs from `delayFrames`.
        var delayAtUnderrun: Int?
    }

    var state: State { lock.current }
    func script(_ body: (inout State) -> Void) { lock.withLock(body) }

    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        let error: ReelError? = lock.withLock { state in
            state.calls.append("open")
            if let error = state.openError { return error }
            state.isOpen = true
            state.bytesPerFrame = format.bytesPerFrame
            return nil
        }
        if let error { throw error }
        return PCMConfiguration(format: format, periodFrames: 1024, bufferFrames: 4096)
    }

    func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int {
        let (result, pause) = lock.withLock { state -> (Int, UInt32) in
            if let full = state.fullAfterFrames, state.framesWritten >= full {
                return (-Int(EAGAIN), 0)
            }
            if let after = state.underrunAfterFrames, state.framesWritten >= after {
                state.underrunAfterFrames = nil
                state.underrunPending = true
                if let held = state.delayAtUnderrun { state.delayFrames = held }
                state.calls.append("write \(-Int(EPIPE))")
                return (-Int(EPIPE), 0)
            }
            if !state.writeResults.isEmpty {
                let result = state.writeResults.removeFirst()
                state.calls.append("write \(result)")
                return (result, 0)
            }
            let bytes = UnsafeRawBufferPointer(start: buffer, count: frames * state.bytesPerFrame)
            state.written.append(contentsOf: bytes)
            state.framesWritten += frames
            return (frames, state.writeDelayMicroseconds)
        }
        if pause > 0 { usleep(pause) }
        return result
    }

    func delay() -> Int { lock.withLock { $0.delayFrames } }
    var prepareDropsQueued: Bool { lock.withLock { $0.prepareDropsQueued } }
    func start() -> Int32 { 0 }
    func prepare() -> Int32 {
        lock.withLock { state in
            state.calls.append("prepare")
            guard state.underrunPending else { return }
            state.underrunPending = false
            if state.prepareDropsQueued {
                let held = min(state.delayFrames, state.framesWritten)
                state.written.removeLast(held * state.bytesPerFrame)
                state.framesWritten -= held
            }
            state.delayFrames = 0
        }
        return 0
    }
    func resume() -> Int32 {
        lock.withLock { state in
            state.calls.append("resume")
            return state.resumeResults.isEmpty ? 0 : state.resumeResults.removeFirst()
        }
    }
    func drop() {
        lock.withLock { state in
            state.calls.append("drop")
            guard state.dropDiscardsQueued, state.bytesPerFrame > 0 else { return }
            let queued = min(state.delayFrames * state.bytesPerFrame, state.written.count)
            state.written.removeLast(queued)
            state.framesWritten -= queued / state.bytesPerFrame
        }
    }
    func wait(timeoutMilliseconds: Int) -> Int32 {
        let full = lock.withLock { state -> Bool in
            if let full = state.fullAfterFrames, state.framesWritten >= full { return true }
            state.calls.append("wait")
            return false
        }
        if full { usleep(1000) }
        return 0
    }
    func close() { lock.withLock { $0.isOpen = false; $0.calls.append("close") } }
}
