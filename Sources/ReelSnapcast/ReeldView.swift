// What the plugin knows of reeld: the latest values of its player, queue and mixer streams.
// Pure; the main thread owns the one instance (in `SnapcastBridge`).

import ReelModel
import ReelProtocol

/// The latest values reeld pushed, while connected.
public struct ReeldView: Equatable, Sendable {
    /// `player.state`.
    public var player: PlayerState?
    /// `queue.changed`.
    public var queue: QueueSummary?
    /// `mixer.state`.
    public var mixer: MixerState?
    /// The queue's current entry, read with `queue.list` when the player's state does not
    /// carry it (stopped with another entry current, or nothing loaded since reeld started).
    public var currentEntry: QueueEntry?

    public init(player: PlayerState? = nil, queue: QueueSummary? = nil, mixer: MixerState? = nil, currentEntry: QueueEntry? = nil) {
        self.player = player
        self.queue = queue
        self.mixer = mixer
        self.currentEntry = currentEntry
    }

    /// The streams the plugin subscribes to, with their notification's method.
    public enum Stream: String, CaseIterable, Sendable {
        case player, queue, mixer

        public var notification: String {
            switch self {
            case .player: "player.state"
            case .queue: "queue.changed"
            case .mixer: "mixer.state"
            }
        }
    }

    /// Takes a pushed value; returns its stream, or nil for a notification of another stream.
    /// Throws when the value is malformed (the view is then unchanged).
    @discardableResult
    public mutating func apply(method: String, params: JSONObject) throws(JSONDecodingError) -> Stream? {
        switch method {
        case Stream.player.notification:
            player = try PlayerState(json: .object(params))
            return .player
        case Stream.queue.notification:
            let summary = try QueueSummary(json: .object(params))
            if summary.version != queue?.version || summary.current != currentEntry?.id {
                // The entry may have moved, been renamed or removed: read it again if needed.
                currentEntry = nil
            }
            queue = summary
            return .queue
        case Stream.mixer.notification:
            mixer = try MixerState(json: .object(params))
            return .mixer
        default:
            return nil
        }
    }

    /// The entry whose metadata snapserver shows: the player's when it has one, else the
    /// queue's current entry; nil when there is none.
    public var track: Track? {
        if let player, let entry = player.entry, let source = player.source {
            return Track(id: entry, source: source, duration: player.duration)
        }
        guard let current = queue?.current else { return nil }
        if let entry = currentEntry, entry.id == current {
            return Track(id: entry.id, source: entry.source, duration: entry.duration)
        }
        return nil
    }

    /// The id of the queue's current entry when `track` cannot be known without a `queue.list`.
    public var entryToLookUp: Int? {
        guard let current = queue?.current, track == nil else { return nil }
        return current
    }

    /// A queue entry as the metadata shows it.
    public struct Track: Equatable, Sendable {
        public var id: Int
        public var source: PlayerSource
        public var duration: Double?

        public init(id: Int, source: PlayerSource, duration: Double?) {
            self.id = id
            self.source = source
            self.duration = duration
        }
    }
}
