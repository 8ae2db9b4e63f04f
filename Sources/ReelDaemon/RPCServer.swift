// The control socket: accepting connections and framing their lines. Dispatch lives in RPCConnection.

import Logging
import NIOCore
import NIOPosix
import ReelAudio

/// Listens on the Unix socket with one event loop. `start` binds (replacing a stale socket file,
/// refusing a live one); `stop` closes the listener and every connection.
final class RPCServer: Sendable {
    let socketPath: String
    /// Group `audio` may connect (system daemon) or only the owner (user daemon).
    private let systemSocket: Bool
    private let methods: MethodTable
    private let player: PlayerController
    private let recorder: RecorderController
    private let library: LibraryController
    private let logger: Logger
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let state = Locked(ServerState())

    private struct ServerState {
        var listener: Channel?
        var connections: [ObjectIdentifier: Channel] = [:]
    }

    init(
        socketPath: String, systemSocket: Bool, methods: MethodTable, player: PlayerController,
        recorder: RecorderController, library: LibraryController, logger: Logger
    ) {
        self.library = library
        self.socketPath = socketPath
        self.systemSocket = systemSocket
        self.methods = methods
        self.player = player
        self.recorder = recorder
        self.logger = logger
    }

    func start() throws {
        try SocketFile.prepare(socketPath)
        let methods = self.methods
        let player = self.player
        let recorder = self.recorder
        let library = self.library
        let logger = self.logger
        let state = self.state
        let listenerFD = try SocketFile.listen(socketPath, backlog: 256)
        let reserve = DescriptorReserve(listener: listenerFD)
        let bootstrap = ServerBootstrap(group: group)
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
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(
                        RPCConnection(methods: methods, player: player, recorder: recorder, library: library, logger: logger))
                }
            }
        let listener: Channel
        do {
            listener = try bootstrap.withBoundSocket(listenerFD).wait()
        } catch {
            close(listenerFD)
            throw error
        }
        SocketFile.setPermissions(socketPath, system: systemSocket)
        state.withLock { $0.listener = listener }
    }

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
        try? group.syncShutdownGracefully()
        unlinkSocket()
    }

    private func unlinkSocket() {
        _ = socketPath.withCString { unlink($0) }
    }
}

#if canImport(Glibc)
import Glibc
#endif

extension RPCServer {
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

    init(listener: Int32) {
        self.listener = listener
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
}

/// On the listener: when accept fails for want of descriptors, refuses the waiting client
/// through the `DescriptorReserve`, and logs it at most once every 10 s with a count.
final class AcceptFailureHandler: ChannelInboundHandler {
    typealias InboundIn = Channel
    private let reserve: DescriptorReserve
    private let logger: Logger
    private var refused = 0
    private var lastLog: NIODeadline?

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
        if reserve.refuseOne() { refused += 1 }
        let now = NIODeadline.now()
        if let lastLog, now - lastLog < .seconds(10) { return }
        lastLog = now
        logger.warning(
            "out of file descriptors: refusing new clients until some disconnect; existing ones go on",
            metadata: ["error": "\(error)", "refused": "\(refused)"])
        refused = 0
    }
}
