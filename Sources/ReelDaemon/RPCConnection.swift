// One client connection: requests in, replies and stream pushes out, on the connection's event loop.

import Logging
import NIOCore
import ReelModel
import ReelProtocol

/// Handles one connection's lines. Everything here runs on the channel's event loop; results and
/// changes that arrive from other threads hop onto it first.
///
/// Slow clients: replies are always queued; stream pushes are skipped while the channel is not
/// writable and the latest value is sent when it drains (state streams coalesce). A client whose
/// unread output passes `maxBufferedBytes` is disconnected.
final class RPCConnection: ChannelInboundHandler, SubscriptionHost {
    typealias InboundIn = LineFrame
    typealias OutboundOut = ByteBuffer

    static let maxBufferedBytes = 1 << 20

    private let methods: MethodTable
    private let player: PlayerController
    private let logger: Logger
    private var context: ChannelHandlerContext?
    private var playerSubscriptions: [Int: PlayerSubscription] = [:]
    private var playerObserver: Int?
    private var nextSubscription = 1
    private var pendingReplies = 0
    private var inputClosed = false
    private var closed = false
    private var scratch: [UInt8] = []

    private final class PlayerSubscription {
        let id: Int
        let interval: TimeAmount
        var ticker: RepeatedTask?
        /// A push was skipped because the client was not reading.
        var dirty = false
        init(id: Int, interval: TimeAmount) {
            self.id = id
            self.interval = interval
        }
    }

    init(methods: MethodTable, player: PlayerController, logger: Logger) {
        self.methods = methods
        self.player = player
        self.logger = logger
        scratch.reserveCapacity(512)
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelInactive(context: ChannelHandlerContext) {
        tearDown()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tearDown()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .tooLong:
            logger.info("closing a connection that sent a line over 1 MiB")
            write(RPCEncoder.errorLine(id: .null, error: .lineTooLong))
            context.flush()
            closed = true
            context.close(promise: nil)
        case .line(let buffer):
            guard !closed else { return }
            handleLine(buffer)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
        checkBacklog()
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
            let state = player.state
            for subscription in playerSubscriptions.values where subscription.dirty {
                push(state, to: subscription)
            }
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
        guard let incoming else { return }
        switch incoming {
        case .single(let decoding):
            perform(decoding) { [self] reply in
                if let reply { write(RPCEncoder.replyLine(reply)) }
            }
        case .batch(let entries):
            let collector = BatchCollector(count: entries.count)
            for (index, entry) in entries.enumerated() {
                perform(entry) { [self] reply in
                    if let replies = collector.fill(index, reply) {
                        if !replies.isEmpty { write(RPCEncoder.batchLine(replies)) }
                    }
                }
            }
        }
    }

    /// Carries out one request; `finish` gets its reply (nil for a notification) on the event loop.
    private func perform(_ decoding: RPCRequestDecoding, finish: @escaping (RPCReply?) -> Void) {
        let request: RPCRequest
        switch decoding {
        case .invalid:
            finish(decoding.errorReply)
            return
        case .request(let valid):
            request = valid
        }
        let replyID = request.id
        func reply(_ result: Result<JSONValue, RPCError>) -> RPCReply? {
            replyID.map { RPCReply(id: $0, result: result) }
        }
        guard let handler = methods.handler(for: request.method) else {
            finish(reply(.failure(.methodNotFound(request.method))))
            return
        }
        let outcome: MethodOutcome
        do {
            outcome = try handler(MethodCall(params: Params(request), connection: self))
        } catch {
            finish(reply(.failure(error)))
            return
        }
        switch outcome {
        case .result(let value):
            finish(reply(.success(value)))
        case .later(let start):
            guard let loop = context?.eventLoop else { return }
            pendingReplies += 1
            let bound = NIOLoopBound((self, finish), eventLoop: loop)
            start { result in
                loop.execute {
                    let (connection, finish) = bound.value
                    connection.pendingReplies -= 1
                    guard !connection.closed else { return }
                    finish(replyID.map { RPCReply(id: $0, result: result) })
                    connection.context?.flush()
                    connection.checkBacklog()
                    connection.closeIfFinished()
                }
            }
        }
    }

    // MARK: Subscriptions

    func subscribePlayer(interval: Double) -> Int {
        let id = nextSubscription
        nextSubscription += 1
        let subscription = PlayerSubscription(id: id, interval: .nanoseconds(Int64(interval * 1e9)))
        playerSubscriptions[id] = subscription
        guard let loop = context?.eventLoop else { return id }
        if playerObserver == nil {
            let bound = NIOLoopBound(self, eventLoop: loop)
            playerObserver = player.addObserver { _ in
                loop.execute { bound.value.playerChanged() }
            }
        }
        // The current value follows the reply (which is written before this task runs).
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.execute {
            let connection = bound.value
            guard let subscription = connection.playerSubscriptions[id] else { return }
            let state = connection.player.state
            connection.push(state, to: subscription)
            connection.updateTicker(subscription, playing: state.state == .playing)
            connection.context?.flush()
        }
        return id
    }

    func unsubscribe(_ id: Int) -> Bool {
        guard let subscription = playerSubscriptions.removeValue(forKey: id) else { return false }
        subscription.ticker?.cancel()
        if playerSubscriptions.isEmpty, let observer = playerObserver {
            player.removeObserver(observer)
            playerObserver = nil
        }
        return true
    }

    private func playerChanged() {
        guard !closed else { return }
        let state = player.state
        for subscription in playerSubscriptions.values {
            push(state, to: subscription)
            updateTicker(subscription, playing: state.state == .playing)
        }
        context?.flush()
        checkBacklog()
    }

    /// Ticks run only while playing, so an idle daemon with many subscribers does not wake up.
    private func updateTicker(_ subscription: PlayerSubscription, playing: Bool) {
        if playing, subscription.ticker == nil, let loop = context?.eventLoop {
            let bound = NIOLoopBound(self, eventLoop: loop)
            let id = subscription.id
            subscription.ticker = loop.scheduleRepeatedTask(
                initialDelay: subscription.interval, delay: subscription.interval
            ) { _ in
                bound.value.tick(id)
            }
        } else if !playing, let ticker = subscription.ticker {
            ticker.cancel()
            subscription.ticker = nil
        }
    }

    private func tick(_ id: Int) {
        guard !closed, let subscription = playerSubscriptions[id] else { return }
        let state = player.state
        push(state, to: subscription)
        if state.state != .playing { updateTicker(subscription, playing: false) }
        context?.flush()
        checkBacklog()
    }

    private func push(_ state: PlayerState, to subscription: PlayerSubscription) {
        guard let context, !closed else { return }
        guard context.channel.isWritable else {
            subscription.dirty = true
            return
        }
        subscription.dirty = false
        var params: JSONObject = ["subscription": .int(Int64(subscription.id))]
        params.merge(state.jsonObject)
        write(RPCEncoder.notificationLine(method: "player.state", params: params))
    }

    // MARK: Output

    private func write(_ bytes: [UInt8]) {
        guard let context, !closed else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    /// Disconnects a client that lets more than 1 MiB of output pile up unread.
    private func checkBacklog() {
        guard let context, !closed, !context.channel.isWritable else { return }
        let buffered = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        if buffered > Self.maxBufferedBytes {
            logger.warning(
                "disconnecting a client that is not reading its replies",
                metadata: ["unreadBytes": "\(buffered)"])
            closed = true
            context.close(promise: nil)
        }
    }

    /// After the client half-closes: close once every reply is out, unless it is subscribed.
    private func closeIfFinished() {
        guard inputClosed, pendingReplies == 0, playerSubscriptions.isEmpty, let context, !closed else { return }
        closed = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private func tearDown() {
        closed = true
        for subscription in playerSubscriptions.values { subscription.ticker?.cancel() }
        playerSubscriptions.removeAll()
        if let observer = playerObserver {
            player.removeObserver(observer)
            playerObserver = nil
        }
    }
}

/// Collects a batch's replies in request order; notifications leave no reply.
private final class BatchCollector {
    private var slots: [RPCReply??]
    private var remaining: Int

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
        remaining = count
    }

    /// Stores one entry's reply; returns all replies once the last one is in.
    func fill(_ index: Int, _ reply: RPCReply?) -> [RPCReply]? {
        slots[index] = .some(reply)
        remaining -= 1
        guard remaining == 0 else { return nil }
        return slots.compactMap { $0 ?? nil }
    }
}
