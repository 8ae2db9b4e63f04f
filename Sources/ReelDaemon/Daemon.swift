// reeld assembled: live dependencies, the server and the player, run as services.

import Logging
import NIOCore
import NIOPosix
import ReelAudio
import ReelModel
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's parts for one configuration. `main` builds it and runs `run()`.
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    let player: PlayerController
    let server: RPCServer
    let logger: Logger
    let notifier: SystemdNotifier

    public static let version = "0.1.0"

    public init(configuration: DaemonConfiguration, environment: [String: String], logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        notifier = SystemdNotifier(environment: environment)
        var audioLogger = logger
        audioLogger[metadataKey: "subsystem"] = "reel.audio"
        player = PlayerController(
            device: ALSAOutput(name: configuration.device), timing: configuration.timing, logger: audioLogger)
        var serverLogger = logger
        serverLogger[metadataKey: "subsystem"] = "reel.server"
        let info = DaemonInfoSource(configuration: configuration, startedAt: monotonicNanoseconds())
        server = RPCServer(
            socketPath: configuration.socket,
            systemSocket: SocketFile.isSystemDaemon(environment: environment, uid: getuid()), methods: MethodTable.reeld(player: player, info: info),
            player: player, logger: serverLogger)
    }

    /// Runs until SIGTERM or SIGINT, then shuts down in reverse order: the server stops
    /// accepting and closes its connections, then the player stops and closes the device.
    public func run() async throws {
        let service = DaemonService(daemon: self)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: service)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }

    func start() throws {
        try server.start()
        logger.info(
            "reeld is ready",
            metadata: [
                "socket": "\(configuration.socket)", "device": "\(configuration.device)",
                "dataDir": "\(configuration.dataDir)", "version": "\(Self.version)",
            ])
        notifier.ready()
    }

    func stop() {
        notifier.stopping()
        logger.info("reeld is shutting down")
        server.stop()
        player.shutdown()
    }
}

/// The daemon as one service: start, wait for graceful shutdown, stop.
struct DaemonService: Service {
    let daemon: Daemon

    func run() async throws {
        try daemon.start()
        try? await gracefulShutdown()
        daemon.stop()
    }
}
