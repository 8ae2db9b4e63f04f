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
        abstract: "Record from the capture device, what Reel plays, or a station into the tree.",
        discussion: """
            `reel record [FOLDER]` starts a recording in FOLDER (a tree path, default /; created \
            with its parents if it does not exist yet) and follows \
            it: on a terminal, the elapsed time and a level meter until Enter or Ctrl-C, which \
            stop it and keep it. When stdin is not a terminal, a line on stdin or SIGINT/SIGTERM \
            stops it. With --detach it only starts. `--from player` records what Reel plays \
            (decoded, before the volume; nothing while paused); `--from URL` records a station \
            without playing it. `reel record stop` and `reel record cancel` \
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

    @Option(help: ArgumentHelp(
        "What to record: capture (the capture device, the default), player (what Reel plays) or an http(s) URL (a station, not played).",
        valueName: "source"))
    var from: String?

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

    @Option(help: ArgumentHelp(
        "A new take (NAME 001, NAME 002, …) every DURATION: 90, 90s, 15m, 1h.", valueName: "duration"))
    var segment: String?

    @Option(help: ArgumentHelp("Segments begin on the clock: minute, hour or day.", valueName: "unit"))
    var align: String?

    @Option(help: ArgumentHelp("Keep the newest N takes of the series (older ones are deleted).", valueName: "n"))
    var keep: Int?

    @Option(help: ArgumentHelp("Keep takes for this many days.", valueName: "days"))
    var keepDays: Double?

    @Option(help: ArgumentHelp("Keep this much disk free (bytes; K, M, G suffixes).", valueName: "size"))
    var keepFree: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Voice-activated takes above LEVEL: -40dB (dBFS).", valueName: "level"))
    var vox: String?

    @Option(help: ArgumentHelp(
        "With --vox: the take includes this much before the trigger (default 1s); without: start this far in the past (needs capture_preroll).",
        valueName: "duration"))
    var preroll: String?

    @Option(help: ArgumentHelp("With --vox: end a take after this long below the level (default 2s).", valueName: "duration"))
    var hold: String?

    @Option(help: ArgumentHelp("With --vox: discard takes with less sound than this (default 0.5s).", valueName: "duration"))
    var minLength: String?

    func validate() throws {
        try TreePath.validate(folder, role: "folder")
        for (name, value) in [("--segment", segment), ("--preroll", preroll), ("--hold", hold), ("--min-length", minLength)] {
            if let value, RecordArguments.seconds(value) == nil {
                throw ValidationError("\(name) must be a duration such as 90, 90s, 15m or 1h, not \"\(value)\"")
            }
        }
        if let vox, RecordArguments.decibels(vox) == nil {
            throw ValidationError("--vox must be a level in dBFS such as -40dB, not \"\(vox)\"")
        }
        if let keepFree, RecordArguments.bytes(keepFree) == nil {
            throw ValidationError("--keep-free must be a size such as 500M or 2G, not \"\(keepFree)\"")
        }
        if vox == nil && (hold != nil || minLength != nil) {
            throw ValidationError("--hold and --min-length go with --vox")
        }
        if let from, RecordArguments.source(from) == nil {
            throw ValidationError("--from must be capture, player or an http(s) URL, not \"\(from)\"")
        }
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, not \(duration)")
        }
    }

    func run() throws {
        var params: JSONObject = ["folderPath": .string(folder)]
        if let name { params["name"] = .string(name) }
        if let from, let source = RecordArguments.source(from) { params["source"] = source }
        if let format { params["format"] = .string(format) }
        if let duration { params["maxDuration"] = .double(duration) }
        if let rate { params["sampleRate"] = .int(Int64(rate)) }
        if let channels { params["channels"] = .int(Int64(channels)) }
        if let segment, let seconds = RecordArguments.seconds(segment) { params["segmentSeconds"] = .double(seconds) }
        if let align { params["segmentAlign"] = .string(align) }
        var keepRule: JSONObject = [:]
        if let keep { keepRule["count"] = .int(Int64(keep)) }
        if let keepDays { keepRule["days"] = .double(keepDays) }
        if let keepFree, let bytes = RecordArguments.bytes(keepFree) { keepRule["minFreeBytes"] = .int(bytes) }
        if !keepRule.isEmpty { params["keep"] = .object(keepRule) }
        if let vox, let level = RecordArguments.decibels(vox) {
            var trigger: JSONObject = ["level": .double(level)]
            if let preroll, let seconds = RecordArguments.seconds(preroll) { trigger["preroll"] = .double(seconds) }
            if let hold, let seconds = RecordArguments.seconds(hold) { trigger["hold"] = .double(seconds) }
            if let minLength, let seconds = RecordArguments.seconds(minLength) { trigger["minLength"] = .double(seconds) }
            params["trigger"] = .object(trigger)
        } else if let preroll, let seconds = RecordArguments.seconds(preroll) {
            params["preroll"] = .double(seconds)
        }
        let isSession = params["segmentSeconds"] != nil || params["segmentAlign"] != nil || params["trigger"] != nil

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
                if state.state == .recording || state.state == .armed {
                    if state.item?.id == id || (isSession && state.series != nil) { sawOwnRecording = true }
                    display.show(state)
                    continue
                }
                guard sawOwnRecording || state.item?.id == id else { continue }
                if isSession {
                    // A series ended by itself (its length limit, a full disk).
                    display.finish()
                    if let item = state.item { Output.line(savedLine(item)) }
                    if let error = state.error {
                        throw CLIError(exitCode: CLIError.refusedExitCode, message: error.message)
                    }
                    return
                }
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
                let result = try client.call("recorder.stop")
                if result.isNull {
                    Output.line("stopped (no take was made)")
                } else {
                    Output.line(savedLine(try decodeItem(result, from: "recorder.stop")))
                }
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
        if result.isNull {
            Output.line("stopped (no take was made)")
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

/// The record command's value syntaxes. Pure.
enum RecordArguments {
    /// `--from`: `capture`, `player`, or a URL (`scheme://…`; the daemon checks the scheme) →
    /// `recorder.start`'s `source`; nil for anything else.
    static func source(_ text: String) -> JSONValue? {
        switch text {
        case "capture", "player": return .string(text)
        default:
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text[colon...].hasPrefix("://") else { return nil }
            return .object(["url": .string(text)])
        }
    }

    /// `90`, `90s`, `1.5s`, `15m`, `1h` → seconds; nil when not a positive duration.
    static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var number = Substring(text)
        var scale = 1.0
        if let last = text.last, let unit = units[last] {
            scale = unit
            number = text.dropLast()
        } else if text.hasSuffix("ms") {
            scale = 0.001
            number = text.dropLast(2)
        }
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        return value * scale
    }

    /// `-40dB`, `-40 dBFS`, `-40` → dB.
    static func decibels(_ text: String) -> Double? {
        var number = text.trimmingSuffix("dBFS").trimmingSuffix("dB").trimmingSuffix("db")
        number = number.trimmingSuffix(" ")
        guard let value = Double(number), value.isFinite else { return nil }
        return value
    }

    /// `500000`, `500K`, `500M`, `2G` → bytes (powers of 1024).
    static func bytes(_ text: String) -> Int64? {
        let units: [Character: Double] = ["K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024, "T": 1024 * 1024 * 1024 * 1024]
        var number = Substring(text)
        var scale = 1.0
        if let last = text.uppercased().last, let unit = units[last] {
            scale = unit
            number = text.dropLast()
        }
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        return Int64(value * scale)
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
