// A blocking JSON-RPC client over the real Unix socket, for end-to-end tests.

import Foundation
import Glibc
import ReelProtocol

/// One connection. Not thread-safe. Reads time out (a test must not hang).
final class RPCTestClient {
    let fd: Int32
    private var framer = LineFramer(maxLineLength: 64 << 20)
    private var nextID: Int64 = 1
    /// Notifications read while waiting for replies, in order.
    var notifications: [(method: String, params: JSONObject)] = []

    init(path: String) throws {
        // `fd` is set only once connected: a class whose init throws after setting every stored
        // property is deinitialized, and `deinit` would close the descriptor a second time —
        // by then perhaps another test's (seen as EBADF in unrelated tests).
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw TestFailure("cannot connect to \(path): \(String(cString: strerror(code)))")
        }
        fd = descriptor
    }

    deinit { close(fd) }

    func send(raw bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    func send(_ text: String) throws { try send(raw: Array(text.utf8)) }

    /// The next line, or nil at EOF. Throws after `timeout` seconds without one.
    func readLine(timeout: Double = 5) throws -> [UInt8]? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let frame = framer.next() {
                if case .line(let line) = frame { return line }
                throw TestFailure("line too long from daemon")
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("no line from the daemon within \(timeout) s") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(remaining * 1000))
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 {
                if case .line(let line)? = framer.finish() { return line }
                return nil
            }
            if count < 0 { throw TestFailure("recv failed: \(String(cString: strerror(errno)))") }
            framer.append(chunk[0..<count])
        }
    }

    /// The next message as JSON.
    func readJSON(timeout: Double = 5) throws -> JSONValue? {
        guard let line = try readLine(timeout: timeout) else { return nil }
        return try JSONValue.parse(line)
    }

    /// Sends a request and returns its reply, keeping notifications that arrive first.
    func call(_ method: String, _ params: JSONObject = [:], timeout: Double = 10) throws -> Result<JSONValue, RPCError> {
        let id = nextID
        nextID += 1
        try send(raw: RPCRequest(id: .int(id), method: method, params: params).encodedLine())
        while true {
            guard let line = try readLine(timeout: timeout) else { throw TestFailure("connection closed awaiting \(method)") }
            switch try RPCMessage(line: line) {
            case .notification(let method, let params):
                notifications.append((method, params))
            case .response(let replyID, let result):
                guard replyID == .int(id) else { throw TestFailure("reply for \(replyID) while waiting for \(id)") }
                return result
            }
        }
    }

    /// The result of a call that must succeed.
    func result(_ method: String, _ params: JSONObject = [:]) throws -> JSONValue {
        switch try call(method, params) {
        case .success(let value): return value
        case .failure(let error): throw TestFailure("\(method) failed: \(error)")
        }
    }

    /// The next notification (already read or new).
    func nextNotification(timeout: Double = 5) throws -> (method: String, params: JSONObject) {
        if !notifications.isEmpty { return notifications.removeFirst() }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            guard let line = try readLine(timeout: max(deadline.timeIntervalSinceNow, 0.001)) else {
                throw TestFailure("connection closed awaiting a notification")
            }
            if case .notification(let method, let params) = try RPCMessage(line: line) { return (method, params) }
        }
    }
}
