// What can go wrong talking to reeld over its socket, for every client of `ReelClient`.

import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure of a `DaemonConnection`: the CLI turns it into its exit codes, `reel-snapcast`
/// into a log line and a reconnection.
public enum DaemonClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing accepts connections at `path`; `errno` says why (`ENOENT`, `ECONNREFUSED`, ...).
    case unreachable(path: String, errno: Int32)
    /// The connection broke, or reeld sent something that is not a protocol line.
    case connectionLost(path: String, what: String)
    /// No reply to `method` within `seconds`.
    case timedOut(path: String, method: String, seconds: Double)
    /// reeld answered with an error.
    case refused(RPCError)
    /// One of the connection's `interruptFDs` became readable during a blocking wait.
    case interrupted

    public var description: String {
        switch self {
        case .unreachable(let path, let code):
            "cannot reach reeld at \(path): \(String(cString: strerror(code)))"
        case .connectionLost(let path, let what):
            "lost the connection to reeld at \(path): \(what)"
        case .timedOut(let path, let method, let seconds):
            "reeld at \(path) did not answer \(method) within \(Int(seconds)) s"
        case .refused(let error):
            error.message
        case .interrupted:
            "interrupted"
        }
    }
}
