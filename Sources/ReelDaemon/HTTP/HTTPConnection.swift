// One HTTP connection: checks each request, routes it, and writes the response.

import Logging
import NIOCore
import NIOHTTP1
import NIOWebSocket
import ReelCore
import ReelProtocol

/// What every HTTP connection shares: the core, the access rule, the file threads, the upload
/// limit and the logger.
struct HTTPServices: Sendable {
    let core: ReelCore
    let rule: HTTPAccessRule
    let fileIO: HTTPFileIO
    let uploadLimit: Int64
    let logger: Logger
}

/// Handles the requests of one connection, one at a time (NIO's `HTTPServerPipelineHandler`,
/// before it in the pipeline, holds a pipelined request until the previous response is out).
/// Runs on the connection's event loop; file work hops to `HTTPFileIO`'s threads and library
/// work to the core's queues, and their results hop back here.
///
/// Every request first passes `HTTPAccessRule` (Host, Origin for `/rpc` and `/import`,
/// password), then its `HTTPRoute`: the page from memory, `/audio/<id>` streamed from disk
/// (`HTTPConnection+Audio`), `/import` streamed to disk and imported (`HTTPConnection+Upload`).
/// A WebSocket upgrade of `/rpc` never reaches this handler: the upgrader takes it (and
/// removes this handler); a `/rpc` request that does arrive here was refused, and is answered
/// with the reason.
final class HTTPConnection: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long a connection answered early (an upload refused) goes on reading and dropping
    /// the body before it closes: closing with unread data would reset the connection, and the
    /// browser would show a network error instead of the answer.
    static let lingerTime = TimeAmount.seconds(5)

    let services: HTTPServices
    var context: ChannelHandlerContext?

    struct Request {
        let head: HTTPRequestHead
        let target: HTTPRequestTarget
        let route: HTTPRoute
    }

    enum State {
        case idle
        /// A request without a body to read: answered at its `.end`.
        case waitingForEnd(Request)
        /// An upload's body going to disk.
        case uploading(Request, HTTPUploadSink)
        /// The answer is being prepared or written; body parts are dropped.
        case responding
        /// Answered early with `Connection: close`: the rest of the body is dropped, then close.
        case lingering
    }

    var state = State.idle
    /// The client's request has ended (its `.end` was read).
    var requestEnded = false
    /// A `read` held back while an upload's writes catch up.
    var readPending = false
    /// The descriptor of a recording being sent, closed if the connection goes first.
    var openFile: Int32?

    init(services: HTTPServices) {
        self.services = services
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tearDown()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        tearDown()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A refused WebSocket upgrade: the upgrader passes the request on, and it is answered.
        if error is NIOWebSocketUpgradeError { return }
        services.logger.debug("http connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    /// The connection is gone: an upload in progress is removed, an open file closed.
    private func tearDown() {
        if case .uploading(_, let sink) = state { sink.abort() }
        state = .responding
        if let fd = openFile, let loop = context?.eventLoop {
            openFile = nil
            _ = services.fileIO.close(fd, on: loop)
        }
    }

    // MARK: Reading

    func read(context: ChannelHandlerContext) {
        if case .uploading(_, let sink) = state, !sink.wantsInput {
            readPending = true
            return
        }
        context.read()
    }

    /// Reads again after an upload's writes caught up.
    func resumeReading() {
        guard readPending, let context else { return }
        readPending = false
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            requestEnded = false
            begin(head)
        case .body(let buffer):
            if case .uploading(_, let sink) = state {
                do throws(HTTPFailure) {
                    try sink.receive(buffer)
                } catch {
                    sink.abort()
                    respond(error, keepAlive: false)
                }
            }
        case .end:
            requestEnded = true
            switch state {
            case .waitingForEnd(let request):
                state = .responding
                answer(request)
            case .uploading(let request, let sink):
                state = .responding
                finishUpload(request, sink: sink)
            case .lingering:
                context.close(promise: nil)
            case .idle, .responding:
                break
            }
        }
    }

    // MARK: Routing

    private func begin(_ head: HTTPRequestHead) {
        guard let target = HTTPRequestTarget(head.uri) else {
            respond(HTTPFailure(.badRequest, reason: "bad_request", "\(head.uri) is not a valid request target"), head: head)
            return
        }
        let route = HTTPRoute(method: head.method, path: target.path)
        let local = context?.channel.localAddress
        if let refusal = services.rule.check(
            host: head.headers.first(name: "host"), origin: head.headers.first(name: "origin"),
            authorization: head.headers.first(name: "authorization"), localAddress: local?.ipAddress,
            localPort: local?.port, originRule: route.originRule)
        {
            var extra = HTTPHeaders()
            if refusal == .unauthorized { extra.add(name: "www-authenticate", value: "Basic realm=\"Reel\", charset=\"UTF-8\"") }
            respond(HTTPFailure(refusal.status.httpStatus, reason: refusal.reason, refusal.message), head: head, headers: extra)
            return
        }
        let request = Request(head: head, target: target, route: route)
        switch route {
        case .upload:
            beginUpload(request)
        case .notFound:
            respond(HTTPFailure(.notFound, reason: "no_route", "nothing here: \(target.path)"), head: head)
        case .methodNotAllowed(let allow):
            var extra = HTTPHeaders()
            extra.add(name: "allow", value: allow)
            respond(
                HTTPFailure(.methodNotAllowed, reason: "bad_request", "\(target.path) takes \(allow), not \(head.method)"),
                head: head, headers: extra)
        case .page, .rpc, .audio, .cover:
            state = .waitingForEnd(request)
        }
    }

    /// Answers a request without a body once it has been read whole.
    private func answer(_ request: Request) {
        switch request.route {
        case .page(let path):
            if let asset = HTTPPageAssets.asset(at: path) { sendPage(asset, request: request) }
        case .rpc:
            // The upgrader passed it on: not a WebSocket handshake it could accept.
            var extra = HTTPHeaders()
            extra.add(name: "upgrade", value: "websocket")
            respond(
                HTTPFailure(.upgradeRequired, reason: "bad_request", "/rpc is a WebSocket: connect with ws://HOST/rpc"),
                head: request.head, headers: extra)
        case .audio(let id):
            sendAudio(id: id, request: request)
        case .cover:
            sendCover(request: request)
        case .upload, .notFound, .methodNotAllowed:
            break
        }
    }

    // MARK: The page

    private func sendPage(_ asset: HTTPPageAsset, request: Request) {
        var headers = HTTPHeaders()
        headers.add(name: "etag", value: asset.etag)
        headers.add(name: "cache-control", value: "no-cache")
        if request.head.headers.first(name: "if-none-match") == asset.etag {
            sendHead(.notModified, headers: headers, request: request.head)
            finishResponse(keepAlive: request.head.isKeepAlive)
            return
        }
        headers.add(name: "content-type", value: asset.contentType)
        headers.add(name: "content-length", value: String(asset.bytes.readableBytes))
        headers.add(name: "x-content-type-options", value: "nosniff")
        headers.add(name: "referrer-policy", value: "no-referrer")
        // The page may not be framed by another site (a click on it would be a click on Reel).
        headers.add(name: "content-security-policy", value: "frame-ancestors 'none'")
        sendHead(.ok, headers: headers, request: request.head)
        if request.head.method != .HEAD {
            context?.write(wrapOutboundOut(.body(.byteBuffer(asset.bytes))), promise: nil)
        }
        finishResponse(keepAlive: request.head.isKeepAlive)
    }

    // MARK: Writing responses

    /// Writes a response head. `Connection: close` when the connection will close after it.
    func sendHead(_ status: HTTPResponseStatus, headers: HTTPHeaders, request: HTTPRequestHead, close: Bool = false) {
        var headers = headers
        if close || !request.isKeepAlive {
            headers.replaceOrAdd(name: "connection", value: "close")
        } else if request.version.major == 1, request.version.minor == 0 {
            headers.replaceOrAdd(name: "connection", value: "keep-alive")
        }
        let head = HTTPResponseHead(version: request.version.major == 1 ? request.version : .http1_1, status: status, headers: headers)
        context?.write(wrapOutboundOut(.head(head)), promise: nil)
    }

    /// Ends the response; the connection is then ready for the next request, or closes.
    func finishResponse(keepAlive: Bool) {
        guard let context else { return }
        state = .idle
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { channel.close(promise: nil) }
        }
    }

    /// Answers with an error as JSON. `keepAlive: false` (an upload cut short) closes the
    /// connection after it, reading and dropping the rest of the body for a moment first.
    func respond(_ failure: HTTPFailure, head: HTTPRequestHead? = nil, headers extra: HTTPHeaders = HTTPHeaders(), keepAlive: Bool? = nil) {
        guard let context else { return }
        let request = head ?? currentHead
        let body = failure.body
        var headers = extra
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(body.count))
        headers.add(name: "cache-control", value: "no-store")
        // A request whose body is still coming (an upload refused) closes the connection.
        let keep = (keepAlive ?? true) && (requestEnded || !Self.hasBody(request)) && (request?.isKeepAlive ?? false)
        let version = request?.version ?? .http1_1
        if !keep { headers.replaceOrAdd(name: "connection", value: "close") }
        let responseHead = HTTPResponseHead(version: version.major == 1 ? version : .http1_1, status: failure.status, headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if request?.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        if keep {
            finishResponse(keepAlive: true)
            return
        }
        state = requestEnded ? .responding : .lingering
        let channel = context.channel
        let ended = requestEnded
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if ended {
                channel.close(promise: nil)
            } else {
                channel.eventLoop.scheduleTask(in: Self.lingerTime) { channel.close(promise: nil) }
            }
        }
        resumeReading()
    }

    private var currentHead: HTTPRequestHead? {
        switch state {
        case .waitingForEnd(let request), .uploading(let request, _): request.head
        default: nil
        }
    }

    /// True when the request announces a body (a length above 0, or chunks).
    static func hasBody(_ head: HTTPRequestHead?) -> Bool {
        guard let head else { return false }
        if let length = head.headers.first(name: "content-length") { return Int64(length) != 0 }
        return head.headers.first(name: "transfer-encoding") != nil
    }
}

extension Int {
    /// An HTTP status number as NIO's status.
    var httpStatus: HTTPResponseStatus { HTTPResponseStatus(statusCode: self) }
}
