// Streams pushed on change only (the queue's summary, the mixer, the outputs…): a core feed's changes
// encoded once for every subscriber.

import ReelCore
import ReelModel
import ReelProtocol

/// The subscribers of one feed of `core.feeds` that is pushed on change only, never ticked:
/// `queue` (`queue.changed`), `mixer` (`mixer.state`), `outputs` (`outputs.changed`), `scan`
/// (`scan.progress`), `schedules` (`schedules.changed`); and one of events, `playlists`
/// (`playlists.changed {name}`, one per change, none at subscribing). The hub follows the feed
/// while the stream has members. Lives on the hub's event loop.
final class ChangeStream {
    let feed: CoreFeed
    private let core: ReelCore
    var members: [ObjectIdentifier: RPCSubscription] = [:]

    init(feed: CoreFeed, core: ReelCore) {
        self.feed = feed
        self.core = core
    }

    /// One change of the feed, encoded once: a state's push, or one push per event.
    func pushes(for change: CoreChange) -> [SplicedPush] {
        switch change {
        case .queue(let summary): [Self.encode(summary)]
        case .mixer(let state): [Self.encode(state)]
        case .outputs(let outputs): [Self.encode(outputs)]
        case .scan(let progress): [Self.encode(progress)]
        case .schedules(let schedules): [Self.encode(schedules, zone: core.schedules.zone)]
        case .playlists(let batch):
            // Events lost behind a slow loop: "any may have changed".
            batch.lost > 0 ? [Self.playlistChanged(nil)] : batch.events.joined().map { Self.playlistChanged($0) }
        case .player(let state): [RPCPushHub.encode(state)]
        case .recorder(let state): [RPCPushHub.encode(state)]
        case .library: []  // folder, item and library streams are the hub's own
        }
    }

    /// `playlists.changed {name}`; `name` null when any may have changed (pushes were missed).
    static func playlistChanged(_ name: String?) -> SplicedPush {
        SplicedPush(method: "playlists.changed", members: ["name": name.map(JSONValue.string) ?? .null])
    }

    /// The value now, for a new subscriber's first push, or for one that missed pushes while
    /// it was not reading (`playlists`: nil at first, then `{name: null}`).
    func current(first: Bool) -> SplicedPush? {
        if feed == .playlists { return first ? nil : Self.playlistChanged(nil) }
        return core.feeds.current(feed).flatMap { pushes(for: $0).first }
    }

    /// `schedules.changed {schedules}`: every schedule, `next` and `last.at` in the core's zone.
    static func encode(_ schedules: [Schedule], zone: any TimeZoneRules) -> SplicedPush {
        SplicedPush(method: "schedules.changed", members: ["schedules": .array(schedules.map { $0.json(in: zone) })])
    }

    static func encode(_ state: MixerState) -> SplicedPush {
        SplicedPush(method: "mixer.state", members: state.jsonObject)
    }

    static func encode(_ progress: MusicScanProgress) -> SplicedPush {
        SplicedPush(method: "scan.progress", members: progress.jsonObject)
    }

    static func encode(_ outputs: [OutputState]) -> SplicedPush {
        SplicedPush(method: "outputs.changed", members: outputsJSONObject(outputs))
    }

    static func encode(_ summary: QueueSummary) -> SplicedPush {
        SplicedPush(method: "queue.changed", members: summary.jsonObject)
    }
}
