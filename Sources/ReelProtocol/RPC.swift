// JSON-RPC 2.0 messages, as `protocol.md` specifies them.
//
// Daemon side: `RPCIncoming(line:)` turns one received line into the requests to carry out and
// the error replies to send; `RPCEncoder` writes replies, batch replies and pushed
// notifications, each as one line. `RPCError` is what method handlers throw.
// Client side (the CLI, tests): `RPCRequest.encodedLine()` writes a request and
// `RPCMessage(line:)` reads a reply or a pushed event.

import ReelModel

/// The standard JSON-RPC 2.0 error codes and the application code of `protocol.md`.
public enum RPCErrorCode {
    public static let parseError = -32700
    public static let invalidRequest = -32600
    public static let methodNotFound = -32601
    public static let invalidParams = -32602
    public static let internalError = -32603
    /// Application errors (`ReelError`); they always carry `data.reason`.
    public static let application = -32000
}

/// A JSON-RPC error object: thrown by the daemon's handlers, sent in error replies, and read
/// back by the client.
public struct RPCError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// -32700: the line is not valid JSON.
    public static func parseError(_ message: String) -> RPCError {
        RPCError(code: RPCErrorCode.parseError, message: message)
    }

    /// -32600: the JSON is not a valid request object.
    public static func invalidRequest(_ message: String) -> RPCError {
        RPCError(code: RPCErrorCode.invalidRequest, message: message)
    }

    /// -32601: `unknown method "<method>"`.
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: RPCErrorCode.methodNotFound, message: "unknown method \"\(method)\"")
    }

    /// -32602: a parameter is missing, of the wrong type or unknown.
    public static func invalidParams(_ message: String) -> RPCError {
        RPCError(code: RPCErrorCode.invalidParams, message: message)
    }

    /// -32603: a bug or an unexpected failure in the daemon.
    public static func internalError(_ message: String) -> RPCError {
        RPCError(code: RPCErrorCode.internalError, message: message)
    }

    /// -32600 with `data.reason: "line_too_long"`: sent before closing a connection whose line
    /// exceeded 1 MiB.
    public static let lineTooLong = RPCError(
        code: RPCErrorCode.invalidRequest,
        message: "request line longer than 1 MiB (1048576 bytes); closing the connection",
        data: ["reason": "line_too_long"])

    /// -32000 with `data.reason` set to the error's reason code.
    public init(_ error: ReelError) {
        self.init(code: RPCErrorCode.application, message: error.message,
                  data: ["reason": .string(error.reason.rawValue)])
    }

    /// `data.reason`, if the error has one.
    public var reason: String? { data?["reason"]?.stringValue }

    /// The application error this carries (code -32000 with a known `data.reason`), for clients.
    public var reelError: ReelError? {
        guard code == RPCErrorCode.application, let reason, let known = ErrorReason(rawValue: reason) else {
            return nil
        }
        return ReelError(known, message)
    }

    /// The error object: `{"code","message"}` plus `"data"` when present.
    public var json: JSONValue {
        var object: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { object["data"] = data }
        return .object(object)
    }

    /// Reads an error object.
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "error")
        self.init(code: try reader.int("code"), message: try reader.string("message"),
                  data: reader.object["data"])
    }

    public var description: String { "\(message) (\(code))" }
}

// MARK: - Requests

/// A request (or, without `id`, a notification): what the daemon dispatches and the CLI sends.
public struct RPCRequest: Sendable, Equatable {
    /// A string, number or null; nil for a notification, which gets no reply.
    public var id: JSONValue?
    public var method: String
    /// Named parameters; empty when the request had none.
    public var params: JSONObject

    public init(id: JSONValue?, method: String, params: JSONObject = [:]) {
        self.id = id
        self.method = method
        self.params = params
    }

    public var isNotification: Bool { id == nil }

    /// Appends the request object (no newline); `params` is left out when empty.
    public func encode(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"jsonrpc":"2.0","#.utf8)
        if let id {
            out.append(contentsOf: #""id":"#.utf8)
            JSONWriter.write(id, into: &out)
            out.append(0x2C)
        }
        out.append(contentsOf: #""method":"#.utf8)
        JSONWriter.writeString(method, into: &out)
        if !params.isEmpty {
            out.append(contentsOf: #","params":"#.utf8)
            JSONWriter.writeObject(params, into: &out)
        }
        out.append(0x7D)
    }

    /// The request as one line, ending in `\n`.
    public func encodedLine() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(into: &out)
        out.append(0x0A)
        return out
    }
}

/// One request of a received line, after validation.
public enum RPCRequestDecoding: Sendable, Equatable {
    /// A valid request or notification, to carry out.
    case request(RPCRequest)
    /// An invalid one. Reply with `error` and `id` (the request's id if it could be read, else
    /// `.null`); `id` is nil only for a notification whose envelope was valid but whose
    /// `params` were not, which per JSON-RPC gets no reply.
    case invalid(id: JSONValue?, error: RPCError)

    /// Validates one request object per JSON-RPC 2.0 and `protocol.md`.
    public init(_ value: JSONValue) {
        guard case .object(let object) = value else {
            self = .invalid(id: .null, error: .invalidRequest("a request must be a JSON object, not \(value.kindDescription)"))
            return
        }
        var id: JSONValue? = nil
        if let rawID = object["id"] {
            switch rawID {
            case .string, .int, .double, .null: id = rawID
            default:
                self = .invalid(id: .null, error: .invalidRequest("\"id\" must be a string, a number or null"))
                return
            }
        }
        // Envelope errors make an invalid Request object, which is answered even without id.
        let replyID = id ?? .null
        guard object["jsonrpc"] == .string("2.0") else {
            self = .invalid(id: replyID, error: .invalidRequest("\"jsonrpc\" must be \"2.0\""))
            return
        }
        guard case .string(let method)? = object["method"] else {
            self = .invalid(id: replyID, error: .invalidRequest("\"method\" must be a string"))
            return
        }
        let params: JSONObject
        switch object["params"] {
        case nil: params = [:]
        case .object(let given)?: params = given
        case .array?:
            self = .invalid(id: id, error: .invalidParams("params must be an object with named members"))
            return
        case let other?:
            self = .invalid(id: replyID, error: .invalidRequest("\"params\" must be an object, not \(other.kindDescription)"))
            return
        }
        self = .request(RPCRequest(id: id, method: method, params: params))
    }

    /// The error reply to send for this entry, if any.
    public var errorReply: RPCReply? {
        guard case .invalid(let id?, let error) = self else { return nil }
        return RPCReply(id: id, result: .failure(error))
    }
}

/// A received line, decoded: one request or a batch.
public enum RPCIncoming: Sendable, Equatable {
    case single(RPCRequestDecoding)
    /// A non-empty batch, in order. Reply with an array of the replies of its non-notification
    /// entries, or nothing at all when there are none.
    case batch([RPCRequestDecoding])

    /// Decodes one line (without its newline). Never fails: a line that is not JSON, not a
    /// request or an empty batch becomes `.single(.invalid(id: .null, ...))`.
    public init(line: UnsafeRawBufferPointer) {
        if let request = RPCSimpleRequest.parse(line) {
            self = .single(.request(request))
            return
        }
        self.init(parsing: line)
    }

    /// Decodes one line (without its newline) with the full JSON parser, as `init(line:)` does
    /// for every line that is not a simple request (`RPCSimpleRequest`).
    public init(parsing line: UnsafeRawBufferPointer) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            self = .single(.invalid(id: .null, error: .parseError("invalid JSON: \(error)")))
            return
        }
        self.init(value)
    }

    /// Decodes one line (without its newline).
    public init(line: [UInt8]) {
        self = line.withUnsafeBytes { RPCIncoming(line: $0) }
    }

    /// Decodes one line (without its newline).
    public init(line: ArraySlice<UInt8>) {
        self = line.withUnsafeBytes { RPCIncoming(line: $0) }
    }

    /// Decodes an already parsed line.
    public init(_ value: JSONValue) {
        switch value {
        case .array(let elements):
            if elements.isEmpty {
                self = .single(.invalid(id: .null, error: .invalidRequest("empty batch")))
            } else {
                self = .batch(elements.map(RPCRequestDecoding.init))
            }
        case .object:
            self = .single(RPCRequestDecoding(value))
        default:
            self = .single(.invalid(id: .null, error: .invalidRequest("a request must be a JSON object or an array of them, not \(value.kindDescription)")))
        }
    }
}

// MARK: - Replies and notifications

/// A reply to one request: a result or an error.
public struct RPCReply: Sendable, Equatable {
    public var id: JSONValue
    public var result: Result<JSONValue, RPCError>

    public init(id: JSONValue, result: Result<JSONValue, RPCError>) {
        self.id = id
        self.result = result
    }

    /// Appends the reply object (no newline).
    public func encode(into out: inout [UInt8]) {
        out.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        JSONWriter.write(id, into: &out)
        switch result {
        case .success(let value):
            out.append(contentsOf: #","result":"#.utf8)
            JSONWriter.write(value, into: &out)
        case .failure(let error):
            out.append(contentsOf: #","error":"#.utf8)
            JSONWriter.write(error.json, into: &out)
        }
        out.append(0x7D)
    }
}

/// Writes what the daemon sends; every function produces one line ending in `\n`.
public enum RPCEncoder {
    /// `{"jsonrpc":"2.0","id":<id>,"result":<result>}\n`
    public static func resultLine(id: JSONValue, result: JSONValue) -> [UInt8] {
        line { RPCReply(id: id, result: .success(result)).encode(into: &$0) }
    }

    /// `{"jsonrpc":"2.0","id":<id>,"error":{"code","message","data"?}}\n`
    public static func errorLine(id: JSONValue, error: RPCError) -> [UInt8] {
        line { RPCReply(id: id, result: .failure(error)).encode(into: &$0) }
    }

    /// One reply as a line.
    public static func replyLine(_ reply: RPCReply) -> [UInt8] {
        line { reply.encode(into: &$0) }
    }

    /// Appends `{"jsonrpc":"2.0","id":<id>,"result":<text>}` (no newline): a result already
    /// written as JSON text.
    public static func writeResult(id: JSONValue, text: JSONText, into out: inout [UInt8]) {
        JSONWriter.append(#"{"jsonrpc":"2.0","id":"#, into: &out)
        JSONWriter.write(id, into: &out)
        JSONWriter.append(#","result":"#, into: &out)
        out.append(contentsOf: text.bytes)
        out.append(0x7D)
    }

    /// `{"jsonrpc":"2.0","method":<method>,"params":{...}}\n`: a pushed event.
    public static func notificationLine(method: String, params: JSONObject) -> [UInt8] {
        line {
            $0.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
            JSONWriter.writeString(method, into: &$0)
            $0.append(contentsOf: #","params":"#.utf8)
            JSONWriter.writeObject(params, into: &$0)
            $0.append(0x7D)
        }
    }

    /// `[reply,...]\n`. The caller sends nothing at all when a batch has no replies
    /// (all notifications); given an empty array this still writes `[]\n`.
    public static func batchLine(_ replies: [RPCReply]) -> [UInt8] {
        line {
            $0.append(0x5B)
            for (index, reply) in replies.enumerated() {
                if index > 0 { $0.append(0x2C) }
                reply.encode(into: &$0)
            }
            $0.append(0x5D)
        }
    }

    private static func line(_ body: (inout [UInt8]) -> Void) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        body(&out)
        out.append(0x0A)
        return out
    }
}

// MARK: - Client side

/// A line received by a client: a reply (it has an `id`) or a pushed event (it has none).
public enum RPCMessage: Sendable, Equatable {
    case response(id: JSONValue, result: Result<JSONValue, RPCError>)
    case notification(method: String, params: JSONObject)

    /// Reads one line (without its newline).
    public init(line: [UInt8]) throws(JSONDecodingError) {
        try self.init(json: try Self.parse(line))
    }

    /// Reads one already parsed message.
    public init(json: JSONValue) throws(JSONDecodingError) {
        guard case .object(let object) = json else {
            throw JSONDecodingError("a message must be a JSON object, not \(json.kindDescription)")
        }
        guard object["jsonrpc"] == .string("2.0") else {
            throw JSONDecodingError("message.jsonrpc must be \"2.0\"")
        }
        if let id = object["id"] {
            switch (object["result"], object["error"]) {
            case (let result?, nil):
                self = .response(id: id, result: .success(result))
            case (nil, let error?):
                self = .response(id: id, result: .failure(try RPCError(json: error)))
            default:
                throw JSONDecodingError("a reply must have exactly one of \"result\" and \"error\"")
            }
        } else {
            guard case .string(let method)? = object["method"] else {
                throw JSONDecodingError("a message must have an \"id\" or a string \"method\"")
            }
            switch object["params"] {
            case nil: self = .notification(method: method, params: [:])
            case .object(let params)?: self = .notification(method: method, params: params)
            case let other?:
                throw JSONDecodingError("notification params must be an object, not \(other.kindDescription)")
            }
        }
    }

    /// Reads a line holding a batch reply (a JSON array of replies).
    public static func batch(line: [UInt8]) throws(JSONDecodingError) -> [RPCMessage] {
        guard case .array(let elements) = try parse(line) else {
            throw JSONDecodingError("a batch reply must be a JSON array")
        }
        var messages: [RPCMessage] = []
        messages.reserveCapacity(elements.count)
        for element in elements { messages.append(try RPCMessage(json: element)) }
        return messages
    }

    private static func parse(_ line: [UInt8]) throws(JSONDecodingError) -> JSONValue {
        do {
            return try JSONValue.parse(line)
        } catch {
            throw JSONDecodingError("invalid JSON from the daemon: \(error)")
        }
    }
}
