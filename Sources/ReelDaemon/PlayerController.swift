// The player's control side: turns commands into engine commands and engine changes into PlayerState.

import Dispatch
import Logging
import ReelAudio
import ReelLibrary
import ReelModel

/// Owns the playback engine and what it is playing. Thread-safe: commands come from the server's
/// event loop, changes from the audio thread; replies and observers are called on the audio
/// thread (or the file-opening queue) and must hop to their own thread.
public final class PlayerController: @unchecked Sendable {
    public typealias Reply = @Sendable (Result<PlayerState, ReelError>) -> Void
    public typealias Observer = @Sendable (PlayerState) -> Void

    private let engine: PlaybackEngine
    private let logger: Logger
    /// Opening a file can take a while (an MP3 is scanned to its end); it never runs on the
    /// event loop or the audio thread.
    private let openQueue = DispatchQueue(label: "reel.player.open")
    private struct Shared {
        var nextToken = 1
        var sources: [Int: PlayerSource] = [:]
        /// The file each loaded source plays from (a recording's audio file for an item).
        var files: [Int: String] = [:]
    }
    private let shared = Locked(Shared())
    private let observers = ObserverList<PlayerState>()

    public init(device: PCMOutput, timing: PCMTiming, logger: Logger) {
        self.logger = logger
        let relay = ChangeRelay()
        engine = PlaybackEngine(device: device, timing: timing, logger: logger) { _ in relay.fire() }
        relay.target = self
        engine.start()
    }

    /// Stops playback and ends the audio thread.
    public func shutdown() {
        engine.shutdown()
    }

    /// The player's state now, with the position interpolated to this moment. Any thread.
    public var state: PlayerState {
        let (snapshot, position) = engine.currentPosition()
        let now = monotonicNanoseconds()
        let source = snapshot.token.flatMap { token in shared.withLock { $0.sources[token] } }
        return PlayerState(
            state: snapshot.activity, position: position, duration: snapshot.duration,
            source: source, format: snapshot.format, timestamp: Double(now) / 1e9,
            underruns: snapshot.counters.xruns, error: snapshot.error)
    }

    // MARK: Observers

    /// Calls `observer` after every change of state, source, format or position by seek.
    @discardableResult
    public func addObserver(_ observer: @escaping Observer) -> Int {
        observers.add(observer)
    }

    public func removeObserver(_ id: Int) {
        observers.remove(id)
    }

    fileprivate func engineChanged() {
        observers.notify { state }
    }

    // MARK: Commands

    /// Plays `path` (absolute) from `position` seconds.
    public func play(file path: String, position: Double = 0, reply: @escaping Reply) {
        guard path.hasPrefix("/") else {
            reply(.failure(ReelError(.notFound, "\(path) is not an absolute path")))
            return
        }
        load(source: .file(path: path), path: path, position: position, startPlaying: true, reply: reply)
    }

    /// Plays a recording of the library, whose audio is at `file`.
    public func play(recording item: Item, file: String, position: Double = 0, reply: @escaping Reply) {
        load(
            source: .item(id: item.id, path: item.path, name: item.name), path: file, position: position,
            startPlaying: true, reply: reply)
    }

    /// Loads a saved source at `position`, paused or playing (resume after a restart).
    func restore(source: PlayerSource, file: String, position: Double, playing: Bool, reply: @escaping Reply) {
        load(source: source, path: file, position: position, startPlaying: playing, reply: reply)
    }

    /// Follows the recording being played: a rename or move (of it or a folder above it) updates
    /// the source at once; its deletion stops playback. Called on the library's delivery queue;
    /// `lookup` reads an item's current state.
    func libraryChanged(_ changes: [LibraryChange], lookup: (String) -> Item?) {
        guard let token = engine.snapshot.token,
              case .item(let id, let oldPath, _)? = shared.withLock({ $0.sources[token] })
        else { return }
        if changes.contains(where: { $0.kind == .removed && $0.item.id == id }) {
            shared.withLock { $0.sources[token] = nil }
            logger.info("the recording being played was deleted; stopping", metadata: ["path": "\(oldPath)"])
            engine.send(.stop({ _ in }))
            return
        }
        guard changes.contains(where: { $0.kind == .renamed || $0.kind == .moved }),
              let item = lookup(id), item.path != oldPath
        else { return }
        shared.withLock { $0.sources[token] = .item(id: item.id, path: item.path, name: item.name) }
        engineChanged()
    }

    public func pause(reply: @escaping Reply) {
        engine.send(.pause(adapt(reply)))
    }

    public func resume(reply: @escaping Reply) {
        if engine.snapshot.activity == .stopped, let (path, source) = reloadableSource() {
            load(source: source, path: path, position: 0, startPlaying: true, reply: reply)
            return
        }
        engine.send(.resume(adapt(reply)))
    }

    public func toggle(reply: @escaping Reply) {
        if engine.snapshot.activity == .stopped, let (path, source) = reloadableSource() {
            load(source: source, path: path, position: 0, startPlaying: true, reply: reply)
            return
        }
        engine.send(.toggle(adapt(reply)))
    }

    public func stop(reply: @escaping Reply) {
        engine.send(.stop(adapt(reply)))
    }

    public func seek(_ target: SeekTarget, reply: @escaping Reply) {
        engine.send(.seek(target, adapt(reply)))
    }

    // MARK: Loading

    private func load(source: PlayerSource, path: String, position: Double, startPlaying: Bool, reply: @escaping Reply) {
        guard position.isFinite, position >= 0, position <= maximumSeconds else {
            reply(.failure(ReelError(.outOfRange, "cannot start at \(position) s: a position is 0 or more seconds")))
            return
        }
        openQueue.async { [self] in
            let reader: AudioFileReader
            do throws(ReelError) {
                reader = try AudioFileOpener.open(path: path)
            } catch var error {
                if case .item(_, let treePath, _) = source {
                    // Name the recording, not its file inside the data directory.
                    error.message = "cannot play the recording \(treePath): \(error.message)"
                }
                logger.info("cannot play", metadata: ["file": "\(path)", "error": "\(error.message)"])
                reply(.failure(error))
                return
            }
            if let duration = reader.duration, position > duration {
                reply(.failure(ReelError(
                    .outOfRange,
                    "cannot start \(path) at \(formatSeconds(position)): it is \(formatSeconds(duration)) long")))
                return
            }
            let token = shared.withLock { shared in
                let token = shared.nextToken
                shared.nextToken += 1
                shared.sources = [token: source]
                shared.files = [token: path]
                return token
            }
            let startFrame = frameIndex(seconds: position, rate: Double(reader.pcmFormat.sampleRate))
            logger.info("play", metadata: ["file": "\(path)", "format": "\(reader.format.codec)"])
            engine.send(.load(ReaderBox(reader), token: token, startFrame: startFrame, startPlaying: startPlaying, adapt(reply)))
        }
    }

    /// The current source and its file, to open again from the start (after stop or end of file).
    private func reloadableSource() -> (String, PlayerSource)? {
        guard let token = engine.snapshot.token else { return nil }
        return shared.withLock { shared in
            guard let source = shared.sources[token], let file = shared.files[token] else { return nil }
            return (file, source)
        }
    }

    private func adapt(_ reply: @escaping Reply) -> PlaybackCommand.Reply {
        { [self] result in reply(result.map { _ in state }) }
    }
}

/// Lets the engine's change handler reach the controller that owns the engine without a cycle.
private final class ChangeRelay: @unchecked Sendable {
    weak var target: PlayerController?
    func fire() { target?.engineChanged() }
}
