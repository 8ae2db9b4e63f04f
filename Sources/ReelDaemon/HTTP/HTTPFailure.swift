// An HTTP route's error: the status, and the JSON-RPC error object the body carries.

import NIOHTTP1
import ReelModel
import ReelProtocol

/// What `/audio` and `/import` answer when they fail: a 4xx or 5xx status and the body
/// `{"error":{"code","message","data":{"reason"}}}` — the same object JSON-RPC replies carry,
/// so the page shows one kind of error whatever the route. Errors of the HTTP layer itself
/// (too large, bad host, wrong password, no such route) use code -32600 and reasons of their
/// own (`too_large`, `unknown_host`, `foreign_origin`, `unauthorized`, `no_route`, `bad_request`).
struct HTTPFailure: Error, Sendable {
    var status: HTTPResponseStatus
    var error: RPCError

    init(status: HTTPResponseStatus, error: RPCError) {
        self.status = status
        self.error = error
    }

    /// An error of the HTTP layer: code -32600 with `reason`.
    init(_ status: HTTPResponseStatus, reason: String, _ message: String) {
        self.init(status: status, error: RPCError(code: RPCErrorCode.invalidRequest, message: message, data: ["reason": .string(reason)]))
    }

    /// A core error with the status that fits its reason.
    init(_ error: ReelError) {
        self.init(status: Self.status(for: error.reason), error: RPCError(error))
    }

    /// A method-layer error (invalid params: 400; a core error by its reason; else 500).
    init(_ error: RPCError) {
        if let reel = error.reelError {
            self.init(reel)
        } else {
            self.init(status: error.code == RPCErrorCode.invalidParams ? .badRequest : .internalServerError, error: error)
        }
    }

    static func status(for reason: ErrorReason) -> HTTPResponseStatus {
        switch reason {
        case .notFound: .notFound
        case .nameTaken, .busy: .conflict
        case .unsupportedFormat, .corruptFile: .unsupportedMediaType
        case .forbidden, .readOnly: .forbidden
        case .diskFull: .insufficientStorage
        case .deviceUnavailable, .deviceBusy: .serviceUnavailable
        case .ioError: .internalServerError
        // A request the rules refuse: invalid_name, not_a_folder, cycle, root, out_of_range, …
        default: .badRequest
        }
    }

    /// The response body.
    var body: [UInt8] {
        JSONValue.object(["error": error.json]).jsonBytes
    }
}
