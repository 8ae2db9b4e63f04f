// The player's saved state: what to resume after a restart or a power cut.

import Dispatch
import Logging
import ReelAudio
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Keeps `player-state.json` (entry, position, activity, volume) and `queue.json` (entries,
/// options) in the data directory up to date: at once after a change of the player, within
/// half a second of a queue edit (a burst of edits is saved once), every 5 s while playing
/// (the position), and at shutdown. The queue
/// file is rewritten only when the queue changed. Each file is written to a temp file, fsynced,
/// renamed over the old one, and the directory fsynced, so a power cut leaves the old or the
/// new state, never half of one. Writes run on their own queue, never on the audio thread or
/// the event loop.
public final class PlayerStateFile: @unchecked Sendable {
    static let saveInterval = 5.0
    static let settleDelay = 0.5

    let path: String
    let queuePath: String
    private let directory: String
    private let player: PlayerController
    private let logger: Logger
    private let queue = DispatchQueue(label: "reel.player.state")
    private var timer: DispatchSourceTimer?
    private var consumers: (StateFeed<PlayerState>.Consumer, StateFeed<QueueSummary>.Consumer)?
    /// Touched on `queue` only.
    private var lastSaved: SavedPlayerState?
    private var lastSavedQueueVersion: Int?
    private var saveScheduled = false
    private var lastPlayerVersion: UInt64 = 0
    /// The volume and mute to save, when a mixer is set (read on `queue`).
    var mixerState: (@Sendable () -> (volume: Int?, muted: Bool))?
    /// Which outputs are on, by name (read on `queue`).
    var outputsState: (@Sendable () -> [String: Bool])?

    public init(directory: String, player: PlayerController, logger: Logger) {
        self.directory = directory
        self.path = directory + "/player-state.json"
        self.queuePath = directory + "/queue.json"
        self.player = player
        self.logger = logger
    }

    /// The saved state and queue, nil when there is none. A file that cannot be read is logged
    /// and ignored.
    public func load() -> (SavedPlayerState, SavedQueue)? {
        guard let json = read(path) else { return nil }
        let state: SavedPlayerState
        do throws(ReelError) {
            state = try SavedPlayerState(json: json)
        } catch {
            logger.warning("\(error.message); ignoring it", metadata: ["file": "\(path)"])
            return nil
        }
        if let legacy = state.legacySource {
            return (state, SavedQueue(entries: [legacy], options: QueueOptions()))
        }
        guard let queueJSON = read(queuePath) else { return (state, SavedQueue(entries: [], options: QueueOptions())) }
        do throws(ReelError) {
            return (state, try SavedQueue(json: queueJSON))
        } catch {
            logger.warning("\(error.message); ignoring it", metadata: ["file": "\(queuePath)"])
            return (state, SavedQueue(entries: [], options: QueueOptions()))
        }
    }

    private func read(_ path: String) -> JSONValue? {
        guard let file = fopen(path, "r") else {
            if errno != ENOENT {
                logger.warning("cannot read the saved player state; ignoring it", metadata: ["file": "\(path)"])
            }
            return nil
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 256 << 20 {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        do {
            return try JSONValue.parse(bytes)
        } catch {
            logger.warning("the saved player state is not valid JSON (\(error)); ignoring it", metadata: ["file": "\(path)"])
            return nil
        }
    }

    /// Starts saving on changes and every few seconds while playing.
    public func start() {
        let playerConsumer = player.changes.addConsumer { [weak self] in self?.changed(player: true) }
        let queueConsumer = player.queueChanges.addConsumer { [weak self] in self?.changed(player: false) }
        consumers = (playerConsumer, queueConsumer)
        queue.async { [self] in saveNow() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.saveInterval, repeating: Self.saveInterval)
        timer.setEventHandler { [weak self] in
            guard let self, self.player.changes.latest.value.state == .playing else { return }
            self.saveNow()
        }
        timer.resume()
        self.timer = timer
    }

    /// A change of the player (play, pause, seek, a new entry) is saved at once; queue edits
    /// once their burst has settled (adding a thousand files writes the queue once or twice).
    func changed(player playerChanged: Bool) {
        queue.async { [self] in
            guard let consumers else { return }
            let playerVersion = player.changes.take(for: consumers.0).version
            _ = player.queueChanges.take(for: consumers.1)
            if playerChanged && playerVersion != lastPlayerVersion {
                lastPlayerVersion = playerVersion
                saveNow()
                return
            }
            guard !saveScheduled else { return }
            saveScheduled = true
            queue.asyncAfter(deadline: .now() + Self.settleDelay) { [self] in
                saveScheduled = false
                saveNow()
            }
        }
    }

    /// Saves within half a second (an output turned on or off).
    func saveSoon() {
        changed(player: false)
    }

    /// Saves the state now and stops (at shutdown, before the player stops).
    public func finish() {
        if let consumers {
            player.changes.removeConsumer(consumers.0)
            player.queueChanges.removeConsumer(consumers.1)
        }
        consumers = nil
        queue.sync {
            timer?.cancel()
            timer = nil
            saveNow()
        }
    }

    /// Writes what changed. On `queue`.
    private func saveNow() {
        let (state, queueSnapshot) = player.savedState()
        let mixer = mixerState?()
        var saved = state
        saved.volume = mixer?.volume
        saved.muted = mixer?.muted ?? false
        saved.outputs = outputsState?() ?? [:]
        if queueSnapshot.version != lastSavedQueueVersion {
            if write(queueSnapshot.saved.json, to: queuePath) { lastSavedQueueVersion = queueSnapshot.version }
        }
        if saved != lastSaved, write(saved.json, to: path) {
            lastSaved = saved
        }
    }

    /// Writes `json` to `path` atomically and durably; false (logged) when it could not.
    private func write(_ json: JSONValue, to path: String) -> Bool {
        let temporary = path + ".tmp"
        let bytes = json.jsonBytes + [0x0A]
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            logger.warning("cannot save the player state", metadata: ["file": "\(temporary)", "error": "\(String(cString: strerror(errno)))"])
            return false
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 { break }
            offset += written
        }
        let synced = fsync(fd)
        close(fd)
        guard offset == bytes.count, synced == 0, rename(temporary, path) == 0 else {
            logger.warning("cannot save the player state", metadata: ["file": "\(path)", "error": "\(String(cString: strerror(errno)))"])
            unlink(temporary)
            return false
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
        return true
    }
}
