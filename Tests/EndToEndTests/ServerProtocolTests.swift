import Foundation
import Glibc
import ReelProtocol
import Testing

/// reeld as a process, driven over its real Unix socket: every framing and error rule of the
/// protocol, the player methods, and the player stream.
@Suite(.serialized) struct ServerProtocolTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]


    func error(of result: Result<JSONValue, RPCError>) -> RPCError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    func reply(_ client: RPCTestClient, to line: String) throws -> JSONValue {
        try client.send(line + "\n")
        guard let value = try client.readJSON() else { throw TestFailure("connection closed after \(line)") }
        return value
    }

    // MARK: Framing and JSON-RPC rules

    @Test func requestSentOneByteAtATimeIsAnswered() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        for byte in Array("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"player.status\"}\r\n".utf8) {
            try client.send(raw: [byte])
        }
        let value = try #require(try client.readJSON())
        #expect(value["id"] == .string("x"))
        #expect(value["result"]?["state"] == .string("stopped"))
    }

    @Test func malformedLinesGetErrorsAndTheConnectionStays() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let cases: [(String, Int, JSONValue)] = [
            ("garbage", -32700, .null),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"player.seek\",\"params\":{\"position\":NaN}}", -32700, .null),
            ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"", -32700, .null),
            ("42", -32600, .null),
            ("[]", -32600, .null),
            ("{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"player.status\"}", -32600, .int(2)),
            ("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":7}", -32600, .int(3)),
            ("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"player.status\"}", -32600, .null),
            ("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"player.fly\"}", -32601, .int(4)),
            ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"player.seek\",\"params\":{\"position\":\"ten\"}}", -32602, .int(5)),
            ("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"player.seek\",\"params\":{\"position\":1e400}}", -32700, .null),
            ("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"player.seek\",\"params\":[1]}", -32602, .int(7)),
            ("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"player.seek\",\"params\":{}}", -32602, .int(8)),
            ("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"player.play\",\"params\":{\"file\":\"relative.flac\"}}", -32602, .int(9)),
            ("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"player.status\",\"params\":{\"bogus\":1}}", -32602, .int(10)),
            ("{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"subscribe\",\"params\":{\"stream\":\"player\",\"interval\":0.001}}", -32602, .int(11)),
            ("\u{FF}\u{FE}", -32700, .null),
        ]
        for (line, code, id) in cases {
            let value = try reply(client, to: line)
            #expect(value["error"]?["code"] == .int(Int64(code)), "\(line) → \(value)")
            #expect(value["id"] == id, "\(line) → \(value)")
            #expect(value["error"]?["message"]?.stringValue?.isEmpty == false)
        }
        // A batch of things that are not requests gets one error each.
        let batch = try reply(client, to: "[1,\"two\"]")
        #expect(batch.arrayValue?.map { $0["error"]?["code"] } == [.int(-32600), .int(-32600)])
        // Invalid UTF-8 bytes (not a Swift string) are a parse error too.
        try client.send(raw: [0x7B, 0x22, 0xC3, 0x28, 0x22, 0x7D, 0x0A])
        #expect(try client.readJSON()?["error"]?["code"] == .int(-32700))
        // Still connected and working.
        #expect(try client.result("player.status")["state"] == .string("stopped"))
    }

    @Test func blankLinesAndNotificationsGetNoReply() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        try client.send("\n   \n{\"jsonrpc\":\"2.0\",\"method\":\"player.status\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"no.such\"}\n")
        // The next thing to arrive is the reply to this request, not anything for the lines above.
        let value = try reply(client, to: "{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"player.status\"}")
        #expect(value["id"] == .int(99))
    }

    @Test func batchRepliesInOrderWithoutNotifications() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let value = try reply(
            client,
            to: """
                [{"jsonrpc":"2.0","id":1,"method":"player.status"},{"jsonrpc":"2.0","method":"player.stop"},\
                {"jsonrpc":"2.0","id":2,"method":"nope"},{"jsonrpc":"2.0","id":3,"method":"player.pause"},5]
                """)
        let replies = try #require(value.arrayValue)
        #expect(replies.count == 4)
        #expect(replies[0]["id"] == .int(1) && replies[0]["result"] != nil)
        #expect(replies[1]["error"]?["code"] == .int(-32601))
        #expect(replies[2]["error"]?["data"]?["reason"] == .string("not_playing"))
        #expect(replies[3]["error"]?["code"] == .int(-32600))
    }

    @Test func lineOverOneMebibyteIsRefusedAndTheConnectionClosed() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let huge = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"player.status\",\"params\":{\"x\":\"" + String(repeating: "a", count: 1 << 20) + "\"}}\n"
        try? client.send(huge)
        let value = try #require(try client.readJSON())
        #expect(value["error"]?["code"] == .int(-32600))
        #expect(value["error"]?["data"]?["reason"] == .string("line_too_long"))
        #expect(try client.readLine() == nil, "the connection stays open after an oversized line")
        // The daemon itself is fine.
        #expect(try daemon.client().result("player.status")["state"] == .string("stopped"))
    }

    @Test func unterminatedLineBeforeHalfCloseIsAnswered() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        try client.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"daemon.info\"}")
        shutdown(client.fd, Int32(SHUT_WR))
        let value = try #require(try client.readJSON())
        #expect(value["result"]?["protocol"] == .int(3))
        #expect(value["result"]?["device"] == .string("null"))
        #expect(try client.readLine() == nil)
    }

    @Test func requestsOnOneConnectionTakeEffectInTheOrderSent() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let path = try daemon.tone("order.wav", seconds: 1)
        // Pipelined in one write: the status must see the play that was sent before it.
        try client.send(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"player.play\",\"params\":{\"file\":\"\(path)\"}}\n"
                + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"player.status\"}\n")
        let first = try #require(try client.readJSON())
        let second = try #require(try client.readJSON())
        #expect(first["id"] == .int(1))
        #expect(second["id"] == .int(2))
        #expect(second["result"]?["source"]?["path"] == .string(path))
        // The same inside a batch.
        let batch = try reply(
            client,
            to: "[{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"player.play\",\"params\":{\"file\":\"\(path)\"}},"
                + "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"player.status\"}]")
        #expect(batch.arrayValue?.last?["result"]?["source"]?["path"] == .string(path))
    }

    @Test func firstPushFollowsTheReplyThatCarriesTheSubscription() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let path = try daemon.tone("first.wav", seconds: 1)
        try client.send(
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\",\"params\":{\"stream\":\"player\"}},"
                + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"player.play\",\"params\":{\"file\":\"\(path)\"}}]\n")
        let first = try #require(try client.readJSON())
        #expect(first.arrayValue?.count == 2, "the batch reply comes first, got \(first)")
        let push = try #require(try client.readJSON())
        #expect(push["method"] == .string("player.state"))
        #expect(push["params"]?["subscription"] == first.arrayValue?.first?["result"]?["subscription"])
    }

    // MARK: Player methods

    @Test func playPauseSeekStopOnTheNullDevice() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let path = try daemon.tone("a.wav", seconds: 3)
        let played = try client.result("player.play", ["file": .string(path), "position": 1.5])
        #expect(played["source"]?["path"] == .string(path))
        #expect(played["duration"] == .double(3))
        #expect(played["format"]?["codec"] == .string("wav"))
        // The null device is not paced: the file ends at once, then the player is stopped.
        var status = try client.result("player.status")
        for _ in 0..<100 where status["state"] != .string("stopped") {
            usleep(20_000)
            status = try client.result("player.status")
        }
        #expect(status["state"] == .string("stopped"))
        #expect(status["source"]?["path"] == .string(path), "stop keeps the source")
        #expect(error(of: try client.call("player.pause"))?.reason == "not_playing")
        #expect(error(of: try client.call("player.seek", ["position": 1]))?.reason == "not_playing")
        let stopped = try client.result("player.stop")
        #expect(stopped["state"] == .string("stopped"))
    }

    @Test func playErrorsNameTheFile() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let missing = try #require(error(of: try client.call("player.play", ["file": "/no/such/file.flac"])))
        #expect(missing.reason == "not_found")
        #expect(missing.message.contains("/no/such/file.flac"))
        let text = daemon.directory.appendingPathComponent("notes.txt").path
        try "not audio".write(toFile: text, atomically: true, encoding: .utf8)
        let unsupported = try #require(error(of: try client.call("player.play", ["file": .string(text)])))
        #expect(unsupported.reason == "unsupported_format")
        #expect(unsupported.message.contains(text))
        let negative = try #require(error(of: try client.call("player.play", ["file": .string(text), "position": -1])))
        #expect(negative.reason == "out_of_range")
        let directory = try #require(error(of: try client.call("player.play", ["file": .string(daemon.directory.path)])))
        #expect(directory.reason == "unsupported_format")
        let path = try daemon.tone("b.wav", seconds: 1)
        let late = try #require(error(of: try client.call("player.play", ["file": .string(path), "position": 5])))
        #expect(late.reason == "out_of_range")
    }

    @Test func missingDeviceIsReportedAndTheDaemonKeepsRunning() throws {
        let daemon = try DaemonProcess(device: "no_such_pcm")
        let client = try daemon.client()
        let path = try daemon.tone("c.wav", seconds: 1)
        let failure = try #require(error(of: try client.call("player.play", ["file": .string(path)])))
        #expect(failure.reason == "device_unavailable")
        #expect(failure.message.contains("no_such_pcm"))
        #expect(try client.result("player.status")["state"] == .string("stopped"))
    }

    @Test func aDeviceThatCannotBeOpenedIsLoggedOnceWithItsReasonNotOncePerTry() throws {
        let daemon = try DaemonProcess(device: "no_such_pcm", arguments: ["--capture-device", "no_such_capture"])
        let client = try daemon.client()
        let path = try daemon.tone("e.wav", seconds: 1)
        for _ in 0..<5 {
            let failure = try #require(error(of: try client.call("player.play", ["file": .string(path)])))
            #expect(failure.reason == "device_unavailable")
        }
        let recording = try #require(error(of: try client.call("recorder.start", [:])))
        #expect(recording.reason == "device_unavailable")
        let warnings = daemon.log().split(separator: "\n").filter { $0.contains("warning") && $0.contains("device failed") }
        let playback = warnings.filter { $0.contains("playback device failed") }
        #expect(playback.count == 1, "\(warnings)")
        #expect(playback.first?.contains("device=no_such_pcm") == true, "\(warnings)")
        #expect(playback.first?.contains("cannot open ALSA device") == true, "\(warnings)")
        let capture = warnings.filter { $0.contains("capture device failed") }
        #expect(capture.count == 1 && capture.first?.contains("device=no_such_capture") == true, "\(warnings)")
    }

    @Test func clearErrorTakesThePlayersErrorOutOfTheStatus() throws {
        let daemon = try DaemonProcess(device: "no_such_pcm")
        let client = try daemon.client()
        let path = try daemon.tone("c.wav", seconds: 1)
        _ = try #require(error(of: try client.call("player.play", ["file": .string(path)])))
        let failed = try client.result("player.status")
        #expect(failed["error"]?["reason"] == .string("device_unavailable"), "\(failed)")
        let cleared = try client.result("player.clearError")
        #expect(cleared["error"] == .null, "\(cleared)")
        #expect(cleared["source"] == failed["source"], "only the error goes")
        #expect(try client.result("player.status")["error"] == .null)
        let refused = try client.call("player.clearError", ["id": 1])
        guard case .failure(let bad) = refused else { Issue.record("accepted an unknown parameter"); return }
        #expect(bad.code == -32602)
    }

    @Test func aPlayThatFailsIsInThePlayerStateThatEveryClientSees() throws {
        let daemon = try DaemonProcess()
        let watcher = try daemon.client()
        _ = try watcher.result("subscribe", ["stream": "player"])
        _ = try watcher.nextNotification()
        let broken = daemon.directory.appendingPathComponent("broken.flac").path
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: broken))
        let player = try daemon.client()
        let refused = try #require(error(of: try player.call("player.play", ["file": .string(broken)])))
        #expect(refused.reason == "unsupported_format")
        // The other client learns it from the stream, and a status says it too.
        let deadline = Date().addingTimeInterval(10)
        var seen: JSONValue?
        while seen == nil, Date() < deadline {
            let push = try watcher.nextNotification()
            if push.params["error"]?["reason"] == .string("unsupported_format") { seen = push.params["error"] }
        }
        #expect(seen?["message"]?.stringValue?.contains(broken) == true, "\(String(describing: seen))")
        #expect(try player.result("player.status")["error"]?["reason"] == .string("unsupported_format"))
        // Cleared by a play that works.
        let good = try daemon.tone("good.wav", seconds: 1)
        #expect(try player.result("player.play", ["file": .string(good)])["error"] == .null)
    }

    // MARK: The player stream

    @Test func subscriptionGetsTheCurrentValueThenChanges() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let subscribed = try client.result("subscribe", ["stream": "player"])
        let id = try #require(subscribed["subscription"]?.intValue)
        let first = try client.nextNotification()
        #expect(first.method == "player.state")
        #expect(first.params["subscription"] == .int(Int64(id)))
        #expect(first.params["state"] == .string("stopped"))
        let path = try daemon.tone("d.wav", seconds: 1)
        _ = try client.result("player.play", ["file": .string(path)])
        // The change to playing (or straight to stopped on the unpaced null device) is pushed.
        var sawSource = false
        for _ in 0..<3 {
            let push = try client.nextNotification()
            if push.params["source"]?["path"] == .string(path) { sawSource = true; break }
        }
        #expect(sawSource)
        #expect(try client.result("unsubscribe", ["subscription": .int(Int64(id))]) == .object([:]))
        #expect(error(of: try client.call("unsubscribe", ["subscription": .int(Int64(id))]))?.code == -32602)
        #expect(error(of: try client.call("subscribe", ["stream": "weather"]))?.code == -32602)
    }

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func subscriberGetsTicksWhilePlayingAndASlowClientBlocksNoOne() throws {
        let daemon = try DaemonProcess(device: "pulse")
        let path = try daemon.tone("e.wav", seconds: 4)

        // A client that subscribes at the fastest rate and never reads again.
        let sleeper = try daemon.client()
        try sleeper.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\",\"params\":{\"stream\":\"player\",\"interval\":0.02}}\n")

        let watcher = try daemon.client()
        _ = try watcher.result("subscribe", ["stream": "player", "interval": 0.1])
        let control = try daemon.client()
        _ = try control.result("player.play", ["file": .string(path)])

        // Ticks arrive about every 0.1 s and the position moves forward.
        var positions: [Double] = []
        let start = Date()
        while Date().timeIntervalSince(start) < 2.5 {
            let push = try watcher.nextNotification()
            if push.params["state"] == .string("playing"), let position = push.params["position"]?.doubleValue {
                positions.append(position)
            }
        }
        #expect(positions.count >= 15, "only \(positions.count) ticks in 2.5 s")
        #expect(zip(positions, positions.dropFirst()).allSatisfy { $0 <= $1 })
        // PulseAudio may hold a new stream's first writes for up to ~2 s (facts.md): the position
        // must move forward over the window, not reach a given value.
        #expect((positions.last ?? 0) > (positions.first ?? 0) + 0.3, "positions \(positions.first ?? -1) → \(positions.last ?? -1)")

        // Requests on another connection stay fast while the sleeper's output piles up.
        var slowest = 0.0
        for _ in 0..<200 {
            let begin = Date()
            _ = try control.result("player.status")
            slowest = max(slowest, Date().timeIntervalSince(begin))
        }
        #expect(slowest < 0.25, "a status request took \(slowest) s")
        let status = try control.result("player.status")
        #expect(status["underruns"] == .int(0))
        _ = try control.result("player.stop")
    }

    @Test func clientThatNeverReadsIsDisconnectedPastOneMebibyte() throws {
        let daemon = try DaemonProcess()
        let greedy = try daemon.client()
        // About 10 MB of replies requested, none read.
        let request = Array("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"daemon.info\"}\n".utf8)
        var batch: [UInt8] = []
        for _ in 0..<1000 { batch += request }
        var sendFailed = false
        for _ in 0..<40 {
            do { try greedy.send(raw: batch) } catch { sendFailed = true; break }
        }
        // Reading now finds the replies that made it, then the end of the connection.
        var lines = 0
        while let _ = try greedy.readLine(timeout: 10) { lines += 1 }
        #expect(lines < 40_000, "all \(lines) replies were kept for a client that did not read")
        _ = sendFailed
        #expect(daemon.log().contains("not reading"))
        #expect(try daemon.client().result("player.status")["state"] == .string("stopped"))
    }

    // MARK: Daemon life

    @Test func secondDaemonOnALiveSocketExitsWithAClearMessage() throws {
        let daemon = try DaemonProcess()
        let second = Process()
        second.executableURL = URL(fileURLWithPath: DaemonProcess.executable("reeld"))
        second.arguments = ["--socket", daemon.socketPath, "--device", "null", "--data-dir", daemon.directory.path + "/d2"]
        second.environment = ["REEL_CONFIG": "/dev/null", "REEL_MPD_LISTEN": "none", "REEL_HTTP_LISTEN": "none", "HOME": daemon.directory.path]
        let errors = Pipe()
        second.standardError = errors
        try second.run()
        second.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(second.terminationStatus == 1)
        #expect(message.contains("another reeld is already listening on \(daemon.socketPath)"))
        #expect(try daemon.client().result("player.status")["state"] == .string("stopped"))
    }

    @Test func sigtermShutsDownCleanlyAndRemovesTheSocket() throws {
        let daemon = try DaemonProcess()
        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.log().contains("shutting down"))
    }

    @Test func staleSocketLeftByAKilledDaemonIsReplaced() throws {
        let first = try DaemonProcess()
        kill(first.pid, SIGKILL)
        first.process.waitUntilExit()
        #expect(FileManager.default.fileExists(atPath: first.socketPath))
        let second = try DaemonProcess(socketPath: first.socketPath)
        #expect(try RPCTestClient(path: first.socketPath).result("player.status")["state"] == .string("stopped"))
        _ = second
    }

    @Test func readinessIsSignalledToSystemd() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("notify").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd); try? FileManager.default.removeItem(at: directory) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let daemon = try DaemonProcess(environment: ["NOTIFY_SOCKET": path])
        var buffer = [UInt8](repeating: 0, count: 256)
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&poller, 1, 5000) == 1)
        let count = recv(fd, &buffer, buffer.count, 0)
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).hasPrefix("READY=1"))
        daemon.stop()
        #expect(poll(&poller, 1, 5000) == 1)
        let stopping = recv(fd, &buffer, buffer.count, 0)
        #expect(String(decoding: buffer.prefix(max(stopping, 0)), as: UTF8.self).hasPrefix("STOPPING=1"))
    }
}
