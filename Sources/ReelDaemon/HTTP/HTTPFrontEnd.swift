// The HTTP front end: the web page, its WebSocket (JSON-RPC), recordings' audio and uploads.

import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import ReelCore

#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 on every `http_listen` address, with SwiftNIO's own HTTP/1 and WebSocket handlers:
/// a `StreamListener` per address whose connections run NIO's HTTP server pipeline, an upgrader
/// for `GET /rpc` and an `HTTPConnection` for everything else. `/rpc` becomes a WebSocket whose
/// messages go through a `WebSocketRPCAdapter` to a `ChannelLineTransport` and an `RPCSession`, with the same method
/// table and `RPCPushHub` as the Unix socket: the same JSON-RPC, subscriptions and limits.
/// File work runs on `HTTPFileIO`'s two threads, never on the event loop.
final class HTTPFrontEnd: Sendable {
    let addresses: [ListenAddress]
    private let listeners: [(address: ListenAddress, listener: StreamListener)]
    private let fileIO = HTTPFileIO(threads: 2)

    /// The largest WebSocket frame read (a message may be split in several): the socket's
    /// line limit.
    static let maxFrameBytes = 1 << 20

    init(
        core: ReelCore, methods: MethodTable, hub: RPCPushHub, configuration: DaemonConfiguration, loop: EventLoop,
        logger: Logger
    ) {
        addresses = configuration.httpListen
        let rule = HTTPAccessRule(
            listenHosts: configuration.httpListen.compactMap { if case .tcp(let host, _) = $0 { host } else { nil } },
            machineName: Self.machineName(), password: configuration.httpPassword)
        let services = HTTPServices(
            core: core, rule: rule, fileIO: fileIO, uploadLimit: configuration.httpUploadLimit, logger: logger)
        var listeners: [(ListenAddress, StreamListener)] = []
        for address in configuration.httpListen {
            let listener = StreamListener(name: "http \(address)", group: loop, logger: logger) { channel in
                try Self.initialize(channel, services: services, methods: methods, hub: hub)
            }
            listeners.append((address, listener))
        }
        self.listeners = listeners
    }

    /// Sets up one connection: NIO's HTTP server pipeline with the WebSocket upgrader, then an
    /// `HTTPConnection` (removed if the connection becomes a WebSocket).
    private static func initialize(
        _ channel: Channel, services: HTTPServices, methods: MethodTable, hub: RPCPushHub
    ) throws {
        let logger = services.logger
        let rule = services.rule
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: maxFrameBytes, automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                let local = channel.localAddress
                let allowed =
                    HTTPRequestTarget(head.uri)?.path == "/rpc"
                    && rule.check(
                        host: head.headers.first(name: "host"), origin: head.headers.first(name: "origin"),
                        authorization: head.headers.first(name: "authorization"), localAddress: local?.ipAddress,
                        localPort: local?.port, originRule: .required) == nil
                // Refused: the request goes on to `HTTPConnection`, which answers why.
                return channel.eventLoop.makeSucceededFuture(allowed ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(WebSocketRPCAdapter())
                    try channel.pipeline.syncOperations.addHandler(ChannelLineTransport(eventLoop: channel.eventLoop, logger: logger) { transport in
                            RPCSession.open(on: transport, methods: methods, hub: hub, logger: logger)
                        })
                }
            })
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(
            withServerUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    context.pipeline.removeHandler(name: HTTPFrontEnd.handlerName, promise: nil)
                }
            ))
        try channel.pipeline.syncOperations.addHandler(HTTPConnection(services: services), name: handlerName)
    }

    static let handlerName = "reel.http"

    /// This machine's name (`gethostname`), for the Host rule.
    static func machineName() -> String? {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return nil }
        let text = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// Binds every address; throws naming the one that cannot be used (a port already taken).
    func start() throws {
        guard !listeners.isEmpty else { return }
        fileIO.start()
        for case (.tcp(let host, let port), let listener) in listeners {
            try listener.listenTCP(host: host, port: port)
        }
    }

    /// Closes every listener and connection (an upload in progress is removed), then the file threads.
    func stop() {
        for (_, listener) in listeners { listener.stop() }
        if !listeners.isEmpty { fileIO.shutdown() }
    }
}
