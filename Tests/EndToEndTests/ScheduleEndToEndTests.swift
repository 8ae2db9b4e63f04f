import Foundation
import ReelModel
import ReelProtocol
import Testing
import ReelTestSupport

/// Schedules with the real clock through reeld and PulseAudio: an alarm set a minute ahead that
/// plays a local stream (Tests/Streams/stream_server.py) fading in (the null sink's monitor
/// rises), then a sleep timer that fades out and stops, with the volume as it was for the next
/// play. One test and one daemon, to keep the minute's cost to one. (A scheduled file is the
/// core's test: `aScheduledAlarmPlaysAFileAtItsVolumeFadingInAndAStopFadesOut`.)
@Suite struct ScheduleEndToEndTests {
    static let rate = CPUQuotaPlaybackTests.rate

    /// RMS of each whole second of `samples` (16-bit stereo), from frame `from`.
    static func secondsRMS(_ samples: [Int16], from: Int, count: Int) -> [Double] {
        (0..<count).map { second in
            let start = (from + second * rate) * 2
            let end = min(samples.count, start + rate * 2)
            guard start < end else { return 0 }
            let sum = samples[start..<end].reduce(0.0) { $0 + Double($1) * Double($1) }
            return (sum / Double(end - start)).squareRoot()
        }
    }

    static func localWhen(_ instant: Int64) -> String {
        LocalDateTime(localSeconds: instant + Int64(SystemTimeZone().utcOffset(at: instant))).description
    }

    @Test(.enabled(if: CPUQuotaPlaybackTests.pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func anAlarmAMinuteAheadPlaysAStreamFadingInAndASleepTimerFadesOutAndStops() throws {
        let sink = try PrivateSink()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-alarm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // A 440 Hz sine looped endlessly at its bitrate's pace (30 s a loop: at most one seam in
        // the seconds measured).
        let server = try StreamServer(seconds: 30)
        let url = server.url("/live.mp3")
        let daemon = try DaemonProcess(device: "pulse", environment: sink.environment)
        defer { daemon.stop() }
        let client = try daemon.client()
        _ = try client.result("mixer.setVolume", ["volume": 80])
        let recorded = scratch.appendingPathComponent("monitor.raw").path
        let recording = try CPUQuotaPlaybackTests.MonitorRecording(sink: sink, into: recorded)
        defer { recording.stop() }

        let due = Int64(Date().timeIntervalSince1970) + 60
        let added = try client.result("schedules.add", [
            "when": .string(Self.localWhen(due)), "name": "alarm",
            "action": ["play": ["url": .string(url), "fadeIn": 10, "stopAfter": 60]],
        ])
        #expect(added["next"]?.stringValue.flatMap(CivilTime.instant(iso8601:)) == due)
        var last: JSONValue = .null
        let deadline = Date().addingTimeInterval(180)
        while Date() < deadline {
            last = try client.result("schedules.list")["schedules"]?.arrayValue?.first?["last"] ?? .null
            if last != .null { break }
            usleep(200_000)
        }
        #expect(Date().timeIntervalSince1970 >= Double(due), "fired before it was due")
        #expect(last["result"] == "ok", "\(last)")
        #expect(try client.result("player.status")["source"]?["url"] == .string(url), "the stream plays")
        // The fade-in and a little after it.
        usleep(13_000_000)
        // A sleep timer: 5 s, fading out over the last 3.
        let sleep = try client.result("player.sleep", ["after": 5, "fadeOut": 3])
        #expect(sleep["at"]?.stringValue != nil)
        #expect(try client.result("player.status")["sleepAt"]?.stringValue == sleep["at"]?.stringValue)
        var state: JSONValue = .null
        let stopDeadline = Date().addingTimeInterval(30)
        while Date() < stopDeadline {
            state = try client.result("player.status")
            if state["state"] == "stopped" { break }
            usleep(100_000)
        }
        #expect(state["state"] == "stopped")
        #expect(state["sleepAt"] == .null)
        #expect(try client.result("mixer.status")["volume"] == 80, "the volume is as it was")
        usleep(500_000)
        recording.stop()

        let samples = try Data(contentsOf: URL(fileURLWithPath: recorded)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let frames = samples.count / 2
        // Heard: above 1/256 of the loudest sample (-48 dB; the fade is a cubic curve, and the
        // stream's sine is at -18 dBFS).
        let loudest = samples.lazy.map { abs(Int($0)) }.max() ?? 0
        let heard = max(loudest / 256, 8)
        guard let first = (0..<frames).first(where: { abs(Int(samples[2 * $0])) > heard }) else {
            Issue.record("nothing was heard")
            return
        }
        let rise = Self.secondsRMS(samples, from: first, count: 12)
        #expect(zip(rise.prefix(10), rise.prefix(10).dropFirst()).allSatisfy { $0 < $1 }, "rises every second: \(rise)")
        #expect(rise[0] < rise[11] / 20, "starts far below full: \(rise)")
        #expect(abs(rise[11] - rise[10]) < rise[11] * 0.05, "full level after the fade: \(rise)")
        // The end: the last three seconds with sound fall.
        guard let lastLoud = (0..<frames).last(where: { abs(Int(samples[2 * $0])) > heard }) else { return }
        let fall = Self.secondsRMS(samples, from: max(0, lastLoud - 3 * Self.rate), count: 3)
        #expect(zip(fall, fall.dropFirst()).allSatisfy { $0 > $1 }, "falls every second: \(fall)")
        #expect(fall[0] < rise[11], "already fading: \(fall) after \(rise[11])")
    }

    /// The sleep timer kept across a real restart of reeld, killed with SIGKILL right after the
    /// answer: the new reeld shows the same `sleepAt`, resumes, and stops then, not before.
    @Test(.enabled(if: CPUQuotaPlaybackTests.pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func aSleepTimerSurvivesAKilledReeldAndStopsAtItsTime() throws {
        let sink = try PrivateSink()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sleep-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = scratch.appendingPathComponent("long.wav").path
        try TestTool.run("sox", ["-n", "-r", "\(Self.rate)", "-c", "2", "-b", "16", source, "synth", "120", "sine", "440", "vol", "0.5"])
        let data = scratch.appendingPathComponent("data").path
        var environment = sink.environment
        environment["REEL_RESUME_ON_START"] = "playing"
        let first = try DaemonProcess(device: "pulse", environment: environment, dataDirectory: data)
        let client = try first.client()
        _ = try client.result("player.play", ["file": .string(source)])
        #expect(try Self.waitForState(client, "playing", timeout: 30))
        let sleep = try client.result("player.sleep", ["after": 12, "fadeOut": 2])
        let at = try #require(sleep["at"]?.stringValue)
        kill(first.pid, SIGKILL)
        first.process.waitUntilExit()

        let second = try DaemonProcess(device: "pulse", environment: environment, dataDirectory: data)
        defer { second.stop() }
        let again = try second.client()
        #expect(try again.result("player.status")["sleepAt"]?.stringValue == at, "the same wall time")
        #expect(try Self.waitForState(again, "playing", timeout: 30), "resumed: the timer is still ahead")
        #expect(try Self.waitForState(again, "stopped", timeout: 60))
        let due = try #require(CivilTime.instant(iso8601: at))
        #expect(Date().timeIntervalSince1970 >= Double(due) - 1, "stopped before \(at)")
        #expect(try again.result("player.status")["sleepAt"] == .null)
    }

    /// The issue's scheduled show: a schedule a few seconds ahead that records 10 s of a local
    /// stream (`source: {url}`, the recorder's station reader: nothing plays) into a folder under
    /// a strftime name: an item of 10 s ± 0.1, and the schedule's `last` says so.
    @Test func aScheduledTenSecondRecordingOfAStream() throws {
        let server = try StreamServer(seconds: 20)
        let url = server.url("/live.mp3")
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        _ = try client.result("library.createFolder", ["name": "Shows"])
        let due = Int64(Date().timeIntervalSince1970) + 3
        _ = try client.result("schedules.add", [
            "when": .string(Self.localWhen(due)), "name": "show",
            "action": ["record": ["duration": 10, "source": ["url": .string(url)], "folderPath": "/Shows", "name": "Show %Y", "format": "flac"]],
        ])
        var last: JSONValue = .null
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            last = try client.result("schedules.list")["schedules"]?.arrayValue?.first?["last"] ?? .null
            if last != .null { break }
            usleep(200_000)
        }
        #expect(last["result"] == "ok", "\(last)")
        #expect(try client.result("player.status")["state"] == "stopped", "a station is recorded without playing it")
        var idle: JSONValue?
        while Date() < deadline {
            let status = try client.result("recorder.status")
            if status["state"] == "idle", status["item"] != .null {
                idle = status
                break
            }
            usleep(200_000)
        }
        let item = try #require(idle?["item"], "the scheduled take did not end within a minute")
        let year = Calendar(identifier: .gregorian).component(.year, from: Date(timeIntervalSince1970: Double(due)))
        #expect(item["path"] == .string("/Shows/Show \(year)"))
        let duration = try #require(item["duration"]?.doubleValue)
        #expect(abs(duration - 10) <= 0.1, "the take is \(duration) s")
        #expect(idle?["error"] == .null)
    }

    static func waitForState(_ client: RPCTestClient, _ state: String, timeout: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try client.result("player.status")["state"] == .string(state) { return true }
            usleep(100_000)
        }
        return false
    }
}
