// Idle events for every MPD connection on one event loop, from the core's change feeds.

import Logging
import NIOCore
import ReelCore
import ReelModel

/// Turns the core's feeds into MPD's idle subsystems and posts them to every connection:
/// - `player.changes` → `player` (play, pause, stop, seek, a new entry, an error), except a
///   change that only clears the error (MPD's `clearerror` posts nothing);
/// - `player.queueChanges` → `playlist` when the entries changed, `options` when
///   repeat/random/single/consume changed, `player` when the current entry changed;
/// - `mixer.changes` → `mixer` when the volume changed, `options` when ReplayGain did;
/// - `outputs.changes` → `output` when an output is turned on or off (not when a pipe's reader
///   comes or goes, which MPD's `outputs` does not show);
/// - `library.updates` → `database` (a folder or recording added, renamed, moved or deleted);
/// - `playlists.changes` → `stored_playlist` (a stored playlist made, changed, renamed or deleted);
/// - `music.progress` → `update` when a scan of the music folders starts and when it ends,
///   and `database` when one ended that indexed or removed files (inotify changes come through
///   the same feed as small scans);
/// - `update` (the command) without music folders → `update`, posted by `MPDDatabaseCommands`;
///   `crossfade 0` → `options`, posted by `MPDPlaybackCommands`;
/// - the clients' channels and messages (`messages`, an `MPDMessageBoard`) → `subscription` to
///   every connection, `message` to a client a message came for.
///
/// One consumer per feed for the whole front end (not per connection): a change costs its
/// producer one wake-up; here it costs one `post` per connection. A connection keeps events
/// while it is not idling (MPD's per-client flags), so nothing is lost between two `idle`s.
///
/// It also closes connections silent for 60 s (not idling, not waiting), with one sweep every
/// 10 s rather than a timer per connection.
///
/// Threads: everything runs on `loop`; the feeds wake it from their threads.
final class MPDEventHub: MPDConnectionRegistry, @unchecked Sendable {
    let loop: EventLoop
    private let core: ReelCore
    private var connections: [ObjectIdentifier: MPDConnection] = [:]
    private var consumers: Consumers?
    private var lastQueue: QueueSummary
    private var lastPlayer: PlayerState
    /// Each output's id and whether it is on, as last posted.
    private var lastOutputs: [Int: Bool] = [:]
    private var sweep: RepeatedTask?
    /// The clients' channels and messages (`subscribe`, `sendmessage`…).
    let messages = MPDMessageBoard()
    static let timeout = TimeAmount.seconds(60)
    static let sweepInterval = TimeAmount.seconds(10)

    private struct Consumers {
        let player: StateFeed<PlayerState>.Consumer
        let queue: StateFeed<QueueSummary>.Consumer
        let mixer: StateFeed<MixerState>.Consumer
        let outputs: StateFeed<[OutputState]>.Consumer
        let library: EventFeed<LibraryUpdate>.Consumer
        let scans: StateFeed<MusicScanProgress>.Consumer
        let playlists: EventFeed<[String]>.Consumer
    }
    /// The scan progress last seen.
    private var lastScan: MusicScanProgress
    /// The mixer's state last seen.
    private var lastMixer: MixerState

    init(loop: EventLoop, core: ReelCore) {
        self.loop = loop
        self.core = core
        lastQueue = core.player.queueChanges.latest.value
        lastPlayer = core.player.changes.latest.value
        lastScan = core.music.progress.latest.value
        lastMixer = core.mixer.changes.latest.value
        messages.postToAll = { [unowned self] events in post(events) }
    }

    /// Registers with the core's feeds (on the event loop).
    func start() {
        loop.preconditionInEventLoop()
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        let core = self.core
        consumers = Consumers(
            player: core.player.changes.addConsumer { loop.execute { bound.value.playerChanged() } },
            queue: core.player.queueChanges.addConsumer { loop.execute { bound.value.queueChanged() } },
            mixer: core.mixer.changes.addConsumer { loop.execute { bound.value.mixerChanged() } },
            outputs: core.outputs.changes.addConsumer { loop.execute { bound.value.outputsChanged() } },
            library: core.library.updates.addConsumer { loop.execute { bound.value.libraryChanged() } },
            scans: core.music.progress.addConsumer { loop.execute { bound.value.scanChanged() } },
            playlists: core.playlists.changes.addConsumer { loop.execute { bound.value.playlistsChanged() } })
        lastScan = core.music.progress.latest.value
        lastQueue = core.player.queueChanges.latest.value
        lastPlayer = core.player.changes.latest.value
        lastOutputs = Self.enabled(core.outputs.list)
        lastMixer = core.mixer.changes.latest.value
        sweep = loop.scheduleRepeatedTask(initialDelay: Self.sweepInterval, delay: Self.sweepInterval) { _ in
            bound.value.expireSilentConnections()
        }
    }

    /// Leaves the feeds (on the event loop).
    func stop() {
        sweep?.cancel()
        sweep = nil
        guard let consumers else { return }
        core.player.changes.removeConsumer(consumers.player)
        core.player.queueChanges.removeConsumer(consumers.queue)
        core.mixer.changes.removeConsumer(consumers.mixer)
        core.outputs.changes.removeConsumer(consumers.outputs)
        core.library.updates.removeConsumer(consumers.library)
        core.music.progress.removeConsumer(consumers.scans)
        core.playlists.changes.removeConsumer(consumers.playlists)
        self.consumers = nil
    }

    func add(_ connection: MPDConnection) {
        connections[ObjectIdentifier(connection)] = connection
    }

    func remove(_ connection: MPDConnection) {
        connections.removeValue(forKey: ObjectIdentifier(connection))
        messages.remove(connection.client)
    }

    var connectionCount: Int { connections.count }

    /// Posts `events` to every connection (on the event loop).
    func post(_ events: MPDSubsystems) {
        guard !events.isEmpty else { return }
        for connection in connections.values {
            connection.post(events)
        }
    }

    // MARK: Feeds

    private func playerChanged() {
        guard let consumers else { return }
        let state = core.player.changes.take(for: consumers.player).value
        defer { lastPlayer = state }
        if !Self.onlyTheErrorWent(from: lastPlayer, to: state), !Self.nothingPlayerShowsChanged(from: lastPlayer, to: state) {
            post(.player)
        }
    }

    /// Whether `new` differs from `old` only in what MPD's `player` subsystem does not show, while
    /// not playing: the time it was taken and the ReplayGain applied (a `replay_gain_mode` change
    /// is an `options` event only, as in MPD).
    static func nothingPlayerShowsChanged(from old: PlayerState, to new: PlayerState) -> Bool {
        guard new.state != .playing else { return false }
        var same = old
        same.timestamp = new.timestamp
        same.gain = new.gain
        return same == new
    }

    /// Whether `new` is `old` with its error cleared and nothing else changed (not playing: the
    /// position stands still, so the states compare whole but for the time they were taken).
    static func onlyTheErrorWent(from old: PlayerState, to new: PlayerState) -> Bool {
        guard old.error != nil, new.error == nil, new.state != .playing else { return false }
        var cleared = old
        cleared.error = nil
        cleared.timestamp = new.timestamp
        return cleared == new
    }

    private func queueChanged() {
        guard let consumers else { return }
        let summary = core.player.queueChanges.take(for: consumers.queue).value
        post(Self.events(from: lastQueue, to: summary))
        lastQueue = summary
    }

    /// What a queue change means to an MPD client.
    static func events(from old: QueueSummary, to new: QueueSummary) -> MPDSubsystems {
        var events: MPDSubsystems = []
        if new.entriesVersion != old.entriesVersion { events.insert(.playlist) }
        if new.options != old.options { events.insert(.options) }
        if new.current != old.current { events.insert(.player) }
        return events
    }

    private func mixerChanged() {
        guard let consumers else { return }
        let state = core.mixer.changes.take(for: consumers.mixer).value
        post(Self.events(from: lastMixer, to: state))
        lastMixer = state
    }

    /// What a mixer change means to an MPD client: `mixer` for the volume, `options` for
    /// ReplayGain (MPD's `replay_gain_mode` is an option).
    static func events(from old: MixerState, to new: MixerState) -> MPDSubsystems {
        var events: MPDSubsystems = []
        if new.replayGain != old.replayGain { events.insert(.options) }
        var volume = new
        volume.replayGain = old.replayGain
        if volume != old { events.insert(.mixer) }
        return events
    }

    private func outputsChanged() {
        guard let consumers else { return }
        let enabled = Self.enabled(core.outputs.changes.take(for: consumers.outputs).value)
        if enabled != lastOutputs { post(.output) }
        lastOutputs = enabled
    }

    private static func enabled(_ outputs: [OutputState]) -> [Int: Bool] {
        Dictionary(uniqueKeysWithValues: outputs.map { ($0.id, $0.enabled) })
    }

    private func libraryChanged() {
        guard let consumers else { return }
        let batch = core.library.updates.take(for: consumers.library)
        // An update without changes re-reads watched folders of the music branch after a scan:
        // the scan's own progress says whether the database changed (`scanChanged`).
        if batch.events.contains(where: { !$0.changes.isEmpty }) || batch.lost > 0 { post(.database) }
    }

    /// A stored playlist made, changed, renamed or deleted: `stored_playlist`.
    private func playlistsChanged() {
        guard let consumers else { return }
        let batch = core.playlists.changes.take(for: consumers.playlists)
        if !batch.events.isEmpty || batch.lost > 0 { post(.storedPlaylist) }
    }

    private func scanChanged() {
        guard let consumers else { return }
        let scan = core.music.progress.take(for: consumers.scans).value
        post(Self.events(from: lastScan, to: scan))
        lastScan = scan
    }

    /// What a change of the scan's progress means to an MPD client: `update` when a scan
    /// started or ended (several coalesced into one change still end in one), `database`
    /// when one ended having changed the index (files indexed, removed, moved, gone missing or
    /// back).
    static func events(from old: MusicScanProgress, to new: MusicScanProgress) -> MPDSubsystems {
        var events: MPDSubsystems = []
        if new.scan != old.scan || new.running != old.running { events.insert(.update) }
        if !new.running, new.scan != old.scan || old.running, new.changedIndex {
            events.insert(.database)
        }
        return events
    }

    private func expireSilentConnections() {
        let deadline = NIODeadline.now() - Self.timeout
        for connection in Array(connections.values) {
            connection.expireIfSilent(since: deadline)
        }
    }
}
