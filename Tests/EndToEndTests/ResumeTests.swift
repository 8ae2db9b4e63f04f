import Foundation
import Glibc
import ReelProtocol
import Testing

/// The player's saved state across restarts: restored paused where it was, and a saved state
/// that is corrupt or whose source is gone is logged and ignored.
@Suite(.serialized) struct ResumeTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]

    func writeState(_ text: String, in data: String) throws {
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        try text.write(toFile: data + "/player-state.json", atomically: true, encoding: .utf8)
    }

    @Test func savedStateIsRestoredPaused() throws {
        let scratch = try DaemonProcess()
        let file = try scratch.tone("keep.wav", seconds: 6)
        let data = scratch.directory.path + "/restore"
        try writeState("{\"version\":1,\"source\":{\"file\":\"\(file)\"},\"position\":2.5,\"state\":\"playing\"}", in: data)
        let daemon = try DaemonProcess(arguments: ["--data-dir", data])
        var status = try daemon.client().result("player.status")
        for _ in 0..<100 where status["state"] != .string("paused") {
            usleep(20_000)
            status = try daemon.client().result("player.status")
        }
        #expect(status["state"] == .string("paused"))
        #expect(status["position"] == .double(2.5))
        #expect(status["source"]?["path"] == .string(file))
        #expect(daemon.log().contains("restoring the player"))
    }

    @Test func resumeOnStartNoStartsStopped() throws {
        let scratch = try DaemonProcess()
        let file = try scratch.tone("keep.wav", seconds: 2)
        let data = scratch.directory.path + "/restore"
        try writeState("{\"version\":1,\"source\":{\"file\":\"\(file)\"},\"position\":1,\"state\":\"paused\"}", in: data)
        let daemon = try DaemonProcess(arguments: ["--data-dir", data], environment: ["REEL_RESUME_ON_START": "no"])
        usleep(200_000)
        let status = try daemon.client().result("player.status")
        #expect(status["state"] == .string("stopped"))
        // Not loaded, but the queue's current entry: where play starts, as after a stop.
        let queue = try daemon.client().result("queue.list")
        #expect(queue["current"] != nil && queue["current"] != .null)
        #expect(status["entry"] == queue["current"])
        #expect(status["source"]?["path"] == .string(file))
        #expect(status["position"] == .double(0))
    }

    @Test(arguments: [
        ("not json at all", "not valid JSON"),
        ("{\"version\":1,\"source\":{},\"position\":1,\"state\":\"paused\"}", "has no source"),
        ("{\"version\":1,\"source\":{\"file\":\"/gone/away.flac\"},\"position\":1,\"state\":\"paused\"}", "cannot restore"),
        ("{\"version\":1,\"source\":{\"item\":\"01a20000-0000-7000-8000-000000000000\"},\"position\":1,\"state\":\"paused\"}", "recording is gone"),
    ])
    func badOrStaleStateIsLoggedAndIgnored(text: String, logged: String) throws {
        let scratch = try DaemonProcess()
        let data = scratch.directory.path + "/restore"
        try writeState(text, in: data)
        let daemon = try DaemonProcess(arguments: ["--data-dir", data])
        usleep(300_000)
        let status = try daemon.client().result("player.status")
        #expect(status["state"] == .string("stopped"))
        #expect(daemon.log().contains(logged), "\(daemon.log().suffix(600))")
    }

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func killedWhilePausedResumesAtTheSamePosition() throws {
        let first = try DaemonProcess(device: "pulse")
        let file = try first.tone("long.wav", seconds: 10)
        let client = try first.client()
        _ = try client.result("player.play", ["file": .string(file)])
        _ = try client.result("player.seek", ["position": 3])
        let paused = try client.result("player.pause")
        let position = try #require(paused["position"]?.doubleValue)
        // Saved before the reply: no wait.
        kill(first.pid, SIGKILL)
        first.process.waitUntilExit()

        let second = try DaemonProcess(device: "pulse", arguments: ["--data-dir", first.directory.path + "/data"])
        var status = try second.client().result("player.status")
        for _ in 0..<100 where status["state"] != .string("paused") {
            usleep(20_000)
            status = try second.client().result("player.status")
        }
        #expect(status["state"] == .string("paused"))
        #expect(abs((status["position"]?.doubleValue ?? -9) - position) <= 0.5)
        #expect(status["source"]?["path"] == .string(file))
    }
}
