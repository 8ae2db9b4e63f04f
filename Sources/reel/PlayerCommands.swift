// play, pause, resume, toggle, stop: one request each, one short line on success.

import ArgumentParser
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends a `player.*` request and returns the PlayerState in its reply.
func playerCall(_ client: DaemonClient, _ method: String, _ params: JSONObject = [:]) throws(CLIError) -> PlayerState {
    let result = try client.call(method, params)
    do {
        return try PlayerState(json: result)
    } catch {
        throw CLIError.unexpectedReply(method, error)
    }
}

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play the queue, an entry of it, an audio file or a recording of the library.",
        discussion: """
            With no ARG, plays the queue: resumes when paused, else starts its current entry \
            (the first once the queue has ended). How ARG is read: an existing local file (not a \
            directory) is played as a file; a relative name is taken from the current directory. \
            Otherwise a number N plays the queue's entry N (as `reel queue` numbers them, from 1) \
            and leaves the queue as it is. Otherwise an ARG that starts with '/' is a recording's \
            tree path in the library: reel play /Meetings/Standup; a folder plays its recordings. \
            Anything else is an error naming the file that was not found (exit 1). A local file \
            wins over a recording with the same path, and over a queue position (a file named 3 \
            in the current directory). A file or a recording replaces the queue with itself; use \
            `reel add` to keep the queue.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp(
        "A local audio file, a queue position (3), or a recording's or folder's tree path (/Folder/Name).",
        valueName: "arg"))
    var file: String?

    @Option(
        name: .customLong("at"), parsing: .unconditional,
        help: ArgumentHelp("Start at this position: seconds (90), m:ss (1:30) or h:mm:ss.", valueName: "position"))
    var at: String?

    func validate() throws {
        _ = try startPosition()
        if file?.isEmpty == true { throw ValidationError("the file name is empty") }
        if file == nil && at != nil {
            throw ValidationError("--at needs something to play: a file, a queue position or a tree path")
        }
    }

    /// `--at` in seconds; `+10` is read as 10 s from the start.
    func startPosition() throws(ValidationError) -> Double? {
        guard let at else { return nil }
        switch SeekTarget(parsing: at) {
        case .absolute(let seconds)?: return seconds
        case .relative(let seconds)? where seconds >= 0: return seconds
        default:
            throw ValidationError("'\(at)' is not a position for --at: give seconds (90), m:ss (1:30) or h:mm:ss (1:02:03)")
        }
    }

    func run() throws {
        guard let file else {
            let client = try connection.connect()
            Output.line(Output.summary(try playerCall(client, "player.play"), naming: true))
            return
        }
        var params: JSONObject
        var client: DaemonClient?
        switch try PlayArgument.resolve(file) {
        case .file(let path): params = ["file": .string(path)]
        case .treePath(let path): params = ["path": .string(path)]
        case .url(let url): params = ["url": .string(url)]
        case .queuePosition(let position):
            let connected = try connection.connect()
            client = connected
            params = ["entry": .int(Int64(try QueueReader.entry(at: position, connected).entry.id))]
        }
        if let position = try startPosition() { params["position"] = .double(position) }
        let state: PlayerState
        do {
            state = try playerCall(try client ?? connection.connect(), "player.play", params)
        } catch let error as CLIError {
            throw error.namingFileOrItem(params["path"]?.stringValue)
        }
        Output.line(Output.summary(state, naming: true))
    }
}

/// `path` made absolute against the current directory; `.` and `..` components are resolved
/// textually, so a missing file still gets a clean absolute path in the daemon's message.
func absolutePath(_ path: String, currentDirectory: String? = nil) -> String {
    guard !path.hasPrefix("/") else { return path }
    let base = currentDirectory ?? workingDirectory()
    var components: [Substring] = []
    for component in (base + "/" + path).split(separator: "/") {
        switch component {
        case ".": continue
        case "..": if !components.isEmpty { components.removeLast() }
        default: components.append(component)
        }
    }
    var result = "/" + components.joined(separator: "/")
    if path.hasSuffix("/") && result != "/" { result += "/" }
    return result
}

/// getcwd(3); `$PWD` or `/` if it fails (a deleted directory).
private func workingDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    if getcwd(&buffer, buffer.count) != nil {
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    if let pwd = getenv("PWD") { return String(cString: pwd) }
    return "/"
}

/// The commands that take no arguments and print the resulting state.
protocol SimplePlayerCommand: ParsableCommand {
    static var method: String { get }
    var connection: ConnectionOptions { get }
}

extension SimplePlayerCommand {
    func run() throws {
        let client = try connection.connect()
        let state = try playerCall(client, Self.method)
        Output.line(Output.summary(state))
    }
}

struct PauseCommand: SimplePlayerCommand {
    static let configuration = CommandConfiguration(commandName: "pause", abstract: "Pause playback.")
    static let method = "player.pause"
    @OptionGroup var connection: ConnectionOptions
}

struct ResumeCommand: SimplePlayerCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume paused playback.")
    static let method = "player.resume"
    @OptionGroup var connection: ConnectionOptions
}

struct ToggleCommand: SimplePlayerCommand {
    static let configuration = CommandConfiguration(commandName: "toggle", abstract: "Pause if playing, resume if paused.")
    static let method = "player.toggle"
    @OptionGroup var connection: ConnectionOptions
}

struct StopCommand: SimplePlayerCommand {
    static let configuration = CommandConfiguration(commandName: "stop", abstract: "Stop playback.")
    static let method = "player.stop"
    @OptionGroup var connection: ConnectionOptions
}
