// The one policy for write errors on a PCM: what is recovered, what is counted, what gives up.

#if canImport(Glibc)
import Glibc
#endif

/// Counters that the player and the recorder publish; nothing is logged per period.
public struct XrunCounters: Sendable, Equatable {
    /// Underruns of a playback device, overruns of a capture device.
    public var xruns = 0
    public var suspends = 0
    /// Times a playback device took and played no frames for 2 s while playing (its sound
    /// server or device stopped taking audio: no underrun, the position held still).
    public var stalls = 0
    public init() {}
}

public enum XrunRecovery {
    /// What to do after a write returned `code` (negative errno).
    /// Returns nil when the device is usable again and the write should be retried, or the errno
    /// to give up with (the player then pauses with `device_unavailable`).
    ///
    /// - `-EPIPE` (underrun, or overrun when capturing): prepare, count.
    /// - `-ESTRPIPE` (suspended): resume until it stops answering -EAGAIN (bounded), then prepare
    ///   if resume is not supported; count.
    /// - `-EAGAIN`: wait up to a period. `-EINTR`: retry.
    /// - anything else (`-ENODEV`, `-EIO`, `-EBADFD`, …) gives up.
    public static func recover(
        from code: Int32, device: PCMDevice, counters: inout XrunCounters,
        periodMilliseconds: Int, resumeAttempts: Int = 50,
        sleep: (Int) -> Void = { milliseconds in usleep(UInt32(milliseconds) * 1000) }
    ) -> Int32? {
        switch code {
        case -EPIPE:
            counters.xruns += 1
            let prepared = device.prepare()
            return prepared < 0 ? prepared : nil
        case -ESTRPIPE:
            counters.suspends += 1
            var resumed = device.resume()
            var attempts = 1
            while resumed == -EAGAIN && attempts < resumeAttempts {
                sleep(100)
                resumed = device.resume()
                attempts += 1
            }
            if resumed == -EAGAIN { return resumed }
            if resumed < 0 {
                let prepared = device.prepare()
                return prepared < 0 ? prepared : nil
            }
            return nil
        case -EAGAIN:
            _ = device.wait(timeoutMilliseconds: periodMilliseconds)
            return nil
        case -EINTR:
            return nil
        default:
            return code
        }
    }
}
