import ReelModel
import Testing
@testable import ReelProtocol

@Suite("JSON-RPC requests")
struct RPCRequestTests {
    private func decode(_ line: String) -> RPCIncoming { RPCIncoming(line: bytes(line)) }

    private func single(_ line: String) -> RPCRequestDecoding? {
        guard case .single(let decoding) = decode(line) else { return nil }
        return decoding
    }

    @Test func decodesARequest() {
        let decoded = single(#"{"jsonrpc":"2.0","id":7,"method":"player.seek","params":{"position":12.5}}"#)
        #expect(decoded == .request(RPCRequest(id: 7, method: "player.seek", params: ["position": 12.5])))
    }

    @Test func acceptsStringNumberAndNullIDs() {
        for (id, expected) in [("\"abc\"", JSONValue.string("abc")), ("-3", .int(-3)), ("1.5", .double(1.5)), ("null", .null)] {
            let decoded = single(#"{"jsonrpc":"2.0","id":\#(id),"method":"m"}"#)
            #expect(decoded == .request(RPCRequest(id: expected, method: "m")))
        }
    }

    @Test func requestWithoutIDIsANotification() {
        guard case .request(let request)? = single(#"{"jsonrpc":"2.0","method":"player.stop"}"#) else {
            Issue.record("not a request")
            return
        }
        #expect(request.isNotification)
        #expect(request.id == nil)
    }

    @Test func absentParamsAreAnEmptyObject() {
        guard case .request(let request)? = single(#"{"method":"m","jsonrpc":"2.0","id":1}"#) else {
            Issue.record("not a request")
            return
        }
        #expect(request.params.isEmpty)
    }

    @Test func invalidJSONIsAParseErrorWithNullID() {
        guard case .invalid(let id, let error)? = single(#"{"jsonrpc":"2.0","id":1,"method":"m""#) else {
            Issue.record("not invalid")
            return
        }
        #expect(id == .null)
        #expect(error.code == -32700)
        #expect(error.message.contains("at byte"))
    }

    @Test func invalidUTF8IsAParseError() {
        let line: [UInt8] = bytes(#"{"jsonrpc":"2.0","id":1,"method":""#) + [0xFF] + bytes(#""}"#)
        guard case .single(.invalid(.null?, let error)) = RPCIncoming(line: line) else {
            Issue.record("not invalid")
            return
        }
        #expect(error.code == -32700)
    }

    @Test func nonObjectNonArrayIsAnInvalidRequest() {
        for line in ["42", "\"x\"", "null", "true"] {
            guard case .invalid(let id, let error)? = single(line) else {
                Issue.record("\(line) not invalid")
                continue
            }
            #expect(id == .null)
            #expect(error.code == -32600)
        }
    }

    @Test func emptyBatchIsOneInvalidRequest() {
        #expect(decode("[]") == .single(.invalid(id: .null, error: .invalidRequest("empty batch"))))
    }

    @Test func batchDecodesEachEntry() {
        let incoming = decode(#"[{"jsonrpc":"2.0","id":1,"method":"a"},1,{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","id":"x"}]"#)
        guard case .batch(let entries) = incoming else {
            Issue.record("not a batch")
            return
        }
        #expect(entries.count == 4)
        #expect(entries[0] == .request(RPCRequest(id: 1, method: "a")))
        #expect(entries[1].errorReply?.id == .null)
        #expect(entries[1].errorReply?.result == .failure(.invalidRequest("a request must be a JSON object, not a number")))
        #expect(entries[2] == .request(RPCRequest(id: nil, method: "b")))
        #expect(entries[3].errorReply?.id == .string("x"))
        #expect(entries[0].errorReply == nil)
    }

    @Test func nestedBatchEntriesAreInvalidRequests() {
        guard case .batch(let entries) = decode("[[]]") else {
            Issue.record("not a batch")
            return
        }
        #expect(entries == [.invalid(id: .null, error: .invalidRequest("a request must be a JSON object, not an array"))])
    }

    @Test func jsonrpcMustBeExactlyTwoPointZero() {
        for version in ["", #","jsonrpc":"1.0""#, #","jsonrpc":2.0"#, #","jsonrpc":"2.0 ""#, #","jsonrpc":null"#] {
            let decoded = single(#"{"id":5,"method":"m"\#(version)}"#)
            #expect(decoded == .invalid(id: 5, error: .invalidRequest("\"jsonrpc\" must be \"2.0\"")), "\(version)")
        }
    }

    @Test func methodMustBeAString() {
        for method in ["", #","method":1"#, #","method":null"#, #","method":["m"]"#] {
            let decoded = single(#"{"jsonrpc":"2.0","id":"q"\#(method)}"#)
            #expect(decoded == .invalid(id: "q", error: .invalidRequest("\"method\" must be a string")))
        }
    }

    @Test func idOfTheWrongTypeIsAnInvalidRequestWithNullID() {
        for id in ["true", "{}", "[1]"] {
            let decoded = single(#"{"jsonrpc":"2.0","id":\#(id),"method":"m"}"#)
            #expect(decoded == .invalid(id: .null, error: .invalidRequest("\"id\" must be a string, a number or null")))
        }
    }

    @Test func invalidRequestWithoutIDStillGetsAReply() {
        let decoded = single(#"{"jsonrpc":"1.0","method":"m"}"#)
        #expect(decoded?.errorReply == RPCReply(id: .null, result: .failure(.invalidRequest("\"jsonrpc\" must be \"2.0\""))))
    }

    @Test func arrayParamsAreInvalidParams() {
        let decoded = single(#"{"jsonrpc":"2.0","id":2,"method":"player.seek","params":[12.5]}"#)
        #expect(decoded == .invalid(id: 2, error: .invalidParams("params must be an object with named members")))
        #expect(decoded?.errorReply?.result == .failure(RPCError(code: -32602, message: "params must be an object with named members")))
    }

    @Test func notificationWithArrayParamsGetsNoReply() {
        let decoded = single(#"{"jsonrpc":"2.0","method":"player.seek","params":[1]}"#)
        #expect(decoded == .invalid(id: nil, error: .invalidParams("params must be an object with named members")))
        #expect(decoded?.errorReply == nil)
    }

    @Test func primitiveOrNullParamsAreAnInvalidRequest() {
        for params in ["1", "\"p\"", "null", "true"] {
            let decoded = single(#"{"jsonrpc":"2.0","id":3,"method":"m","params":\#(params)}"#)
            guard case .invalid(let id, let error)? = decoded else {
                Issue.record("\(params) accepted")
                continue
            }
            #expect(id == 3)
            #expect(error.code == -32600)
        }
        // Without an id, still answered (with null): the Request object itself is invalid.
        #expect(single(#"{"jsonrpc":"2.0","method":"m","params":5}"#)?.errorReply?.id == .null)
    }

    @Test func requestEncodesToALineThatDecodesBack() {
        let request = RPCRequest(id: 9, method: "library.list", params: ["path": "/Meetings", "n": 2])
        let line = request.encodedLine()
        #expect(text(line) == #"{"jsonrpc":"2.0","id":9,"method":"library.list","params":{"path":"/Meetings","n":2}}"# + "\n")
        #expect(RPCIncoming(line: line.dropLast()) == .single(.request(request)))
    }

    @Test func notificationRequestEncodesWithoutIDOrEmptyParams() {
        #expect(text(RPCRequest(id: nil, method: "player.stop").encodedLine()) == "{\"jsonrpc\":\"2.0\",\"method\":\"player.stop\"}\n")
    }
}

@Suite("JSON-RPC replies")
struct RPCReplyTests {
    @Test func encodesAResultLine() {
        let line = RPCEncoder.resultLine(id: 7, result: ["state": "playing"])
        #expect(text(line) == "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"state\":\"playing\"}}\n")
    }

    @Test func encodesAnApplicationErrorLine() {
        let error = RPCError(ReelError(.notFound, "no item at /Talks/x"))
        let line = RPCEncoder.errorLine(id: 7, error: error)
        #expect(text(line) == #"{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"no item at /Talks/x","data":{"reason":"not_found"}}}"# + "\n")
    }

    @Test func encodesAStandardErrorWithoutData() {
        let line = RPCEncoder.errorLine(id: .null, error: .methodNotFound("foo.bar"))
        #expect(text(line) == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"unknown method \"foo.bar\""}}"# + "\n")
    }

    @Test func lineTooLongCarriesItsReason() {
        #expect(RPCError.lineTooLong.code == -32600)
        #expect(RPCError.lineTooLong.data == ["reason": "line_too_long"])
        #expect(RPCError.lineTooLong.reason == "line_too_long")
    }

    @Test func factoriesUseTheStandardCodes() {
        #expect(RPCError.parseError("x").code == -32700)
        #expect(RPCError.invalidRequest("x").code == -32600)
        #expect(RPCError.methodNotFound("x").code == -32601)
        #expect(RPCError.invalidParams("x").code == -32602)
        #expect(RPCError.internalError("x").code == -32603)
        #expect(RPCError.invalidParams("position must be a number").message == "position must be a number")
    }

    @Test func reelErrorBecomesCode32000WithItsReason() {
        for reason in ErrorReason.allCases {
            let error = RPCError(ReelError(reason, "message"))
            #expect(error.code == -32000)
            #expect(error.data == ["reason": .string(reason.rawValue)])
            #expect(error.reelError == ReelError(reason, "message"))
        }
        #expect(RPCError.invalidParams("x").reelError == nil)
    }

    @Test func encodesANotificationLine() {
        let line = RPCEncoder.notificationLine(method: "player.state", params: ["subscription": 3, "state": "paused"])
        #expect(text(line) == #"{"jsonrpc":"2.0","method":"player.state","params":{"subscription":3,"state":"paused"}}"# + "\n")
    }

    @Test func encodesABatchReplyAsOneArrayLine() {
        let replies = [
            RPCReply(id: 1, result: .success(["ok": true])),
            RPCReply(id: .null, result: .failure(.invalidRequest("empty batch"))),
        ]
        let line = RPCEncoder.batchLine(replies)
        #expect(text(line) == #"[{"jsonrpc":"2.0","id":1,"result":{"ok":true}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}]"# + "\n")
        #expect(line.filter { $0 == 0x0A }.count == 1)
    }

    @Test func linesNeverContainANewlineBeforeTheEnd() {
        let line = RPCEncoder.resultLine(id: "a\nb", result: ["text": "line1\nline2\r"])
        #expect(line.dropLast().contains(0x0A) == false)
        #expect(line.last == 0x0A)
    }
}

@Suite("JSON-RPC client messages")
struct RPCMessageTests {
    @Test func readsAResultReply() throws {
        let message = try RPCMessage(line: bytes(#"{"jsonrpc":"2.0","id":7,"result":{"a":1}}"#))
        #expect(message == .response(id: 7, result: .success(["a": 1])))
    }

    @Test func readsAnErrorReplyAndItsReelError() throws {
        let line = RPCEncoder.errorLine(id: "x", error: RPCError(ReelError(.busy, "a recording is already running")))
        let message = try RPCMessage(line: Array(line.dropLast()))
        guard case .response(let id, .failure(let error)) = message else {
            Issue.record("not an error reply")
            return
        }
        #expect(id == "x")
        #expect(error.reelError == ReelError(.busy, "a recording is already running"))
    }

    @Test func readsAParseErrorReplyWithNullID() throws {
        let message = try RPCMessage(line: bytes(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#))
        #expect(message == .response(id: .null, result: .failure(.parseError("bad"))))
    }

    @Test func readsANotification() throws {
        let line = RPCEncoder.notificationLine(method: "player.state", params: ["subscription": 1])
        #expect(try RPCMessage(line: Array(line.dropLast())) == .notification(method: "player.state", params: ["subscription": 1]))
    }

    @Test func readsABatchReply() throws {
        let line = RPCEncoder.batchLine([RPCReply(id: 1, result: .success(.null)), RPCReply(id: 2, result: .success(true))])
        let messages = try RPCMessage.batch(line: Array(line.dropLast()))
        #expect(messages == [.response(id: 1, result: .success(.null)), .response(id: 2, result: .success(true))])
    }

    @Test func rejectsMalformedMessages() {
        let bad = [
            "not json", "[1]", #"{"id":1,"result":1}"#, #"{"jsonrpc":"2.0","id":1}"#,
            #"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
            #"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
            #"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#,
            #"{"jsonrpc":"2.0","params":{}}"#, #"{"jsonrpc":"2.0","method":"m","params":[1]}"#,
        ]
        for line in bad {
            #expect(throws: JSONDecodingError.self, "\(line)") { try RPCMessage(line: bytes(line)) }
        }
    }

    @Test func reportsInvalidJSONWithItsOffset() {
        do {
            _ = try RPCMessage(line: bytes("{\"a\" 1}"))
            Issue.record("accepted")
        } catch {
            #expect(error.message == "invalid JSON from the daemon: unexpected '1', expected ':' at byte 5")
        }
    }
}
