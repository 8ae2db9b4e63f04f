// WebSocket frames to JSON-RPC lines and back, so that `/rpc` runs the same JSON-RPC session.

import Logging
import NIOCore
import NIOWebSocket

/// Sits between NIO's WebSocket frame codec and a `ChannelLineTransport`, on the connection's event
/// loop: each text (or binary) message — its frames joined — goes up as one `LineFrame.line`;
/// each line the connection writes (one JSON-RPC message ending in `\n`) goes out as one text
/// frame without the newline. A message over 1 MiB goes up as `.tooLong` (the connection
/// answers `line_too_long` and closes, as on the socket). Pings are answered, pongs ignored; a
/// close frame is answered and the connection closed; when the daemon closes the connection
/// it sends a close frame first. Flow control and the 1 MiB unread limit are the
/// `LineSession`'s, on this same channel.
final class WebSocketRPCAdapter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = LineFrame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = WebSocketFrame

    static let maxMessageBytes = LineSession.Rules.jsonRPC.maxLineBytes

    /// The frames of a fragmented message so far.
    private var message: ByteBuffer?
    private var discardingMessage = false
    private var sentClose = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary:
            discardingMessage = false
            if frame.fin {
                message = nil
                context.fireChannelRead(wrapInboundOut(.line(frame.unmaskedData)))
            } else {
                message = frame.unmaskedData
            }
        case .continuation:
            guard !discardingMessage, var partial = message else { return }
            var data = frame.unmaskedData
            guard partial.readableBytes + data.readableBytes <= Self.maxMessageBytes else {
                message = nil
                discardingMessage = true
                context.fireChannelRead(wrapInboundOut(.tooLong))
                return
            }
            partial.writeBuffer(&data)
            if frame.fin {
                message = nil
                context.fireChannelRead(wrapInboundOut(.line(partial)))
            } else {
                message = partial
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            // Answer with the client's code (the first two bytes), then close.
            var data = frame.unmaskedData
            let code = data.readSlice(length: 2) ?? context.channel.allocator.buffer(capacity: 0)
            sendClose(context: context, data: code)
        default:
            // Pongs, and opcodes no client should send.
            break
        }
    }

    /// A WebSocket ends with a close frame; a bare half-close is read as the end of it.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var line = unwrapOutboundIn(data)
        if line.readableBytesView.last == UInt8(ascii: "\n") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        guard line.readableBytes > 0, !sentClose else {
            promise?.succeed(())
            return
        }
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: line)), promise: promise)
    }

    /// The daemon ends the connection (shutdown, a client dropped for not reading): a close
    /// frame "going away" first, so the page knows it was closed on purpose.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all, !sentClose, context.channel.isActive {
            sentClose = true
            var code = context.channel.allocator.buffer(capacity: 2)
            code.write(webSocketErrorCode: .goingAway)
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: code)), promise: nil)
        }
        context.close(mode: mode, promise: promise)
    }

    private func sendClose(context: ChannelHandlerContext, data: ByteBuffer) {
        guard !sentClose else {
            context.close(promise: nil)
            return
        }
        sentClose = true
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
    }
}
