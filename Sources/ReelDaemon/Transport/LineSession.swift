// One client's lines carried out in order, for any line protocol: pipelining, backpressure, closing.

import Logging
import NIOCore

/// What a line protocol (JSON-RPC, MPD) does on a `LineSession`: it carries out lines and
/// writes its replies through the session. Called on the session's event loop.
protocol LineHandler: AnyObject {
    /// The connection is open (MPD greets here).
    func sessionStarted()
    /// Carries out one line (without its `\n`, nor a `\r` before it; the bytes are valid during
    /// the call only). `.waiting`: the handler calls the session's `lineAnswered` later.
    func handle(line: UnsafeRawBufferPointer) -> LineOutcome
    /// Whether the connection may close once the client's input ended and every line is
    /// answered (a JSON-RPC client that subscribed stays for its pushes).
    var closesAtEndOfInput: Bool { get }
    /// The client reads again: its unread output fell below the low-water mark.
    func writableAgain()
    /// The connection is closed, by either side (once).
    func sessionClosed()
}

/// How a line was carried out.
enum LineOutcome {
    /// Answered (its reply written, or none due): the next line may run.
    case answered
    /// Waiting for the core: the handler calls `LineSession.lineAnswered()` when it is done.
    case waiting
}

/// One client of a line protocol over any `LineTransport` (a `PollConnection` on the control
/// socket, a `ChannelLineTransport` in a NIO pipeline for MPD and the web page's WebSocket).
/// It is the transport's side of the protocol; the protocol itself is its `handler`.
///
/// The rules, the same for every protocol:
/// - Order: lines are carried out one after another, in the order sent. A line that arrives
///   while one waits for the core is queued and reading pauses; the queue is run, in order,
///   when the line is answered, then reading resumes (so a pipelined burst gets its replies in
///   order, and a client cannot make the queue grow without bound).
/// - Line length: a line longer than `rules.maxLineBytes` (the framing reports it) is answered
///   with `rules.lineTooLongReply` (JSON-RPC's `line_too_long` error; nothing for MPD) and the
///   connection closes once that is sent.
/// - Backpressure: replies are always queued, but a client that already has more than
///   `rules.maxBufferedBytes` unread while the transport is not writable is disconnected
///   before the next write (so one large reply is fine, a client that never reads is not).
/// - Closing: when the client's input ends, the connection closes once every line before the
///   end is answered and sent (unless the handler wants it open); `closeAfterFlush` sends what
///   is queued first, `close` drops it.
///
/// Threads: the transport's event loop only. Results that come from other threads hop onto it
/// before the handler calls `lineAnswered`.
final class LineSession: PollConnectionDelegate {
    /// One protocol's limits and answers.
    struct Rules {
        /// How logs name a connection and a client of this protocol ("an MPD connection", "an
        /// MPD client").
        let connectionName: String
        let clientName: String
        /// The longest line, without its newline; a longer one closes the connection.
        let maxLineBytes: Int
        /// Unread output past which a client that is not reading is disconnected.
        let maxBufferedBytes: Int
        /// Sent before closing a connection whose line was too long; nil: closed without a reply.
        let lineTooLongReply: [UInt8]?
    }

    let rules: Rules
    let eventLoop: EventLoop
    /// The protocol; dropped when the connection closes (a late reply may still come after).
    var handler: LineHandler?
    /// The connection; dropped when it closes.
    private var transport: LineTransport?
    private let logger: Logger
    /// A line is being carried out (possibly waiting for the core).
    private(set) var isBusy = false
    /// Lines received while busy, carried out in order when it is done.
    private var waitingLines: [[UInt8]] = []
    private var waitingIndex = 0
    private var draining = false
    /// Reading was paused because lines were waiting; resumed once they are done.
    private var readingPaused = false
    private var inputEnded = false
    private var started = false
    /// Something was written since the last flush (a line's answer flushes only then: a flush
    /// is a pipeline traversal in NIO, and most lines of a command list write nothing).
    private var unflushed = false
    /// Closed or closing: nothing more is carried out or written.
    private(set) var isClosed = false

    init(transport: LineTransport, rules: Rules, logger: Logger) {
        self.transport = transport
        self.rules = rules
        eventLoop = transport.eventLoop
        self.logger = logger
    }

    /// The connection is open: the handler may greet. Called once, by whoever made the session.
    func start() {
        guard !started, !isClosed else { return }
        started = true
        handler?.sessionStarted()
    }

    // MARK: From the transport

    func received(line: UnsafeRawBufferPointer) {
        guard !isClosed else { return }
        if isBusy || waitingIndex < waitingLines.count {
            waitingLines.append(Array(line))
            if !readingPaused {
                readingPaused = true
                transport?.pauseReading()
            }
        } else {
            carryOut(line)
        }
    }

    func receivedLineTooLong() {
        guard !isClosed else { return }
        logger.info(
            "closing \(rules.connectionName) that sent a line over its limit",
            metadata: ["maxLineBytes": "\(rules.maxLineBytes)"])
        if let reply = rules.lineTooLongReply, let transport {
            reply.withUnsafeBytes { transport.write($0) }
        }
        closeAfterFlush()
    }

    func inputClosed() {
        inputEnded = true
        closeIfFinished()
    }

    func writableAgain() {
        guard !isClosed else { return }
        handler?.writableAgain()
        flush()
    }

    func connectionClosed() {
        isClosed = true
        transport = nil
        let handler = self.handler
        self.handler = nil
        handler?.sessionClosed()
    }

    // MARK: Lines

    private func carryOut(_ line: UnsafeRawBufferPointer) {
        guard let handler else { return }
        isBusy = true
        if handler.handle(line: line) == .answered { lineAnswered() }
    }

    /// The line in progress is answered: sends what it wrote, carries out the lines that came
    /// meanwhile, and closes if the client's input ended. The handler calls it (on the event
    /// loop) for a line it returned `.waiting` for.
    func lineAnswered() {
        isBusy = false
        guard !isClosed else { return }
        flush()
        if readingPaused || waitingIndex < waitingLines.count { runWaitingLines() }
        if inputEnded { closeIfFinished() }
    }

    /// Carries out the lines that arrived while the connection was busy, then reads again.
    private func runWaitingLines() {
        guard !draining else { return }
        draining = true
        defer { draining = false }
        while !isBusy, !isClosed, waitingIndex < waitingLines.count {
            let line = waitingLines[waitingIndex]
            waitingIndex += 1
            line.withUnsafeBytes { carryOut($0) }
        }
        if waitingIndex == waitingLines.count {
            waitingLines.removeAll()
            waitingIndex = 0
            if readingPaused, !isClosed {
                readingPaused = false
                transport?.resumeReading()
            }
        }
    }

    /// After the client half-closed: close once every line is answered, if the handler agrees.
    private func closeIfFinished() {
        guard inputEnded, !isBusy, waitingIndex >= waitingLines.count, !isClosed else { return }
        guard handler?.closesAtEndOfInput ?? true else { return }
        closeAfterFlush()
    }

    // MARK: Output

    /// False while the client is not reading (its output is above the high-water mark).
    var isWritable: Bool { !isClosed && (transport?.isWritable ?? false) }

    /// Queues bytes (and sends everything queued with `flush`). A client that already has more
    /// than `rules.maxBufferedBytes` unread is disconnected instead: the check comes before the
    /// write, so one large reply (a big folder's listing) is fine.
    func write(_ bytes: UnsafeRawBufferPointer, flush: Bool = false) {
        guard let transport, !isClosed, !disconnectIfBackedUp(transport, nextWrite: bytes.count) else { return }
        if flush {
            transport.writeAndFlush(bytes)
            unflushed = false
        } else {
            transport.write(bytes)
            unflushed = true
        }
    }

    /// `write` for a buffer (shared by every subscriber of a push: not copied).
    func write(_ buffer: ByteBuffer, flush: Bool = false) {
        guard let transport, !isClosed, !disconnectIfBackedUp(transport, nextWrite: buffer.readableBytes) else { return }
        if flush {
            transport.writeAndFlush(buffer)
            unflushed = false
        } else {
            transport.write(buffer)
            unflushed = true
        }
    }

    /// Sends everything written since the last flush.
    func flush() {
        guard unflushed, !isClosed else { return }
        unflushed = false
        transport?.flush()
    }

    /// Closes now; what is queued is dropped.
    func close() {
        guard let transport, !isClosed else { return }
        isClosed = true
        transport.close()
    }

    /// Sends what is queued, then closes; nothing more is carried out or written.
    func closeAfterFlush() {
        guard let transport, !isClosed else { return }
        isClosed = true
        transport.closeAfterFlush()
    }

    /// Disconnects a client that lets more than `maxBufferedBytes` pile up unread; true if it did.
    private func disconnectIfBackedUp(_ transport: LineTransport, nextWrite: Int) -> Bool {
        guard !transport.isWritable else { return false }
        let buffered = transport.bufferedBytes
        guard buffered > rules.maxBufferedBytes else { return false }
        logger.warning(
            "disconnecting \(rules.clientName) that is not reading its replies",
            metadata: ["unreadBytes": "\(buffered)", "nextWriteBytes": "\(nextWrite)"])
        close()
        return true
    }
}
