import ReelProtocol
import Testing
@testable import ReelSnapcast

@Suite("Requests from snapserver")
struct PluginRequestTests {
    private func decode(_ line: String) -> PluginIncoming { PluginIncoming(line: Array(line.utf8)) }

    /// The error of an invalid line, checking its id.
    private func error(_ line: String, id: JSONValue? = 1) -> RPCError? {
        guard case .invalid(let gotID, let error) = decode(line) else {
            Issue.record("\(line) was not refused: \(decode(line))")
            return nil
        }
        #expect(gotID == id)
        return error
    }

    @Test func getProperties() {
        #expect(decode(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.GetProperties"}"#) == .request(id: 1, .getProperties))
    }

    @Test func controlCommandsAsSnapserverSendsThem() {
        let cases: [(String, PlayerCommand)] = [
            (#"{"command":"play"}"#, .play), (#"{"command":"pause"}"#, .pause), (#"{"command":"playPause"}"#, .playPause),
            (#"{"command":"stop"}"#, .stop), (#"{"command":"next"}"#, .next), (#"{"command":"previous","params":{}}"#, .previous),
            (#"{"command":"seek","params":{"offset":-10.5}}"#, .seek(offset: -10.5)),
            (#"{"command":"setPosition","params":{"position":17.827}}"#, .setPosition(17.827)),
        ]
        for (params, command) in cases {
            let line = #"{"id":4,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":\#(params)}"#
            #expect(decode(line) == .request(id: 4, .control(command)), "\(params)")
        }
    }

    @Test func setPropertyAsSnapserverSendsIt() {
        let cases: [(String, PlayerProperty)] = [
            (#"{"volume":42}"#, .volume(42)), (#"{"mute":true}"#, .mute(true)), (#"{"shuffle":false}"#, .shuffle(false)),
            (#"{"loopStatus":"track"}"#, .loopStatus(.track)), (#"{"loopStatus":"none"}"#, .loopStatus(.none)),
            (#"{"volume":100.0}"#, .volume(100)),
        ]
        for (params, property) in cases {
            let line = #"{"id":"x","jsonrpc":"2.0","method":"Plugin.Stream.Player.SetProperty","params":\#(params)}"#
            #expect(decode(line) == .request(id: "x", .setProperty(property)), "\(params)")
        }
    }

    @Test func notificationsAreCarriedOutWithoutId() {
        #expect(decode(#"{"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"stop"}}"#) == .request(id: nil, .control(.stop)))
    }

    @Test func notJSONIsAParseErrorWithNullId() {
        #expect(error("not json", id: .null)?.code == RPCErrorCode.parseError)
        #expect(error(#"{"id":1,"jsonrpc":"2.0""#, id: .null)?.code == RPCErrorCode.parseError)
    }

    @Test func envelopeErrors() {
        #expect(error(#"{"id":1,"method":"Plugin.Stream.Player.GetProperties"}"#)?.code == RPCErrorCode.invalidRequest)
        #expect(error(#"[{"id":1,"jsonrpc":"2.0","method":"x"}]"#, id: .null)?.message.contains("batch") == true)
        #expect(error("42", id: .null)?.code == RPCErrorCode.invalidRequest)
    }

    @Test func unknownMethodNamesTheMethodsThereAre() {
        let refused = error(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Jump"}"#)
        #expect(refused?.code == RPCErrorCode.methodNotFound)
        #expect(refused?.message.contains("Plugin.Stream.Player.Jump") == true)
        #expect(refused?.message.contains("Plugin.Stream.Player.Control") == true)
    }

    @Test func badControlParams() {
        func control(_ params: String) -> RPCError? {
            error(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":\#(params)}"#)
        }
        #expect(control("{}")?.message.contains("needs \"command\"") == true)
        #expect(control(#"{"command":7}"#)?.message.contains("must be a string") == true)
        #expect(control(#"{"command":"jump"}"#)?.message.contains("unknown command \"jump\"") == true)
        #expect(control(#"{"command":"seek"}"#)?.message.contains("offset") == true)
        #expect(control(#"{"command":"seek","params":{"offset":"10"}}"#)?.message.contains("number of seconds") == true)
        #expect(control(#"{"command":"setPosition","params":{"position":-1}}"#)?.message.contains("negative") == true)
        #expect(control(#"{"command":"play","params":[1]}"#)?.code == RPCErrorCode.invalidParams)
        #expect(error(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":[1]}"#)?.code == RPCErrorCode.invalidParams)
    }

    @Test func badProperties() {
        func set(_ params: String) -> RPCError? {
            error(#"{"id":1,"jsonrpc":"2.0","method":"Plugin.Stream.Player.SetProperty","params":\#(params)}"#)
        }
        #expect(set(#"{"volume":101}"#)?.message == "volume must be from 0 to 100, not 101")
        #expect(set(#"{"volume":50.5}"#)?.message.contains("integer") == true)
        #expect(set(#"{"volume":"loud"}"#)?.message.contains("a string") == true)
        #expect(set(#"{"mute":1}"#)?.message.contains("true or false") == true)
        #expect(set(#"{"loopStatus":"forever"}"#)?.message.contains("\"playlist\"") == true)
        #expect(set(#"{"rate":1.5}"#)?.message.contains("rate is not supported") == true)
        #expect(set(#"{"speed":1}"#)?.message.contains("unknown property \"speed\"") == true)
        #expect(set(#"{}"#)?.message.contains("exactly one property") == true)
        #expect(set(#"{"volume":1,"mute":true}"#)?.message.contains("exactly one property") == true)
        for refused in [set(#"{"volume":101}"#), set(#"{"rate":1.5}"#)] {
            #expect(refused?.code == RPCErrorCode.invalidParams)
        }
    }

    @Test func repliesAndBlankLinesAreIgnored() {
        #expect(decode(#"{"jsonrpc":"2.0","id":3,"result":"ok"}"#) == .ignored)
        #expect(decode(#"{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}"#) == .ignored)
        #expect(decode("  ") == .ignored)
        #expect(decode("") == .ignored)
    }
}

@Suite("Command line")
struct PluginArgumentsTests {
    @Test func acceptsWhatSnapserverPasses() throws {
        let parsed = try PluginArguments.parse(["--socket=/tmp/r.sock", "--stream=Reel", "--snapcast-port=1780", "--snapcast-host=0.0.0.0"])
        #expect(parsed == PluginArguments(socket: "/tmp/r.sock", stream: "Reel"))
        #expect(try PluginArguments.parse(["--socket", "/a b/c.sock", "--stream", "S"]) == PluginArguments(socket: "/a b/c.sock", stream: "S"))
        #expect(try PluginArguments.parse([]) == PluginArguments())
        #expect(try PluginArguments.parse(["--help"]).showHelp)
    }

    @Test func refusesWhatItDoesNotKnow() {
        #expect(throws: PluginUsageError("unknown option \"--port\"")) { try PluginArguments.parse(["--port=3"]) }
        #expect(throws: PluginUsageError("--socket needs a value")) { try PluginArguments.parse(["--socket"]) }
        #expect(throws: PluginUsageError("--socket needs a path")) { try PluginArguments.parse(["--socket="]) }
        #expect(throws: PluginUsageError("unexpected argument \"x\"")) { try PluginArguments.parse(["x"]) }
    }

    @Test func socketCandidates() {
        #expect(ReeldSocket.candidates(explicit: "/s", environment: ["REEL_SOCKET": "/e"], uid: 5) == ["/s"])
        #expect(ReeldSocket.candidates(explicit: nil, environment: ["REEL_SOCKET": "/e"], uid: 5) == ["/e"])
        #expect(ReeldSocket.candidates(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/5"], uid: 5)
            == ["/run/user/5/reel/reel.sock", "/run/reel/reel.sock"])
        #expect(ReeldSocket.candidates(explicit: nil, environment: [:], uid: 104) == ["/tmp/reel-104/reel.sock", "/run/reel/reel.sock"])
        #expect(ReeldSocket.candidates(explicit: nil, environment: [:], uid: 0) == ["/run/reel/reel.sock"])
    }
}

@Suite("Lines on stdin")
struct StdinLinesTests {
    @Test func splitsLinesAndSkipsAnOverLongOne() {
        let reader = StdinLines(fileDescriptor: -1)
        #expect(reader.take(Array("a\nb".utf8)[...]) == [.line(Array("a".utf8))])
        #expect(reader.take(Array("c\n".utf8)[...]) == [.line(Array("bc".utf8))])
        let long = [UInt8](repeating: 0x78, count: StdinLines.maxLineLength + 10)
        // Over the limit without a newline yet: reported once, then skipped to its end.
        #expect(reader.take(long[...]) == [.tooLong])
        #expect(reader.take(Array("xxx\nd\n".utf8)[...]) == [.line(Array("d".utf8))])
        // Over the limit with its newline in the same read: the next line is kept.
        #expect(reader.take((long + Array("\ne\n".utf8))[...]) == [.tooLong, .line(Array("e".utf8))])
    }
}
