// reeld assembled: live dependencies, the server and the player, run as services.

import Logging
import NIOCore
import NIOPosix
import ReelAudio
import ReelLibrary
import ReelModel
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's parts for one configuration. `main` builds it and runs `run()`.
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    let player: PlayerController
    let recorder: RecorderController
    let library: LibraryController
    let stateFile: PlayerStateFile
    let server: RPCServer
    let logger: Logger
    let notifier: SystemdNotifier

    public static let version = "0.2.0"

    /// Opens the library (repairing what a crash left) and sets up the player and the server.
    /// Throws a `ReelError` when the data directory cannot be used.
    public init(configuration: DaemonConfiguration, environment: [String: String], logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        Self.raiseFileLimit(logger: logger)
        notifier = SystemdNotifier(environment: environment)
        var audioLogger = logger
        audioLogger[metadataKey: "subsystem"] = "reel.audio"
        player = PlayerController(
            device: ALSAOutput(name: configuration.device), timing: configuration.timing, logger: audioLogger)
        var libraryLogger = logger
        libraryLogger[metadataKey: "subsystem"] = "reel.library"
        let store: LibraryStore
        do {
            store = try LibraryStore(directory: configuration.dataDir, logger: libraryLogger)
            let report = try store.reconcile()
            if !report.isClean {
                libraryLogger.notice(
                    "library reconciled",
                    metadata: [
                        "strayFiles": "\(report.strayFiles.count)", "missingRecordings": "\(report.missingRecordings.count)",
                        "partialImports": "\(report.partialImports.count)",
                        "restoredRecordings": "\(report.restoredRecordings.count)",
                    ])
            }
        } catch {
            player.shutdown()
            throw error
        }
        library = LibraryController(store: store, player: player, logger: libraryLogger)
        var recorderLogger = logger
        recorderLogger[metadataKey: "subsystem"] = "reel.recorder"
        recorder = RecorderController(
            device: ALSAInput(name: configuration.captureDevice), timing: configuration.captureTiming, store: store,
            defaults: configuration.recording, logger: recorderLogger)
        recorder.repairUnfinished()
        library.attach(recorder: recorder)
        stateFile = PlayerStateFile(directory: configuration.dataDir, player: player, logger: audioLogger)

        var serverLogger = logger
        serverLogger[metadataKey: "subsystem"] = "reel.server"
        let info = DaemonInfoSource(configuration: configuration, startedAt: monotonicNanoseconds())
        server = RPCServer(
            socketPath: configuration.socket,
            systemSocket: SocketFile.isSystemDaemon(environment: environment, uid: getuid()),
            methods: MethodTable.reeld(
                player: player, recorder: recorder, library: library, mediaRoots: MediaRoots(configuration.mediaRoots),
                info: info),
            player: player, recorder: recorder, library: library, logger: serverLogger)
        if configuration.resumeOnStart != .no, let saved = stateFile.load() {
            restore(saved, store: store, playing: configuration.resumeOnStart == .playing, logger: audioLogger)
        }
    }

    /// Raises the open-file limit to what the system allows: every client is a descriptor.
    static func raiseFileLimit(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let before = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            logger.debug("raised the open-file limit", metadata: ["from": "\(before)", "to": "\(limit.rlim_max)"])
        }
    }

    /// Loads the saved source where it was. A file or recording that is gone is logged and skipped.
    private func restore(_ saved: SavedPlayerState, store: LibraryStore, playing: Bool, logger: Logger) {
        let source: PlayerSource
        let file: String
        switch saved.source {
        case .file(let path):
            source = .file(path: path)
            file = path
        case .item(let id):
            do throws(ReelError) {
                let item = try store.item(id: id)
                source = .item(id: item.id, path: item.path, name: item.name)
                file = try store.audioPath(for: item)
            } catch {
                logger.warning("the saved recording is gone; not restoring it", metadata: ["item": "\(id)", "error": "\(error.message)"])
                return
            }
        }
        logger.info(
            "restoring the player", metadata: ["source": "\(file)", "position": "\(saved.position)", "playing": "\(playing)"])
        player.restore(source: source, file: file, position: saved.position, playing: playing) { result in
            if case .failure(let error) = result {
                logger.warning("cannot restore the saved source; ignoring it", metadata: ["error": "\(error.message)"])
            }
        }
    }

    /// Runs until SIGTERM or SIGINT, then shuts down in reverse order: the server stops
    /// accepting and closes its connections, a recording is finished, then the player stops and
    /// closes the device.
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
        stateFile.start()
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
        recorder.shutdown()
        stateFile.finish()
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
