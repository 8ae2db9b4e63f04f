// The device contracts: the only way the engines reach a sound card.

import ReelModel

/// What playback and capture PCMs share: opening, recovery after an xrun, closing.
/// Every method is called on one audio thread only, never concurrently. `wait` blocks for at
/// most its timeout; the rest return promptly.
/// Return codes are alsa-lib's: a frame count or 0 on success, a negative errno on failure.
public protocol PCMDevice: AnyObject {
    /// The device name for messages (`default`, `plughw:CARD=Headphones`, …).
    var name: String { get }
    /// Opens the device for `format`, through ALSA's plug layer if the device cannot take it.
    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration
    func prepare() -> Int32
    /// Resumes after a system suspend; -EAGAIN while the device is not ready yet.
    func resume() -> Int32
    /// Stops at once, discarding what is queued.
    func drop()
    /// Waits until a period can be transferred, at most `timeoutMilliseconds`.
    func wait(timeoutMilliseconds: Int) -> Int32
    /// The same wait, ended early when `wakeDescriptor` becomes readable (a command arrived).
    func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32) -> Int32
    func close()
}

extension PCMDevice {
    /// For devices that cannot poll a second descriptor: the whole wait.
    public func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32) -> Int32 {
        wait(timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// A playback PCM. `write` must not block: with no room it returns -EAGAIN.
public protocol PCMOutput: PCMDevice {
    /// Writes up to `frames` interleaved frames; returns frames consumed or a negative errno.
    func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int
    /// Frames written but not yet audible, or a negative errno (e.g. after an underrun).
    func delay() -> Int
    /// Starts a prepared device that holds less than its start threshold (end of a short file).
    func start() -> Int32
    /// Whether the prepare that recovers an underrun drops what the device still holds
    /// (PulseAudio's ALSA plugin makes a new stream); the engine then writes that audio again.
    /// False where the device ran dry (hardware) or keeps its stream (PipeWire's plugin).
    var prepareDropsQueued: Bool { get }
}

extension PCMOutput {
    public var prepareDropsQueued: Bool { false }
}

/// A capture PCM. `read` must not block: with nothing captured yet it returns -EAGAIN.
/// The device starts on the first read.
public protocol PCMInput: PCMDevice {
    /// Reads up to `frames` interleaved frames; returns frames read or a negative errno.
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int
}
