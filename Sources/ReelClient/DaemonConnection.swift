// A JSON-RPC connection to reeld over its Unix socket. Glibc sockets and poll(2), no Foundation.
//
// Two ways to use it, on one thread at a time:
// - blocking (the CLI): `call` sends a request and waits for its reply, keeping the events that
//   arrive meanwhile for `nextEvent`;
// - from an event loop (`reel-snapcast`): poll `fileDescriptor`, then `receive()` and take
//   `nextMessage()` until nil; `send` writes a request and returns its id.

import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to reeld's control socket; closed when released.
public final class DaemonConnection {
    /// How long `call` waits for a reply unless told otherwise.
    public static let defaultReplyTimeout: Double = 15

    public let socketPath: String
    /// The connected socket, for a caller's own poll(2).
    public let fileDescriptor: Int32
    /// Any of these descriptors becoming readable (a signal pipe, stdin) interrupts a blocking
    /// wait: `call` throws `.interrupted`, `nextEvent` returns `.interrupted`.
    public var interruptFDs: [Int32] = []
    /// reeld closed its side; lines already received can still be taken.
    public private(set) var isClosed = false

    private var framer = LineFramer()
    private var nextRequestID: Int64 = 1
    /// Notifications that arrived while `call` waited for a reply, in order.
    private var pending: [(method: String, params: JSONObject)] = []

    /// Connects; throws `.unreachable` with the path and `errno` when nothing listens there.
    public init(path: String) throws(DaemonClientError) {
        socketPath = path
        let bytes = Array(path.utf8)
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw .unreachable(path: path, errno: bytes.isEmpty ? ENOENT : ENAMETOOLONG)
        }
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .unreachable(path: path, errno: errno) }
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
            throw .unreachable(path: path, errno: code)
        }
        fileDescriptor = fd
    }

    deinit { close(fileDescriptor) }

    // MARK: Blocking use

    /// Sends `method` and waits for its reply. reeld's error is `.refused`; a broken
    /// connection `.connectionLost`; no reply within `timeout` seconds `.timedOut`.
    public func call(
        _ method: String, _ params: JSONObject = [:], timeout: Double = DaemonConnection.defaultReplyTimeout
    ) throws(DaemonClientError) -> JSONValue {
        let id = try send(method, params)
        let deadline = MonotonicClock.now() + timeout
        while true {
            switch try read(until: deadline) {
            case .message(.response(let replyID, let result)):
                // A reply to another id cannot happen with one request in flight; skip it.
                guard replyID == .int(id) else { continue }
                switch result {
                case .success(let value): return value
                case .failure(let error): throw .refused(error)
                }
            case .message(.notification(let method, let params)):
                pending.append((method, params))
            case .timedOut:
                throw .timedOut(path: socketPath, method: method, seconds: timeout)
            case .closed:
                throw .connectionLost(path: socketPath, what: "the daemon closed the connection while \(method) was pending")
            case .interrupted:
                throw .interrupted
            }
        }
    }

    /// What `nextEvent` returns.
    public enum Event: Sendable {
        case notification(method: String, params: JSONObject)
        /// The daemon closed the connection.
        case closed
        /// One of `interruptFDs` became readable.
        case interrupted
    }

    /// The next pushed event; waits as long as it takes.
    public func nextEvent() throws(DaemonClientError) -> Event {
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

    // MARK: Event-loop use

    /// Writes a request with a new id (1, 2, ...) and returns the id. Blocks only while the
    /// socket's send buffer is full.
    @discardableResult
    public func send(_ method: String, _ params: JSONObject = [:]) throws(DaemonClientError) -> Int64 {
        let id = nextRequestID
        nextRequestID += 1
        try write(RPCRequest(id: .int(id), method: method, params: params).encodedLine())
        return id
    }

    /// Reads what the socket holds, once (it blocks when nothing is there: call it when poll(2)
    /// says `fileDescriptor` is readable). Sets `isClosed` at the end of the stream.
    public func receive() throws(DaemonClientError) {
        guard !isClosed else { return }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fileDescriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return }
            if errno == ECONNRESET {
                isClosed = true
                return
            }
            throw .connectionLost(path: socketPath, what: String(cString: strerror(errno)))
        }
        if count == 0 {
            isClosed = true
            return
        }
        framer.append(chunk[0..<count])
    }

    /// The next complete message received, skipping blank lines; nil when more bytes are
    /// needed (or, once `isClosed`, when none are left). A line that is not a JSON-RPC message
    /// or is longer than 1 MiB is `.connectionLost`.
    public func nextMessage() throws(DaemonClientError) -> RPCMessage? {
        while let frame = framer.next() ?? (isClosed ? framer.finish() : nil) {
            switch frame {
            case .line(let line):
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
                do {
                    return try RPCMessage(line: line)
                } catch {
                    throw .connectionLost(path: socketPath, what: "reeld sent a malformed message: \(error)")
                }
            case .tooLong:
                throw .connectionLost(path: socketPath, what: "reeld sent a line longer than \(framer.maxLineLength) bytes")
            }
        }
        return nil
    }

    // MARK: Transport

    private enum Read {
        case message(RPCMessage)
        case timedOut
        case closed
        case interrupted
    }

    private func write(_ bytes: [UInt8]) throws(DaemonClientError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.send(fileDescriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                #else
                Darwin.send(fileDescriptor, buffer.baseAddress, buffer.count, 0)
                #endif
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw .connectionLost(path: socketPath, what: String(cString: strerror(errno)))
            }
            offset += sent
        }
    }

    /// The next message, reading from the socket as needed; `deadline` nil waits forever.
    private func read(until deadline: Double?) throws(DaemonClientError) -> Read {
        while true {
            if let message = try nextMessage() { return .message(message) }
            if isClosed { return .closed }

            var timeout: Int32 = -1
            if let deadline {
                let remaining = deadline - MonotonicClock.now()
                if remaining <= 0 { return .timedOut }
                timeout = Int32(min((remaining * 1000).rounded(.up), 60_000))
            }
            var fds = [pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)]
            for interruptFD in interruptFDs { fds.append(pollfd(fd: interruptFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .connectionLost(path: socketPath, what: "poll: \(String(cString: strerror(errno)))")
            }
            if ready == 0 { continue }
            if fds.dropFirst().contains(where: { $0.revents != 0 }) { return .interrupted }
            guard fds[0].revents != 0 else { continue }
            try receive()
        }
    }
}
