// The catalog of the core's change feeds: the one list front ends loop over to follow every change.

import ReelModel

/// One change feed of the core. A new feed is added here (and in `CoreChange` and
/// `CoreFeeds.follow`); every front end then says, in a `switch` the compiler checks, what it
/// means to its clients.
public enum CoreFeed: CaseIterable, Hashable, Sendable {
    /// `player.changes`: the player's state.
    case player
    /// `player.queueChanges`: the queue's summary (versions, options, current entry).
    case queue
    /// `recorder.changes`: the recorder's state.
    case recorder
    /// `mixer.changes`: the volume and ReplayGain.
    case mixer
    /// `outputs.changes`: every output, on or off.
    case outputs
    /// `library.updates`: one event per committed library transaction.
    case library
    /// `music.progress`: the music folders' scan.
    case scan
    /// `schedules.changes`: every schedule.
    case schedules
    /// `playlists.changes`: the names of stored playlists made, changed, renamed or deleted.
    case playlists
}

/// What a consumer takes from a feed: the newest value of a state feed (the values between
/// two takes are skipped), or the events of an event feed since the last take.
public enum CoreChange: Sendable {
    case player(PlayerState)
    case queue(QueueSummary)
    case recorder(RecorderState)
    case mixer(MixerState)
    case outputs([OutputState])
    case library(EventFeed<LibraryUpdate>.Batch)
    case scan(MusicScanProgress)
    case schedules([Schedule])
    case playlists(EventFeed<[String]>.Batch)
}

/// Every change feed of the core, by `CoreFeed` (`core.feeds`). A front end follows the feeds
/// it needs with one consumer each (not one per client), takes each change on its own thread,
/// and encodes it once for all of its clients (see `StateFeed`).
///
/// Threads: any.
public struct CoreFeeds: Sendable {
    private let player: PlayerController
    private let recorder: RecorderController
    private let library: LibraryController
    private let mixer: MixerController
    private let outputs: OutputsController
    private let music: MusicController
    private let schedules: ScheduleController
    private let playlists: PlaylistStore

    init(
        player: PlayerController, recorder: RecorderController, library: LibraryController, mixer: MixerController,
        outputs: OutputsController, music: MusicController, schedules: ScheduleController, playlists: PlaylistStore
    ) {
        self.player = player
        self.recorder = recorder
        self.library = library
        self.mixer = mixer
        self.outputs = outputs
        self.music = music
        self.schedules = schedules
        self.playlists = playlists
    }

    /// One front end's consumer of one feed: `take` the change after a wake-up, `leave` when done.
    public final class Consumer: Sendable {
        public let feed: CoreFeed
        private let takeChange: @Sendable () -> CoreChange
        private let leaveFeed: @Sendable () -> Void

        fileprivate init(feed: CoreFeed, take: @escaping @Sendable () -> CoreChange, leave: @escaping @Sendable () -> Void) {
            self.feed = feed
            takeChange = take
            leaveFeed = leave
        }

        /// The newest value (a state feed) or the events since the last take (an event feed);
        /// the feed wakes the consumer again at its next publish.
        public func take() -> CoreChange { takeChange() }

        /// Stops following the feed (no more wake-ups).
        public func leave() { leaveFeed() }
    }

    /// Follows `feed`: `wake` is called on the publishing thread after a publish, at most once
    /// until the consumer takes the change, and must only schedule work (`EventLoop.execute`).
    public func follow(_ feed: CoreFeed, wake: @escaping @Sendable () -> Void) -> Consumer {
        switch feed {
        case .player: Self.follow(feed, player.changes, wake) { .player($0) }
        case .queue: Self.follow(feed, player.queueChanges, wake) { .queue($0) }
        case .recorder: Self.follow(feed, recorder.changes, wake) { .recorder($0) }
        case .mixer: Self.follow(feed, mixer.changes, wake) { .mixer($0) }
        case .outputs: Self.follow(feed, outputs.changes, wake) { .outputs($0) }
        case .library: Self.follow(feed, library.updates, wake) { .library($0) }
        case .scan: Self.follow(feed, music.progress, wake) { .scan($0) }
        case .schedules: Self.follow(feed, schedules.changes, wake) { .schedules($0) }
        case .playlists: Self.follow(feed, playlists.changes, wake) { .playlists($0) }
        }
    }

    /// The state a feed is about, read now (nil for an event feed, which has none): a new
    /// subscriber's first value, the latest one for a client that missed changes, a tick. The
    /// player's position and the recorder's levels are as of now, not as last published.
    public func current(_ feed: CoreFeed) -> CoreChange? {
        switch feed {
        case .player: .player(player.state)
        case .queue: .queue(player.queueSummary)
        case .recorder: .recorder(recorder.state)
        case .mixer: .mixer(mixer.state)
        case .outputs: .outputs(outputs.list)
        case .scan: .scan(music.progress.latest.value)
        case .schedules: .schedules(schedules.schedules)
        case .library, .playlists: nil
        }
    }

    private static func follow<Value: Sendable>(
        _ feed: CoreFeed, _ source: StateFeed<Value>, _ wake: @escaping @Sendable () -> Void,
        _ change: @escaping @Sendable (Value) -> CoreChange
    ) -> Consumer {
        let consumer = source.addConsumer(wake: wake)
        return Consumer(
            feed: feed, take: { change(source.take(for: consumer).value) }, leave: { source.removeConsumer(consumer) })
    }

    private static func follow<Event: Sendable>(
        _ feed: CoreFeed, _ source: EventFeed<Event>, _ wake: @escaping @Sendable () -> Void,
        _ change: @escaping @Sendable (EventFeed<Event>.Batch) -> CoreChange
    ) -> Consumer {
        let consumer = source.addConsumer(wake: wake)
        return Consumer(
            feed: feed, take: { change(source.take(for: consumer)) }, leave: { source.removeConsumer(consumer) })
    }
}
