import Foundation
import Glibc
import ReelProtocol
import ReelTestSupport
import Testing

/// A voice-activated session through the real daemon: a phrase spoken by espeak-ng is played into
/// a PulseAudio null sink whose monitor reeld records, armed with a trigger.
@Suite(.serialized) struct TriggeredRecordingTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]

    func wait(_ client: RPCTestClient, timeout: Double = 30, until done: (JSONValue) -> Bool) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let status = try client.result("recorder.status")
            if done(status) { return status }
            usleep(50_000)
        }
        throw TestFailure("the recorder did not get there within \(timeout) s: \(try client.result("recorder.status"))")
    }

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func aSpokenPhraseTriggersATakeThatHoldsItsStartAndEndsAfterHold() throws {
        let sink = try PrivateSink()
        let daemon = try DaemonProcess(device: "pulse", arguments: ["--capture-device", "pulse"], environment: sink.environment)
        let spoken = daemon.directory.appendingPathComponent("spoken.wav").path
        let phrase = daemon.directory.appendingPathComponent("phrase.wav").path
        let (status, output) = try AudioAnalysis.run("espeak-ng", ["-w", spoken, "recording starts when someone speaks"])
        try #require(status == 0, "espeak-ng failed: \(output)")
        // A second of silence before the phrase: the pre-roll is made of the frames before the
        // trigger.
        try TestTool.run("sox", [spoken, "-r", "48000", "-c", "1", "-b", "16", phrase, "pad", "1", "0"])
        let client = try daemon.client()
        let hold = 1.0
        let started = try client.result("recorder.start", [
            "format": "wav", "name": "Vox",
            "trigger": ["level": -30, "hold": .double(hold), "preroll": 0.2, "minLength": 0.1],
        ])
        #expect(started["state"] == .string("armed"))
        #expect(started["threshold"]?.doubleValue == -30)
        #expect(started["item"] == .null)
        // Armed for a moment on silence first: nothing may trigger. The pre-roll is made of frames
        // the device delivered, and PulseAudio's plugin delivers a new stream's first frames 1–2 s
        // after it starts (nothing from before): wait for them, then a second more.
        _ = try wait(client) { ($0["elapsed"]?.doubleValue ?? 0) > 0 }
        usleep(1_000_000)
        let armed = try client.result("recorder.status")
        #expect(armed["series"]?["takes"]?.intValue == 0, "a take started on silence")
        print("armed for 1 s: \(armed["elapsed"]?.doubleValue ?? -1) s captured")
        _ = try client.result("player.play", ["file": .string(phrase)])
        let landed = try wait(client) { ($0["series"]?["takes"]?.intValue ?? 0) >= 1 && $0["state"] == .string("armed") }
        let item = try #require(landed["item"])
        #expect(item["name"] == .string("Vox 001"))
        _ = try client.result("recorder.stop")
        let id = try #require(item["id"]?.stringValue)
        let file = "\(daemon.directory.path)/data/audio/\(id).wav"
        let data = try AudioAnalysis.rawSamples(file)
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        if let keepAt = ProcessInfo.processInfo.environment["REEL_TEST_KEEP_TAKE"] { try? data.write(to: URL(fileURLWithPath: keepAt)) }
        try #require(samples.count > 48000)
        // The phrase's start (its first sample above -60 dBFS, quieter than the trigger) lies in
        // the take's first 200 ms: the pre-roll caught what came before the trigger.
        let onset = try #require(samples.firstIndex { abs(Int32($0)) >= 33 })
        #expect(onset < 9600, "the phrase starts \(onset) frames into the take, not within its first 200 ms")
        let trigger = try #require(samples.firstIndex { abs(Int32($0)) >= 1036 })  // -30 dBFS
        #expect(trigger >= 9600 - 1 && trigger <= 9600 + 1, "the trigger is \(trigger) frames in, not after the 0.2 s pre-roll")
        // The take ends exactly `hold` after the last sample at or above the level.
        let lastLoud = try #require(samples.lastIndex { abs(Int32($0)) >= 1036 })
        #expect(samples.count - (lastLoud + 1) == Int(hold * 48000), "the take ends \(samples.count - lastLoud - 1) frames after the last loud sample")
        print("spoken phrase: take of \(samples.count) frames, onset \(onset), trigger \(trigger), last loud \(lastLoud)")
    }
}
