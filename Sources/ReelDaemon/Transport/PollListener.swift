// Accepting the control socket's clients on a PollLoop: bursts, descriptor limits, the open connections.

import CEpoll
import Glibc
import Logging
import NIOCore

/// A listening Unix socket on a `PollLoop` and the connections it accepted. It does for the
/// control socket what `StreamListener` does for the NIO front ends:
/// - bursts: the listen backlog is the system's maximum and each wake-up accepts up to
///   `StreamListener.acceptsPerWakeup` waiting clients;
/// - descriptors: when the process runs out, the waiting client is refused through a spare
///   descriptor (`DescriptorReserve`) and the connected ones go on;
/// - the registry of open connections, closed by `stop`; each client's credentials at debug.
///
/// Threads: `listenUnix` and `stop` from any thread but the loop's; the rest on the loop.
final class PollListener: PollHandler, @unchecked Sendable {
    let name: String
    private let loop: PollLoop
    private let logger: Logger
    /// The longest line a connection takes (`PollConnection`'s framing).
    private let maxLineLength: Int
    /// Sets up the protocol on a new connection (its delegate).
    private let makeDelegate: (PollConnection) -> PollConnectionDelegate
    private var descriptor: Int32 = -1
    private var reserve: DescriptorReserve?
    private var connections: [ObjectIdentifier: PollConnection] = [:]

    init(
        name: String, loop: PollLoop, maxLineLength: Int = PollConnection.maxLineLength, logger: Logger,
        makeDelegate: @escaping (PollConnection) -> PollConnectionDelegate
    ) {
        self.name = name
        self.loop = loop
        self.maxLineLength = maxLineLength
        self.logger = logger
        self.makeDelegate = makeDelegate
    }

    /// Listens on the Unix socket at `path` (made by `SocketFile.prepare`).
    func listenUnix(path: String) throws {
        let fd = try SocketFile.listen(path, backlog: StreamListener.systemBacklog)
        do {
            try loop.submit { [self] in
                descriptor = fd
                reserve = DescriptorReserve(listener: fd, logger: logger)
                try loop.register(fd, events: EPOLLIN.rawValue, handler: self)
            }.wait()
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// Closes the listener and every connection it accepted.
    func stop() {
        _ = try? loop.submit { [self] in
            if descriptor >= 0 {
                loop.deregister(descriptor)
                Glibc.close(descriptor)
                descriptor = -1
                reserve = nil
            }
            for connection in Array(connections.values) { connection.close() }
        }.wait()
    }

    // MARK: Accepting (on the loop)

    func pollReady(_ events: UInt32) {
        for _ in 0..<StreamListener.acceptsPerWakeup {
            guard descriptor >= 0 else { return }
            let client = reel_accept_nonblocking(descriptor)
            if client >= 0 {
                adopt(client)
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                return
            case EINTR, ECONNABORTED:
                continue
            case EMFILE, ENFILE:
                reserve?.refuseForWantOfDescriptors(error: String(cString: strerror(errno)))
            default:
                logger.warning("cannot accept a new client", metadata: ["socket": "\(name)", "error": "\(String(cString: strerror(errno)))"])
                return
            }
        }
    }

    private func adopt(_ client: Int32) {
        let connection = PollConnection(descriptor: client, loop: loop, maxLineLength: maxLineLength)
        connection.delegate = makeDelegate(connection)
        connection.onClose = { [weak self] connection in
            self?.connections[ObjectIdentifier(connection)] = nil
        }
        do {
            try connection.start()
        } catch {
            logger.warning("cannot watch a new client", metadata: ["error": "\(error)"])
            connection.close()
            return
        }
        connections[ObjectIdentifier(connection)] = connection
        if logger.logLevel <= .debug { logPeer(client) }
    }

    /// Logs who connected (SO_PEERCRED: the client's process, user and group).
    private func logPeer(_ client: Int32) {
        var peer = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        if getsockopt(client, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0 {
            logger.debug("client connected", metadata: ["pid": "\(peer.pid)", "uid": "\(peer.uid)", "gid": "\(peer.gid)"])
        } else {
            logger.debug("client connected; its credentials are unknown", metadata: ["error": "\(String(cString: strerror(errno)))"])
        }
    }
}
