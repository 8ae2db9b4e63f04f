// One JSON-RPC client: its lines' requests carried out, replies encoded, stream pushes taken from the hub.

import Logging
import NIOCore
import ReelCore
import ReelModel
import ReelProtocol

extension LineSession.Rules {
    /// JSON-RPC: lines up to 1 MiB (a longer one is answered `line_too_long`, then the
    /// connection closes); a client with more than 1 MiB unread is disconnected.
    static let jsonRPC = LineSession.Rules(
        connectionName: "a connection", clientName: "a client", maxLineBytes: 1 << 20, maxBufferedBytes: 1 << 20,
        lineTooLongReply: RPCEncoder.errorLine(id: .null, error: .lineTooLong))
}

/// The JSON-RPC protocol of one connection, whatever carries it: the `LineSession` of a
/// `PollConnection` on the control socket, or of a WebSocket through a `ChannelLineTransport`
/// in a NIO pipeline. The session keeps the lines in order (one line's requests are carried out
/// before the next line's), pauses reading while a line waits, bounds lines and unread output,
/// and closes; this decodes, calls the method table and encodes. Everything here runs on the
/// session's event loop; results and changes that arrive from other threads hop onto it first.
///
/// Order: a line's requests (a batch's entries) are carried out in order, so `play` then
/// `seek` on one connection seeks in the new track.
///
/// Slow clients: replies are always queued; stream pushes (written by the loop's `RPCPushHub`)
/// are skipped while the transport is not writable and the latest value is sent when it drains
/// (state streams coalesce). A client whose unread output passes 1 MiB is disconnected (the
/// session's rule).
final class RPCSession: PushTarget, LineHandler {
    private let methods: MethodTable
    private let hub: RPCPushHub
    private let logger: Logger
    /// The connection's line session (it drops this handler when the connection closes).
    private let session: LineSession
    private lazy var streams = RPCConnectionStreams(hub: hub, target: self)
    private let line = LineRun()
    /// The last method called and its handler.
    private var lastMethod = ""
    private var lastHandler: MethodHandler?

    /// A session for JSON-RPC on `transport`, with this protocol as its handler.
    static func open(on transport: LineTransport, methods: MethodTable, hub: RPCPushHub, logger: Logger) -> LineSession {
        let session = LineSession(transport: transport, rules: .jsonRPC, logger: logger)
        session.handler = RPCSession(session: session, methods: methods, hub: hub, logger: logger)
        return session
    }

    private init(session: LineSession, methods: MethodTable, hub: RPCPushHub, logger: Logger) {
        self.session = session
        self.methods = methods
        self.hub = hub
        self.logger = logger
    }

    /// One received line's requests in progress: a single request or a batch. A session carries
    /// out one line at a time, so it keeps one `LineRun` and starts it again for every line
    /// (no allocation per request once its buffers have grown).
    private final class LineRun {
        /// A single request, or a batch's entries (no array for the common single request).
        private var single: RPCRequestDecoding?
        private var batch: [RPCRequestDecoding] = []
        private(set) var isBatch = false
        var next = 0
        /// The replies so far, written as they come: a single reply, or a batch's replies after
        /// its `[`, separated by commas.
        var output: [UInt8] = []
        var replyCount = 0

        init() {
            output.reserveCapacity(512)
        }

        func start(_ incoming: RPCIncoming) {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            next = 0
            replyCount = 0
            switch incoming {
            case .single(let decoding):
                isBatch = false
                single = decoding
                if !batch.isEmpty { batch = [] }
            case .batch(let decodings):
                isBatch = true
                single = nil
                batch = decodings
                output.append(0x5B)
            }
        }

        /// The next request to carry out, or nil when the line is done.
        func nextEntry() -> RPCRequestDecoding? {
            if isBatch {
                guard next < batch.count else { return nil }
                next += 1
                return batch[next - 1]
            }
            guard next == 0, let single else { return nil }
            next = 1
            return single
        }

        func add(_ reply: Reply) {
            if replyCount > 0 { output.append(0x2C) }
            replyCount += 1
            switch reply {
            case .value(let reply): reply.encode(into: &output)
            case .text(let id, let text): RPCEncoder.writeResult(id: id, text: text, into: &output)
            }
        }

        /// Ends the line: false when no request wanted a reply, else `output` is the line to
        /// send, ending in `\n`.
        func finish() -> Bool {
            guard replyCount > 0 else { return false }
            if isBatch { output.append(0x5D) }
            output.append(0x0A)
            return true
        }
    }

    /// One request's reply: a value, or a result already written as JSON text.
    private enum Reply {
        case value(RPCReply)
        case text(id: JSONValue, JSONText)
    }

    // MARK: LineHandler

    func sessionStarted() {}

    var closesAtEndOfInput: Bool { streams.isEmpty }

    func writableAgain() {
        streams.writableAgain()
    }

    func sessionClosed() {
        streams.tearDown()
    }

    // MARK: Requests

    func handle(line bytes: UnsafeRawBufferPointer) -> LineOutcome {
        // Blank lines (a person typing into socat) are ignored.
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return .answered }
        line.start(RPCIncoming(line: bytes))
        return run(line)
    }

    /// Carries out a line's requests in order; returns `.waiting` when one must wait, and is
    /// called again (on the event loop) when it is answered.
    private func run(_ line: LineRun) -> LineOutcome {
        while let entry = line.nextEntry() {
            switch perform(entry, of: line) {
            case .answered(let reply):
                if let reply { line.add(reply) }
            case .waiting:
                return .waiting
            }
        }
        let replied = line.finish()
        if streams.isEmpty {
            // No subscription, so no first push to follow the reply: send it at once.
            if replied { line.output.withUnsafeBytes { session.write($0, flush: true) } }
        } else {
            if replied { line.output.withUnsafeBytes { session.write($0) } }
            streams.sendFirstPushes()
        }
        return .answered
    }

    private enum Step {
        case answered(Reply?)
        case waiting
    }

    /// Carries out one request. Returns its reply (nil for a notification) or `.waiting`, in
    /// which case the reply is added to `line` later, on the event loop, and the line goes on.
    private func perform(_ decoding: RPCRequestDecoding, of line: LineRun) -> Step {
        let request: RPCRequest
        switch decoding {
        case .invalid:
            return .answered(decoding.errorReply.map(Reply.value))
        case .request(let valid):
            request = valid
        }
        let replyID = request.id
        let handler: MethodHandler
        if let cached = lastHandler, request.method == lastMethod {
            handler = cached  // a client that polls sends the same method again and again
        } else {
            guard let found = methods.handler(for: request.method) else {
                return .answered(replyID.map { .value(RPCReply(id: $0, result: .failure(.methodNotFound(request.method)))) })
            }
            handler = found
            lastMethod = request.method
            lastHandler = found
        }
        let outcome: MethodOutcome
        do {
            outcome = try handler(MethodCall(params: Params(request), connection: streams))
        } catch {
            return .answered(replyID.map { .value(RPCReply(id: $0, result: .failure(error))) })
        }
        switch outcome {
        case .result(let value):
            return .answered(replyID.map { .value(RPCReply(id: $0, result: .success(value))) })
        case .text(let text):
            return .answered(replyID.map { .text(id: $0, text) })
        case .later(let start):
            let loop = session.eventLoop
            let resume = { [self] (reply: RPCReply?) in
                if let reply { line.add(.value(reply)) }
                guard !session.isClosed else { return }
                if run(line) == .answered { session.lineAnswered() }
            }
            let bound = NIOLoopBound(resume, eventLoop: loop)
            start { result in
                loop.execute {
                    bound.value(replyID.map { RPCReply(id: $0, result: result) })
                }
            }
            return .waiting
        }
    }

    // MARK: PushTarget

    var isWritable: Bool { session.isWritable }

    func push(_ line: ByteBuffer) {
        session.write(line)
    }

    func flushPushes() {
        session.flush()
    }

    func pushAndFlush(_ line: ByteBuffer) {
        session.write(line, flush: true)
    }

    func drop(reason: String) {
        guard !session.isClosed else { return }
        logger.info("closing a connection", metadata: ["reason": "\(reason)"])
        session.close()
    }
}
