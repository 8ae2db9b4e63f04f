// reeld assembled: live dependencies, the server and the player, run as services.

import Logging
import NIOCore
import NIOPosix
import ReelAudio
import ReelCore
import ReelModel
import ReelRuntime
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's parts for one configuration: the core on the live devices and every front end
/// on one event loop. `main` builds it and runs `run()`. A new front end is a folder beside
/// `JSONRPC/` and a line here.
public final class Daemon: Sendable {
    public let configuration: DaemonConfiguration
    let core: ReelCore
    let rpc: RPCFrontEnd
    let mpd: MPDFrontEnd
    let http: HTTPFrontEnd
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let logger: Logger
    let notifier: SystemdNotifier

    public static let version = "0.2.0"

    /// Opens the library (repairing what a crash left) and sets up the core and the front ends.
    /// Throws a `ReelError` when the data directory cannot be used.
    public init(configuration: DaemonConfiguration, environment: [String: String], logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        if !HeapSettings.apply() { logger.warning("malloc refused reeld's heap settings; memory may grow after large blocks are freed") }
        Self.raiseFileLimit(logger: logger)
        notifier = SystemdNotifier(environment: environment)
        SndFileWriter.flacCompressionLevel = configuration.recordFLACLevel
        core = try ReelCore(
            dataDirectory: configuration.dataDir, output: ALSAOutput(name: configuration.device),
            timing: configuration.timing, input: ALSAInput(name: configuration.captureDevice),
            captureTiming: configuration.captureTiming, recording: configuration.recording,
            mediaRoots: configuration.mediaRoots, musicDirectories: configuration.musicDirectories, mixer: configuration.mixer, outputs: configuration.resolvedOutputs,
            streams: StreamConfiguration(extraCAFile: configuration.streamCAFile, bufferSeconds: configuration.streamBufferSeconds),
            playlistDirectory: configuration.playlistDirectory, recordingsDirectory: configuration.mpdRecordingsDirectory,
            logger: logger)

        var serverLogger = logger
        serverLogger[metadataKey: "subsystem"] = "reel.server"
        let info = DaemonInfoSource(configuration: configuration, startedAt: monotonicNanoseconds())
        let loop = group.next()
        let systemSocket = SocketFile.isSystemDaemon(environment: environment, uid: getuid())
        let methods = MethodTable.reeld(core: core, info: info)
        // The control socket on its own loop, with its own hub; the web page's WebSocket
        // clients share the NIO loop's hub.
        rpc = try RPCFrontEnd(
            methods: methods, core: core, socketPath: configuration.socket, systemSocket: systemSocket,
            logger: serverLogger)
        let hub = RPCPushHub(loop: loop, core: core, logger: serverLogger)
        var mpdLogger = logger
        mpdLogger[metadataKey: "subsystem"] = "reel.mpd"
        mpd = MPDFrontEnd(core: core, configuration: configuration, systemSocket: systemSocket, loop: loop, logger: mpdLogger)
        var httpLogger = logger
        httpLogger[metadataKey: "subsystem"] = "reel.http"
        http = HTTPFrontEnd(
            core: core, methods: methods, hub: hub, configuration: configuration, loop: loop, logger: httpLogger)
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

    /// Runs until SIGTERM or SIGINT, then shuts down in reverse order: the front ends stop
    /// accepting and close their connections, a recording is finished, then the player saves its
    /// state, stops and closes the device.
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
        core.start(resume: ReelCore.Resume(rawValue: configuration.resumeOnStart.rawValue) ?? .paused)
        try rpc.start()
        try mpd.start()
        try http.start()
        logger.info(
            "reeld is ready",
            metadata: [
                "socket": "\(configuration.socket)", "device": "\(configuration.device)",
                "dataDir": "\(configuration.dataDir)", "version": "\(Self.version)",
                "mpd": "\(configuration.mpdListen.isEmpty ? "off" : configuration.mpdListen.map(\.description).joined(separator: ", "))",
                "http": "\(configuration.httpListen.isEmpty ? "off" : configuration.httpListen.map(\.description).joined(separator: ", "))",
            ])
        notifier.ready()
        if let released = StartupPages.release() {
            logger.debug("handed back the start's pages of the program", metadata: ["addressRange": "\(released / 1_048_576) MB"])
        }
    }

    func stop() {
        notifier.stopping()
        logger.info("reeld is shutting down")
        http.stop()
        mpd.stop()
        rpc.stop()
        try? group.syncShutdownGracefully()
        core.shutdown()
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
