// Device failures in the log: each told once, with the device and the system's reason, and
// never a flood while a device stays away.

import Logging
import ReelModel
import ReelRuntime

/// Logs the failures of the devices (the playback and capture PCMs, the pipe outputs) at
/// warning, with the device, what failed and the system's reason. A failure is logged when it
/// happens; the same failure of the same device again within `interval` is only counted, and
/// the next one logged after that says how many there were meanwhile (`repeated`). A client
/// that retries `play` every second against a device that is gone makes one line per
/// `interval`, not one per try. Any thread.
public final class DeviceFailureLog: Sendable {
    private struct Seen {
        var loggedAt: UInt64
        var unlogged: Int
    }

    private let logger: Logger
    private let intervalNanoseconds: UInt64
    private let seen = Locked<[String: Seen]>([:])

    public init(logger: Logger, interval: Double = 10) {
        self.logger = logger
        intervalNanoseconds = UInt64(interval * 1e9)
    }

    /// Logs (or counts) `error`, which `device` gave when `operation` was tried
    /// (`"playback"`, `"capture"`, `"pipe output"`). Returns whether it was logged now.
    @discardableResult
    public func failed(_ operation: String, device: String, _ error: ReelError, now: UInt64 = monotonicNanoseconds())
        -> Bool
    {
        let key = operation + "\u{0}" + device + "\u{0}" + error.message
        let repeated = seen.withLock { seen -> Int? in
            if var earlier = seen[key], now &- earlier.loggedAt < intervalNanoseconds {
                earlier.unlogged += 1
                seen[key] = earlier
                return nil
            }
            let unlogged = seen[key]?.unlogged ?? 0
            seen[key] = Seen(loggedAt: now, unlogged: 0)
            if seen.count > 256 { seen = seen.filter { now &- $0.value.loggedAt < intervalNanoseconds } }
            return unlogged
        }
        guard let repeated else { return false }
        var metadata: Logger.Metadata = ["device": "\(device)", "error": "\(error.message)", "reason": "\(error.reason.rawValue)"]
        if repeated > 0 { metadata["repeated"] = "\(repeated)" }
        logger.warning("\(operation) device failed", metadata: metadata)
        return true
    }
}
