import NIOCore
import NIOEmbedded
import Testing

@testable import ReelDaemon

/// The server's framing, fed through NIO's embedded channel exactly as the socket would feed it.
@Suite struct LineFrameDecoderTests {
    func channel(max: Int = 1 << 20) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineLength: max)))
        return channel
    }

    func feed(_ channel: EmbeddedChannel, _ bytes: [UInt8]) throws {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try channel.writeInbound(buffer)
    }

    func lines(_ channel: EmbeddedChannel) throws -> [String] {
        var result: [String] = []
        while let frame = try channel.readInbound(as: LineFrame.self) {
            switch frame {
            case .line(let buffer): result.append(String(buffer: buffer))
            case .tooLong: result.append("<too long>")
            }
        }
        return result
    }

    @Test func linesArrivingOneByteAtATimeAreReassembled() throws {
        let channel = try channel()
        for byte in Array("{\"a\":1}\n{\"b\":2}\n".utf8) {
            try feed(channel, [byte])
        }
        #expect(try lines(channel) == ["{\"a\":1}", "{\"b\":2}"])
    }

    @Test func crlfEndsALineWithoutItsCarriageReturn() throws {
        let channel = try channel()
        try feed(channel, Array("one\r\ntwo\n".utf8))
        #expect(try lines(channel) == ["one", "two"])
    }

    @Test func emptyLinesAreDeliveredAsEmpty() throws {
        let channel = try channel()
        try feed(channel, Array("\n\r\nx\n".utf8))
        #expect(try lines(channel) == ["", "", "x"])
    }

    @Test func anUnterminatedLineAtEndOfInputIsStillALine() throws {
        let channel = try channel()
        try feed(channel, Array("first\nlast".utf8))
        #expect(try lines(channel) == ["first"])
        _ = try channel.finish()
        // finish() runs decodeLast; the tail comes out as a line.
    }

    @Test func tailIsDeliveredOnEndOfInput() throws {
        let channel = try channel()
        try feed(channel, Array("last".utf8))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try lines(channel) == ["last"])
    }

    @Test func aLineOverTheLimitWithoutNewlineIsReportedOnce() throws {
        let channel = try channel(max: 16)
        try feed(channel, [UInt8](repeating: 0x61, count: 17))
        try feed(channel, Array("more\nand more\n".utf8))
        #expect(try lines(channel) == ["<too long>"])
    }

    @Test func aLineOverTheLimitWithNewlineIsReported() throws {
        let channel = try channel(max: 16)
        try feed(channel, [UInt8](repeating: 0x61, count: 20) + [0x0A])
        #expect(try lines(channel) == ["<too long>"])
    }

    @Test func aLineExactlyAtTheLimitIsAccepted() throws {
        let channel = try channel(max: 16)
        try feed(channel, [UInt8](repeating: 0x61, count: 16) + [0x0A])
        #expect(try lines(channel) == [String(repeating: "a", count: 16)])
    }

    @Test func aLongLineSplitAcrossManyReadsIsScannedCorrectly() throws {
        let channel = try channel()
        let line = [UInt8](repeating: 0x62, count: 300_000)
        for chunk in stride(from: 0, to: line.count, by: 7_000) {
            try feed(channel, Array(line[chunk..<min(chunk + 7_000, line.count)]))
        }
        try feed(channel, [0x0A])
        let received = try lines(channel)
        #expect(received.count == 1)
        #expect(received.first?.utf8.count == 300_000)
    }
}
