import Foundation
import Glibc
import ReelProtocol
import Testing

/// What a client was told survives `kill -9`: each kind of change is answered, reeld is killed
/// with SIGKILL as soon as the reply is read (a few microseconds later, before anything else the
/// test does), and after a restart on the same data directory the change is there.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"] != nil,
                            "needs the PulseAudio null sink that scripts/test starts"))
struct AcknowledgedStateTests {
    enum Change: String, CaseIterable, Sendable {
        case queueAdd, queueRemove, queueMove, queueClear, queueOptions, seek, pause, stop, volume, mute, outputOn, outputOff
    }

    /// Sends `method`, reads its reply and kills reeld at once; then checks the reply.
    func answerThenKill(_ daemon: DaemonProcess, _ method: String, _ params: JSONObject) throws -> (JSONValue, gap: Double) {
        let client = try daemon.client()
        try client.send(raw: RPCRequest(id: .int(1), method: method, params: params).encodedLine())
        let line = try client.readLine(timeout: 10)
        let read = DispatchTime.now().uptimeNanoseconds
        kill(daemon.pid, SIGKILL)
        let gap = Double(DispatchTime.now().uptimeNanoseconds - read) / 1e9
        daemon.process.waitUntilExit()
        guard let line, case .response(_, let result) = try RPCMessage(line: line) else {
            throw TestFailure("no reply to \(method)")
        }
        switch result {
        case .success(let value): return (value, gap)
        case .failure(let error): throw TestFailure("\(method) failed: \(error)")
        }
    }

    func paths(_ listing: JSONValue) -> [String] {
        (listing["entries"]?.arrayValue ?? []).compactMap { $0["source"]?["path"]?.stringValue }
    }

    /// Polls `player.status` until `condition` holds (the restored entry loads after start).
    func status(_ daemon: DaemonProcess, until condition: (JSONValue) -> Bool) throws -> JSONValue {
        var status = try daemon.client().result("player.status")
        let deadline = Date().addingTimeInterval(10)
        while !condition(status), Date() < deadline {
            usleep(20_000)
            status = try daemon.client().result("player.status")
        }
        return status
    }

    @Test(arguments: Change.allCases)
    func aChangeAnsweredRightBeforeKillNineIsThereAfterTheRestart(change: Change) throws {
        let scratch = try DaemonProcess()
        let config = scratch.directory.appendingPathComponent("reeld.toml").path
        try """
        [[outputs]]
        type = "alsa"

        [[outputs]]
        type = "snapcast"
        name = "pipe"
        path = "\(scratch.directory.appendingPathComponent("snapfifo").path)"
        format = "48000:16:2"
        enabled = \(change == .outputOff)
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let first = try DaemonProcess(device: "pulse", arguments: ["--config", config])
        let files = try ["a", "b", "c", "d"].map { try first.tone("\($0).wav", seconds: 20) }
        let client = try first.client()
        for file in files.prefix(3) { _ = try client.result("queue.add", ["file": .string(file)]) }
        let ids = try client.result("queue.list")["entries"]?.arrayValue?.compactMap { $0["id"]?.intValue } ?? []
        try #require(ids.count == 3)
        // Playing the first entry, or paused on it at 1 s.
        _ = try client.result("player.play", ["entry": .int(Int64(ids[0])), "position": 1])
        if change != .pause {
            _ = try client.result("player.pause")
            _ = try client.result("player.seek", ["position": 1])
        }

        let (reply, gap): (JSONValue, Double)
        switch change {
        case .queueAdd: (reply, gap) = try answerThenKill(first, "queue.add", ["file": .string(files[3])])
        case .queueRemove: (reply, gap) = try answerThenKill(first, "queue.remove", ["id": .int(Int64(ids[1]))])
        case .queueMove: (reply, gap) = try answerThenKill(first, "queue.move", ["id": .int(Int64(ids[2])), "position": 0])
        case .queueClear: (reply, gap) = try answerThenKill(first, "queue.clear", [:])
        case .queueOptions:
            (reply, gap) = try answerThenKill(
                first, "queue.setOptions", ["repeat": true, "random": true, "single": "oneshot", "consume": true])
        case .seek: (reply, gap) = try answerThenKill(first, "player.seek", ["position": 6.5])
        case .pause: (reply, gap) = try answerThenKill(first, "player.pause", [:])
        case .stop: (reply, gap) = try answerThenKill(first, "player.stop", [:])
        case .volume: (reply, gap) = try answerThenKill(first, "mixer.setVolume", ["volume": 37])
        case .mute: (reply, gap) = try answerThenKill(first, "mixer.setMuted", ["muted": true])
        case .outputOn: (reply, gap) = try answerThenKill(first, "outputs.enable", ["id": 1])
        case .outputOff: (reply, gap) = try answerThenKill(first, "outputs.disable", ["id": 1])
        }
        let killed = "killed \(Int(gap * 1e6)) µs after the reply"

        let second = try DaemonProcess(
            device: "pulse", arguments: ["--config", config, "--data-dir", first.directory.path + "/data"])
        let after = try second.client()
        let listing = try after.result("queue.list")
        switch change {
        case .queueAdd:
            #expect(paths(listing) == files, "\(killed)")
        case .queueRemove:
            #expect(paths(listing) == [files[0], files[2]], "\(killed)")
        case .queueMove:
            #expect(paths(listing) == [files[2], files[0], files[1]], "\(killed)")
        case .queueClear:
            #expect(paths(listing).isEmpty, "\(killed)")
            #expect(try after.result("player.status")["state"] == .string("stopped"))
        case .queueOptions:
            #expect(listing["options"] == ["repeat": true, "random": true, "single": "oneshot", "consume": true], "\(killed)")
        case .seek, .pause:
            let position = try #require(reply["position"]?.doubleValue)
            if change == .seek { #expect(position == 6.5) }
            let status = try status(second) { $0["state"] == .string("paused") }
            #expect(status["state"] == .string("paused"), "\(killed)")
            #expect(abs((status["position"]?.doubleValue ?? -1) - position) < 0.01, "answered \(position), back at \(status); \(killed)")
            #expect(status["source"]?["path"] == .string(files[0]))
        case .stop:
            let status = try status(second) { $0["state"] == .string("stopped") }
            #expect(status["state"] == .string("stopped"), "\(killed)")
            #expect(status["position"] == .double(0))
        case .volume:
            #expect(try after.result("mixer.status")["volume"] == 37, "\(killed)")
        case .mute:
            #expect(try after.result("mixer.status")["muted"] == true, "\(killed)")
        case .outputOn, .outputOff:
            let outputs = try after.result("outputs.list")["outputs"]?.arrayValue ?? []
            #expect(outputs.count == 2)
            #expect(outputs.last?["enabled"] == .bool(change == .outputOn), "\(killed)")
        }
        if change != .queueClear, change != .queueAdd, change != .queueRemove, change != .queueMove {
            #expect(paths(listing) == Array(files.prefix(3)), "the queue is there too")
        }
    }
}
