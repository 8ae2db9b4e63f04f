// Idle events for every MPD connection on one event loop, from the core's change feeds.

import Logging
import NIOCore
import ReelCore
import ReelModel

/// Turns the core's feeds (`core.feeds`, followed in a loop over `CoreFeed`) into MPD's idle
/// subsystems and posts them to every connection:
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
/// - `recorder.changes` and `schedules.changes`: nothing (MPD has neither);
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
    /// One consumer per feed MPD follows, while started.
    private var consumers: [CoreFeed: CoreFeeds.Consumer] = [:]
    private var lastQueue: QueueSummary
    private var lastPlayer: PlayerState
    /// Each output's id and whether it is on, as last posted.
    private var lastOutputs: [Int: Bool] = [:]
    private var sweep: RepeatedTask?
    /// The clients' channels and messages (`subscribe`, `sendmessage`…).
    let messages = MPDMessageBoard()
    static let timeout = TimeAmount.seconds(60)
    static let sweepInterval = TimeAmount.seconds(10)

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
        for feed in CoreFeed.allCases where Self.follows(feed) {
            consumers[feed] = core.feeds.follow(feed) { loop.execute { bound.value.changed(feed) } }
        }
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
        for consumer in consumers.values { consumer.leave() }
        consumers = [:]
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

    /// Whether MPD follows `feed` (it has idle subsystems for it).
    static func follows(_ feed: CoreFeed) -> Bool {
        switch feed {
        case .player, .queue, .mixer, .outputs, .library, .scan, .playlists: true
        case .recorder, .schedules: false
        }
    }

    /// A feed woke the hub: takes its change and posts what it means to MPD's clients.
    private func changed(_ feed: CoreFeed) {
        guard let consumer = consumers[feed] else { return }
        post(events(for: consumer.take()))
    }

    /// The idle subsystems of one change (updating what was last seen).
    private func events(for change: CoreChange) -> MPDSubsystems {
        switch change {
        case .player(let state):
            defer { lastPlayer = state }
            if Self.onlyTheErrorWent(from: lastPlayer, to: state) || Self.nothingPlayerShowsChanged(from: lastPlayer, to: state) {
                return []
            }
            return .player
        case .queue(let summary):
            defer { lastQueue = summary }
            return Self.events(from: lastQueue, to: summary)
        case .mixer(let state):
            defer { lastMixer = state }
            return Self.events(from: lastMixer, to: state)
        case .outputs(let outputs):
            let enabled = Self.enabled(outputs)
            defer { lastOutputs = enabled }
            return enabled != lastOutputs ? .output : []
        case .library(let batch):
            // An update without changes re-reads watched folders of the music branch after a
            // scan: the scan's own progress says whether the database changed (`.scan`).
            return batch.events.contains(where: { !$0.changes.isEmpty }) || batch.lost > 0 ? .database : []
        case .playlists(let batch):
            // A stored playlist made, changed, renamed or deleted.
            return !batch.events.isEmpty || batch.lost > 0 ? .storedPlaylist : []
        case .scan(let scan):
            defer { lastScan = scan }
            return Self.events(from: lastScan, to: scan)
        case .recorder, .schedules:
            return []
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

    /// What a queue change means to an MPD client.
    static func events(from old: QueueSummary, to new: QueueSummary) -> MPDSubsystems {
        var events: MPDSubsystems = []
        if new.entriesVersion != old.entriesVersion { events.insert(.playlist) }
        if new.options != old.options { events.insert(.options) }
        if new.current != old.current { events.insert(.player) }
        return events
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

    private static func enabled(_ outputs: [OutputState]) -> [Int: Bool] {
        Dictionary(uniqueKeysWithValues: outputs.map { ($0.id, $0.enabled) })
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
        // A large reply's storage kept for a next one that has not come.
        MPDReplyStorage.shared.dropUnused(keptBefore: deadline)
    }
}
