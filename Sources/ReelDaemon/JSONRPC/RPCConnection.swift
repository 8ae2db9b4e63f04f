// One client connection: requests in, replies and stream pushes out, on the connection's event loop.

import Logging
import NIOCore
import ReelCore
import ReelModel
import ReelProtocol

/// Handles one connection's lines. Everything here runs on the channel's event loop; results and
/// changes that arrive from other threads hop onto it first.
///
/// Order: a connection's requests are carried out one after another, in the order sent (and a
/// batch's entries in order), so `play` then `seek` on one connection seeks in the new track.
/// Lines that arrive while a request waits for the player are queued, and reading pauses.
///
/// Slow clients: replies are always queued; stream pushes (written by the loop's `RPCPushHub`)
/// are skipped while the channel is not writable and the latest value is sent when it drains
/// (state streams coalesce). A client whose unread output passes `maxBufferedBytes` is
/// disconnected.
final class RPCConnection: ChannelInboundHandler, PushTarget {
    typealias InboundIn = LineFrame
    typealias OutboundOut = ByteBuffer

    static let maxBufferedBytes = 1 << 20

    private let methods: MethodTable
    private let hub: RPCPushHub
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// The connection's channel, kept from `handlerAdded` to `handlerRemoved`: the push hub asks
    /// it whether the client reads for every tick, and `context.channel` is a lookup each time.
    private var channel: Channel?
    private lazy var streams = RPCConnectionStreams(hub: hub, target: self)
    /// A line is being carried out (possibly waiting for the player).
    private var busy = false
    /// Lines received while busy, carried out in order when it is done.
    private var waitingLines = CircularBuffer<ByteBuffer>()
    private var draining = false
    /// Reading was paused (`autoRead` off) because lines were waiting; turned on again once they are done.
    private var readingPaused = false
    private var inputClosed = false
    private var closed = false

    /// One received line's requests in progress: a single request or a batch.
    private final class LineRun {
        let entries: [RPCRequestDecoding]
        let isBatch: Bool
        var next = 0
        /// The replies so far, written as they come: a single reply, or a batch's replies after
        /// its `[`, separated by commas.
        var output: [UInt8] = []
        var replyCount = 0
        init(entries: [RPCRequestDecoding], isBatch: Bool) {
            self.entries = entries
            self.isBatch = isBatch
            output.reserveCapacity(256)
            if isBatch { output.append(0x5B) }
        }

        func add(_ reply: Reply) {
            if replyCount > 0 { output.append(0x2C) }
            replyCount += 1
            switch reply {
            case .value(let reply): reply.encode(into: &output)
            case .text(let id, let text): RPCEncoder.writeResult(id: id, text: text, into: &output)
            }
        }

        /// The line to send (nil when no request wanted a reply), ending in `\n`.
        func finish() -> [UInt8]? {
            guard replyCount > 0 else { return nil }
            if isBatch { output.append(0x5D) }
            output.append(0x0A)
            return output
        }
    }

    /// One request's reply: a value, or a result already written as JSON text.
    private enum Reply {
        case value(RPCReply)
        case text(id: JSONValue, JSONText)
    }

    init(methods: MethodTable, hub: RPCPushHub, logger: Logger) {
        self.methods = methods
        self.hub = hub
        self.logger = logger
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        channel = context.channel
    }

    func channelInactive(context: ChannelHandlerContext) {
        tearDown()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tearDown()
        self.context = nil
        channel = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closed else { return }
        switch unwrapInboundIn(data) {
        case .tooLong:
            logger.info("closing a connection that sent a line over 1 MiB")
            write(RPCEncoder.errorLine(id: .null, error: .lineTooLong))
            context.flush()
            closed = true
            context.close(promise: nil)
        case .line(let buffer):
            if busy || !waitingLines.isEmpty {
                waitingLines.append(buffer)
                if !readingPaused {
                    readingPaused = true
                    context.channel.setOption(.autoRead, value: false).whenFailure { _ in }
                }
            } else {
                handleLine(buffer)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            closeIfFinished()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            streams.writableAgain()
            context.flush()
        }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.debug("connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Requests

    private func handleLine(_ buffer: ByteBuffer) {
        let incoming = buffer.withUnsafeReadableBytes { bytes -> RPCIncoming? in
            // Blank lines (a person typing into socat) are ignored.
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
            return RPCIncoming(line: bytes)
        }
        switch incoming {
        case nil:
            return
        case .single(let decoding)?:
            busy = true
            run(LineRun(entries: [decoding], isBatch: false))
        case .batch(let entries)?:
            busy = true
            run(LineRun(entries: entries, isBatch: true))
        }
    }

    /// Carries out a line's requests in order; returns when one must wait, and is called again
    /// (on the event loop) when it is answered.
    private func run(_ line: LineRun) {
        while line.next < line.entries.count {
            let entry = line.entries[line.next]
            line.next += 1
            let waiting = perform(entry) { [self] reply in
                if let reply { line.add(.value(reply)) }
                guard !closed else { return }
                run(line)
            }
            switch waiting {
            case .answered(let reply):
                if let reply { line.add(reply) }
            case .waiting:
                return
            }
        }
        if let bytes = line.finish() { write(bytes) }
        streams.sendFirstPushes()
        busy = false
        context?.flush()
        runWaitingLines()
        closeIfFinished()
    }

    /// Carries out the lines that arrived while the connection was busy, then reads again.
    private func runWaitingLines() {
        guard !draining else { return }
        draining = true
        defer { draining = false }
        while !busy, !closed, let line = waitingLines.popFirst() {
            handleLine(line)
        }
        if readingPaused, waitingLines.isEmpty, let channel = context?.channel {
            readingPaused = false
            channel.setOption(.autoRead, value: true).whenFailure { _ in }
        }
    }

    private enum Step {
        case answered(Reply?)
        case waiting
    }

    /// Carries out one request. Returns its reply (nil for a notification) or `.waiting`, in
    /// which case `resume` gets the reply later on the event loop.
    private func perform(_ decoding: RPCRequestDecoding, resume: @escaping (RPCReply?) -> Void) -> Step {
        let request: RPCRequest
        switch decoding {
        case .invalid:
            return .answered(decoding.errorReply.map(Reply.value))
        case .request(let valid):
            request = valid
        }
        let replyID = request.id
        guard let handler = methods.handler(for: request.method) else {
            return .answered(replyID.map { .value(RPCReply(id: $0, result: .failure(.methodNotFound(request.method)))) })
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
            guard let loop = context?.eventLoop else { return .answered(nil) }
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

    var isWritable: Bool { channel?.isWritable ?? false }

    func push(_ line: ByteBuffer) {
        guard let context, !closed, !disconnectIfBackedUp(context, nextLine: line.readableBytes) else { return }
        context.write(wrapOutboundOut(line), promise: nil)
    }

    func flushPushes() {
        context?.flush()
    }

    func pushAndFlush(_ line: ByteBuffer) {
        guard let context, !closed, !disconnectIfBackedUp(context, nextLine: line.readableBytes) else { return }
        context.writeAndFlush(wrapOutboundOut(line), promise: nil)
    }

    func drop(reason: String) {
        guard let context, !closed else { return }
        logger.info("closing a connection", metadata: ["reason": "\(reason)"])
        closed = true
        context.close(promise: nil)
    }

    // MARK: Output

    /// Queues a line. A client that already has more than 1 MiB unread is disconnected instead:
    /// the check comes before the write, so one large reply (a big folder's listing) is fine.
    private func write(_ bytes: [UInt8]) {
        guard let context, !closed, !disconnectIfBackedUp(context, nextLine: bytes.count) else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// Disconnects a client that lets more than 1 MiB of output pile up unread; true if it did.
    private func disconnectIfBackedUp(_ context: ChannelHandlerContext, nextLine: Int) -> Bool {
        guard !(channel?.isWritable ?? context.channel.isWritable) else { return false }
        let buffered = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        guard buffered > Self.maxBufferedBytes else { return false }
        logger.warning(
            "disconnecting a client that is not reading its replies",
            metadata: ["unreadBytes": "\(buffered)", "nextLineBytes": "\(nextLine)"])
        closed = true
        context.close(promise: nil)
        return true
    }

    /// After the client half-closes: close once every reply is out, unless it is subscribed.
    private func closeIfFinished() {
        guard inputClosed, !busy, waitingLines.isEmpty, streams.isEmpty, let context, !closed else {
            return
        }
        closed = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private func tearDown() {
        closed = true
        streams.tearDown()
    }
}
