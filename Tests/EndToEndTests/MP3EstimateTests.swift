// An MP3 without a Xing/Info tag, too long to be counted before the reply: `player.play`
// answers with an estimate, a push brings the count, and a seek past the estimate lands.

import Foundation
import Glibc
import ReelProtocol
import ReelTestSupport
import Testing

@Suite(.serialized)
struct MP3EstimateTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]

    /// MPEG-1 Layer III frames in `data` from its start (no tag): their count.
    func countFrames(_ data: [UInt8]) throws -> Int {
        let bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        var at = 0
        var count = 0
        while at + 4 <= data.count {
            guard data[at] == 0xFF, data[at + 1] & 0xFE == 0xFA, data[at + 2] >> 2 & 3 == 0 else {
                throw TestFailure("no MPEG-1 Layer III 44.1 kHz frame at byte \(at)")
            }
            at += 144 * bitrates[Int(data[at + 2] >> 4)] * 1000 / 44100 + Int(data[at + 2] >> 1 & 1)
            count += 1
        }
        return count
    }

    /// 10 s — 4 s of digital silence, 2 s of noise, 4 s of silence — as VBR without a tag (`lame
    /// -t -V 0`: frames of 104 bytes in the silence, about 500 in the noise), 128 times over:
    /// 21 minutes. The estimate's 128 windows each fall in the middle of a copy's bytes, in the
    /// noise, so it comes out far short of the true length (about 40 % of it): a seek between
    /// the two is past the estimate and inside the file. Returns the path and the true length.
    func writeFile(in directory: URL) throws -> (path: String, seconds: Double) {
        let base = directory.appendingPathComponent("segment").path
        // -D: no dither, or the silence would be noise that LAME spends bits on.
        try TestTool.run("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", base + "-quiet.wav", "trim", "0", "4"])
        try TestTool.run("/usr/bin/sox", ["-D", "-n", "-r", "44100", "-c", "2", "-b", "16", base + "-noise.wav", "synth", "2", "whitenoise", "vol", "0.5"])
        try TestTool.run("/usr/bin/sox", ["-D", base + "-quiet.wav", base + "-noise.wav", base + "-quiet.wav", base + ".wav"])
        try TestTool.run("/usr/bin/lame", ["--quiet", "-t", "-V", "0", base + ".wav", base + ".mp3"])
        let segment = try [UInt8](Data(contentsOf: URL(fileURLWithPath: base + ".mp3")))
        let copies = 128
        let path = directory.appendingPathComponent("long-untagged.mp3").path
        try Data((0..<copies).flatMap { _ in segment }).write(to: URL(fileURLWithPath: path))
        return (path, Double(try countFrames(segment) * copies * 1152) / 44100)
    }

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func playAnswersAnEstimateThenPushesTheCountAndASeekPastTheEstimateLands() throws {
        let sink = try PrivateSink()
        // reeld on CPU 0 beside a busy loop of normal priority: the count (a SCHED_IDLE thread)
        // gets next to nothing of that CPU until the loop ends, however fast the machine, so
        // the reply and the seek come while it runs.
        let daemon = try DaemonProcess(
            device: "pulse", environment: sink.environment, wrapper: ["/usr/bin/taskset", "-c", "0"])
        let spinner = Process()
        spinner.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        spinner.arguments = ["-c", "0", "/bin/sh", "-c", "while :; do :; done"]
        try spinner.run()
        // SIGKILL: the child inherits the test runner's blocked signals, SIGTERM among them.
        func stopSpinner() {
            guard spinner.isRunning else { return }
            kill(spinner.processIdentifier, SIGKILL)
            spinner.waitUntilExit()
        }
        defer { stopSpinner() }
        let (path, exact) = try writeFile(in: daemon.directory)
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "player"])
        _ = try client.nextNotification()

        let reply = try client.result("player.play", ["file": .string(path)])
        #expect(reply["state"] == "playing")
        #expect(reply["durationEstimated"] == true)
        let estimate = try #require(reply["duration"]?.doubleValue)
        try #require(estimate < exact * 0.6, "estimate \(estimate) s, true length \(exact) s: the file is not what the test needs")
        #expect(try client.result("player.status")["durationEstimated"] == true)
        let listed = try #require(try client.result("queue.list")["entries"]?.arrayValue?.first)
        #expect(listed["duration"]?.doubleValue == estimate)
        #expect(listed["durationEstimated"] == true)

        // Past the estimate, inside the file: not `out_of_range`; it lands there and plays on.
        let target = ((estimate + exact) / 2).rounded()
        let sought = try client.result("player.seek", ["position": .double(target)])
        #expect(sought["position"]?.doubleValue == target)
        #expect(sought["state"] == "playing")
        #expect(sought["durationEstimated"] == true)

        // The count runs once the busy loop ends: a push brings it.
        stopSpinner()
        var counted: JSONObject?
        let deadline = Date().addingTimeInterval(60)
        while counted == nil, Date() < deadline {
            let push = try client.nextNotification(timeout: max(deadline.timeIntervalSinceNow, 0.1))
            if push.method == "player.state", push.params["durationEstimated"] == false { counted = push.params }
        }
        let state = try #require(counted)
        #expect(abs((state["duration"]?.doubleValue ?? 0) - exact) < 1e-6, "counted \(String(describing: state["duration"])), true \(exact)")
        #expect(state["state"] == "playing")
        #expect((state["position"]?.doubleValue ?? 0) >= target)
        // The queue follows the player (on the control side's queue, just after the push).
        var entry: JSONValue?
        let entryDeadline = Date().addingTimeInterval(20)
        while Date() < entryDeadline {
            entry = try client.result("queue.list")["entries"]?.arrayValue?.first
            if entry?["durationEstimated"] == nil { break }
            usleep(10_000)
        }
        #expect(entry?["durationEstimated"] == nil)
        #expect(abs((entry?["duration"]?.doubleValue ?? 0) - exact) < 1e-6)
        // Counted, the length bounds seeks again.
        let refused = try client.call("player.seek", ["position": .double(exact + 10)])
        guard case .failure(let error) = refused else {
            Issue.record("a seek past the counted length was accepted")
            return
        }
        #expect(error.data?["reason"] == "out_of_range")
    }

    /// A file up to 2 MiB is counted before the reply: its length is exact from the start.
    @Test func aSmallFileWithoutATagAnswersItsExactLength() throws {
        let daemon = try DaemonProcess()
        let wav = try daemon.tone("short.wav", seconds: 5)
        let path = daemon.directory.appendingPathComponent("short.mp3").path
        try TestTool.run("/usr/bin/lame", ["--quiet", "-t", "-b", "128", wav, path])
        let frames = try countFrames([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        let reply = try daemon.client().result("player.play", ["file": .string(path)])
        #expect(reply["durationEstimated"] == false)
        #expect(reply["duration"]?.doubleValue == Double(frames * 1152) / 44100)
    }
}
