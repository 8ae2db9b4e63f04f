// One client of the control socket on a PollLoop: reads and frames its lines, sends its output.

import CEpoll
import Glibc
import NIOCore

/// What a `PollConnection` tells the protocol that speaks on it, on the loop's thread.
protocol PollConnectionDelegate: AnyObject {
    /// One line without its `\n` (nor a `\r` before it). The bytes are valid during the call only.
    func received(line: UnsafeRawBufferPointer)
    /// A line grew past the limit; nothing more is read.
    func receivedLineTooLong()
    /// The client closed its side, after its last line (an unterminated last line is still a line).
    func inputClosed()
    /// The client reads again: its unread output fell below the low-water mark.
    func writableAgain()
    /// The connection is closed, by either side (once).
    func connectionClosed()
}

/// A connected stream socket (non-blocking) on a `PollLoop`. Framing: lines end in `\n`, a `\r`
/// before it is dropped, a line longer than `maxLineLength` ends the input. Output is queued by
/// `write` and sent by `flush` with `send`; what the client does not take at once waits for
/// `EPOLLOUT`. It is watched level-triggered: one `read` per wake-up of up to the loop's
/// buffer, so a client that sends a lot cannot keep the others waiting.
///
/// Threads: the loop's thread only (hence `@unchecked Sendable`: it hands itself to the loop).
final class PollConnection: PollHandler, LineTransport, @unchecked Sendable {
    /// The longest line unless the listener says otherwise.
    static let maxLineLength = 1 << 20
    static let highWaterMark = 64 * 1024
    static let lowWaterMark = 32 * 1024

    let descriptor: Int32
    let maxLineLength: Int
    private let loop: PollLoop
    /// The protocol on this connection; dropped when it closes.
    var delegate: PollConnectionDelegate?
    /// Told once when the connection closes (the listener's registry).
    var onClose: ((PollConnection) -> Void)?

    /// The start of a line whose end has not arrived, and how much of it was searched for `\n`.
    private var partial: [UInt8] = []
    private var scanned = 0
    /// Output not yet taken by the client: `output[outputStart...]`.
    private var output: [UInt8] = []
    private var outputStart = 0
    private var waitingForOutput = false
    private var belowWater = true
    private var readingPaused = false
    private var inputEnded = false
    private var lineTooLong = false
    private var failed = false
    private var closeWhenFlushed = false
    private(set) var isClosed = false
    private var interest: UInt32 = 0

    init(descriptor: Int32, loop: PollLoop, maxLineLength: Int = PollConnection.maxLineLength) {
        self.descriptor = descriptor
        self.maxLineLength = maxLineLength
        self.loop = loop
    }

    /// Starts watching the descriptor (on the loop).
    func start() throws {
        interest = EPOLLIN.rawValue
        try loop.register(descriptor, events: interest, handler: self)
    }

    // MARK: LineTransport

    var eventLoop: EventLoop { loop }
    var isWritable: Bool { belowWater && !isClosed }
    var bufferedBytes: Int { output.count - outputStart }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard !isClosed, !failed, !bytes.isEmpty else { return }
        output.append(contentsOf: bytes)
        if bufferedBytes > Self.highWaterMark { belowWater = false }
    }

    func write(_ line: ByteBuffer) {
        line.withUnsafeReadableBytes { write($0) }
    }

    func writeAndFlush(_ line: ByteBuffer) {
        line.withUnsafeReadableBytes { writeAndFlush($0) }
    }

    func writeAndFlush(_ bytes: UnsafeRawBufferPointer) {
        guard !isClosed, !failed else { return }
        guard bufferedBytes == 0 else {
            write(bytes)
            flush()
            return
        }
        // Nothing queued: send straight from the caller's bytes (a reply, or a push shared by
        // every subscriber); only what the client cannot take now is copied.
        let sent = send(bytes)
        if sent >= 0, sent < bytes.count {
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[sent...]))
            if bufferedBytes > Self.highWaterMark { belowWater = false }
            waitForOutput()
        }
    }

    func flush() {
        guard !isClosed, !failed, !waitingForOutput, bufferedBytes > 0 else { return }
        sendQueued()
    }

    func pauseReading() {
        readingPaused = true
        updateInterest()
    }

    func resumeReading() {
        readingPaused = false
        updateInterest()
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        loop.deregister(descriptor)
        Glibc.close(descriptor)
        output = []
        partial = []
        let delegate = self.delegate
        self.delegate = nil
        delegate?.connectionClosed()
        onClose?(self)
        onClose = nil
    }

    func closeAfterFlush() {
        guard !isClosed else { return }
        if bufferedBytes == 0 || failed {
            close()
        } else {
            closeWhenFlushed = true
            flush()
        }
    }

    // MARK: Readiness

    func pollReady(_ events: UInt32) {
        if events & EPOLLERR.rawValue != 0 {
            close()
            return
        }
        if events & (EPOLLIN.rawValue | EPOLLHUP.rawValue) != 0, !inputEnded, !lineTooLong {
            readOnce()
        }
        guard !isClosed else { return }
        if events & EPOLLOUT.rawValue != 0, waitingForOutput {
            waitingForOutput = false
            sendQueued()
        }
        // Hung up on both sides: nothing can be sent any more.
        if events & EPOLLHUP.rawValue != 0, inputEnded || lineTooLong, !isClosed {
            close()
        }
    }

    private func readOnce() {
        let buffer = loop.readBuffer
        let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
        if count > 0 {
            frame(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        } else if count == 0 {
            endOfInput()
        } else if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            close()
        }
    }

    /// Hands every complete line to the delegate; keeps the rest for the next read. Lines that
    /// arrive whole in one read are handed over from the loop's buffer, without a copy.
    private func frame(_ bytes: UnsafeRawBufferPointer) {
        if partial.isEmpty {
            let consumed = deliverLines(in: bytes, searchingFrom: 0)
            guard !isClosed, !lineTooLong, consumed < bytes.count else { return }
            partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
        } else {
            partial.append(contentsOf: bytes)
            let searchFrom = scanned
            let consumed = partial.withUnsafeBytes { deliverLines(in: $0, searchingFrom: searchFrom) }
            guard !isClosed, !lineTooLong else { return }
            partial.removeFirst(consumed)
        }
        scanned = partial.count
        if partial.count > maxLineLength { tooLong() }
    }

    /// Hands over the complete lines in `bytes` (the first `\n` looked for from `searchFrom`);
    /// returns the bytes they took, newlines included.
    private func deliverLines(in bytes: UnsafeRawBufferPointer, searchingFrom searchFrom: Int) -> Int {
        var consumed = 0
        var from = searchFrom
        while !isClosed, !lineTooLong, let newline = bytes[from...].firstIndex(of: UInt8(ascii: "\n")) {
            deliver(UnsafeRawBufferPointer(rebasing: bytes[consumed..<newline]))
            consumed = newline + 1
            from = consumed
        }
        return consumed
    }

    private func deliver(_ line: UnsafeRawBufferPointer) {
        if line.count > maxLineLength {
            tooLong()
            return
        }
        if line.last == UInt8(ascii: "\r") {
            delegate?.received(line: UnsafeRawBufferPointer(rebasing: line.dropLast()))
        } else {
            delegate?.received(line: line)
        }
    }

    private func tooLong() {
        lineTooLong = true
        partial = []
        updateInterest()
        delegate?.receivedLineTooLong()
    }

    private func endOfInput() {
        inputEnded = true
        updateInterest()
        if !partial.isEmpty {
            let last = partial
            partial = []
            last.withUnsafeBytes { deliver($0) }
        }
        guard !isClosed else { return }
        delegate?.inputClosed()
    }

    // MARK: Sending

    /// Sends what it can; -1 after an error (the connection closes right after the caller
    /// returns, since the caller may be in the middle of a round of writes).
    private func send(_ bytes: UnsafeRawBufferPointer) -> Int {
        while true {
            let sent = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            if sent >= 0 { return sent }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            default:
                failed = true
                loop.execute { [self] in close() }
                return -1
            }
        }
    }

    private func sendQueued() {
        let sent = output.withUnsafeBytes { all in
            send(UnsafeRawBufferPointer(rebasing: all[outputStart...]))
        }
        guard sent >= 0 else { return }
        outputStart += sent
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputStart = 0
            updateInterest()
            if closeWhenFlushed {
                close()
                return
            }
        } else {
            if outputStart >= 64 * 1024 {
                output.removeFirst(outputStart)
                outputStart = 0
            }
            waitForOutput()
        }
        if !belowWater, bufferedBytes < Self.lowWaterMark {
            belowWater = true
            delegate?.writableAgain()
        }
    }

    private func waitForOutput() {
        waitingForOutput = true
        updateInterest()
    }

    private func updateInterest() {
        guard !isClosed else { return }
        var wanted: UInt32 = 0
        if !readingPaused, !inputEnded, !lineTooLong { wanted |= EPOLLIN.rawValue }
        if waitingForOutput { wanted |= EPOLLOUT.rawValue }
        guard wanted != interest else { return }
        interest = wanted
        loop.modify(descriptor, events: wanted)
    }
}
