// Device failures in the log: each once, with the device and the reason, never a flood.

import Logging
import ReelAudio
import ReelModel
import Synchronization
import Testing

/// Log lines a test looks at.
private final class CapturedLog: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lines = Mutex<[Line]>([])
    var all: [Line] { lines.withLock { $0 } }

    func logger() -> Logger {
        Logger(label: "reel.audio") { _ in Handler(log: self) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var all = metadata
            if let extra = event.metadata { all.merge(extra) { $1 } }
            let line = Line(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" })
            log.lines.withLock { $0.append(line) }
        }
    }
}

@Suite struct DeviceFailureLogTests {
    static let second: UInt64 = 1_000_000_000
    let refused = ReelError(.deviceUnavailable, "cannot open ALSA device \"pulse\": Connection refused")

    @Test func aFailureIsLoggedAtWarningWithTheDeviceAndTheSystemsReason() {
        let captured = CapturedLog()
        let failures = DeviceFailureLog(logger: captured.logger())
        #expect(failures.failed("playback", device: "pulse", refused, now: 5 * Self.second))
        let line = try? #require(captured.all.first)
        #expect(captured.all.count == 1)
        #expect(line?.level == .warning)
        #expect(line?.message == "playback device failed")
        #expect(line?.metadata["device"] == "pulse")
        #expect(line?.metadata["error"]?.contains("Connection refused") == true)
        #expect(line?.metadata["reason"] == "device_unavailable")
    }

    @Test func theSameFailureAgainIsCountedNotLoggedUntilTheIntervalHasPassed() {
        let captured = CapturedLog()
        let failures = DeviceFailureLog(logger: captured.logger(), interval: 10)
        let start = 100 * Self.second
        #expect(failures.failed("playback", device: "pulse", refused, now: start))
        // A client retrying every second: counted, not logged.
        for retry in 1...9 {
            #expect(!failures.failed("playback", device: "pulse", refused, now: start + UInt64(retry) * Self.second))
        }
        #expect(captured.all.count == 1)
        // After the interval: logged again, saying how many were not.
        #expect(failures.failed("playback", device: "pulse", refused, now: start + 10 * Self.second))
        #expect(captured.all.count == 2)
        #expect(captured.all.last?.metadata["repeated"] == "9")
    }

    @Test func anotherDeviceOrAnotherFailureIsLoggedAtOnce() {
        let captured = CapturedLog()
        let failures = DeviceFailureLog(logger: captured.logger())
        let start = 100 * Self.second
        #expect(failures.failed("playback", device: "pulse", refused, now: start))
        #expect(failures.failed("playback", device: "hw:1", refused, now: start + 1))
        #expect(failures.failed("capture", device: "pulse", refused, now: start + 2))
        let busy = ReelError(.deviceBusy, "cannot open ALSA device \"pulse\": Device or resource busy")
        #expect(failures.failed("playback", device: "pulse", busy, now: start + 3))
        #expect(captured.all.count == 4)
        #expect(captured.all.map { $0.metadata["repeated"] } == [nil, nil, nil, nil])
    }
}
