// The playback device contract: the only way the engine reaches a sound card.

import ReelModel

/// A playback PCM. Every method is called on the engine's audio thread only, never concurrently.
/// `write` must not block: with no room it returns -EAGAIN. `wait` blocks for at most its
/// timeout; the rest return promptly.
/// Return codes are alsa-lib's: a frame count or 0 on success, a negative errno on failure.
public protocol PCMOutput: AnyObject {
    /// The device name for messages (`default`, `plughw:CARD=Headphones`, …).
    var name: String { get }
    /// Opens the device for `format`, through ALSA's plug layer if the device cannot take it.
    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration
    /// Writes up to `frames` interleaved frames; returns frames consumed or a negative errno.
    func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int
    /// Frames written but not yet audible, or a negative errno (e.g. after an underrun).
    func delay() -> Int
    /// Starts a prepared device that holds less than its start threshold (end of a short file).
    func start() -> Int32
    func prepare() -> Int32
    /// Resumes after a system suspend; -EAGAIN while the device is not ready yet.
    func resume() -> Int32
    /// Stops at once, discarding what is queued.
    func drop()
    /// Waits until a period can be written, at most `timeoutMilliseconds`.
    func wait(timeoutMilliseconds: Int) -> Int32
    func close()
}
