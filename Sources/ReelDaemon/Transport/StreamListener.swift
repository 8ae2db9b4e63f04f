// Accepting stream connections for a front end: the listening socket, bursts, limits, the open connections.

import Logging
import NIOCore
import NIOPosix
import ReelAudio

/// One listening socket of a front end and the connections it accepted, on the daemon's event
/// loop. Protocol-neutral: what speaks on a connection is set up by `initializeConnection` (a
/// front end's framing and handler); the listener does what every front end needs:
/// - bursts: the listen backlog is the system's maximum (`/proc/sys/net/core/somaxconn`) and
///   each wake-up accepts up to `acceptsPerWakeup` waiting clients, so a thousand clients
///   connecting at once are all taken;
/// - descriptors: when the process runs out, the waiting client is refused through a spare
///   descriptor (`DescriptorReserve`) and the connected ones go on;
/// - the registry of open connections, closed by `stop`; each client's credentials at debug.
final class StreamListener: Sendable {
    static let acceptsPerWakeup = 256
    let name: String
    private let group: EventLoopGroup
    private let logger: Logger
    private let initializeConnection: @Sendable (Channel) throws -> Void
    private let state = Locked(ListenerState())

    private struct ListenerState {
        var listener: Channel?
        var connections: [ObjectIdentifier: Channel] = [:]
    }

    init(
        name: String, group: EventLoopGroup, logger: Logger,
        initializeConnection: @escaping @Sendable (Channel) throws -> Void
    ) {
        self.name = name
        self.group = group
        self.logger = logger
        self.initializeConnection = initializeConnection
    }

    /// The longest listen queue the system allows.
    static var systemBacklog: Int32 {
        var bytes = [UInt8](repeating: 0, count: 32)
        let fd = open("/proc/sys/net/core/somaxconn", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 4096 }
        defer { close(fd) }
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0, let value = Int32(String(decoding: bytes[0..<count], as: UTF8.self).filter(\.isNumber)),
            value > 0
        else { return 4096 }
        return value
    }

    /// Listens on the Unix socket at `path` (made by `SocketFile.prepare`/`listen`).
    func listenUnix(path: String) throws {
        let backlog = Self.systemBacklog
        let fd = try SocketFile.listen(path, backlog: backlog)
        try start(boundDescriptor: fd, backlog: backlog)
    }

    /// Listens on TCP `host:port`.
    func listenTCP(host: String, port: Int) throws {
        let backlog = Self.systemBacklog
        let fd = try TCPSocket.listen(host: host, port: port, backlog: backlog)
        try start(boundDescriptor: fd, backlog: backlog)
    }

    private func start(boundDescriptor fd: Int32, backlog: Int32) throws {
        let logger = self.logger
        let state = self.state
        let initializeConnection = self.initializeConnection
        let reserve = DescriptorReserve(listener: fd, logger: logger)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.maxMessagesPerRead, value: UInt(Self.acceptsPerWakeup))
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(AcceptFailureHandler(reserve: reserve, logger: logger))
                }
            }
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
            .childChannelInitializer { channel in
                let id = ObjectIdentifier(channel)
                state.withLock { $0.connections[id] = channel }
                channel.closeFuture.whenComplete { _ in
                    _ = state.withLock { $0.connections.removeValue(forKey: id) }
                }
                if logger.logLevel <= .debug { Self.logPeer(of: channel, logger: logger) }
                return channel.eventLoop.makeCompletedFuture { try initializeConnection(channel) }
            }
        let listener: Channel
        do {
            listener = try bootstrap.withBoundSocket(fd).wait()
        } catch {
            close(fd)
            throw error
        }
        // NIO listens again on a socket it is given, with its default backlog of 128 (and the
        // `.backlog` option does not reach a socket already listening): set ours once more.
        guard listen(fd, backlog) == 0 else {
            let error = String(cString: strerror(errno))
            try? listener.close().wait()
            throw SocketSetupError("cannot listen on the \(name) socket: \(error)")
        }
        state.withLock { $0.listener = listener }
    }

    /// Closes the listener and every connection it accepted.
    func stop() {
        let (listener, connections) = state.withLock { state in
            let taken = (state.listener, Array(state.connections.values))
            state.listener = nil
            return taken
        }
        try? listener?.close().wait()
        for connection in connections {
            try? connection.close().wait()
        }
    }
}

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

extension StreamListener {
    /// Logs who connected (SO_PEERCRED: the client's process, user and group) at debug level.
    static func logPeer(of channel: Channel, logger: Logger) {
        guard let provider = channel as? SocketOptionProvider else { return }
        let future: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        future.whenComplete { result in
            switch result {
            case .success(let peer):
                logger.debug("client connected", metadata: ["pid": "\(peer.pid)", "uid": "\(peer.uid)", "gid": "\(peer.gid)"])
            case .failure(let error):
                logger.debug("client connected; its credentials are unknown", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// `struct ucred` (glibc declares it only under _GNU_SOURCE): the same three 32-bit fields.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// One descriptor kept open for the moment the process runs out: a failed accept leaves the
/// client in the listen queue and the listener readable, so the event loop would spin on it.
/// Then the spare is closed, the waiting client is accepted on it and closed at once (it is
/// refused: it sees the connection close), and the spare is opened again, all at once on the
/// server's event loop. Clients already connected go on.
final class DescriptorReserve: @unchecked Sendable {
    private let listener: Int32
    private var spare: Int32
    private let logger: Logger
    /// Clients refused since the last warning, and when that was (one warning per 10 s at most).
    private var refused = 0
    private var lastLog: NIODeadline?

    init(listener: Int32, logger: Logger) {
        self.listener = listener
        self.logger = logger
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }

    deinit {
        if spare >= 0 { close(spare) }
    }

    /// Refuses the next waiting client; true if one was refused.
    func refuseOne() -> Bool {
        if spare >= 0 {
            close(spare)
            spare = -1
        }
        let client = accept(listener, nil, nil)
        if client >= 0 { close(client) }
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        return client >= 0
    }

    /// An accept failed for want of descriptors (`error` says how): refuses the next waiting
    /// client and warns, at most once every 10 s, with how many were refused meanwhile.
    func refuseForWantOfDescriptors(error: String) {
        if refuseOne() { refused += 1 }
        let now = NIODeadline.now()
        if let lastLog, now - lastLog < .seconds(10) { return }
        lastLog = now
        logger.warning(
            "out of file descriptors: refusing new clients until some disconnect; existing ones go on",
            metadata: ["error": "\(error)", "refused": "\(refused)"])
        refused = 0
    }
}

/// On the listener: when accept fails for want of descriptors, refuses the waiting client
/// through the `DescriptorReserve` (which logs it at most once every 10 s with a count).
final class AcceptFailureHandler: ChannelInboundHandler {
    typealias InboundIn = Channel
    private let reserve: DescriptorReserve
    private let logger: Logger

    init(reserve: DescriptorReserve, logger: Logger) {
        self.reserve = reserve
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE else {
            logger.warning("cannot accept a new client", metadata: ["error": "\(error)"])
            return
        }
        reserve.refuseForWantOfDescriptors(error: "\(error)")
    }
}
