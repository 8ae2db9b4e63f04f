// A scripted PCMInput for testing the capture engine's policy without a sound card.

import Glibc
import ReelAudio
import ReelModel
import ReelRuntime

/// Produces a known ramp of 16-bit samples (sample n is `Int16(truncatingIfNeeded: n)`) as fast as
/// it is read (like ALSA's `null` device), and returns scripted errors in order.
final class FakeInput: PCMInput, @unchecked Sendable {
    let name = "fake-capture"
    private let lock = Locked(State())

    struct State {
        var calls: [String] = []
        /// Negative errnos to return instead of reading, in order, each after `readsBeforeError` reads.
        var readResults: [Int] = []
        var readsBeforeError = 0
        var reads = 0
        var produced = 0  // samples
        var channels = 1
        var isOpen = false
        var readDelayMicroseconds: UInt32 = 0
        /// Once set, every read fails with this errno (a device that is gone).
        var failForever: Int?
        /// Sample n's value; nil: the ramp (`Int16(truncatingIfNeeded: n)`).
        var signal: (@Sendable (Int) -> Int16)?
        /// A finite source: after this many frames, reads find nothing (-EAGAIN).
        var limitFrames: Int?
    }

    var state: State { lock.current }
    func script(_ body: (inout State) -> Void) { lock.withLock(body) }

    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        lock.withLock { state in
            state.calls.append("open")
            state.isOpen = true
            state.channels = format.channels
        }
        return PCMConfiguration(format: format, periodFrames: 480, bufferFrames: 1920)
    }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        let (result, pause) = lock.withLock { state -> (Int, UInt32) in
            state.reads += 1
            if let code = state.failForever { return (code, 0) }
            if !state.readResults.isEmpty && state.reads > state.readsBeforeError {
                let result = state.readResults.removeFirst()
                state.calls.append("read \(result)")
                return (result, 0)
            }
            var frames = frames
            if let limit = state.limitFrames {
                frames = min(frames, limit - state.produced / state.channels)
                if frames <= 0 { return (-Int(EAGAIN), 0) }
            }
            let samples = buffer.assumingMemoryBound(to: Int16.self)
            for index in 0..<(frames * state.channels) {
                samples[index] = state.signal?(state.produced + index) ?? Int16(truncatingIfNeeded: state.produced + index)
            }
            state.produced += frames * state.channels
            return (frames, state.readDelayMicroseconds)
        }
        if pause > 0 { usleep(pause) }
        return result
    }

    func prepare() -> Int32 { lock.withLock { $0.calls.append("prepare") }; return 0 }
    func resume() -> Int32 { lock.withLock { $0.calls.append("resume") }; return 0 }
    func drop() { lock.withLock { $0.calls.append("drop") } }
    func wait(timeoutMilliseconds: Int) -> Int32 {
        // Nothing more to read from a finite source: do not spin.
        if lock.current.limitFrames != nil { usleep(1000) }
        return 0
    }
    func close() { lock.withLock { $0.isOpen = false; $0.calls.append("close") } }
}

/// A RecordingWriter that keeps the samples in memory, can be slow, and can fail after a while.
final class MemoryWriter: RecordingWriter, @unchecked Sendable {
    private let lock = Locked(State())

    struct State {
        var samples: [Int16] = []
        var syncs = 0
        var closed = false
        var writeDelayMicroseconds: UInt32 = 0
        /// Fails with this error once this many frames were written.
        var failAfterFrames: Int?
        var failure = ReelError(.diskFull, "the disk holding the recording is full")
        var channels = 1
        /// Syncs (and the sync of a close) fail with this, from the `failSyncsAfter`th sync on.
        var syncFailure: ReelError?
        var failSyncsAfter = 0
    }

    var state: State { lock.current }
    func script(_ body: (inout State) -> Void) { lock.withLock(body) }

    func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError) {
        let (delay, failure) = lock.withLock { state -> (UInt32, ReelError?) in
            if let limit = state.failAfterFrames, state.samples.count / state.channels + frames > limit {
                return (0, state.failure)
            }
            let samples = UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: Int16.self), count: frames * state.channels)
            state.samples.append(contentsOf: samples)
            return (state.writeDelayMicroseconds, nil)
        }
        if let failure { throw failure }
        if delay > 0 { usleep(delay) }
    }

    func sync() throws(ReelError) {
        let failure = lock.withLock { state -> ReelError? in
            state.syncs += 1
            return state.syncs > state.failSyncsAfter ? state.syncFailure : nil
        }
        if let failure { throw failure }
    }

    func close() throws(ReelError) {
        let failure = lock.withLock { state -> ReelError? in
            state.closed = true
            return state.syncFailure
        }
        if let failure { throw failure }
    }
}
