// A stand-in for reeld that records the requests `reel` sends and answers them with canned
// replies, so that tests can check exactly what went on the wire.

import Foundation
import Glibc
import ReelProtocol

final class CLIFakeDaemon: @unchecked Sendable {
    let directory: URL
    let socketPath: String
    private let listenFD: Int32
    private let lock = NSLock()
    private var received: [RPCRequest] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private let answer: @Sendable (RPCRequest) -> Result<JSONValue, RPCError>

    /// Listens on a fresh socket; every request gets `answer(request)` as its reply.
    init(answer: @escaping @Sendable (RPCRequest) -> Result<JSONValue, RPCError>) throws {
        self.answer = answer
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-cli-fake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socketPath = directory.appendingPathComponent("fake.sock").path
        listenFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listenFD >= 0 else { throw TestFailure("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listenFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listenFD, 8) == 0 else {
            close(listenFD)
            throw TestFailure("cannot listen on \(socketPath): \(String(cString: strerror(errno)))")
        }
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    deinit {
        lock.withLock { stopping = true }
        finished.wait()
        close(listenFD)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The requests received so far, in order.
    var requests: [RPCRequest] { lock.withLock { received } }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func serve() {
        defer { finished.signal() }
        while !isStopping {
            var poller = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let connection = accept(listenFD, nil, nil)
            guard connection >= 0 else { continue }
            handle(connection)
            close(connection)
        }
    }

    /// Serves one connection until the client closes it (the CLI sends one request per run).
    private func handle(_ fd: Int32) {
        var framer = LineFramer()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !isStopping {
            while case .line(let line)? = framer.next() {
                guard case .single(.request(let request)) = RPCIncoming(line: line) else { continue }
                lock.withLock { received.append(request) }
                guard let id = request.id else { continue }
                let reply = RPCEncoder.replyLine(RPCReply(id: id, result: answer(request)))
                _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            framer.append(chunk[0..<count])
        }
    }
}
