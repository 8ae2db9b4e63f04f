// The player's control side: the queue, the engine, and the PlayerState every front end sees.

import Dispatch
import Logging
import ReelAudio
internal import ReelLibrary
import ReelModel
import ReelRuntime

/// What `play` plays: a file by absolute path, or a recording (or a folder's recordings).
public enum PlayRequest: Sendable, Equatable {
    case file(String)
    case recording(ItemReference)
    /// An http(s) URL (a stream or a file on a server).
    case url(String)
    /// An album of the music folders, as `QueueAddition.album` (a scheduled alarm plays one).
    case album(name: String, albumArtist: String?)
    /// Many sources in order (a stored playlist's entries): those that cannot be played now (a
    /// file gone, a format no decoder takes) are left out, as `add(_:skippable:…)` does.
    case sources([QueueAddition])
}

/// Owns the playback engine and the play queue, and the rules of playing: a file must be
/// absolute and inside the media roots, a recording must exist and have its audio; what plays
/// next is the queue's to say (repeat, single, random, consume, as MPD).
///
/// Files of this type: this one (state, player commands), `+Queue` (queue commands),
/// `+Chain` (starting entries, lining up the next one with the engine, following the engine),
/// `+Opening` (URL entries opened off `work`, station playlists expanded), `+Tags` (tags a
/// client sets on a URL entry).
///
/// Threads: commands come from any front end's thread. Quick ones (queue edits, status) run
/// there under `shared`'s lock; anything that opens a file or reads the library runs on `work`,
/// a serial queue that also reacts to the engine; what waits on the network (connecting to a
/// URL, fetching a station playlist) runs on a thread of its own and comes back to `work`
/// (`+Opening`), so that nothing on `work` waits on a server. The engine calls back on the audio thread,
/// which only publishes and hands over to `work`. Replies are called once the state they leave
/// is saved (`SaveBarrier`), on the state file's queue (or, before it starts, the audio thread or
/// `work`), and must hop to their own thread. Every change is published to `changes` and
/// `queueChanges` (built once), which the front ends take on theirs.
public final class PlayerController: @unchecked Sendable {
    public typealias Reply = @Sendable (Result<PlayerState, ReelError>) -> Void

    let engine: PlaybackEngine
    let store: LibraryStore
    let mediaRoots: MediaRoots
    let logger: Logger
    /// Opens files, reads the library, reacts to the engine: never the event loop or the audio thread.
    let work = DispatchQueue(label: "reel.player.work")
    /// Writes a recording's marks into its file as chapters, then calls `done` (the recorder's
    /// `writeChapters(ofRecording:done:)`, which never touches a file it is writing). Set once by
    /// `ReelCore` before any command; nil keeps `player.mark`'s marks in the library only.
    var writeChapters: (@Sendable (_ recording: String, _ done: @escaping @Sendable () -> Void) -> Void)?

    /// A track handed to the engine: which entry it plays, from which file.
    struct Track {
        var entry: Int
        var source: PlayerSource
        var file: String
        /// Its ReplayGain tags (or a recording's measured gain), read when it was opened.
        var replayGain: ReplayGainInfo = .none
        /// A URL source's connection (its name, title and state are the player's).
        var stream: HTTPStream? = nil
        /// The station name and title the stream said last, once put into the entry.
        var heardTags: [String?]? = nil
    }

    struct Shared {
        var queue = PlayQueue()
        var nextToken = 1
        /// Tokens the engine holds or held last, to their tracks.
        var tracks: [Int: Track] = [:]
        /// The audible token the control side has acted on (advance, consume).
        var audibleToken: Int?
        /// The token whose end of playback the control side has acted on.
        var endedToken: Int?
        /// Line-ups sent and not yet seen in the engine's chain: token → the entry lined up after it.
        var linedUp: [Int: Int] = [:]
        /// Why the last entry was skipped; shown on the player stream until the next command.
        var skipError: ReelError?
        /// Starts so far: a start's URL open that ends after a later start (or a stop) began is
        /// dropped (see `PlayerController+Opening`).
        var startSerial = 0
        /// The URL being opened for a start, off `work`: the state shows it connecting.
        var connecting: Connecting?
        /// The URL being opened to line up after a token, off `work`.
        var liningUp: LiningUp?
        /// The wake-up for the next title a stream marked (see `streamChanged`).
        var titleWakeUps = TitleWakeUps()

        mutating func newToken(for track: Track) -> Int {
            let token = nextToken
            nextToken += 1
            tracks[token] = track
            return token
        }
    }
    let shared = Locked(Shared())
    /// The time spent playing, fed on the audio thread by every change of the engine's activity.
    let playTime = Locked(PlayTimeCounter())
    /// Holds the replies to commands until the state they left is saved (see `SaveBarrier`).
    let saves = SaveBarrier()
    /// The ReplayGain settings (the mixer's; see `PlayerController+ReplayGain`).
    let replayGainSettings = Locked(ReplayGainSettings())
    /// What a playlist item of the `/Music` branch adds (its entries, each or why not), set once
    /// by the core to the stored playlists' reading of playlist files
    /// (`PlaylistStore.additions(ofPlaylistItem:)`); called on `work`.
    let playlistFileAdditions = Locked<(@Sendable (Item) throws(ReelError) -> [Result<QueueAddition, ReelError>])?>(nil)
    /// When the sleep timer stops the player (`PlayerController+Sleep`), shown in the state.
    let sleep = Locked(SleepTimerState())

    /// The player's state after every change of state, source or format, and every seek.
    public let changes = StateFeed(PlayerState())
    /// The queue's summary after every change of its entries, current entry or options.
    public let queueChanges = StateFeed(
        QueueSummary(version: 0, entriesVersion: 0, length: 0, current: nil, next: nil, options: QueueOptions()))

    /// How URL sources connect (the extra CA file, the buffer).
    let streamConfiguration: StreamConfiguration

    init(
        device: PCMOutput, timing: PCMTiming, store: LibraryStore, mediaRoots: MediaRoots, logger: Logger,
        streamConfiguration: StreamConfiguration = StreamConfiguration()
    ) {
        self.streamConfiguration = streamConfiguration
        self.store = store
        self.mediaRoots = mediaRoots
        self.logger = logger
        let relay = EngineRelay()
        engine = PlaybackEngine(
            device: device, timing: timing, logger: logger,
            onWantsNext: { token in relay.wantsNext(token) },
            onChange: { snapshot in relay.changed(snapshot) })
        relay.target = self
        engine.start()
    }

    /// Stops playback and ends the audio thread.
    public func shutdown() {
        supersedeStarts()  // a URL being opened is given up, its threads end
        engine.shutdown()
        work.sync {}
    }

    /// Seconds the player has spent playing since it started (MPD's `playtime`). Any thread.
    public var secondsPlayed: Double {
        let now = monotonicNanoseconds()
        return playTime.withLock { $0.seconds(at: now) }
    }

    /// The player's state now, with the position interpolated to this moment. Any thread.
    public var state: PlayerState {
        let now = monotonicNanoseconds()  // one clock reading for the position and the timestamp
        let (snapshot, position) = engine.currentPosition(at: now)
        return state(of: snapshot, position: position, now: now)
    }

    /// The state of `snapshot`. Playing or paused, the entry and source are the loaded track's
    /// (its entry's source follows renames; one whose entry left the queue keeps its own). Once
    /// stopped, the entry is the queue's current one, where play starts: the loaded one after
    /// `stop`, one not loaded yet after removing the paused entry or a restart (its source,
    /// duration and format as the queue knows them), none after the queue ended or the loaded
    /// entry left it (then the source is the loaded entry's while it is in the queue).
    func state(of snapshot: PlaybackSnapshot, position: Double, now: UInt64 = monotonicNanoseconds()) -> PlayerState {
        let stopped = snapshot.activity == .stopped
        typealias Shown = (
            entry: Int?, source: PlayerSource?, duration: Double?, format: AudioFormat?, skipError: ReelError?,
            stream: HTTPStream?
        )
        // The engine's length, exact or estimated; a queue entry's says which it is itself.
        var estimated = snapshot.frameCountIsEstimate
        let settings = replayGainSettings.current
        var gain: Double?
        var connecting: Connecting?
        let shown = shared.withLock { shared -> Shown in
            if let pending = shared.connecting, pending.token == nil || snapshot.token != pending.token {
                // A URL being opened: its entry (or, for `play {url}`, the URL), connecting.
                connecting = pending
                let entry = pending.entry.flatMap { shared.queue.entry(id: $0) }
                return (entry?.id, entry?.source ?? .url(pending.url, name: nil, title: nil), nil, nil, shared.skipError, nil)
            }
            if !stopped, let track = snapshot.token.flatMap({ shared.tracks[$0] }) {
                gain = settings.gain(for: track.replayGain, random: shared.queue.options.random)
            }
            let track = snapshot.token.flatMap { shared.tracks[$0] }
            if stopped, let current = shared.queue.current, current != track?.entry,
               let entry = shared.queue.entry(id: current)
            {
                estimated = entry.durationEstimated
                return (current, entry.source, entry.duration, entry.format, shared.skipError, nil)
            }
            guard let track else { return (nil, nil, nil, nil, shared.skipError, nil) }
            let stream = stopped ? nil : track.stream
            guard let entry = shared.queue.entry(id: track.entry) else {
                return stopped
                    ? (nil, nil, nil, nil, shared.skipError, nil)
                    : (nil, track.source, snapshot.duration, snapshot.format, shared.skipError, stream)
            }
            let current = !stopped || shared.queue.current == track.entry
            return (current ? track.entry : nil, entry.source, snapshot.duration, snapshot.format, shared.skipError, stream)
        }
        var state = PlayerState(
            state: snapshot.activity, position: position, duration: shown.duration, source: shown.source,
            entry: shown.entry, format: shown.format, timestamp: Double(now) / 1e9, underruns: snapshot.counters.xruns,
            error: snapshot.error ?? shown.skipError, durationEstimated: estimated && shown.duration != nil,
            output: snapshot.output, gain: gain)
            .with(sleepAt: sleep.current.at)
        if let stream = shown.stream {
            Self.show(stream, in: &state, heardAt: Int64(position * Double(snapshot.sampleRate)))
        }
        if let connecting {
            state.state = connecting.playing ? .playing : .paused
            state.position = 0
            state.output = nil
            state.gain = nil
            state.live = false
            state.stream = StreamStatus(state: .connecting)
        }
        return state
    }

    /// A playing URL's station, title and connection in `state`: the title a client set
    /// (`addtagid`) gives way to what the stream says is on air at `frame`, the frame heard.
    static func show(_ stream: HTTPStream, in state: inout PlayerState, heardAt frame: Int64) {
        let status = stream.current
        if case .url(let url, let name, let title) = state.source {
            state.source = .url(url, name: status.name ?? name, title: stream.title(atFrame: frame).title ?? title)
        }
        state.live = status.head?.resourceLength == nil
        let bytesPerSecond = status.bitrate.map { Double($0) * 125 } ?? 0
        state.stream = StreamStatus(
            state: status.state, bitrate: status.bitrate,
            buffered: bytesPerSecond > 0 ? (Double(stream.bufferedBytes) / bytesPerSecond * 10).rounded() / 10 : 0,
            reconnects: status.reconnects)
    }

    /// Publishes the player's state (after an engine change, a skipped entry, a rename).
    func publishState() {
        changes.publish(state)
    }

    // MARK: Commands

    /// Plays a file (absolute, inside the media roots: else `not_found` / `forbidden`) or a
    /// recording, or a folder's recordings, from `position` seconds: the queue becomes that. A
    /// URL is opened first (off `work`, see `PlayerController+Opening`): the queue becomes it (or
    /// a station playlist's streams) once it opened, and one that fails leaves the queue alone.
    public func play(_ request: PlayRequest, position: Double = 0, reply: @escaping Reply) {
        let reply = saves.after(reply)
        guard Self.isValidStart(position) else {
            reply(.failure(Self.invalidStart(position)))
            return
        }
        let additions: [QueueAddition]
        switch request {
        case .file(let path): additions = [.file(path)]
        case .recording(let reference): additions = [.recording(reference)]
        case .album(let name, let albumArtist): additions = [.album(name: name, albumArtist: albumArtist)]
        case .sources(let many): additions = many
        case .url(let url):
            // Opened off `work`; the queue becomes the URL (or the streams of the playlist it
            // names) only once it opened: a URL that fails leaves the queue as it was.
            work.async { [self] in playURL(url, position: position, reply: reply) }
            return
        }
        work.async { [self] in
            var entries: [NewQueueEntry] = []
            do throws(ReelError) {
                var firstSkipped: ReelError?
                for addition in additions {
                    do throws(ReelError) {
                        entries += try resolve(addition)
                    } catch where additions.count > 1 && Self.skippableReasons.contains(error.reason) {
                        firstSkipped = firstSkipped ?? error
                    }
                }
                // Every one of many left out: the first reason is the answer.
                if entries.isEmpty, let firstSkipped { throw firstSkipped }
            } catch {
                // The player's error says it too (the queue stays as it was), for every client.
                shared.withLock { $0.skipError = error }
                reply(.failure(error))
                publishState()
                return
            }
            let first = shared.withLock { shared -> Int? in
                shared.queue.clear()
                let added = try? shared.queue.add(entries, at: nil, afterCurrent: false)
                publishQueue(shared)
                return added?.first?.id
            }
            guard let first else {
                reply(.failure(ReelError(.notFound, "nothing to play")))
                return
            }
            start(entry: first, position: position, playing: true, skipping: false, reply: reply)
        }
    }

    /// Plays the queue entry `id` from `position` seconds (`not_found` when there is none).
    public func play(entry id: Int, position: Double = 0, reply: @escaping Reply) {
        let reply = saves.after(reply)
        guard Self.isValidStart(position) else {
            reply(.failure(Self.invalidStart(position)))
            return
        }
        guard shared.withLock({ $0.queue.entry(id: id) }) != nil else {
            reply(.failure(ReelError(.notFound, "no queue entry with id \(id)")))
            return
        }
        work.async { [self] in
            start(entry: id, position: position, playing: true, skipping: false, reply: reply)
        }
    }

    /// Plays what the queue says: resumes when paused; when stopped, starts the current entry
    /// from its start, or the first entry once the queue has ended.
    public func play(reply: @escaping Reply) {
        resume(reply: reply)
    }

    /// Loads entry `id` at `position`, paused or playing (after a restart, or to get ready).
    public func load(entry id: Int, position: Double, playing: Bool, reply: @escaping Reply) {
        let reply = saves.after(reply)
        work.async { [self] in
            start(entry: id, position: position, playing: playing, skipping: false, reply: reply)
        }
    }

    public func pause(reply: @escaping Reply) {
        let reply = saves.after(reply)
        clearSkipError()
        if setConnectingPlaying({ _ in false }) { return reply(.success(state)) }
        engine.send(.pause(adapt(reply)))
    }

    public func resume(reply: @escaping Reply) {
        let reply = saves.after(reply)
        clearSkipError()
        if setConnectingPlaying({ _ in true }) { return reply(.success(state)) }
        if engine.snapshot.activity == .stopped {
            startFromQueue(reply: reply)
            return
        }
        engine.send(.resume(adapt(reply)))
    }

    public func toggle(reply: @escaping Reply) {
        let reply = saves.after(reply)
        clearSkipError()
        if setConnectingPlaying({ !$0 }) { return reply(.success(state)) }
        if engine.snapshot.activity == .stopped {
            startFromQueue(reply: reply)
            return
        }
        engine.send(.toggle(adapt(reply)))
    }

    /// Stops; the current entry stays, and `resume` plays it from its start.
    public func stop(reply: @escaping Reply) {
        let reply = saves.after(reply)
        clearSkipError()
        // A URL being opened is given up (its connection closed).
        if supersedeStarts() { publishState() }
        engine.send(.stop(adapt(reply)))
    }

    /// Seeks in the loaded entry; a seek that succeeds clears the player's error (as MPD's).
    public func seek(_ target: SeekTarget, reply: @escaping Reply) {
        let reply = saves.after(reply)
        clearSkipError()
        engine.send(.seek(target, adapt(reply)))
    }

    /// Clears the player's error (MPD's `clearerror`): why playback last paused or stopped on
    /// its own, or why an entry was skipped. Always succeeds; publishes once when there was one.
    public func clearError(reply: @escaping Reply) {
        shared.withLock { $0.skipError = nil }
        engine.send(.clearError { [self] result in
            // On the audio thread. The engine published if it held the error; one that was only
            // the skipped entry's is published here.
            if changes.latest.value.error != nil { publishState() }
            adapt(reply)(result)
        })
    }

    /// Plays the next entry in play order (`not_playing` when stopped); with consume on, the
    /// entry it leaves is removed; after the last one, with no repeat, playback stops.
    public func next(reply: @escaping Reply) {
        skip(reply: reply) { queue, current in
            let next = queue.successor(of: current, .manual)
            queue.advance(from: current, to: next, .manual)
            return next
        }
    }

    /// Plays the previous entry in play order; on the first entry, restarts it (`not_playing`
    /// when stopped). In random mode the play order stays as it is.
    public func previous(reply: @escaping Reply) {
        skip(reply: reply) { queue, current in
            guard let previous = queue.predecessor(of: current) else { return nil }
            try? queue.setCurrent(previous, keepOrder: true)
            return previous
        }
    }

    /// Moves to the entry `move` picks (and applies to the queue), or stops when it picks none.
    private func skip(reply: @escaping Reply, _ move: @escaping @Sendable (inout PlayQueue, Int) -> Int?) {
        let reply = saves.after(reply)
        clearSkipError()
        guard engine.snapshot.activity != .stopped || isConnecting else {
            reply(.failure(ReelError(.notPlaying, "nothing is playing; play an entry first")))
            return
        }
        work.async { [self] in
            let decision = shared.withLock { shared -> Int?? in
                guard let current = shared.queue.current else { return .none }
                let target = move(&shared.queue, current)
                publishQueue(shared)
                return .some(target)
            }
            guard case .some(let target) = decision else {
                reply(.failure(ReelError(.notPlaying, "nothing is playing; play an entry first")))
                return
            }
            guard let target else {
                shared.withLock { shared in
                    try? shared.queue.setCurrent(nil)
                    publishQueue(shared)
                }
                if supersedeStarts() { publishState() }
                engine.send(.stop(adapt(reply)))
                return
            }
            start(entry: target, position: 0, playing: true, skipping: true, reply: reply)
        }
    }

    // MARK: Helpers

    private func startFromQueue(reply: @escaping Reply) {
        work.async { [self] in
            guard let entry = shared.withLock({ $0.queue.current ?? $0.queue.first }) else {
                reply(.failure(ReelError(.notPlaying, "the queue is empty; add something to play first")))
                return
            }
            start(entry: entry, position: 0, playing: true, skipping: true, reply: reply)
        }
    }

    func clearSkipError() {
        let had = shared.withLock { shared -> Bool in
            defer { shared.skipError = nil }
            return shared.skipError != nil
        }
        if had { publishState() }
    }

    static func isValidStart(_ position: Double) -> Bool {
        position.isFinite && position >= 0 && position <= maximumSeconds
    }

    static func invalidStart(_ position: Double) -> ReelError {
        position > maximumSeconds
            ? ReelError(.outOfRange, "cannot start at \(position) s: that is past any file's end")
            : ReelError(.outOfRange, "cannot start at \(position) s: a position is 0 or more seconds")
    }

    /// The reply to a command: the state it published (built once for the push and the reply),
    /// or, when it changed nothing, the state now.
    func adapt(_ reply: @escaping Reply) -> PlaybackCommand.Reply {
        { [self] result in
            reply(result.map { snapshot in
                let published = changes.latest.value
                let current = published.state == snapshot.activity && published.state != .playing
                return current ? published : state
            })
        }
    }
}

/// Lets the engine's callbacks reach the controller that owns the engine without a cycle.
private final class EngineRelay: @unchecked Sendable {
    weak var target: PlayerController?
    func changed(_ snapshot: PlaybackSnapshot) { target?.engineChanged(snapshot) }
    func wantsNext(_ token: Int) { target?.engineWantsNext(after: token) }
}
