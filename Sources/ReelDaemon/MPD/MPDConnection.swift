// One MPD client: lines in, replies and idle notifications out, on the connection's event loop.

import Logging
import NIOCore
import ReelAudio
import ReelRuntime

/// Where connections register for idle events and the silence timeout (`MPDEventHub`).
/// Called on the connection's event loop.
protocol MPDConnectionRegistry: AnyObject {
    func add(_ connection: MPDConnection)
    func remove(_ connection: MPDConnection)
}

/// Handles one MPD connection, as MPD's `Client` does (`src/client/Process.cxx`):
/// - the greeting `OK MPD 0.23.0` on connect;
/// - each line is one command, carried out in order; lines that arrive while a command waits
///   for the core are queued (reading pauses), so several commands in one read each get their
///   reply, in order;
/// - command lists (`command_list_begin` / `command_list_ok_begin` … `command_list_end`) run
///   nothing until the end, stop at the first error (its index in the ACK), print `list_OK`
///   after each command in `_ok_` mode, and may not grow past 2 MiB (the connection is closed);
/// - `idle`: events pile up per connection (`MPDEventHub` posts them) and `idle` returns at once
///   when one it asks for is pending (and then clears them all, as MPD 0.23); `noidle` while idling answers `OK`, while not idling
///   nothing at all; any other command while idling closes the connection;
/// - a line that does not start with a lowercase letter closes the connection without a reply;
/// - 60 s without a command closes it, except while idling (the hub's sweep);
/// - the end of the client's input closes it once what came before is answered.
///
/// Threads: everything here runs on the channel's event loop; handler replies from core threads
/// hop onto it.
final class MPDConnection: ChannelInboundHandler {
    typealias InboundIn = LineFrame
    typealias OutboundOut = ByteBuffer

    static let greeting = "OK MPD 0.23.0\n"
    /// MPD's input buffer: a line of 8192 bytes with its newline; a longer one closes the
    /// connection without a reply.
    static let maxLineBytes = 8191
    /// MPD's `max_command_list_size` default: 2048 KiB.
    static let maxCommandListBytes = 2048 * 1024
    /// MPD's `max_output_buffer_size` default: a client that lets 8 MiB pile up is dropped.
    static let maxBufferedBytes = 8 * 1024 * 1024

    private let table: MPDCommandTable
    private let hub: MPDConnectionRegistry
    private let logger: Logger
    let client: MPDClient
    private var context: ChannelHandlerContext?

    /// A command list being collected.
    private struct ListBuilder {
        let okMode: Bool
        var lines: [ByteBuffer] = []
        var bytes = 0
    }
    private var list: ListBuilder?

    /// While idling: the subsystems asked for.
    private(set) var idling: MPDSubsystems?
    /// Events not yet reported to this client.
    private var pending: MPDSubsystems = []
    /// When the last command arrived (for the 60 s timeout).
    private(set) var lastActivity = NIODeadline.now()
    /// A command (or list) is being carried out, possibly waiting for the core.
    private(set) var busy = false
    private var waitingLines = CircularBuffer<ByteBuffer>()
    private var draining = false
    /// Reading was paused (`autoRead` off) because lines were waiting; turned on again once they are done.
    private var readingPaused = false
    private var closed = false

    init(table: MPDCommandTable, hub: MPDConnectionRegistry, client: MPDClient, logger: Logger) {
        self.table = table
        self.hub = hub
        self.client = client
        self.logger = logger
        client.notify = { [weak self] events in self?.post(events) }
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private var started = false
    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        hub.add(self)
        write(Self.greeting)
        flushOutput()
    }

    func channelInactive(context: ChannelHandlerContext) {
        tearDown()
        context.fireChannelInactive()
    }

    /// The client closed its side (the listener allows half-closed connections): what it sent
    /// is still answered, then the connection closes, as MPD closes a client at the end of its
    /// input; an idling one closes at once. (It lingered, half open, until its first failed
    /// write or forever while idling, and kept its channels.)
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        inputClosed = true
        closeIfInputDone()
    }

    private var inputClosed = false

    private func closeIfInputDone() {
        guard inputClosed, !closed, !busy, waitingLines.isEmpty else { return }
        close()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        tearDown()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closed else { return }
        switch unwrapInboundIn(data) {
        case .tooLong:
            logger.info("closing an MPD connection that sent a line over 8 KiB")
            close()
        case .line(let line):
            if busy || !waitingLines.isEmpty {
                waitingLines.append(line)
                if !readingPaused {
                    readingPaused = true
                    context.channel.setOption(.autoRead, value: false).whenFailure { _ in }
                }
            } else {
                handleLine(line)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flushOutput()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.debug("MPD connection error", metadata: ["error": "\(error)"])
        close()
    }

    // MARK: Lines

    private func handleLine(_ line: ByteBuffer) {
        lastActivity = .now()
        let text = line.getString(at: line.readerIndex, length: line.readableBytes) ?? ""
        let isCommand = line.withUnsafeReadableBytes { MPDTokenizer.looksLikeCommand($0) }
        guard isCommand else {
            logger.debug("closing an MPD connection that sent a malformed line")
            close()
            return
        }
        if list != nil, text == "idle" || text == "noidle" {
            close()
            return
        }
        if text == "noidle" {
            if idling != nil {
                idling = nil
                write("OK\n")
                flushOutput()
            }
            return
        }
        if idling != nil {
            logger.debug("closing an MPD connection that sent a command while idling")
            close()
            return
        }
        if list != nil {
            if text == "command_list_end", let builder = list.take() {
                run(Batch(lines: builder.lines, okMode: builder.okMode, isList: true))
                return
            }
            // In place (`list!`), with no other reference to the lines alive: a second one
            // would make every append copy the whole list.
            list!.bytes += line.readableBytes + 1
            guard list!.bytes <= Self.maxCommandListBytes else {
                logger.info("closing an MPD connection whose command list passed 2 MiB")
                list = nil
                close()
                return
            }
            list!.lines.append(line)
            return
        }
        switch text {
        case "command_list_begin": list = ListBuilder(okMode: false)
        case "command_list_ok_begin": list = ListBuilder(okMode: true)
        default: run(Batch(lines: [line], okMode: false, isList: false))
        }
    }

    /// A single command or a command list in progress.
    private final class Batch {
        let lines: [ByteBuffer]
        let okMode: Bool
        let isList: Bool
        var next = 0
        init(lines: [ByteBuffer], okMode: Bool, isList: Bool) {
            self.lines = lines
            self.okMode = okMode
            self.isList = isList
        }
    }

    private enum Step {
        /// The command answered: go on with the next.
        case answered(Result<MPDResponse, MPDAck>)
        /// The command answers later (`resume` is called on the event loop).
        case waiting
        /// The reply is written and the connection closes (a malformed command name, `close`).
        case closing
        /// `idle` began (or answered at once): no `OK` from the batch.
        case idle
    }

    /// Carries out a batch's commands in order; returns when one must wait, and is called
    /// again (on the event loop) when it is answered.
    private func run(_ batch: Batch) {
        busy = true
        while batch.next < batch.lines.count {
            let index = batch.next
            batch.next += 1
            let step = perform(batch.lines[index], index: index, inList: batch.isList) { [self] result in
                guard !closed else { return }
                guard answered(result, index: index, batch: batch) else { return finish() }
                run(batch)
            }
            switch step {
            case .answered(let result):
                guard answered(result, index: index, batch: batch) else { return finish() }
            case .waiting:
                return
            case .closing:
                busy = false
                close()
                return
            case .idle:
                return finish()
            }
        }
        write("OK\n")
        finish()
    }

    /// Writes one command's result; false when the batch stops (an error).
    private func answered(_ result: Result<MPDResponse, MPDAck>, index: Int, batch: Batch) -> Bool {
        switch result {
        case .success(let body):
            if !body.text.isEmpty { write(body.text) }
            if let binary = body.binary {
                write("binary: \(binary.count)\n")
                output?.writeBytes(binary)
                write("\n")
            }
            if batch.okMode { write("list_OK\n") }
            return true
        case .failure(let ack):
            write(ack.line(index: index))
            return false
        }
    }

    private func finish() {
        busy = false
        flushOutput()
        runWaitingLines()
    }

    /// Carries out the lines that arrived while the connection was busy, then reads again.
    private func runWaitingLines() {
        guard !draining else { return }
        draining = true
        defer { draining = false }
        while !busy, !closed, let line = waitingLines.popFirst() {
            handleLine(line)
        }
        closeIfInputDone()
        if readingPaused, waitingLines.isEmpty, !closed, let channel = context?.channel {
            readingPaused = false
            channel.setOption(.autoRead, value: true).whenFailure { _ in }
        }
    }

    /// Tokenizes, checks and runs one command.
    private func perform(
        _ line: ByteBuffer, index: Int, inList: Bool, resume: @escaping (Result<MPDResponse, MPDAck>) -> Void
    ) -> Step {
        let tokenized = line.withUnsafeReadableBytes { bytes -> Result<MPDCommandLine, MPDTokenizer.Failure> in
            do throws(MPDTokenizer.Failure) {
                return .success(try MPDTokenizer.split(bytes))
            } catch {
                return .failure(error)
            }
        }
        let parsed: MPDCommandLine
        switch tokenized {
        case .success(let line):
            parsed = line
        case .failure(let error):
            switch error {
            case .badName(let message):
                write(MPDAck(.unknown, message, command: "").line(index: index))
                return .closing
            case .badArgument(let message):
                return .answered(.failure(MPDAck(.unknown, message, command: "")))
            }
        }
        guard let command = table.command(named: parsed.name) else {
            return .answered(.failure(MPDAck(.unknown, "unknown command \"\(parsed.name)\"", command: "")))
        }
        let request = MPDRequest(name: command.name, arguments: parsed.arguments, client: client, table: table)
        do throws(MPDAck) {
            try command.check(request)
        } catch {
            return .answered(.failure(named(error, command.name)))
        }
        switch command.name {
        case "close":
            return .closing
        case "idle":
            if inList { return .closing }
            do throws(MPDAck) {
                try startIdle(MPDSubsystems.parse(parsed.arguments))
                return .idle
            } catch {
                return .answered(.failure(named(error, command.name)))
            }
        default:
            break
        }

        guard let loop = context?.eventLoop else { return .closing }
        let box = ReplyBox()
        let bound = NIOLoopBound(resume, eventLoop: loop)
        let name = command.name
        command.run(request) { result in
            let result = result.mapError { Self.named($0, name) }
            if loop.inEventLoop, box.takeSynchronous(result) { return }
            loop.execute { bound.value(result) }
        }
        if let result = box.finishCall() { return .answered(result) }
        return .waiting
    }

    private func named(_ ack: MPDAck, _ name: String) -> MPDAck { Self.named(ack, name) }

    private static func named(_ ack: MPDAck, _ name: String) -> MPDAck {
        var ack = ack
        if ack.command == nil { ack.command = name }
        return ack
    }

    // MARK: Idle

    private func startIdle(_ subsystems: MPDSubsystems) {
        idling = subsystems
        notifyIfIdle()
    }

    /// Events from the hub (on the event loop): kept, and reported now if the client idles on one.
    func post(_ events: MPDSubsystems) {
        guard !closed else { return }
        pending.formUnion(events)
        if notifyIfIdle() { flushOutput() }
    }

    @discardableResult
    private func notifyIfIdle() -> Bool {
        guard let wanted = idling else { return false }
        let due = pending.intersection(wanted)
        guard !due.isEmpty else { return false }
        // As MPD 0.23 (whose version Reel announces): an idle that returns clears every pending
        // event, those it did not ask for too.
        pending = []
        idling = nil
        lastActivity = .now()
        write(due.changedLines + "OK\n")
        return true
    }

    /// Closes the connection when it has been silent since before `deadline` and is not idling
    /// or waiting for the core (MPD's `connection_timeout`).
    func expireIfSilent(since deadline: NIODeadline) {
        guard !closed, idling == nil, !busy, lastActivity < deadline else { return }
        logger.debug("closing an MPD connection silent for 60 s")
        close()
    }

    // MARK: Output

    /// Replies waiting to be written: a command's lines and its `OK` go out as one buffer, in
    /// one write, when the batch ends (`flushOutput`).
    private var output: ByteBuffer?

    private func write(_ text: String) {
        guard let context, !closed else { return }
        if output == nil { output = context.channel.allocator.buffer(capacity: max(128, text.utf8.count)) }
        output!.writeString(text)
    }

    /// Writes what is waiting and flushes. A client that already has 8 MiB unread is dropped.
    private func flushOutput() {
        guard let context, !closed else { return }
        if let buffer = output.take() {
            if !context.channel.isWritable {
                let buffered = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
                if buffered > Self.maxBufferedBytes {
                    logger.warning(
                        "disconnecting an MPD client that is not reading its replies", metadata: ["unreadBytes": "\(buffered)"])
                    close()
                    return
                }
            }
            context.write(wrapOutboundOut(buffer), promise: nil)
        }
        context.flush()
    }

    private func close() {
        guard !closed else { return }
        closed = true
        hub.remove(self)
        guard let context else { return }
        // What was answered before the close still goes out (an ACK for a bad command name).
        if let buffer = output.take() { context.write(wrapOutboundOut(buffer), promise: nil) }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    private func tearDown() {
        closed = true
        hub.remove(self)
    }
}

/// Tells a handler's reply apart: given during the handler call on the event loop (carried on
/// at once, without a hop), or later (hops to the loop). Touched on the event loop only until
/// `finishCall`, then read by the reply on any thread under its lock.
private final class ReplyBox: @unchecked Sendable {
    private let lock = Locked<State>(State())
    private struct State {
        var calling = true
        var result: Result<MPDResponse, MPDAck>?
    }

    /// True when the reply came during the call and was kept for `finishCall`.
    func takeSynchronous(_ result: Result<MPDResponse, MPDAck>) -> Bool {
        lock.withLock { state in
            guard state.calling else { return false }
            state.result = result
            return true
        }
    }

    /// The reply given during the call, if any; later replies hop to the loop.
    func finishCall() -> Result<MPDResponse, MPDAck>? {
        lock.withLock { state in
            state.calling = false
            return state.result
        }
    }
}
