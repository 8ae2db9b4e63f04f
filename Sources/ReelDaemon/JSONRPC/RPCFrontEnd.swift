// The JSON-RPC front end: the Unix control socket, its method table and its push hub.

import Logging
import NIOCore
import NIOPosix
import ReelCore

/// JSON-RPC 2.0, one message per line, on the control socket: a `StreamListener` whose
/// connections frame lines (`LineFrameDecoder`) and hand them to an `RPCConnection`, which
/// decodes, calls the method table (a thin layer over `ReelCore`) and encodes; one `RPCPushHub`
/// on the event loop serves every connection's subscriptions.
///
/// The daemon runs one event loop for all front ends; the hub is shared with the WebSocket of
/// the HTTP front end (a front end on a second loop would bring its own hub: the hub is
/// confined to its loop).
final class RPCFrontEnd: Sendable {
    let socketPath: String
    /// Group `audio` may connect (system daemon) or only the owner (user daemon).
    private let systemSocket: Bool
    private let listener: StreamListener

    init(methods: MethodTable, hub: RPCPushHub, socketPath: String, systemSocket: Bool, loop: EventLoop, logger: Logger) {
        self.socketPath = socketPath
        self.systemSocket = systemSocket
        listener = StreamListener(name: "json-rpc", group: loop, logger: logger) { channel in
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder()))
            try channel.pipeline.syncOperations.addHandler(RPCConnection(methods: methods, hub: hub, logger: logger))
        }
    }

    /// Binds the socket (replacing a stale socket file, refusing a live one) and sets its mode.
    func start() throws {
        try SocketFile.prepare(socketPath)
        try listener.listenUnix(path: socketPath)
        SocketFile.setPermissions(socketPath, system: systemSocket)
    }

    /// Closes the socket and every connection, and removes the socket file.
    func stop() {
        listener.stop()
        _ = socketPath.withCString { unlink($0) }
    }
}
