// One JSON-RPC client: its lines carried out in order, replies written, stream pushes taken from the hub.

import Logging
import NIOCore
import ReelCore
import ReelModel
import ReelProtocol

/// The JSON-RPC protocol of one connection, whatever carries it: a `PollConnection` on the
/// control socket (it is that connection's delegate), or a WebSocket through an `RPCConnection`
/// in a NIO pipeline. Everything here runs on the transport's event loop; results and changes
/// that arrive from other threads hop onto it first.
///
/// Order: a connection's requests are carried out one after another, in the order sent (and a
/// batch's entries in order), so `play` then `seek` on one connection seeks in the new track.
/// Lines that arrive while a request waits for the player are queued, and reading pauses.
///
/// Slow clients: replies are always queued; stream pushes (written by the loop's `RPCPushHub`)
/// are skipped while the transport is not writable and the latest value is sent when it drains
/// (state streams coalesce). A client whose unread output passes `maxBufferedBytes` is
/// disconnected.
final class RPCSession: PushTarget, PollConnectionDelegate {
    static let maxBufferedBytes = 1 << 20

    private let methods: MethodTable
    private let hub: RPCPushHub
    private let logger: Logger
    /// The connection; dropped when it closes (a deferred reply may still come after that).
    private var transport: LineTransport?
    private let loop: EventLoop
    private lazy var streams = RPCConnectionStreams(hub: hub, target: self)
    private let line = LineRun()
    /// The last method called and its handler.
    private var lastMethod = ""
    private var lastHandler: MethodHandler?
    /// A line is being carried out (possibly waiting for the player).
    private var busy = false
    /// Lines received while busy, carried out in order when it is done.
    private var waitingLines: [[UInt8]] = []
    private var waitingIndex = 0
    private var draining = false
    /// Reading was paused because lines were waiting; resumed once they are done.
    private var readingPaused = false
    private var inputEnded = false
    private var closed = false

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

    init(transport: LineTransport, methods: MethodTable, hub: RPCPushHub, logger: Logger) {
        self.transport = transport
        loop = transport.eventLoop
        self.methods = methods
        self.hub = hub
        self.logger = logger
    }

    // MARK: From the transport

    func received(line: UnsafeRawBufferPointer) {
        guard !closed else { return }
        if busy || waitingIndex < waitingLines.count {
            waitingLines.append(Array(line))
            if !readingPaused {
                readingPaused = true
                transport?.pauseReading()
            }
        } else {
            handleLine(line)
        }
    }

    func receivedLineTooLong() {
        guard !closed, let transport else { return }
        logger.info("closing a connection that sent a line over 1 MiB")
        closed = true
        RPCEncoder.errorLine(id: .null, error: .lineTooLong).withUnsafeBytes { transport.write($0) }
        transport.closeAfterFlush()
    }

    func inputClosed() {
        inputEnded = true
        closeIfFinished()
    }

    func writableAgain() {
        guard !closed else { return }
        streams.writableAgain()
        transport?.flush()
    }

    func connectionClosed() {
        closed = true
        transport = nil
        streams.tearDown()
    }

    // MARK: Requests

    private func handleLine(_ line: UnsafeRawBufferPointer) {
        // Blank lines (a person typing into socat) are ignored.
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
        busy = true
        self.line.start(RPCIncoming(line: line))
        run(self.line)
    }

    /// Carries out a line's requests in order; returns when one must wait, and is called again
    /// (on the event loop) when it is answered.
    private func run(_ line: LineRun) {
        while let entry = line.nextEntry() {
            switch perform(entry, of: line) {
            case .answered(let reply):
                if let reply { line.add(reply) }
            case .waiting:
                return
            }
        }
        let replied = line.finish()
        if streams.isEmpty {
            // No subscription, so no first push to follow the reply: send it at once.
            if replied { write(line.output, flush: true) }
        } else {
            if replied { write(line.output) }
            streams.sendFirstPushes()
        }
        busy = false
        transport?.flush()
        runWaitingLines()
        closeIfFinished()
    }

    /// Carries out the lines that arrived while the connection was busy, then reads again.
    private func runWaitingLines() {
        guard !draining else { return }
        draining = true
        defer { draining = false }
        while !busy, !closed, waitingIndex < waitingLines.count {
            let line = waitingLines[waitingIndex]
            waitingIndex += 1
            line.withUnsafeBytes { handleLine($0) }
        }
        if waitingIndex == waitingLines.count {
            waitingLines.removeAll()
            waitingIndex = 0
            if readingPaused, !closed {
                readingPaused = false
                transport?.resumeReading()
            }
        }
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
            let loop = self.loop
            let resume = { [self] (reply: RPCReply?) in
                if let reply { line.add(.value(reply)) }
                guard !closed else { return }
                run(line)
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

    var isWritable: Bool { transport?.isWritable ?? false }

    func push(_ line: ByteBuffer) {
        guard let transport, !closed, !disconnectIfBackedUp(transport, nextLine: line.readableBytes) else { return }
        transport.write(line)
    }

    func flushPushes() {
        transport?.flush()
    }

    func pushAndFlush(_ line: ByteBuffer) {
        guard let transport, !closed, !disconnectIfBackedUp(transport, nextLine: line.readableBytes) else { return }
        transport.writeAndFlush(line)
    }

    func drop(reason: String) {
        guard let transport, !closed else { return }
        logger.info("closing a connection", metadata: ["reason": "\(reason)"])
        closed = true
        transport.close()
    }

    // MARK: Output

    /// Queues a line. A client that already has more than 1 MiB unread is disconnected instead:
    /// the check comes before the write, so one large reply (a big folder's listing) is fine.
    private func write(_ bytes: [UInt8], flush: Bool = false) {
        guard let transport, !closed, !disconnectIfBackedUp(transport, nextLine: bytes.count) else { return }
        if flush {
            bytes.withUnsafeBytes { transport.writeAndFlush($0) }
        } else {
            bytes.withUnsafeBytes { transport.write($0) }
        }
    }

    /// Disconnects a client that lets more than 1 MiB of output pile up unread; true if it did.
    private func disconnectIfBackedUp(_ transport: LineTransport, nextLine: Int) -> Bool {
        guard !transport.isWritable else { return false }
        let buffered = transport.bufferedBytes
        guard buffered > Self.maxBufferedBytes else { return false }
        logger.warning(
            "disconnecting a client that is not reading its replies",
            metadata: ["unreadBytes": "\(buffered)", "nextLineBytes": "\(nextLine)"])
        closed = true
        transport.close()
        return true
    }

    /// After the client half-closes: close once every reply is out, unless it is subscribed.
    private func closeIfFinished() {
        guard inputEnded, !busy, waitingIndex >= waitingLines.count, streams.isEmpty, let transport, !closed else {
            return
        }
        closed = true
        transport.closeAfterFlush()
    }
}
