// A line protocol's connection in a NIO pipeline (MPD, the web page's WebSocket): channel events in, writes out.

import Logging
import NIOCore

/// The last handler of a NIO pipeline that carries lines (after a `LineFrameDecoder`, or the
/// `WebSocketRPCAdapter`): it hands each `LineFrame` to the connection's `LineSession` and is
/// that session's `LineTransport`, writing through the channel. On the channel's event loop.
final class ChannelLineTransport: ChannelInboundHandler, LineTransport {
    typealias InboundIn = LineFrame
    typealias OutboundOut = ByteBuffer

    let eventLoop: EventLoop
    private let logger: Logger
    /// Makes the connection's session, with its protocol, when the handler is added.
    private let open: (LineTransport) -> LineSession
    private var context: ChannelHandlerContext?
    /// The connection's channel, kept from `handlerAdded` to `handlerRemoved`: the push hub asks
    /// it whether the client reads for every tick, and `context.channel` is a lookup each time.
    private var channel: Channel?
    private var session: LineSession?
    private var started = false

    init(eventLoop: EventLoop, logger: Logger, open: @escaping (LineTransport) -> LineSession) {
        self.eventLoop = eventLoop
        self.logger = logger
        self.open = open
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        channel = context.channel
        session = open(self)
        if context.channel.isActive { start() }
    }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    private func start() {
        guard !started else { return }
        started = true
        session?.start()
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
        switch unwrapInboundIn(data) {
        case .tooLong:
            session?.receivedLineTooLong()
        case .line(let buffer):
            buffer.withUnsafeReadableBytes { session?.received(line: $0) }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            session?.inputClosed()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { session?.writableAgain() }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.debug("connection error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    private func tearDown() {
        let session = self.session
        self.session = nil
        session?.connectionClosed()
    }

    // MARK: LineTransport

    var isWritable: Bool { channel?.isWritable ?? false }
    var bufferedBytes: Int { (try? channel?.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0 }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    func write(_ line: ByteBuffer) {
        context?.write(wrapOutboundOut(line), promise: nil)
    }

    func writeAndFlush(_ line: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(line), promise: nil)
    }

    func writeAndFlush(_ bytes: UnsafeRawBufferPointer) {
        write(bytes)
        flush()
    }

    func flush() {
        context?.flush()
    }

    func pauseReading() {
        channel?.setOption(.autoRead, value: false).whenFailure { _ in }
    }

    func resumeReading() {
        channel?.setOption(.autoRead, value: true).whenFailure { _ in }
    }

    func close() {
        context?.close(promise: nil)
    }

    func closeAfterFlush() {
        guard let context else { return }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
