// A slower machine: reeld in a cgroup with a tenth of one core plays an AAC file (FFmpeg's
// decoder) in real time through a PulseAudio null sink without an underrun, and what reached the
// sink has no gap.

import Foundation
import Glibc
import ReelProtocol
import ReelTestSupport
import Testing

/// How reeld's audio thread (which decodes) is held to a tenth of a core.
enum CPUBudget: CustomTestStringConvertible, CaseIterable, Sendable {
    /// As when reeld runs as root: the audio thread is SCHED_FIFO with a real-time budget of
    /// 10 ms per 100 ms of its own; the other threads share the 10 % quota.
    case realtimeAudioThread
    /// No real-time budget: the audio thread's SCHED_FIFO is refused, and every thread of
    /// reeld shares the one 10 % quota.
    case everyThreadInTheQuota

    var realtime: Int { self == .realtimeAudioThread ? 10_000 : 0 }
    var testDescription: String {
        self == .realtimeAudioThread ? "SCHED_FIFO audio thread, 10 ms real-time per 100 ms" : "every thread in the quota"
    }
}

@Suite struct CPUQuotaPlaybackTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]

    static let seconds = 20
    static let rate = 44100

    /// The null sink's monitor recorded with parec into `path` (raw 16-bit stereo at 44.1 kHz).
    final class MonitorRecording {
        let process = Process()

        init(sink: PrivateSink, into path: String) throws {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "parec", "--device=\(sink.name).monitor", "--raw", "--format=s16le", "--rate=\(CPUQuotaPlaybackTests.rate)",
                "--channels=2",
            ]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// SIGKILL: a process started from a test's thread inherits its blocked signals, and
        /// parec then never sees a SIGTERM. What it recorded is in the file already.
        func stop() {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }

        deinit { stop() }
    }

    /// Silent runs of at least `minimum` frames (|sample| ≤ 64 on both channels) between the
    /// first and the last frame with sound, and that span's length in frames.
    static func gaps(in samples: [Int16], minimum: Int) -> (gaps: [(start: Int, frames: Int)], span: Int) {
        let frames = samples.count / 2
        func loud(_ frame: Int) -> Bool { abs(Int(samples[2 * frame])) > 64 || abs(Int(samples[2 * frame + 1])) > 64 }
        guard let first = (0..<frames).first(where: loud), let last = (0..<frames).last(where: loud) else { return ([], 0) }
        var gaps: [(Int, Int)] = []
        var quietSince: Int?
        for frame in first...last {
            if loud(frame) {
                if let start = quietSince, frame - start >= minimum { gaps.append((start - first, frame - start)) }
                quietSince = nil
            } else if quietSince == nil {
                quietSince = frame
            }
        }
        return (gaps, last - first + 1)
    }

    @Test(
        .enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"),
        .enabled(
            if: CPUQuotaGroup.unavailable == nil,
            "needs the cgroup v1 cpu controller at /sys/fs/cgroup/cpu with cpu.rt_runtime_us, writable (root)"),
        arguments: CPUBudget.allCases)
    func anAACFilePlaysWithoutAnUnderrunOnATenthOfACore(budget: CPUBudget) throws {
        let sink = try PrivateSink()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-quota-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Two tones, one per channel, at half scale: never silent for more than a sample or two.
        let source = scratch.appendingPathComponent("source.wav").path
        try TestTool.run("sox", [
            "-n", "-r", "\(Self.rate)", "-c", "2", "-b", "16", source, "synth", "\(Self.seconds)", "sine", "330", "sine", "550",
            "vol", "0.5",
        ])
        let aac = scratch.appendingPathComponent("tones.m4a").path
        let (encoded, output) = try AudioAnalysis.run(
            "ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", source, "-c:a", "aac", "-b:a", "192k", aac])
        try #require(encoded == 0, "ffmpeg could not make the AAC file: \(output)")

        // A tenth of one core, from reeld's first instruction on.
        let group = try CPUQuotaGroup(quota: 10_000, realtime: budget.realtime)
        defer { group.remove() }
        let daemon = try DaemonProcess(device: "pulse", environment: sink.environment, wrapper: group.wrapper)
        defer { daemon.stop() }
        #expect(group.holds(daemon.pid), "reeld (\(daemon.pid)) is not in \(group.path)")
        let client = try daemon.client()

        let recorded = scratch.appendingPathComponent("monitor.raw").path
        let recording = try MonitorRecording(sink: sink, into: recorded)
        defer { recording.stop() }
        usleep(500_000)
        let cpuBefore = daemon.cpuSeconds
        let periodsBefore = group.stat()["nr_periods"] ?? 0
        let started = try client.result("player.play", ["file": .string(aac)])
        #expect(started["format"]?["codec"] == .string("aac"), "\(started)")

        // To its end: at most six times its length even on a busy machine.
        var status = started
        var position = 0.0
        let deadline = Date().addingTimeInterval(Double(Self.seconds) * 6)
        while Date() < deadline {
            status = try client.result("player.status")
            position = max(position, status["position"]?.doubleValue ?? 0)
            if status["state"] == .string("stopped") { break }
            usleep(250_000)
        }
        let cpu = daemon.cpuSeconds - cpuBefore
        let stat = group.stat()
        usleep(300_000)
        recording.stop()

        #expect(status["state"] == .string("stopped"), "still \(status["state"] ?? .null) after \(Self.seconds * 6) s")
        #expect(status["error"] == nil || status["error"] == .null, "\(status)")
        #expect(position >= Double(Self.seconds) - 1, "the position reached only \(position) s")
        #expect(status["underruns"] == .int(0), "\(budget): \(status["underruns"] ?? .null) underruns: \(status)")
        #expect((stat["nr_periods"] ?? 0) > periodsBefore, "the group's quota was never in force: \(stat)")

        // What reached the sink: no silence anywhere in it. The two tones are never both within
        // ±64 for more than a frame, so 3 silent frames in a row are a gap. (The monitor's first
        // moments are not always recorded: a new stream's first frames can be missing from it,
        // so the sound's length is checked loosely.)
        let data = try Data(contentsOf: URL(fileURLWithPath: recorded))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let (gaps, span) = Self.gaps(in: samples, minimum: 3)
        let expected = Self.seconds * Self.rate
        #expect(gaps.isEmpty, "\(budget): silence at the sink (frame, length): \(gaps.prefix(10))")
        #expect(span > expected * 3 / 4 && span <= expected, "\(budget): \(span) frames of sound at the sink, the file has \(expected)")
        print(
            "AAC on a tenth of a core (\(budget)): underruns \(status["underruns"] ?? .null), reeld CPU "
                + String(format: "%.1f", cpu / Double(Self.seconds) * 100) + " % of a core, "
                + "cpu.stat \(stat), sound at the sink \(span) frames of \(expected), gaps \(gaps.count)")
    }
}
