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
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 64 * 1024))
            .childChannelInitializer { channel in
                let id = ObjectIdentifier(channel)
                state.withLock { $0.connections[id] = channel }
                channel.closeFuture.whenComplete { _ in
                    _ = state.withLock { $0.connections.removeValue(forKey: id) }
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(
                        RPCConnection(methods: methods, player: player, recorder: recorder, library: library, logger: logger))
                }
            }
        let listener = try bootstrap.bind(unixDomainSocketPath: socketPath).wait()
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
