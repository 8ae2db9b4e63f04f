// A blocking HTTP/1.1 and WebSocket client on a raw TCP socket, for the HTTP front end's tests.

import Foundation
import Glibc
import ReelProtocol

/// One TCP connection to `127.0.0.1:port`. Not thread-safe. Reads time out (a test must not hang).
final class HTTPTestClient {
    let fd: Int32
    private var buffered: [UInt8] = []

    struct Response {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        var json: JSONValue? { try? JSONValue.parse(body) }
        /// `error.data.reason` of a JSON error body.
        var reason: String? { json?["error"]?["data"]?["reason"]?.stringValue }
    }

    /// A port nobody listens on now (the kernel's choice), for a daemon to take.
    static func freePort() throws -> Int {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0
            }
        }
        guard bound else { throw TestFailure("cannot find a free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    init(port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw TestFailure("cannot connect to port \(port): \(String(cString: strerror(code)))")
        }
        fd = descriptor
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestFailure("send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Sends a request head (with `Host: 127.0.0.1:port` unless `headers` has a Host) and a body.
    func request(
        _ method: String, _ target: String, port: Int, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws {
        var text = "\(method) \(target) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { text += "Host: 127.0.0.1:\(port)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty, !headers.contains(where: { ["content-length", "transfer-encoding"].contains($0.0.lowercased()) }) {
            text += "Content-Length: \(body.count)\r\n"
        }
        try send(Array((text + "\r\n").utf8) + body)
    }

    /// Reads bytes until `count` are buffered (or EOF); throws after `timeout` s.
    private func fill(_ count: Int, timeout: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while buffered.count < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("nothing more from the daemon within \(timeout) s") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Int32(remaining * 1000)) <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            buffered += chunk[0..<n]
        }
        return true
    }

    private func take(_ count: Int) -> [UInt8] {
        let taken = Array(buffered[0..<count])
        buffered.removeFirst(count)
        return taken
    }

    /// Reads a response: its head, then a body of Content-Length bytes (none for HEAD, 1xx,
    /// 101, 204 and 304).
    func readResponse(forHead: Bool = false, timeout: Double = 10) throws -> Response {
        var end: Int?
        while end == nil {
            if let index = find([13, 10, 13, 10]) {
                end = index
                break
            }
            guard try fill(buffered.count + 1, timeout: timeout) else { throw TestFailure("connection closed before a response") }
        }
        let head = String(decoding: take(end! + 4).dropLast(4), as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw TestFailure("bad status line in \(head)") }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = Response(status: status, headers: headers, body: [])
        if forHead || status < 200 || status == 204 || status == 304 { return response }
        if let length = response.header("content-length").flatMap(Int.init) {
            guard try fill(length, timeout: timeout) else { throw TestFailure("connection closed in the body") }
            response.body = take(length)
        }
        return response
    }

    /// One exchange on a fresh connection.
    static func exchange(
        _ method: String, _ target: String, port: Int, headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> Response {
        let client = try HTTPTestClient(port: port)
        try client.request(method, target, port: port, headers: headers, body: body)
        return try client.readResponse(forHead: method == "HEAD")
    }

    /// True once the daemon has closed the connection (reads EOF) within `timeout` s.
    func closedByPeer(timeout: Double = 10) -> Bool {
        (try? fill(Int.max, timeout: timeout)) == false
    }

    private func find(_ needle: [UInt8]) -> Int? {
        guard buffered.count >= needle.count else { return nil }
        for index in 0...(buffered.count - needle.count) where buffered[index..<(index + needle.count)].elementsEqual(needle) {
            return index
        }
        return nil
    }

    // MARK: WebSocket

    /// Sends the opening handshake of `/rpc` and reads the answer.
    func openWebSocket(port: Int, origin: String?, host: String? = nil, extra: [(String, String)] = []) throws -> Response {
        var headers: [(String, String)] = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"),
        ]
        if let host { headers.append(("Host", host)) }
        if let origin { headers.append(("Origin", origin)) }
        try request("GET", "/rpc", port: port, headers: headers + extra)
        return try readResponse(forHead: true)
    }

    /// Sends one masked frame (as a browser does).
    func sendFrame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xff) }
        }
        let mask: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try send(frame)
    }

    func sendText(_ text: String) throws { try sendFrame(opcode: 1, Array(text.utf8)) }

    /// The next frame: its opcode and payload (the server does not mask).
    func readFrame(timeout: Double = 10) throws -> (opcode: UInt8, payload: [UInt8]) {
        guard try fill(2, timeout: timeout) else { throw TestFailure("connection closed before a frame") }
        let first = take(2)
        var length = Int(first[1] & 0x7f)
        if length == 126 {
            guard try fill(2, timeout: timeout) else { throw TestFailure("closed in a frame") }
            let bytes = take(2)
            length = Int(bytes[0]) << 8 | Int(bytes[1])
        } else if length == 127 {
            guard try fill(8, timeout: timeout) else { throw TestFailure("closed in a frame") }
            length = take(8).reduce(0) { $0 << 8 | Int($1) }
        }
        guard try fill(length, timeout: timeout) else { throw TestFailure("closed in a frame") }
        return (first[0] & 0x0f, take(length))
    }

    /// The next text frame as JSON.
    func readMessage(timeout: Double = 10) throws -> JSONValue {
        let frame = try readFrame(timeout: timeout)
        guard frame.opcode == 1 else { throw TestFailure("expected a text frame, got opcode \(frame.opcode)") }
        return try JSONValue.parse(frame.payload)
    }
}
