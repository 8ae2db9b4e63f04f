// The player's saved state: what to resume after a restart or a power cut.

import Dispatch
import Logging
import ReelAudio
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#endif

/// What is saved: the source (a file path or a recording's id), the position and the activity.
public struct SavedPlayerState: Equatable {
    enum Source: Equatable {
        case file(String)
        case item(String)
    }

    var source: Source
    var position: Double
    var state: PlayerActivity

    init(source: Source, position: Double, state: PlayerActivity) {
        self.source = source
        self.position = position
        self.state = state
    }

    /// The state worth saving, or nil when nothing is loaded.
    init?(_ player: PlayerState) {
        switch player.source {
        case .file(let path)?: source = .file(path)
        case .item(let id, _, _)?: source = .item(id)
        case nil: return nil
        }
        position = player.position
        state = player.state
    }

    var json: JSONValue {
        let sourceJSON: JSONValue
        switch source {
        case .file(let path): sourceJSON = ["file": .string(path)]
        case .item(let id): sourceJSON = ["item": .string(id)]
        }
        return ["version": 1, "source": sourceJSON, "position": .double(position), "state": .string(state.rawValue)]
    }

    /// Throws a message naming what is wrong.
    init(json: JSONValue) throws(ReelError) {
        func corrupt(_ what: String) -> ReelError { ReelError(.corruptFile, "the saved player state \(what)") }
        guard json["version"]?.intValue == 1 else { throw corrupt("has no version 1") }
        if let path = json["source"]?["file"]?.stringValue, path.hasPrefix("/") {
            source = .file(path)
        } else if let id = json["source"]?["item"]?.stringValue {
            source = .item(id)
        } else {
            throw corrupt("has no source")
        }
        guard let position = json["position"]?.doubleValue, position.isFinite, position >= 0 else {
            throw corrupt("has no valid position")
        }
        guard let raw = json["state"]?.stringValue, let state = PlayerActivity(rawValue: raw) else {
            throw corrupt("has no valid state")
        }
        self.position = position
        self.state = state
    }
}

/// Keeps `player-state.json` in the data directory up to date: at once after each discrete
/// change (play, pause, stop, seek, a new source), every 5 s while playing and never more often
/// than that while nothing else changes (to spare SD cards), and at shutdown. Written to a temp
/// file, fsynced, renamed over the old one, and the directory fsynced, so a power cut leaves the
/// old or the new state, never half of one. Writes run on their own queue, never on the audio
/// thread or the event loop.
public final class PlayerStateFile: @unchecked Sendable {
    static let saveInterval = 5.0

    let path: String
    private let directory: String
    private let player: PlayerController
    private let logger: Logger
    private let queue = DispatchQueue(label: "reel.player.state")
    private var timer: DispatchSourceTimer?
    private var consumer: StateFeed<PlayerState>.Consumer?
    /// Touched on `queue` only.
    private var lastSaved: SavedPlayerState?

    public init(directory: String, player: PlayerController, logger: Logger) {
        self.directory = directory
        self.path = directory + "/player-state.json"
        self.player = player
        self.logger = logger
    }

    /// The saved state, nil when there is none. A file that cannot be read is logged and ignored.
    public func load() -> SavedPlayerState? {
        guard let file = fopen(path, "r") else {
            if errno != ENOENT {
                logger.warning("cannot read the saved player state; ignoring it", metadata: ["file": "\(path)"])
            }
            return nil
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        do {
            let json = try JSONValue.parse(bytes)
            return try SavedPlayerState(json: json)
        } catch let error as ReelError {
            logger.warning("\(error.message); ignoring it", metadata: ["file": "\(path)"])
        } catch {
            logger.warning("the saved player state is not valid JSON (\(error)); ignoring it", metadata: ["file": "\(path)"])
        }
        return nil
    }

    /// Starts saving on changes and every few seconds while playing.
    public func start() {
        let queue = self.queue
        let changes = player.changes
        // The consumer is known only once registered, and a publish may wake it before then.
        let slot = Locked<StateFeed<PlayerState>.Consumer?>(nil)
        let consumer = changes.addConsumer { [weak self] in
            guard let file = self else { return }
            queue.async {
                guard let consumer = slot.current else { return }
                file.save(changes.take(for: consumer).value)
            }
        }
        slot.withLock { $0 = consumer }
        self.consumer = consumer
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.saveInterval, repeating: Self.saveInterval)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let state = self.player.state
            if state.state == .playing { self.save(state) }
        }
        timer.resume()
        self.timer = timer
    }

    /// Saves the state now and stops (at shutdown, before the player stops).
    public func finish() {
        if let consumer { player.changes.removeConsumer(consumer) }
        consumer = nil
        let state = player.state
        queue.sync {
            timer?.cancel()
            timer = nil
            save(state)
        }
    }

    private func save(_ state: PlayerState) {
        guard let saved = SavedPlayerState(state), saved != lastSaved else { return }
        let temporary = path + ".tmp"
        let bytes = saved.json.jsonBytes + [0x0A]
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            logger.warning("cannot save the player state", metadata: ["file": "\(temporary)", "error": "\(String(cString: strerror(errno)))"])
            return
        }
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            logger.warning("cannot save the player state", metadata: ["file": "\(path)", "error": "\(String(cString: strerror(errno)))"])
            unlink(temporary)
            return
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
        lastSaved = saved
    }
}
