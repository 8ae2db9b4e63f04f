// The player's control side: turns commands into engine commands and engine changes into PlayerState.

import Dispatch
import Logging
import ReelAudio
import ReelLibrary
import ReelModel

/// What `play` plays: a file by absolute path, or a recording of the library.
public enum PlayRequest: Sendable, Equatable {
    case file(String)
    case recording(ItemReference)
}

/// Owns the playback engine and what it is playing, and the rules of playing: a file must be
/// absolute and inside the media roots, a recording must exist and have its audio.
///
/// Threads: commands come from any front end's thread; changes from the audio thread. Replies
/// are called on the audio thread (or the file-opening queue) and must hop to their own thread.
/// Every change is published to `changes` (built once, on the thread that made it), which the
/// front ends take on theirs: nothing front-end specific runs on the audio thread.
public final class PlayerController: @unchecked Sendable {
    public typealias Reply = @Sendable (Result<PlayerState, ReelError>) -> Void

    private let engine: PlaybackEngine
    private let store: LibraryStore
    private let mediaRoots: MediaRoots
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
    /// The player's state after every change of state, source or format, and every seek.
    public let changes = StateFeed(PlayerState())

    public init(device: PCMOutput, timing: PCMTiming, store: LibraryStore, mediaRoots: MediaRoots, logger: Logger) {
        self.store = store
        self.mediaRoots = mediaRoots
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

    /// Publishes the state after a change (on the audio thread, or wherever the source changed).
    fileprivate func engineChanged() {
        changes.publish(state)
    }

    // MARK: Commands

    /// Plays a file (absolute, inside the media roots: else `not_found` / `forbidden`) or a
    /// recording (`not_found` if there is none) from `position` seconds.
    public func play(_ request: PlayRequest, position: Double = 0, reply: @escaping Reply) {
        switch request {
        case .file(let path):
            do throws(ReelError) {
                try mediaRoots.check(path)
            } catch {
                reply(.failure(error))
                return
            }
            load(source: .file(path: path), path: path, position: position, startPlaying: true, reply: reply)
        case .recording(let reference):
            openQueue.async { [self] in
                let item: Item
                let file: String
                do throws(ReelError) {
                    item = try store.item(reference)
                    file = try store.audioPath(for: item)
                } catch {
                    reply(.failure(error))
                    return
                }
                load(
                    source: .item(id: item.id, path: item.path, name: item.name), path: file, position: position,
                    startPlaying: true, reply: reply)
            }
        }
    }

    /// Loads a saved source at `position`, paused or playing (resume after a restart).
    public func restore(source: PlayerSource, file: String, position: Double, playing: Bool, reply: @escaping Reply) {
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

    /// The reply to a command: the state it published (built once for the push and the reply),
    /// or, when it changed nothing, the state now.
    private func adapt(_ reply: @escaping Reply) -> PlaybackCommand.Reply {
        { [self] result in
            reply(result.map { snapshot in
                let published = changes.latest.value
                let current = published.state == snapshot.activity && published.state != .playing
                return current ? published : state
            })
        }
    }
}

/// Lets the engine's change handler reach the controller that owns the engine without a cycle.
private final class ChangeRelay: @unchecked Sendable {
    weak var target: PlayerController?
    func fire() { target?.engineChanged() }
}
