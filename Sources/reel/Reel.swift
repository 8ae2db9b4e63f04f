// The root command, the options every subcommand shares, and the CLI's error type.

import ArgumentParser
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Reel: ParsableCommand {
    static let version = "0.2.0"

    static let configuration = CommandConfiguration(
        commandName: "reel",
        abstract: "Control the Reel audio daemon (reeld).",
        discussion: """
            The daemon's socket is --socket, else $REEL_SOCKET, else $XDG_RUNTIME_DIR/reel/reel.sock \
            (/run/reel/reel.sock for root, /tmp/reel-<uid>/reel.sock without XDG_RUNTIME_DIR).

            Exit codes: 0 ok, 1 the daemon refused (its message on stderr), 2 usage error, \
            3 cannot reach the daemon.
            """,
        version: Reel.version,
        subcommands: [
            PlayCommand.self, PauseCommand.self, ResumeCommand.self, ToggleCommand.self,
            StopCommand.self, SeekCommand.self, StatusCommand.self, WatchCommand.self,
            AddCommand.self, QueueCommand.self, NextCommand.self, PreviousCommand.self, DeleteCommand.self,
            QueueMoveCommand.self, ClearCommand.self, RepeatCommand.self, RandomCommand.self, SingleCommand.self,
            ConsumeCommand.self, VolumeCommand.self, MuteCommand.self, ReplayGainCommand.self, OutputsCommand.self,
            RecordCommand.self, MarkCommand.self, InfoCommand.self,
            ListCommand.self, TreeCommand.self, MakeFolderCommand.self, MoveCommand.self, RenameCommand.self,
            RemoveCommand.self, SearchCommand.self, ImportCommand.self, ArtistsCommand.self, AlbumsCommand.self,
            ScanCommand.self, ScheduleCommand.self, SleepCommand.self,
            PlaylistsCommand.self, PlaylistCommand.self, SaveCommand.self, LoadCommand.self,
        ])
}

/// `--socket`, on every subcommand.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's control socket (default: $REEL_SOCKET, else the per-user socket).", valueName: "path"))
    var socket: String?

    /// `--socket`, else `$REEL_SOCKET`, else the default path for this user.
    var socketPath: String {
        if let socket, !socket.isEmpty { return socket }
        var environment: [String: String] = [:]
        for key in ["REEL_SOCKET", "XDG_RUNTIME_DIR"] {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        return SocketPath.defaultPath(environment: environment, uid: UInt32(getuid()), forDaemon: false)
    }

    /// A connection to the daemon; throws a `CLIError` (exit 3) when it cannot be reached.
    func connect() throws(CLIError) -> DaemonClient {
        try DaemonClient(path: socketPath)
    }
}

/// A failure with its exit code and the message for stderr (`reel: <message>`).
struct CLIError: Error, CustomStringConvertible {
    static let refusedExitCode: Int32 = 1
    static let usageExitCode: Int32 = 2
    static let unreachableExitCode: Int32 = 3

    var exitCode: Int32
    /// Printed as `reel: <message>`; nothing is printed when empty.
    var message: String
    /// An extra line after the message.
    var hint: String?
    /// The daemon's `data.reason` when it refused (`not_found`, `busy`, …).
    var reason: String?

    var description: String { message }

    func report() {
        guard !message.isEmpty else { return }
        Output.error("reel: \(message)")
        if let hint { Output.error(hint) }
    }

    /// An absolute path that is no local file was sent as a tree path (`path`): when the daemon
    /// has no item there either, say that neither is there, not only the item.
    func namingFileOrItem(_ treePath: String?) -> CLIError {
        guard let treePath, reason == "not_found", message == "no item at \(treePath)" else { return self }
        var error = self
        error.message = "no file or library item at \(treePath)"
        return error
    }

    /// The daemon answered with an error: its message, exit 1.
    static func refused(_ error: RPCError) -> CLIError {
        CLIError(exitCode: refusedExitCode, message: error.message, reason: error.data?["reason"]?.stringValue)
    }

    /// The daemon's reply was not what this client understands (exit 1).
    static func unexpectedReply(_ method: String, _ problem: CustomStringConvertible) -> CLIError {
        CLIError(exitCode: refusedExitCode, message: "unexpected reply from reeld to \(method): \(problem)")
    }

    /// Exit 3 with the path and the system's reason, and what to do about it.
    static func unreachable(_ path: String, errno code: Int32) -> CLIError {
        CLIError(
            exitCode: unreachableExitCode,
            message: "cannot reach reeld at \(path): \(String(cString: strerror(code)))",
            hint: "start it with 'reeld' or 'systemctl --user start reeld', or point --socket / REEL_SOCKET at its socket")
    }

    /// The connection broke or the daemon stopped answering (exit 3).
    static func connectionLost(_ path: String, _ what: String) -> CLIError {
        CLIError(exitCode: unreachableExitCode, message: "lost the connection to reeld at \(path): \(what)")
    }

    /// A signal ended the command: exit 0 quietly.
    static let interrupted = CLIError(exitCode: 0, message: "")
}
