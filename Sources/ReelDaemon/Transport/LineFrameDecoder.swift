// Splits a connection's bytes into JSON-RPC lines, with the same rules as ReelProtocol's LineFramer.

import NIOCore

/// One line without its `\n` (and without a trailing `\r`), or the news that a line grew past
/// the limit (the connection is then answered and closed).
enum LineFrame {
    case line(ByteBuffer)
    case tooLong
}

/// Framing for the server: lines end in `\n`; a `\r` before it is dropped; a line longer than
/// `maxLineLength` ends the stream; an unterminated last line at EOF is still a line.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = LineFrame

    let maxLineLength: Int
    /// Bytes already searched for a newline, so a long line is scanned once, not once per read.
    private var scanned = 0
    private var failed = false

    init(maxLineLength: Int = 1 << 20) {
        self.maxLineLength = maxLineLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if failed {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let searchStart = view.startIndex + scanned
        guard let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            if view.count > maxLineLength {
                failed = true
                buffer.moveReaderIndex(to: buffer.writerIndex)
                context.fireChannelRead(wrapInboundOut(.tooLong))
            }
            return .needMoreData
        }
        let length = newline - view.startIndex
        scanned = 0
        if length > maxLineLength {
            failed = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(wrapInboundOut(.tooLong))
            return .needMoreData
        }
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytesView.last == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        context.fireChannelRead(wrapInboundOut(.line(line)))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if !failed, buffer.readableBytes > 0, var line = buffer.readSlice(length: buffer.readableBytes) {
            if line.readableBytesView.last == UInt8(ascii: "\r") {
                line.moveWriterIndex(to: line.writerIndex - 1)
            }
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }
}
