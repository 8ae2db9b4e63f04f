// The MPD front end: its listeners, its command table and its idle hub, on the daemon's loop.

import Logging
import NIOCore
import NIOPosix
import ReelCore

/// MPD's protocol on every `mpd_listen` address: a `StreamListener` per address whose
/// connections frame lines (`LineFrameDecoder`) and hand them through a `ChannelLineTransport`
/// to their `LineSession` (order, backpressure, closing), whose handler, an `MPDConnection`,
/// tokenizes, checks and runs commands from the `MPDCommandTable` (thin handlers over
/// `ReelCore`); one `MPDEventHub` turns the core's feeds into idle events for all of them.
final class MPDFrontEnd: Sendable {
    let addresses: [ListenAddress]
    private let listeners: [(address: ListenAddress, listener: StreamListener)]
    private let hub: MPDEventHub
    /// Group `audio` may connect to a Unix socket listener (system daemon), or only the owner.
    private let systemSocket: Bool

    init(core: ReelCore, configuration: DaemonConfiguration, systemSocket: Bool, loop: EventLoop, logger: Logger) {
        self.systemSocket = systemSocket
        addresses = configuration.mpdListen
        let hub = MPDEventHub(loop: loop, core: core)
        self.hub = hub
        let context = MPDContext(
            core: core, hub: hub, view: MPDLibraryView(
                recordingsDirectory: configuration.mpdRecordingsDirectory, musicRoots: core.music.roots),
            password: configuration.mpdPassword, startedAt: NIODeadline.now(), listCache: MPDListCache(core: core))
        let table = MPDCommandTable.reeld(context)
        let permission: MPDPermission = configuration.mpdPassword == nil ? .all : []
        var listeners: [(ListenAddress, StreamListener)] = []
        for address in configuration.mpdListen {
            let isLocal: Bool
            if case .unix = address { isLocal = true } else { isLocal = false }
            let listener = StreamListener(name: "mpd \(address)", group: loop, logger: logger) { channel in
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(LineFrameDecoder(maxLineLength: LineSession.Rules.mpd.maxLineBytes)))
                let client = MPDClient(permission: permission, isLocal: isLocal)
                try channel.pipeline.syncOperations.addHandler(
                    MPDConnection.channelHandler(
                        eventLoop: channel.eventLoop, table: table, hub: hub, client: client, logger: logger))
            }
            listeners.append((address, listener))
        }
        self.listeners = listeners
    }

    /// Binds every address (a Unix socket path replacing a stale file), then starts the hub.
    /// Throws naming the address that cannot be used (a port already taken).
    func start() throws {
        for (address, listener) in listeners {
            switch address {
            case .tcp(let host, let port):
                try listener.listenTCP(host: host, port: port)
            case .unix(let path):
                try SocketFile.prepare(path)
                try listener.listenUnix(path: path)
                SocketFile.setPermissions(path, system: systemSocket)
            }
        }
        let hub = self.hub
        try hub.loop.submit { hub.start() }.wait()
    }

    /// Closes every listener and connection, removes socket files, leaves the core's feeds.
    func stop() {
        for (address, listener) in listeners {
            listener.stop()
            if case .unix(let path) = address { _ = path.withCString { unlink($0) } }
        }
        let hub = self.hub
        try? hub.loop.submit { hub.stop() }.wait()
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// What the command handlers share: the core, the idle hub, the library's MPD names, the
/// password, and when the front end started (for `stats`).
struct MPDContext: Sendable {
    let core: ReelCore
    let hub: MPDEventHub
    let view: MPDLibraryView
    let password: String?
    let startedAt: NIODeadline
    /// `list` answers kept while the database does not change.
    let listCache: MPDListCache
}

extension MPDCommandTable {
    /// Every command Reel answers over MPD.
    static func reeld(_ context: MPDContext) -> MPDCommandTable {
        MPDCommandTable(
            MPDConnectionCommands.commands(context) + MPDPlaybackCommands.commands(context)
                + MPDStatusCommands.commands(context) + MPDQueueCommands.commands(context)
                + MPDStreamCommands.commands(context)
                + MPDDatabaseCommands.commands(context) + MPDTagCommands.commands(context)
                + MPDArtCommands.commands(context) + MPDOutputCommands.commands(context)
                + MPDMessageCommands.commands(context.hub.messages) + MPDReplayGainCommands.commands(context)
                + MPDPlaylistCommands.commands(context))
    }
}
