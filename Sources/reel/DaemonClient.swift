// A blocking JSON-RPC client over the daemon's Unix socket: one request at a time, replies
// matched by id, pushed events kept for the caller. Glibc sockets and poll(2), no Foundation.

import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class DaemonClient {
    /// How long a reply may take before the command gives up (exit 3).
    static let replyTimeout: Double = 15

    let socketPath: String
    /// Any of these descriptors becoming readable (the signal pipe, stdin) interrupts any wait:
    /// `call` throws `CLIError.interrupted`, `nextEvent` returns `.interrupted`.
    var interruptFDs: [Int32] = []

    private let fd: Int32
    private var framer = LineFramer()
    private var nextID: Int64 = 1
    /// Notifications that arrived while waiting for a reply, in order.
    private var pending: [(method: String, params: JSONObject)] = []
    private var closed = false

    /// Connects; throws exit 3 with the path and `strerror` when nothing listens there.
    init(path: String) throws(CLIError) {
        socketPath = path
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw CLIError.unreachable(path, errno: bytes.isEmpty ? ENOENT : ENAMETOOLONG)
        }
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw CLIError.unreachable(path, errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw CLIError.unreachable(path, errno: code)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    // MARK: Requests

    /// Sends `method` and waits for its reply. The daemon's error becomes exit 1; a broken
    /// connection or no reply within `replyTimeout` seconds, exit 3.
    func call(_ method: String, _ params: JSONObject = [:]) throws(CLIError) -> JSONValue {
        let id = nextID
        nextID += 1
        try send(RPCRequest(id: .int(id), method: method, params: params).encodedLine())
        let deadline = Self.now() + Self.replyTimeout
        while true {
            switch try read(until: deadline) {
            case .message(.response(let replyID, let result)):
                // A reply to another id cannot happen with one request in flight; skip it.
                guard replyID == .int(id) else { continue }
                switch result {
                case .success(let value): return value
                case .failure(let error): throw CLIError.refused(error)
                }
            case .message(.notification(let method, let params)):
                pending.append((method, params))
            case .timedOut:
                throw CLIError(
                    exitCode: CLIError.unreachableExitCode,
                    message: "reeld at \(socketPath) did not answer \(method) within \(Int(Self.replyTimeout)) s")
            case .closed:
                throw CLIError.connectionLost(socketPath, "the daemon closed the connection while \(method) was pending")
            case .interrupted:
                throw CLIError.interrupted
            }
        }
    }

    // MARK: Events

    enum Event {
        case notification(method: String, params: JSONObject)
        /// The daemon closed the connection.
        case closed
        /// One of `interruptFDs` became readable.
        case interrupted
    }

    /// The next pushed event; waits as long as it takes.
    func nextEvent() throws(CLIError) -> Event {
        if !pending.isEmpty {
            let next = pending.removeFirst()
            return .notification(method: next.method, params: next.params)
        }
        while true {
            switch try read(until: nil) {
            case .message(.notification(let method, let params)): return .notification(method: method, params: params)
            case .message(.response): continue
            case .closed: return .closed
            case .interrupted: return .interrupted
            case .timedOut: continue
            }
        }
    }

    // MARK: Transport

    private enum Read {
        case message(RPCMessage)
        case timedOut
        case closed
        case interrupted
    }

    private func send(_ bytes: [UInt8]) throws(CLIError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                #else
                Darwin.send(fd, buffer.baseAddress, buffer.count, 0)
                #endif
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw CLIError.connectionLost(socketPath, String(cString: strerror(errno)))
            }
            offset += sent
        }
    }

    /// The next message, reading from the socket as needed; `deadline` nil waits forever.
    private func read(until deadline: Double?) throws(CLIError) -> Read {
        while true {
            if let frame = framer.next() ?? (closed ? framer.finish() : nil) {
                switch frame {
                case .line(let line):
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                    do {
                        return .message(try RPCMessage(line: line))
                    } catch {
                        throw CLIError.connectionLost(socketPath, "reeld sent a malformed message: \(error)")
                    }
                case .tooLong:
                    throw CLIError.connectionLost(socketPath, "reeld sent a line longer than \(framer.maxLineLength) bytes")
                }
            }
            if closed { return .closed }

            var timeout: Int32 = -1
            if let deadline {
                let remaining = deadline - Self.now()
                if remaining <= 0 { return .timedOut }
                timeout = Int32(min((remaining * 1000).rounded(.up), 60_000))
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            for interruptFD in interruptFDs { fds.append(pollfd(fd: interruptFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw CLIError.connectionLost(socketPath, "poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 { continue }
            if fds.dropFirst().contains(where: { $0.revents != 0 }) { return .interrupted }
            guard fds[0].revents != 0 else { continue }

            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == ECONNRESET { closed = true; continue }
                throw CLIError.connectionLost(socketPath, String(cString: strerror(errno)))
            }
            if count == 0 {
                closed = true
                continue
            }
            framer.append(chunk[0..<count])
        }
    }

    /// Monotonic seconds.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
