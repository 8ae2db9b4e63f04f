// The plugin's connection to reeld: connecting (to the first socket that answers), requests
// whose replies come back to a closure, the pushed events, and when to try again after a
// failure. Main thread only: `PluginLoop` polls its descriptor and calls it.

import ReelClient
import ReelProtocol

/// What the bridge needs of the connection to reeld (a fake one in tests).
public protocol ReeldRequester: AnyObject {
    var isConnected: Bool { get }
    /// Where reeld is, or is looked for, for messages.
    var socketDescription: String { get }
    /// Sends `method`; `reply` runs later on the main thread with reeld's answer, or with an
    /// error when the connection is down or breaks before the answer.
    func request(_ method: String, _ params: JSONObject, reply: @escaping (Result<JSONValue, RPCError>) -> Void)
}

/// The connection to reeld and its reconnection schedule.
public final class ReeldLink: ReeldRequester {
    /// Delays between attempts: doubling from the first to the last, reset once a connection
    /// has been set up. Never a busy loop, and a restarted reeld is found within 2 s.
    public static let firstRetryDelay = 0.1
    public static let maxRetryDelay = 2.0

    public let candidates: [String]
    /// A reply that takes longer than this means reeld is stuck: the connection is dropped
    /// (and the command answered with an error) rather than snapserver's client left waiting.
    public let replyTimeout: Double
    public private(set) var connection: DaemonConnection?
    /// When to try to connect next (`CLOCK_MONOTONIC` seconds).
    public private(set) var nextAttempt: Double = 0
    private var retryDelay = ReeldLink.firstRetryDelay
    private var replies: [Int64: Pending] = [:]

    private struct Pending {
        var method: String
        var deadline: Double
        var reply: (Result<JSONValue, RPCError>) -> Void
    }
    /// Set when a request could not be written: the loop then drops the connection.
    public private(set) var writeFailure: DaemonClientError?

    public init(candidates: [String], replyTimeout: Double = DaemonConnection.defaultReplyTimeout) {
        precondition(!candidates.isEmpty, "no socket path to try")
        self.candidates = candidates
        self.replyTimeout = replyTimeout
    }

    public var isConnected: Bool { connection != nil && writeFailure == nil }

    /// Where reeld is (or is looked for), for log lines.
    public var socketDescription: String {
        connection?.socketPath ?? candidates.joined(separator: " or ")
    }

    /// Tries each socket path in turn. On failure, schedules the next attempt and returns the
    /// reasons, one per path.
    public func connect(now: Double) -> [DaemonClientError] {
        var failures: [DaemonClientError] = []
        for path in candidates {
            do {
                connection = try DaemonConnection(path: path)
                writeFailure = nil
                return []
            } catch {
                failures.append(error)
            }
        }
        scheduleRetry(now: now)
        return failures
    }

    /// The connection works (its subscriptions are set up): the next failure retries soon.
    public func resetBackoff() {
        retryDelay = Self.firstRetryDelay
    }

    private func scheduleRetry(now: Double) {
        nextAttempt = now + retryDelay
        retryDelay = min(retryDelay * 2, Self.maxRetryDelay)
    }

    public func request(_ method: String, _ params: JSONObject, reply: @escaping (Result<JSONValue, RPCError>) -> Void) {
        guard let connection, writeFailure == nil else {
            reply(.failure(Self.notConnected(socketDescription)))
            return
        }
        do {
            let id = try connection.send(method, params)
            replies[id] = Pending(method: method, deadline: MonotonicClock.now() + replyTimeout, reply: reply)
        } catch {
            writeFailure = error
            reply(.failure(Self.lost(error)))
        }
    }

    /// Reads what reeld sent and hands each message on: replies to their closures, events to
    /// `onEvent`. Throws when the connection broke (then call `disconnect`).
    public func receive(onEvent: (String, JSONObject) -> Void) throws(DaemonClientError) {
        guard let connection else { return }
        try connection.receive()
        while let message = try connection.nextMessage() {
            switch message {
            case .response(let id, let result):
                guard case .int(let number) = id, let pending = replies.removeValue(forKey: number) else { continue }
                pending.reply(result)
            case .notification(let method, let params):
                onEvent(method, params)
            }
        }
        if connection.isClosed {
            throw .connectionLost(path: connection.socketPath, what: "reeld closed the connection")
        }
    }

    /// Drops the connection: requests still waiting get `error`, and the next attempt is
    /// scheduled.
    public func disconnect(_ error: DaemonClientError, now: Double) {
        connection = nil
        writeFailure = nil
        let waiting = replies.sorted { $0.key < $1.key }
        replies = [:]
        for (_, pending) in waiting { pending.reply(.failure(Self.lost(error))) }
        scheduleRetry(now: now)
    }

    /// When the oldest request waiting for its reply times out; nil when none waits.
    public var nextReplyDeadline: Double? { replies.values.map(\.deadline).min() }

    /// The timeout of a request still unanswered at `now`, if any.
    public func expiredRequest(now: Double) -> DaemonClientError? {
        guard let connection, let late = replies.values.first(where: { $0.deadline <= now }) else { return nil }
        return .timedOut(path: connection.socketPath, method: late.method, seconds: replyTimeout)
    }

    /// The reply to a command while reeld cannot be reached.
    static func notConnected(_ socket: String) -> RPCError {
        let message = "not connected to reeld at \(socket); reconnecting"
        return RPCError(code: RPCErrorCode.internalError, message: message, data: .string(message))
    }

    /// The reply to a command whose connection broke before reeld answered.
    static func lost(_ error: DaemonClientError) -> RPCError {
        let message = "\(error); reconnecting"
        return RPCError(code: RPCErrorCode.internalError, message: message, data: .string(message))
    }
}
