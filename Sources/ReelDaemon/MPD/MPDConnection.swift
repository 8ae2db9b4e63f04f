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

extension LineSession.Rules {
    /// MPD: its input buffer holds a line of 8192 bytes with its newline (a longer one closes
    /// the connection without a reply); a client that lets 8 MiB pile up unread is dropped
    /// (`max_output_buffer_size`).
    static let mpd = LineSession.Rules(
        connectionName: "an MPD connection", clientName: "an MPD client", maxLineBytes: 8191,
        maxBufferedBytes: 8 * 1024 * 1024, lineTooLongReply: nil)
}

/// Handles one MPD connection, as MPD's `Client` does (`src/client/Process.cxx`):
/// - the greeting `OK MPD 0.23.0` on connect;
/// - each line is one command, carried out in order (the `LineSession`: lines that arrive
///   while a command waits for the core are queued and reading pauses, so several commands in
///   one read each get their reply, in order);
/// - command lists (`command_list_begin` / `command_list_ok_begin` … `command_list_end`) run
///   nothing until the end, stop at the first error (its index in the ACK), print `list_OK`
///   after each command in `_ok_` mode, and may not grow past 2 MiB (the connection is closed);
/// - `idle`: events pile up per connection (`MPDEventHub` posts them) and `idle` returns at once
///   when one it asks for is pending (and then clears them all, as MPD 0.23); `noidle` while idling answers `OK`, while not idling
///   nothing at all; any other command while idling closes the connection;
/// - a line that does not start with a lowercase letter closes the connection without a reply;
/// - 60 s without a command closes it, except while idling (the hub's sweep);
/// - the end of the client's input closes it once what came before is answered (the session).
///
/// Threads: everything here runs on the session's event loop; handler replies from core threads
/// hop onto it.
final class MPDConnection: LineHandler {
    static let greeting = "OK MPD 0.23.0\n"
    /// MPD's `max_command_list_size` default: 2048 KiB.
    static let maxCommandListBytes = 2048 * 1024

    private let table: MPDCommandTable
    private let hub: MPDConnectionRegistry
    private let logger: Logger
    let client: MPDClient
    /// The connection's line session (it drops this handler when the connection closes).
    private let session: LineSession

    /// A command list being collected: its lines one after another in one buffer (no
    /// allocation per line), and where each ends.
    private struct ListBuilder {
        let okMode: Bool
        var text: [UInt8] = []
        var ends: [Int] = []
        var bytes = 0
    }
    private var list: ListBuilder?

    /// While idling: the subsystems asked for.
    private(set) var idling: MPDSubsystems?
    /// Events not yet reported to this client.
    private var pending: MPDSubsystems = []
    /// When the last command arrived (for the 60 s timeout).
    private(set) var lastActivity = NIODeadline.now()
    private var closed: Bool { session.isClosed }

    /// A session for MPD on `transport`, with a connection as its handler.
    static func open(
        on transport: LineTransport, table: MPDCommandTable, hub: MPDConnectionRegistry, client: MPDClient, logger: Logger
    ) -> LineSession {
        let session = LineSession(transport: transport, rules: .mpd, logger: logger)
        session.handler = MPDConnection(session: session, table: table, hub: hub, client: client, logger: logger)
        return session
    }

    /// The last handler of an MPD connection's pipeline, after its `LineFrameDecoder`.
    static func channelHandler(
        eventLoop: EventLoop, table: MPDCommandTable, hub: MPDConnectionRegistry, client: MPDClient, logger: Logger
    ) -> ChannelLineTransport {
        ChannelLineTransport(eventLoop: eventLoop, logger: logger) { transport in
            open(on: transport, table: table, hub: hub, client: client, logger: logger)
        }
    }

    private init(session: LineSession, table: MPDCommandTable, hub: MPDConnectionRegistry, client: MPDClient, logger: Logger) {
        self.session = session
        self.table = table
        self.hub = hub
        self.client = client
        self.logger = logger
        client.notify = { [weak self] events in self?.post(events) }
    }

    // MARK: LineHandler

    func sessionStarted() {
        hub.add(self)
        write(Self.greeting)
        flushOutput()
    }

    /// The client closed its side (the listener allows half-closed connections): what it sent
    /// is still answered, then the connection closes, as MPD closes a client at the end of its
    /// input; an idling one closes at once.
    var closesAtEndOfInput: Bool { true }

    func writableAgain() {}

    func sessionClosed() {
        hub.remove(self)
    }

    // MARK: Lines

    func handle(line: UnsafeRawBufferPointer) -> LineOutcome {
        lastActivity = .now()
        let text = String(decoding: line, as: UTF8.self)
        guard MPDTokenizer.looksLikeCommand(line) else {
            logger.debug("closing an MPD connection that sent a malformed line")
            close()
            return .answered
        }
        if list != nil, text == "idle" || text == "noidle" {
            close()
            return .answered
        }
        if text == "noidle" {
            if idling != nil {
                idling = nil
                write("OK\n")
                flushOutput()
            }
            return .answered
        }
        if idling != nil {
            logger.debug("closing an MPD connection that sent a command while idling")
            close()
            return .answered
        }
        if list != nil {
            if text == "command_list_end", let builder = list.take() {
                return run(Batch(text: builder.text, ends: builder.ends, okMode: builder.okMode))
            }
            // In place (`list!`), with no other reference to the lines alive: a second one
            // would make every append copy the whole list.
            list!.bytes += line.count + 1
            guard list!.bytes <= Self.maxCommandListBytes else {
                logger.info("closing an MPD connection whose command list passed 2 MiB")
                list = nil
                close()
                return .answered
            }
            list!.text.append(contentsOf: line)
            list!.ends.append(list!.text.count)
            return .answered
        }
        switch text {
        case "command_list_begin": list = ListBuilder(okMode: false)
        case "command_list_ok_begin": list = ListBuilder(okMode: true)
        default: return run(Batch(single: ()), first: line)
        }
        return .answered
    }

    /// A single command or a command list in progress.
    private final class Batch {
        /// A list's lines, one after another, and where each ends.
        let text: [UInt8]
        let ends: [Int]
        let okMode: Bool
        let isList: Bool
        var next = 0

        init(text: [UInt8], ends: [Int], okMode: Bool) {
            self.text = text
            self.ends = ends
            self.okMode = okMode
            isList = true
        }

        /// A single command: its line is not kept (`run` is given it, and carries it out during
        /// the session's `handle` call).
        init(single: Void) {
            text = []
            ends = [0]
            okMode = false
            isList = false
        }

        var count: Int { ends.count }

        func withLine<Result>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
            let start = index == 0 ? 0 : ends[index - 1]
            return text.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<ends[index]])) }
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

    /// Carries out a batch's commands in order; returns `.waiting` when one must wait, and is
    /// called again (on the event loop) when it is answered. Once it is answered, its replies
    /// are written (`flushOutput`).
    /// `first`: a single command's line (valid during the call only).
    private func run(_ batch: Batch, first: UnsafeRawBufferPointer? = nil) -> LineOutcome {
        while batch.next < batch.count {
            let index = batch.next
            batch.next += 1
            let resume = { [self] (result: Result<MPDResponse, MPDAck>) in
                guard !closed else { return }
                if answered(result, index: index, batch: batch) {
                    if run(batch) == .waiting { return }
                } else {
                    flushOutput()
                }
                session.lineAnswered()
            }
            let step: Step
            if index == 0, let first {
                step = perform(first, index: index, inList: batch.isList, resume: resume)
            } else {
                step = batch.withLine(index) { perform($0, index: index, inList: batch.isList, resume: resume) }
            }
            switch step {
            case .answered(let result):
                guard answered(result, index: index, batch: batch) else {
                    flushOutput()
                    return .answered
                }
            case .waiting:
                return .waiting
            case .closing:
                close()
                return .answered
            case .idle:
                flushOutput()
                return .answered
            }
        }
        write("OK\n")
        flushOutput()
        return .answered
    }

    /// Writes one command's result; false when the batch stops (an error).
    private func answered(_ result: Result<MPDResponse, MPDAck>, index: Int, batch: Batch) -> Bool {
        switch result {
        case .success(let body):
            write(body.bytes)
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

    /// Tokenizes, checks and runs one command.
    private func perform(
        _ line: UnsafeRawBufferPointer, index: Int, inList: Bool, resume: @escaping (Result<MPDResponse, MPDAck>) -> Void
    ) -> Step {
        let parsed: MPDCommandLine
        do throws(MPDTokenizer.Failure) {
            parsed = try MPDTokenizer.split(line)
        } catch {
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

        let loop = session.eventLoop
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
        guard !closed, idling == nil, !session.isBusy, lastActivity < deadline else { return }
        logger.debug("closing an MPD connection silent for 60 s")
        close()
    }

    // MARK: Output

    /// Replies waiting to be written: a command's lines and its `OK` go out as one buffer, in
    /// one write, when the batch ends (`flushOutput`).
    private var output: ByteBuffer?

    private func write(_ text: String) {
        guard !closed else { return }
        if output == nil { output = ByteBuffer() ; output!.reserveCapacity(max(128, text.utf8.count)) }
        output!.writeString(text)
    }

    /// A reply's lines: copied into `output` when small; a large one (a long listing) goes out
    /// as its own buffer, after what is waiting, and is not copied (and its storage is kept for
    /// the next large reply: `MPDReplyStorage`).
    private func write(_ lines: ByteBuffer) {
        guard !closed, lines.readableBytes > 0 else { return }
        guard lines.readableBytes >= Self.sentAsItIs else {
            if output == nil { output = ByteBuffer() ; output!.reserveCapacity(max(128, lines.readableBytes + 16)) }
            var lines = lines
            output!.writeBuffer(&lines)
            return
        }
        if let buffer = output.take() { session.write(buffer) }
        session.write(lines)
        MPDReplyStorage.shared.keep(lines)
    }

    /// Lines from this size on are written as their own buffer (`write(_:)`).
    static let sentAsItIs = 16 * 1024

    /// Writes what is waiting and flushes (the session drops a client with 8 MiB unread).
    private func flushOutput() {
        guard !closed else { return }
        if let buffer = output.take() { session.write(buffer) }
        session.flush()
    }

    private func close() {
        guard !closed else { return }
        hub.remove(self)
        // What was answered before the close still goes out (an ACK for a bad command name).
        if let buffer = output.take() { session.write(buffer) }
        session.closeAfterFlush()
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
