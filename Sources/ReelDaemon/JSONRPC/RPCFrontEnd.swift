// The JSON-RPC front end: the Unix control socket on its own event loop, its method table and its push hub.

import Glibc
import Logging
import NIOCore
import ReelCore

/// JSON-RPC 2.0, one message per line, on the control socket. The socket has an event loop of
/// its own (`PollLoop`, thread `reel.control`): a `PollListener` accepts, each connection
/// (`PollConnection`) frames lines and hands them to its `LineSession` (order, backpressure,
/// closing), whose handler, an `RPCSession`, decodes, calls the method table (a thin layer over
/// `ReelCore`) and encodes; one `RPCPushHub` on that loop serves every subscription made on the
/// socket. (The web page's WebSocket speaks the same
/// JSON-RPC through the same `RPCSession` and method table, on the NIO loop with a hub of its
/// own: a hub is confined to its loop.)
final class RPCFrontEnd: Sendable {
    let socketPath: String
    /// Group `audio` may connect (system daemon) or only the owner (user daemon).
    private let systemSocket: Bool
    let loop: PollLoop
    private let listener: PollListener

    init(methods: MethodTable, core: ReelCore, socketPath: String, systemSocket: Bool, logger: Logger) throws {
        self.socketPath = socketPath
        self.systemSocket = systemSocket
        loop = try PollLoop(name: "reel.control")
        let hub = RPCPushHub(loop: loop, core: core, logger: logger)
        listener = PollListener(
            name: "json-rpc", loop: loop, maxLineLength: LineSession.Rules.jsonRPC.maxLineBytes, logger: logger
        ) { connection in
            let session = RPCSession.open(on: connection, methods: methods, hub: hub, logger: logger)
            session.start()
            return session
        }
    }

    /// Starts the loop, binds the socket (replacing a stale socket file, refusing a live one)
    /// and sets its mode.
    func start() throws {
        loop.start()
        try SocketFile.prepare(socketPath)
        try listener.listenUnix(path: socketPath)
        SocketFile.setPermissions(socketPath, system: systemSocket)
    }

    /// Closes the socket and every connection, removes the socket file and stops the loop.
    func stop() {
        listener.stop()
        _ = socketPath.withCString { unlink($0) }
        loop.stop()
    }
}
