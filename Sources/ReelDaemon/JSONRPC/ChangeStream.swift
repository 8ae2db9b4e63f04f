// Streams pushed on change only (the queue's summary, the mixer, the outputs): one consumer of the core's
// feed while anyone subscribes, each change encoded once for every subscriber.

import ReelCore
import ReelModel
import ReelProtocol

/// The streams of this kind: `queue` (`queue.changed`), `mixer` (`mixer.state`), `outputs`
/// (`outputs.changed`), `scan` (`scan.progress`), `schedules` (`schedules.changed`); and one of
/// events, `playlists` (`playlists.changed {name}`, one per change, none at subscribing).
enum ChangeStreamKind: Hashable {
    case queue, mixer, outputs, scan, schedules, playlists
}

/// One change stream of one `RPCPushHub`. Lives on the hub's event loop.
final class ChangeStream {
    let kind: ChangeStreamKind
    private let core: ReelCore
    var members: [ObjectIdentifier: RPCSubscription] = [:]
    private var stopConsuming: (() -> Void)?
    private var takeLatest: (() -> [SplicedPush])?

    init(kind: ChangeStreamKind, core: ReelCore) {
        self.kind = kind
        self.core = core
    }

    /// Registers with the core's feed; `wake` is called from the producer's thread.
    func start(wake: @escaping @Sendable () -> Void) {
        switch kind {
        case .queue: consume(core.player.queueChanges, wake: wake, encode: Self.encode)
        case .mixer: consume(core.mixer.changes, wake: wake, encode: Self.encode)
        case .outputs: consume(core.outputs.changes, wake: wake, encode: Self.encode)
        case .scan: consume(core.music.progress, wake: wake, encode: Self.encode)
        case .schedules:
            let zone = core.schedules.zone
            consume(core.schedules.changes, wake: wake) { Self.encode($0, zone: zone) }
        case .playlists:
            let feed = core.playlists.changes
            let consumer = feed.addConsumer(wake: wake)
            takeLatest = {
                let batch = feed.take(for: consumer)
                // Events lost behind a slow loop: "any may have changed".
                if batch.lost > 0 { return [Self.playlistChanged(nil)] }
                return batch.events.joined().map { Self.playlistChanged($0) }
            }
            stopConsuming = { feed.removeConsumer(consumer) }
        }
    }

    /// `playlists.changed {name}`; `name` null when any may have changed (pushes were missed).
    static func playlistChanged(_ name: String?) -> SplicedPush {
        SplicedPush(method: "playlists.changed", members: ["name": name.map(JSONValue.string) ?? .null])
    }

    /// One consumer of `feed`: `take` encodes its newest value, `stop` leaves it.
    private func consume<Value: Sendable>(
        _ feed: StateFeed<Value>, wake: @escaping @Sendable () -> Void, encode: @escaping (Value) -> SplicedPush
    ) {
        let consumer = feed.addConsumer(wake: wake)
        takeLatest = { [encode(feed.take(for: consumer).value)] }
        stopConsuming = { feed.removeConsumer(consumer) }
    }

    func stop() {
        stopConsuming?()
        stopConsuming = nil
        takeLatest = nil
    }

    /// The newest value (the events since the last take, for `playlists`), encoded once; empty
    /// when not started.
    func take() -> [SplicedPush] { takeLatest?() ?? [] }

    /// The value now, for a new subscriber's first push, or for one that missed pushes while
    /// it was not reading (`playlists`: nil at first, then `{name: null}`).
    func current(first: Bool) -> SplicedPush? {
        switch kind {
        case .playlists: first ? nil : Self.playlistChanged(nil)
        case .queue: Self.encode(core.player.queueSummary)
        case .mixer: Self.encode(core.mixer.state)
        case .outputs: Self.encode(core.outputs.list)
        case .scan: Self.encode(core.music.progress.latest.value)
        case .schedules: Self.encode(core.schedules.schedules, zone: core.schedules.zone)
        }
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
