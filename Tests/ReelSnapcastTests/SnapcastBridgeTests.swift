import ReelClient
import ReelModel
import ReelProtocol
import Testing
@testable import ReelSnapcast

/// Collects what the bridge writes for snapserver.
final class LinesSink: PluginSink {
    var messages: [JSONObject] = []
    func write(_ line: [UInt8]) {
        #expect(line.last == 0x0A)
        messages.append((try? JSONValue.parse(Array(line.dropLast())))?.objectValue ?? ["unparsable": .string(String(decoding: line, as: UTF8.self))])
    }
    /// Takes the messages written so far.
    func take() -> [JSONObject] {
        defer { messages = [] }
        return messages
    }
}

/// Records requests; the test answers them.
final class FakeReeld: ReeldRequester {
    var isConnected = true
    var socketDescription = "/tmp/fake.sock"
    var requests: [(method: String, params: JSONObject, reply: (Result<JSONValue, RPCError>) -> Void)] = []
    func request(_ method: String, _ params: JSONObject, reply: @escaping (Result<JSONValue, RPCError>) -> Void) {
        requests.append((method, params, reply))
    }
}

@Suite("The bridge")
struct SnapcastBridgeTests {
    let sink = LinesSink()
    let reeld = FakeReeld()
    let bridge: SnapcastBridge

    init() {
        bridge = SnapcastBridge(sink: sink, reeld: reeld, clock: { 100 })
    }

    private func send(_ line: String) { bridge.handle(line: Array(line.utf8)) }

    /// Connects and answers the three subscriptions with `player`, a queue and a mixer.
    private func connect(player: PlayerState = playing(), queue summary: QueueSummary = queue()) {
        bridge.connected(to: "/tmp/fake.sock")
        #expect(reeld.requests.map(\.method) == ["subscribe", "subscribe", "subscribe"])
        #expect(reeld.requests.map { $0.params["stream"] } == ["player", "queue", "mixer"])
        reeld.requests = []
        push("player.state", player.jsonObject)
        push("queue.changed", summary.jsonObject)
        push("mixer.state", MixerState(volume: 70, muted: false, kind: .software).jsonObject)
    }

    private func push(_ method: String, _ params: JSONObject) {
        bridge.event(method: method, params: params, socket: "/tmp/fake.sock")
    }

    @Test func readyOnceSyncedThenPropertiesOnGetProperties() {
        connect()
        let written = sink.take()
        #expect(written.map { $0["method"] } == ["Plugin.Stream.Log", "Plugin.Stream.Ready"])
        send(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.GetProperties"}"#)
        let reply = sink.take()
        #expect(reply.count == 1)
        #expect(reply.first?["id"] == 1)
        let result = reply.first?["result"]
        #expect(result?["playbackStatus"] == "playing")
        #expect(result?["volume"] == 70)
        #expect(result?["metadata"]?["title"] == "A tone.flac")
    }

    @Test func controlGoesToReeldAndRepliesOkAfterThePush() throws {
        connect()
        send(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.GetProperties"}"#)
        _ = sink.take()
        send(#"{"id":2,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"pause"}}"#)
        #expect(reeld.requests.map(\.method) == ["player.pause"])
        var paused = playing()
        paused.state = .paused
        push("player.state", paused.jsonObject)
        reeld.requests[0].reply(.success(paused.json))
        let written = sink.take()
        #expect(written.count == 2)
        #expect(written.first?["method"] == "Plugin.Stream.Player.Properties")
        #expect(written.first?["params"]?["playbackStatus"] == "paused")
        #expect(written.first?["params"]?["metadata"] == nil, "the track did not change")
        #expect(written.last?["id"] == 2 && written.last?["result"] == "ok")
    }

    @Test func reeldErrorsArePassedOnWithAStringData() {
        connect()
        _ = sink.take()
        send(#"{"id":3,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"next"}}"#)
        reeld.requests[0].reply(.failure(RPCError(ReelError(.notPlaying, "nothing is playing; play an entry first"))))
        let reply = sink.take().first
        #expect(reply?["error"]?["code"] == -32000)
        #expect(reply?["error"]?["data"] == "reeld: nothing is playing; play an entry first (not_playing)")
    }

    @Test func badRequestsGetErrorsAndNothingReachesReeld() {
        connect()
        _ = sink.take()
        send("garbage")
        send(#"{"id":4,"jsonrpc":"2.0","method":"Plugin.Stream.Player.SetProperty","params":{"rate":2.0}}"#)
        send(#"{"jsonrpc":"2.0","method":"Plugin.Stream.Player.SetProperty","params":{"rate":2.0}}"#)
        let written = sink.take()
        #expect(written.count == 2)
        #expect(written[0]["id"] == .null && written[0]["error"]?["code"] == -32700)
        #expect(written[1]["id"] == 4 && written[1]["error"]?["data"]?.stringValue?.contains("rate") == true)
        #expect(reeld.requests.isEmpty)
    }

    @Test func aNewTrackPushesMetadata() {
        connect()
        _ = sink.take()
        push("player.state", playing("/music/b.flac", entry: 4).jsonObject)
        let pushed = sink.take()
        #expect(pushed.first?["params"]?["metadata"]?["title"] == "b.flac")
        #expect(pushed.first?["params"]?["metadata"]?["trackId"] == "4")
    }

    @Test func disconnectedThenBack() {
        connect()
        _ = sink.take()
        bridge.disconnected(.connectionLost(path: "/tmp/fake.sock", what: "reeld closed the connection"))
        let written = sink.take()
        #expect(written.map { $0["method"] } == ["Plugin.Stream.Log", "Plugin.Stream.Player.Properties"])
        #expect(written[1]["params"]?["canControl"] == false)
        #expect(written[1]["params"]?["metadata"] == [:])
        send(#"{"id":5,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"play"}}"#)
        #expect(sink.take().first?["error"]?["message"]?.stringValue?.contains("not connected") == true)
        bridge.unreachable([.unreachable(path: "/tmp/fake.sock", errno: 2)])
        bridge.unreachable([.unreachable(path: "/tmp/fake.sock", errno: 2)])
        #expect(sink.take().count == 1, "the same failure is logged once")
        connect()
        let back = sink.take()
        #expect(back.map { $0["method"] } == ["Plugin.Stream.Log", "Plugin.Stream.Player.Properties"])
        #expect(back[1]["params"]?["canControl"] == true)
        #expect(back[1]["params"]?["metadata"]?["title"] == "A tone.flac")
    }

    @Test func readyWhenReeldIsNotThere() {
        bridge.unreachable([.unreachable(path: "/tmp/fake.sock", errno: 2)])
        let written = sink.take()
        #expect(written.map { $0["method"] } == ["Plugin.Stream.Log", "Plugin.Stream.Ready"])
        send(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.GetProperties"}"#)
        #expect(sink.take().first?["result"]?["canControl"] == false)
    }

    @Test func looksUpTheCurrentEntryWhenThePlayerHasNone() {
        connect(player: .stopped, queue: queue(length: 3, current: 8))
        #expect(reeld.requests.map(\.method) == ["queue.list"])
        let entries: [JSONValue] = [
            QueueEntry(id: 7, position: 0, source: .file(path: "/m/a.flac"), duration: 2).json,
            QueueEntry(id: 8, position: 1, source: .file(path: "/m/b.flac"), duration: 4).json,
        ]
        _ = sink.take()
        reeld.requests[0].reply(.success(["length": 3, "entries": .array(entries)]))
        // Ready went out before; the found entry is pushed.
        let pushed = sink.take()
        #expect(pushed.first?["params"]?["metadata"]?["title"] == "b.flac")
        #expect(pushed.first?["params"]?["metadata"]?["duration"] == 4.0)
    }

    @Test func aRefusedSubscriptionDoesNotHoldUpReady() {
        bridge.connected(to: "/tmp/fake.sock")
        reeld.requests[2].reply(.failure(.invalidParams("unknown stream \"mixer\"")))
        push("player.state", playing().jsonObject)
        push("queue.changed", queue().jsonObject)
        let written = sink.take()
        #expect(written.contains { $0["method"] == "Plugin.Stream.Ready" })
        #expect(written.first?["params"]?["severity"] == "warning")
    }
}
