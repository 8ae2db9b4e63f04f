// watch: follow the player, recorder and queue streams. On a terminal, one line redrawn in place
// with a progress bar, the entry's place in the queue (and the recording, while there is one);
// otherwise one line per change of the displayed text, for scripts and logs.

import ArgumentParser
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Follow the player and the recorder live until interrupted.",
        discussion: """
            On a terminal, redraws one progress line, with the queue entry being played and the \
            queue's length, (2/14), and the recording's elapsed time and level while recording; \
            when stdout is not a terminal, prints a line each time the player's state, \
            whole-second position or place in the queue changes, and one per second recorded. \
            Ctrl-C ends it (exit 0); if the daemon goes away it exits 3.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Option(help: ArgumentHelp("Seconds between updates while playing (0.02 to 3600; the daemon's default is 0.25).", valueName: "seconds"))
    var interval: Double?

    func validate() throws {
        if let interval, !(interval >= 0.02 && interval <= 3600) {
            throw ValidationError("--interval must be from 0.02 to 3600 seconds, not \(interval)")
        }
    }

    func run() throws {
        let interruptFD = SignalPipe.install([SIGINT, SIGTERM, SIGHUP])
        let client = try connection.connect()
        client.interruptFDs = [interruptFD]
        var params: JSONObject = ["stream": "player"]
        if let interval { params["interval"] = .double(interval) }
        // Interrupted before the first update: CLIError.interrupted, exit 0 quietly.
        _ = try client.call("subscribe", params)
        params["stream"] = "recorder"
        _ = try client.call("subscribe", params)
        _ = try Self.subscribeToQueue(client)

        let display: WatchDisplay = isatty(1) != 0 ? TerminalDisplay() : PlainDisplay()
        var place = QueuePlace()
        var player: PlayerState?
        while true {
            let event: DaemonClient.Event
            do throws(CLIError) {
                event = try client.nextEvent()
            } catch {
                display.finish()
                throw error
            }
            switch event {
            case .notification("player.state", let params):
                do throws(CLIError) {
                    let state: PlayerState
                    do {
                        state = try PlayerState(json: .object(params))
                    } catch {
                        throw CLIError.unexpectedReply("subscribe", error)
                    }
                    player = state
                    try place.follow(entry: state.entry, client)
                    display.show(state, place: place.text, name: place.name)
                } catch {
                    display.finish()
                    if error.exitCode == 0 { return }
                    throw error
                }
            case .notification("queue.changed", let params):
                do throws(CLIError) {
                    try place.changed(QueueReader.decodeSummary(.object(params), from: "subscribe"), client)
                    if let player { display.show(player, place: place.text, name: place.name) }
                } catch {
                    display.finish()
                    if error.exitCode == 0 { return }
                    throw error
                }
            case .notification("recorder.state", let params):
                do {
                    display.show(try RecorderState(json: .object(params)))
                } catch {
                    display.finish()
                    throw CLIError.unexpectedReply("subscribe", error)
                }
            case .notification:
                continue
            case .interrupted:
                display.finish()
                return
            case .closed:
                display.finish()
                throw CLIError(
                    exitCode: CLIError.unreachableExitCode,
                    message: "reeld at \(client.socketPath) went away (the connection was closed)")
            }
        }
    }
}

extension WatchCommand {
    /// Subscribes to the queue stream; false when the daemon refuses it (one without a queue,
    /// protocol 1): then no place is shown.
    static func subscribeToQueue(_ client: DaemonClient) throws(CLIError) -> Bool {
        do throws(CLIError) {
            _ = try client.call("subscribe", ["stream": "queue"])
            return true
        } catch {
            guard error.exitCode == CLIError.refusedExitCode else { throw error }
            return false
        }
    }
}

/// Where the entry being played is in the queue: looked up when the entry or the queue changes.
struct QueuePlace {
    private(set) var entry: Int?
    /// 1-based; nil when nothing is played or it is not in the queue.
    private(set) var position: Int?
    private(set) var length = 0
    /// The queue version `position` was found in.
    private var version: Int?

    /// What the entry is called, as `reel queue` names it (`Artist - Title`, the file's name or
    /// the recording's path); nil when no entry is played.
    private(set) var name: String?

    /// `2/14`, or nil when no entry is played.
    var text: String? { position.map { "\($0)/\(length)" } }

    /// The player's entry is `entry` now.
    mutating func follow(entry: Int?, _ client: DaemonClient) throws(CLIError) {
        guard entry != self.entry || (entry != nil && version == nil) else { return }
        self.entry = entry
        try lookUp(client)
    }

    /// The queue changed: its length, and perhaps the entry's position.
    mutating func changed(_ summary: QueueSummary, _ client: DaemonClient) throws(CLIError) {
        length = summary.length
        guard summary.version != version else { return }
        version = nil
        try lookUp(client)
    }

    private mutating func lookUp(_ client: DaemonClient) throws(CLIError) {
        guard let entry else {
            position = nil
            name = nil
            return
        }
        let found = try QueueReader.entry(id: entry, hint: position, client)
        position = found.entry.map { $0.position + 1 }
        name = found.entry.map(Output.entryName)
        length = found.summary.length
        version = found.summary.version
    }
}

/// How `watch` shows each state.
protocol WatchDisplay: AnyObject {
    /// `place` is the entry's place in the queue, `2/14`; `name` what it is called (`Artist -
    /// Title`, the file's name), nil to name the source's path.
    func show(_ state: PlayerState, place: String?, name: String?)
    func show(_ state: RecorderState)
    /// Leaves the output tidy (cursor back, final newline).
    func finish()
}

/// One line per change of the status text (whole seconds), written at once.
final class PlainDisplay: WatchDisplay {
    private var last: String?
    private var lastRecorder: String?

    init() {}

    func show(_ state: PlayerState, place: String?, name: String?) {
        var text = Output.statusLine(state)
        if let place { text += "  (\(place))" }
        guard text != last else { return }
        last = text
        Output.line(text)
    }

    /// The first idle state says nothing; after a recording, its end is shown once.
    func show(_ state: RecorderState) {
        let text = Output.recorderLine(state)
        guard text != lastRecorder else { return }
        if lastRecorder == nil && state.state == .idle {
            lastRecorder = text
            return
        }
        lastRecorder = text
        Output.line(text)
    }

    func finish() {}
}

/// A line redrawn in place, cursor hidden while watching.
final class TerminalDisplay: WatchDisplay {
    private var last: String?
    private var finished = false
    private var player = PlayerState.stopped
    private var place: String?
    private var name: String?
    private var recorder = RecorderState.idle

    init() {
        Output.write("\u{1B}[?25l", to: 1)
    }

    func show(_ state: PlayerState, place: String?, name: String?) {
        player = state
        self.place = place
        self.name = name ?? state.source.map(Output.entryName)
        redraw()
    }

    func show(_ state: RecorderState) {
        recorder = state
        redraw()
    }

    private func redraw() {
        var extras: [String] = []
        if let place { extras.append("(\(place))") }
        if recorder.state == .recording {
            extras.append("REC \(formatSeconds(recorder.elapsed))" + (recorder.peak.map { " \(Int($0.rounded())) dB" } ?? ""))
        }
        let text = Output.terminalLine(player, name: name, extras: extras, width: Output.terminalWidth())
        guard text != last else { return }
        last = text
        Output.write("\r\(text)\u{1B}[K", to: 1)
    }

    func finish() {
        guard !finished else { return }
        finished = true
        Output.write("\u{1B}[?25h\n", to: 1)
    }
}

/// The write end of the self-pipe, for the signal handler.
nonisolated(unsafe) private var signalPipeWriteFD: Int32 = -1

/// Turns signals into a readable byte on a pipe, so a poll(2) loop can end cleanly.
enum SignalPipe {
    /// Installs handlers for `signals`; returns the read end of the pipe.
    static func install(_ signals: [Int32]) -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return -1 }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        signalPipeWriteFD = fds[1]
        // A parent may have started us with these signals blocked (Foundation's Process does);
        // a blocked SIGINT would never reach the handler, so unblock them.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in signals { sigaddset(&unblock, number) }
        _ = sigprocmask(SIG_UNBLOCK, &unblock, nil)
        for number in signals {
            _ = signal(number) { _ in
                let saved = errno
                var byte: UInt8 = 1
                _ = write(signalPipeWriteFD, &byte, 1)
                errno = saved
            }
        }
        return fds[0]
    }
}
