// The CLI's view of a connection to reeld: `ReelClient`'s `DaemonConnection`, with its errors
// turned into the CLI's exit codes and messages (`CLIError`).

import ReelClient
import ReelProtocol

final class DaemonClient {
    /// How long a reply may take before the command gives up (exit 3).
    static let replyTimeout: Double = DaemonConnection.defaultReplyTimeout

    private let connection: DaemonConnection

    var socketPath: String { connection.socketPath }
    /// Any of these descriptors becoming readable (the signal pipe, stdin) interrupts any wait:
    /// `call` throws `CLIError.interrupted`, `nextEvent` returns `.interrupted`.
    var interruptFDs: [Int32] {
        get { connection.interruptFDs }
        set { connection.interruptFDs = newValue }
    }

    /// Connects; throws exit 3 with the path and `strerror` when nothing listens there.
    init(path: String) throws(CLIError) {
        do {
            connection = try DaemonConnection(path: path)
        } catch {
            throw CLIError(error)
        }
    }

    /// Sends `method` and waits for its reply. The daemon's error becomes exit 1; a broken
    /// connection or no reply within `replyTimeout` seconds, exit 3.
    func call(_ method: String, _ params: JSONObject = [:]) throws(CLIError) -> JSONValue {
        do {
            return try connection.call(method, params, timeout: Self.replyTimeout)
        } catch {
            throw CLIError(error)
        }
    }

    typealias Event = DaemonConnection.Event

    /// The next pushed event; waits as long as it takes.
    func nextEvent() throws(CLIError) -> Event {
        do {
            return try connection.nextEvent()
        } catch {
            throw CLIError(error)
        }
    }

    /// Monotonic seconds.
    static func now() -> Double { MonotonicClock.now() }
}

extension CLIError {
    /// The exit code and message for each way the connection can fail.
    init(_ error: DaemonClientError) {
        switch error {
        case .unreachable(let path, let code): self = .unreachable(path, errno: code)
        case .connectionLost(let path, let what): self = .connectionLost(path, what)
        case .timedOut: self = CLIError(exitCode: CLIError.unreachableExitCode, message: error.description)
        case .refused(let rpcError): self = .refused(rpcError)
        case .interrupted: self = .interrupted
        }
    }
}
