// The plugin's one thread: poll(2) over stdin and reeld's socket, with the reconnection delay
// as the timeout. Everything else runs inside it, on the main thread.

import ReelClient
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Connects the bridge to stdin, stdout and reeld, and runs until stdin closes.
public final class PluginLoop {
    private let stdin: StdinLines
    private let stdout: StdoutSink
    private let link: ReeldLink
    private let bridge: SnapcastBridge

    public init(socketCandidates: [String], stdin: StdinLines = StdinLines(), stdout: StdoutSink = StdoutSink()) {
        self.stdin = stdin
        self.stdout = stdout
        link = ReeldLink(candidates: socketCandidates)
        bridge = SnapcastBridge(sink: stdout, reeld: link, clock: MonotonicClock.now)
        bridge.onSynced = { [link] in link.resetBackoff() }
    }

    /// Runs until stdin closes (snapserver stopped the stream) or stdout breaks; returns the
    /// exit status.
    public func run() -> Int32 {
        attemptConnection()
        while !stdout.isBroken {
            var fds = [pollfd(fd: stdin.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            if let connection = link.connection {
                fds.append(pollfd(fd: connection.fileDescriptor, events: Int16(POLLIN), revents: 0))
            }
            // Wake for the next connection attempt, or for the oldest reply's deadline.
            var timeout: Int32 = -1
            if let wakeUp = link.isConnected ? link.nextReplyDeadline : link.nextAttempt {
                let wait = min(max(0, wakeUp - MonotonicClock.now()), 60)
                timeout = Int32((wait * 1000).rounded(.up))
            }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                bridge.log(.error, "poll: \(String(cString: strerror(errno)))")
                return 1
            }
            if fds[0].revents != 0 {
                for piece in stdin.read() {
                    switch piece {
                    case .line(let line): bridge.handle(line: line)
                    case .tooLong: bridge.lineTooLong(limit: StdinLines.maxLineLength)
                    }
                }
                if stdin.isClosed { return 0 }
            }
            if fds.count > 1, fds[1].revents != 0 {
                let socket = link.socketDescription
                do {
                    try link.receive { method, params in bridge.event(method: method, params: params, socket: socket) }
                } catch {
                    drop(error)
                }
            }
            if let failure = link.writeFailure ?? link.expiredRequest(now: MonotonicClock.now()) { drop(failure) }
            if !link.isConnected, MonotonicClock.now() >= link.nextAttempt {
                attemptConnection()
            }
        }
        return 0
    }

    private func attemptConnection() {
        let failures = link.connect(now: MonotonicClock.now())
        if failures.isEmpty {
            bridge.connected(to: link.socketDescription)
        } else {
            bridge.unreachable(failures)
        }
    }

    private func drop(_ error: DaemonClientError) {
        // The bridge first, so that the requests the link then fails are not taken for refusals.
        bridge.disconnected(error)
        link.disconnect(error, now: MonotonicClock.now())
    }
}
