// The command line of `reel-snapcast`: its own `--socket`, and what snapserver adds.

/// What `reel-snapcast` was started with. Pure; the main thread parses it once.
public struct PluginArguments: Equatable, Sendable {
    /// `--socket PATH`: reeld's control socket.
    public var socket: String?
    /// `--stream=ID`, which snapserver always passes: the stream's id, for log lines.
    public var stream: String?
    public var showHelp = false
    public var showVersion = false

    public init(socket: String? = nil, stream: String? = nil, showHelp: Bool = false, showVersion: Bool = false) {
        self.socket = socket
        self.stream = stream
        self.showHelp = showHelp
        self.showVersion = showVersion
    }

    /// Options snapserver passes that the plugin accepts and does not use: 0.26 adds
    /// `--snapcast-port` when its HTTP server is on, 0.27 and later also `--snapcast-host`.
    static let ignored: Set<String> = ["--snapcast-port", "--snapcast-host"]

    /// Reads `arguments` (without the program name). Each option is `--name=value` or
    /// `--name value`; an unknown option or a missing value throws a message for stderr.
    public static func parse(_ arguments: [String]) throws(PluginUsageError) -> PluginArguments {
        var result = PluginArguments()
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "-h", "--help":
                result.showHelp = true
                continue
            case "--version":
                result.showVersion = true
                continue
            default:
                break
            }
            guard argument.hasPrefix("--") else {
                throw PluginUsageError("unexpected argument \"\(argument)\"")
            }
            let name: String
            var value: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
            }
            guard name == "--socket" || name == "--stream" || ignored.contains(name) else {
                throw PluginUsageError("unknown option \"\(name)\"")
            }
            if value == nil {
                guard let next = rest.popFirst() else { throw PluginUsageError("\(name) needs a value") }
                value = next
            }
            switch name {
            case "--socket":
                guard let value, !value.isEmpty else { throw PluginUsageError("--socket needs a path") }
                result.socket = value
            case "--stream": result.stream = value
            default: break
            }
        }
        return result
    }

    public static let usage = """
        usage: reel-snapcast [--socket PATH]

        Snapcast's stream plugin for Reel: snapserver starts it for a stream whose source has
        controlscript=<path of reel-snapcast>, and speaks JSON-RPC with it on stdin and stdout.
        It controls reeld over its socket: --socket PATH, else $REEL_SOCKET, else
        $XDG_RUNTIME_DIR/reel/reel.sock (/tmp/reel-<uid>/reel.sock without XDG_RUNTIME_DIR),
        then the system daemon's /run/reel/reel.sock.
        The --stream, --snapcast-port and --snapcast-host options snapserver adds are accepted.
        """
}

/// A command line `reel-snapcast` does not understand.
public struct PluginUsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
