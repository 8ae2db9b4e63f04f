// record [FOLDER]: make a recording in the tree and follow it; record stop / record cancel.

import ArgumentParser
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record from the capture device into the tree.",
        discussion: """
            `reel record [FOLDER]` starts a recording in FOLDER (a tree path, default /; created \
            with its parents if it does not exist yet) and follows \
            it: on a terminal, the elapsed time and a level meter until Enter or Ctrl-C, which \
            stop it and keep it. When stdin is not a terminal, a line on stdin or SIGINT/SIGTERM \
            stops it. With --detach it only starts. `reel record stop` and `reel record cancel` \
            end the recording in progress (cancel deletes it). A folder named like a \
            subcommand is written with its slash: `reel record /stop`.
            """,
        subcommands: [RecordStartCommand.self, RecordStopCommand.self, RecordCancelCommand.self],
        defaultSubcommand: RecordStartCommand.self)
}

struct RecordStartCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start", abstract: "Start a recording and follow it (the default).")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The tree path of the folder to record into.", valueName: "folder"))
    var folder: String = "/"

    @Option(help: ArgumentHelp("The recording's name (default: Recording YYYY-MM-DD HH.MM.SS).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("flac, wav, ogg or opus (default: the daemon's record_format).", valueName: "format"))
    var format: String?

    @Option(help: ArgumentHelp("Stop by itself after this many seconds.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Sample rate in Hz (default: the daemon's record_sample_rate).", valueName: "hz"))
    var rate: Int?

    @Option(help: ArgumentHelp("Channels (default: the daemon's record_channels).", valueName: "n"))
    var channels: Int?

    @Flag(help: "Start the recording and return at once.")
    var detach = false

    func validate() throws {
        try TreePath.validate(folder, role: "folder")
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, not \(duration)")
        }
    }

    func run() throws {
        var params: JSONObject = ["folderPath": .string(folder)]
        if let name { params["name"] = .string(name) }
        if let format { params["format"] = .string(format) }
        if let duration { params["maxDuration"] = .double(duration) }
        if let rate { params["sampleRate"] = .int(Int64(rate)) }
        if let channels { params["channels"] = .int(Int64(channels)) }

        let client = try connection.connect()
        for created in try Self.makeFolders(folder, client: client) { Output.line("created \(created)") }
        if detach {
            let result = try client.call("recorder.start", params)
            if output.json {
                Output.line(result.jsonString)
            } else {
                let state = try decodeRecorderState(result, from: "recorder.start")
                Output.line("recording \(state.item?.path ?? "?") \(state.format.map(Output.formatText) ?? "")")
            }
            return
        }

        let signalFD = SignalPipe.install([SIGINT, SIGTERM, SIGHUP])
        client.interruptFDs = [signalFD]
        // Subscribe first, so the end of a short recording is not missed.
        _ = try client.call("subscribe", ["stream": "recorder", "interval": 0.1])
        let started = try decodeRecorderState(try client.call("recorder.start", params), from: "recorder.start")
        let path = started.item?.path ?? "?"
        let id = started.item?.id
        // The subscription's first push (the state before the start) may still be queued.
        var sawOwnRecording = false
        let onTerminal = isatty(0) != 0 && isatty(1) != 0
        let display: RecordDisplay = onTerminal ? TerminalRecordDisplay() : PlainRecordDisplay()
        display.started(started)
        // stdin: Enter (or any line) stops; at end of input it is no longer watched.
        var watchingStdin = true
        client.interruptFDs = [signalFD, 0]

        while true {
            let event: DaemonClient.Event
            do {
                event = try client.nextEvent()
            } catch {
                display.finish()
                throw error
            }
            switch event {
            case .notification("recorder.state", let params):
                let state: RecorderState
                do {
                    state = try RecorderState(json: .object(params))
                } catch {
                    display.finish()
                    throw CLIError.unexpectedReply("subscribe", error)
                }
                if state.state == .recording {
                    if state.item?.id == id { sawOwnRecording = true }
                    display.show(state)
                    continue
                }
                guard sawOwnRecording || state.item?.id == id else { continue }
                // It ended by itself: the length limit, a full disk, a failed device, deletion.
                display.finish()
                if let item = state.item, item.id == id {
                    Output.line(savedLine(item))
                } else {
                    Output.line("\(path) was deleted while it was being recorded")
                }
                if let error = state.error {
                    throw CLIError(exitCode: CLIError.refusedExitCode, message: error.message)
                }
                return
            case .notification:
                continue
            case .interrupted:
                if watchingStdin && Self.readable(0) && !Self.readLine() {
                    // End of input: keep recording until a signal.
                    watchingStdin = false
                    client.interruptFDs = [signalFD]
                    continue
                }
                display.finish()
                client.interruptFDs = []
                let item = try decodeItem(try client.call("recorder.stop"), from: "recorder.stop")
                Output.line(savedLine(item))
                return
            case .closed:
                display.finish()
                throw CLIError(
                    exitCode: CLIError.unreachableExitCode,
                    message: "reeld at \(client.socketPath) went away while recording \(path); the take is kept up to the last second")
            }
        }
    }

    /// Creates `path` and the folders above it that do not exist yet; returns what was created.
    static func makeFolders(_ path: String, client: DaemonClient) throws(CLIError) -> [String] {
        let names = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var created: [String] = []
        var parent = "/"
        for name in names {
            let current = parent == "/" ? "/\(name)" : "\(parent)/\(name)"
            do {
                _ = try client.call("library.get", ["path": .string(current)])
            } catch where error.reason == "not_found" {
                _ = try client.call("library.createFolder", ["parentPath": .string(parent), "name": .string(name)])
                created.append(current)
            }
            parent = current
        }
        return created
    }

    func savedLine(_ item: Item) -> String {
        var details = [Output.duration(item)]
        if let format = item.format { details.append("\(format.codec) \(format.sampleRate) Hz \(format.channels) ch") }
        return "saved \(item.path) (\(details.joined(separator: ", ")))"
    }

    static func readable(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }

    /// Reads what stdin has; false at end of input.
    static func readLine() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        return count > 0 || (count < 0 && errno == EINTR)
    }
}

struct RecordStopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop", abstract: "Finish the recording in progress and keep it.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    func run() throws {
        let result = try connection.connect().call("recorder.stop")
        if output.json {
            Output.line(result.jsonString)
            return
        }
        let item = try decodeItem(result, from: "recorder.stop")
        Output.line("saved \(item.path) (\(Output.duration(item)))")
    }
}

struct RecordCancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Stop the recording in progress and delete it.")

    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        _ = try connection.connect().call("recorder.cancel")
        Output.line("cancelled")
    }
}

func decodeRecorderState(_ value: JSONValue, from method: String) throws(CLIError) -> RecorderState {
    do {
        return try RecorderState(json: value)
    } catch {
        throw CLIError.unexpectedReply(method, error)
    }
}

/// How `record` shows a recording in progress.
protocol RecordDisplay: AnyObject {
    func started(_ state: RecorderState)
    func show(_ state: RecorderState)
    func finish()
}

/// For scripts and logs: one line at the start, one per whole second recorded.
final class PlainRecordDisplay: RecordDisplay {
    private var lastSecond = -1

    func started(_ state: RecorderState) {
        Output.line("recording \(state.item?.path ?? "?") \(state.format.map(Output.formatText) ?? "")")
    }

    func show(_ state: RecorderState) {
        let second = Int(state.elapsed)
        guard second != lastSecond else { return }
        lastSecond = second
        Output.line(Output.recorderLine(state))
    }

    func finish() {}
}

/// A line redrawn in place: elapsed time and a level meter.
final class TerminalRecordDisplay: RecordDisplay {
    private var last: String?
    private var finished = false

    init() {
        Output.write("\u{1B}[?25l", to: 1)
    }

    func started(_ state: RecorderState) {
        Output.write("recording \(state.item?.path ?? "?"); press Enter or Ctrl-C to stop\n", to: 1)
    }

    func show(_ state: RecorderState) {
        let text = Output.meterLine(state, width: Output.terminalWidth())
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
