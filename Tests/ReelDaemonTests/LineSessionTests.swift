import Logging
import NIOCore
import NIOEmbedded
import ReelProtocol
import Testing

@testable import ReelDaemon

/// The line session both line protocols (JSON-RPC, MPD) run on: order, pipelining, line length,
/// backpressure and closing, with a small handler and a transport that records what it is told.
/// No core, no socket; the framing cases run on NIO's embedded channel.
@Suite struct LineSessionTests {
    /// Records what the session asks of the connection. `flush` moves what is queued to `sent`.
    final class Transport: LineTransport {
        let eventLoop: EventLoop = EmbeddedEventLoop()
        var isWritable = true
        var bufferedBytes = 0
        var queued: [UInt8] = []
        var sent: [UInt8] = []
        var readingPaused = false
        /// "closed" (queued output dropped) or "closed after flush".
        var closing: String?
        weak var session: LineSession?

        var text: String { String(decoding: sent, as: UTF8.self) }

        func write(_ bytes: UnsafeRawBufferPointer) { queued.append(contentsOf: bytes) }
        func write(_ line: ByteBuffer) { queued.append(contentsOf: line.readableBytesView) }
        func writeAndFlush(_ line: ByteBuffer) {
            write(line)
            flush()
        }
        func writeAndFlush(_ bytes: UnsafeRawBufferPointer) {
            write(bytes)
            flush()
        }
        func flush() {
            sent += queued
            queued = []
        }
        func pauseReading() { readingPaused = true }
        func resumeReading() { readingPaused = false }
        func close() {
            guard closing == nil else { return }
            closing = "closed"
            queued = []
            session?.connectionClosed()
        }
        func closeAfterFlush() {
            guard closing == nil else { return }
            flush()
            closing = "closed after flush"
            session?.connectionClosed()
        }
    }

    /// Answers `line` with `line\n` at once; a line starting with `later` waits until `release`.
    final class Handler: LineHandler {
        unowned let session: LineSession
        var handled: [String] = []
        var held: [String] = []
        var closesAtEndOfInput = true
        var closedCount = 0
        var greeting: String?

        init(session: LineSession) { self.session = session }

        func sessionStarted() {
            if let greeting { reply(greeting) }
            session.flush()
        }

        func handle(line: UnsafeRawBufferPointer) -> LineOutcome {
            let text = String(decoding: line, as: UTF8.self)
            handled.append(text)
            if text.hasPrefix("later") {
                held.append(text)
                return .waiting
            }
            reply(text)
            return .answered
        }

        /// Answers the line that waits (as a reply from the core would, on the loop).
        func release() {
            let line = held.removeFirst()
            guard !session.isClosed else { return }
            reply(line)
            session.lineAnswered()
        }

        func reply(_ text: String) {
            Array((text + "\n").utf8).withUnsafeBytes { session.write($0) }
        }

        func writableAgain() {}
        func sessionClosed() { closedCount += 1 }
    }

    /// A session on a recording transport; the handler is kept by the session, as in the daemon.
    static func session(_ rules: LineSession.Rules = .mpd) -> (LineSession, Transport, Handler) {
        let transport = Transport()
        let session = LineSession(transport: transport, rules: rules, logger: Logger(label: "test"))
        transport.session = session
        let handler = Handler(session: session)
        session.handler = handler
        session.start()
        return (session, transport, handler)
    }

    static func receive(_ session: LineSession, _ lines: String...) {
        for line in lines { Array(line.utf8).withUnsafeBytes { session.received(line: $0) } }
    }

    // MARK: Order

    @Test func aPipelinedBurstIsAnsweredInOrderBehindTheLinesThatWait() {
        let (session, transport, handler) = Self.session()
        // One read's lines: the second waits for the core, the rest queue behind it.
        Self.receive(session, "a", "later 1", "b", "later 2", "c")
        #expect(transport.text == "a\n")
        #expect(handler.handled == ["a", "later 1"])
        #expect(transport.readingPaused, "lines are waiting: the client is not read meanwhile")
        handler.release()
        #expect(transport.text == "a\nlater 1\nb\n")
        #expect(handler.handled == ["a", "later 1", "b", "later 2"])
        #expect(transport.readingPaused)
        // A line that comes while the queue is still waiting goes behind it.
        Self.receive(session, "d")
        handler.release()
        #expect(transport.text == "a\nlater 1\nb\nlater 2\nc\nd\n")
        #expect(!transport.readingPaused, "everything is answered: reading resumes")
        Self.receive(session, "e")
        #expect(transport.text.hasSuffix("d\ne\n"))
    }

    // MARK: Line length

    @Test func aLineOverTheLimitGetsEachProtocolsAnswerThenTheConnectionCloses() throws {
        // JSON-RPC: the `line_too_long` error, sent before the close.
        let (rpc, rpcTransport, rpcHandler) = Self.session(.jsonRPC)
        Self.receive(rpc, "a")
        rpc.receivedLineTooLong()
        Self.receive(rpc, "after")
        let expected = "a\n" + String(decoding: RPCEncoder.errorLine(id: .null, error: .lineTooLong), as: UTF8.self)
        #expect(rpcTransport.text == expected)
        #expect(rpcTransport.text.contains("line_too_long"))
        #expect(rpcTransport.closing == "closed after flush")
        #expect(rpcHandler.handled == ["a"])
        #expect(rpcHandler.closedCount == 1)

        // MPD: closed without a reply, what was answered before still sent.
        let (mpd, mpdTransport, mpdHandler) = Self.session(.mpd)
        Self.receive(mpd, "a")
        mpd.receivedLineTooLong()
        #expect(mpdTransport.text == "a\n")
        #expect(mpdTransport.closing == "closed after flush")
        #expect(mpdHandler.closedCount == 1)
    }

    /// A NIO pipeline as MPD's: the framing with the session's limit, then the session.
    struct Pipeline {
        let channel: EmbeddedChannel
        let handler: () -> Handler?

        init(_ rules: LineSession.Rules) throws {
            channel = EmbeddedChannel()
            let made = Made()
            try channel.pipeline.syncOperations.addHandler(
                ByteToMessageHandler(LineFrameDecoder(maxLineLength: rules.maxLineBytes)))
            try channel.pipeline.syncOperations.addHandler(
                ChannelLineTransport(eventLoop: channel.eventLoop, logger: Logger(label: "test")) { transport in
                    let session = LineSession(transport: transport, rules: rules, logger: Logger(label: "test"))
                    let handler = Handler(session: session)
                    session.handler = handler
                    made.handler = handler
                    return session
                })
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            handler = { [made] in made.handler }
        }

        /// Keeps the handler for the test to read after the connection closed (the session lets it go).
        final class Made {
            var handler: Handler?
        }

        func send(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
            channel.embeddedEventLoop.run()
        }

        func output() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }
    }

    @Test func mpdsLimitIsALineOf8191BytesAndALongerOneClosesWithoutAReply() throws {
        let limit = LineSession.Rules.mpd.maxLineBytes
        #expect(limit == 8191)
        let pipeline = try Pipeline(.mpd)
        try pipeline.send(String(repeating: "x", count: limit) + "\n")
        #expect(try pipeline.output() == String(repeating: "x", count: limit) + "\n")
        try pipeline.send(String(repeating: "y", count: limit + 1) + "\nping\n")
        #expect(try pipeline.output() == "")
        #expect(!pipeline.channel.isActive)
        #expect(pipeline.handler()?.handled == [String(repeating: "x", count: limit)])
    }

    // MARK: Framing across reads

    @Test func aLineSplitAcrossReadsIsCarriedOutWholeOnceItsEndComes() throws {
        let pipeline = try Pipeline(.mpd)
        try pipeline.send("ec")
        try pipeline.send("ho 1\r\nsec")
        #expect(try pipeline.output() == "echo 1\n")
        try pipeline.send("ond\nthird")
        #expect(try pipeline.output() == "second\n")
        #expect(pipeline.handler()?.handled == ["echo 1", "second"])
        // The end of the input: the unterminated last line is still a line, then the close.
        pipeline.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        pipeline.channel.embeddedEventLoop.run()
        #expect(try pipeline.output() == "third\n")
        #expect(pipeline.handler()?.handled == ["echo 1", "second", "third"])
        #expect(!pipeline.channel.isActive)
    }

    // MARK: Closing

    @Test func theEndOfTheInputClosesOnceEveryPendingReplyIsSent() {
        let (session, transport, handler) = Self.session()
        Self.receive(session, "later", "b")
        session.inputClosed()
        #expect(transport.closing == nil, "a line still waits for its answer")
        handler.release()
        #expect(transport.text == "later\nb\n")
        #expect(transport.closing == "closed after flush")
        #expect(handler.closedCount == 1)

        // A handler that wants the connection open (a JSON-RPC subscriber) keeps it.
        let (kept, keptTransport, keptHandler) = Self.session(.jsonRPC)
        keptHandler.closesAtEndOfInput = false
        Self.receive(kept, "a")
        kept.inputClosed()
        #expect(keptTransport.text == "a\n")
        #expect(keptTransport.closing == nil)
    }

    @Test func aConnectionClosedWithRepliesPendingRunsAndWritesNothingMore() {
        let (session, transport, handler) = Self.session()
        Self.receive(session, "a", "later", "b")
        transport.close()  // the client hung up
        #expect(handler.closedCount == 1)
        #expect(session.isClosed)
        handler.release()  // the core answers after the close
        Self.receive(session, "c")
        #expect(transport.text == "a\n")
        #expect(handler.handled == ["a", "later"], "the lines queued behind it are not carried out")
        #expect(handler.closedCount == 1)
    }

    // MARK: Backpressure

    @Test func aClientThatLeavesItsRepliesUnreadIsDisconnectedBeforeTheNextWrite() {
        for rules in [LineSession.Rules.jsonRPC, .mpd] {
            let (session, transport, handler) = Self.session(rules)
            // Not reading, but under the limit: one large reply still goes.
            transport.isWritable = false
            transport.bufferedBytes = rules.maxBufferedBytes
            let large = [UInt8](repeating: 0x61, count: rules.maxBufferedBytes)
            large.withUnsafeBytes { session.write($0) }
            #expect(transport.closing == nil)
            #expect(transport.queued.count == large.count)
            // Past the limit: the next reply disconnects the client, dropping what is queued.
            transport.bufferedBytes = rules.maxBufferedBytes + 1
            Self.receive(session, "a")
            #expect(transport.closing == "closed")
            #expect(transport.sent.isEmpty)
            #expect(handler.closedCount == 1)
            #expect(!session.isWritable)
        }
    }
}
