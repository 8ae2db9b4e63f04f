// Which HLS segments to fetch next and when to reload a live media playlist (RFC 8216, 6.3).

/// The segment planner of one HLS media playlist: a pure state machine, owned by the thread
/// that fetches (times are seconds on any monotonic clock the caller chooses).
///
/// Use: after every load of the media playlist, `playlistLoaded(_:loadStartedAt:)` (the time
/// the request for it was sent); then take `nextFetch()` until it is nil, fetching each
/// segment (and its `initSection` first when set); reload the playlist at `nextReloadAt`
/// (nil: never again — the stream ends once the fetches are done, `isFinished`).
///
/// Rules, as players do them:
/// - A live playlist (no `EXT-X-ENDLIST`) is joined near its live edge: at the segment from
///   which at least `liveEdgeTargetDurations` (3) target durations remain to the end (all of
///   it when the playlist is shorter), so a reload has time to bring the next segment before
///   the buffer runs dry. A finite one (`EXT-X-ENDLIST`, also `VOD`) starts at its first segment.
/// - Reloads (RFC 8216, 6.3.4): one target duration after the start of the previous load when
///   that load brought something new, half a target duration when it did not; none after
///   `EXT-X-ENDLIST`.
/// - New segments are those with a sequence number past the last one handed out; a segment
///   is never handed out twice.
/// - The sequence jumps ahead (segments expired before they were fetched: a slow network or
///   a late reload): the missing ones are counted (`.skipped`), and the planner rejoins at the
///   live edge as on a first load (or the first listed segment, if that is later); the next
///   fetch is marked as a discontinuity.
/// - The sequence goes back further than the playlist's own length (an encoder that restarted
///   at 0): `.restarted`, joined at the new live edge, discontinuity. A playlist only a little
///   older than the last one (a lagging CDN edge) counts as unchanged.
public struct HLSSegmentPlanner: Sendable {
    /// A segment to fetch.
    public struct Fetch: Equatable, Sendable {
        public var segment: HLSSegment
        /// The initialization section to fetch before the segment (fMP4): set on the first fetch
        /// that needs one and whenever it changes, nil otherwise.
        public var initSection: HLSInitSection?
        /// Whether the audio does not continue the previous fetch's: an `EXT-X-DISCONTINUITY`, a
        /// skip or a restart. The decoder should be flushed (the format may change too).
        public var discontinuity: Bool
    }

    /// What a load changed, for the log and the stream state.
    public enum Event: Equatable, Sendable {
        /// The first load with segments: joined at `sequence`, `secondsBehindLiveEdge` from the end.
        case joined(sequence: Int64, secondsBehindLiveEdge: Double)
        /// `count` segments expired before they could be fetched.
        case skipped(count: Int64)
        /// The media sequence went back from `from` to `to` (the server restarted).
        case restarted(from: Int64, to: Int64)
        /// The load brought nothing new, `times` loads in a row.
        case unchanged(times: Int)
        /// `EXT-X-ENDLIST`: no more segments will come.
        case ended
    }

    /// How many target durations from the live edge a live playlist is joined.
    public let liveEdgeTargetDurations: Double
    /// The most segments kept waiting to be fetched; older ones are dropped as skipped.
    public static let maximumQueued = 1000

    private var queue: [HLSSegment] = []
    private var queueStart = 0
    private var nextSequence: Int64?
    private var lastInitSection: HLSInitSection?
    private var pendingDiscontinuity = false
    private var targetDuration: Double = 0
    private var lastLoadStart: Double?
    private var lastLoadChanged = true
    private var ended = false
    /// Loads in a row that brought nothing new.
    public private(set) var unchangedLoads = 0
    /// The start time of the last load that brought something new (nil before one did).
    public private(set) var lastChangeAt: Double?

    public init(liveEdgeTargetDurations: Double = 3) {
        self.liveEdgeTargetDurations = max(0, liveEdgeTargetDurations)
    }

    /// Segments waiting to be fetched.
    public var queuedCount: Int { queue.count - queueStart }

    /// Whether the stream is over: `EXT-X-ENDLIST` seen and every segment handed out.
    public var isFinished: Bool { ended && queuedCount == 0 }

    /// When to load the playlist again (same clock as `loadStartedAt`); nil before the first
    /// load and after `EXT-X-ENDLIST`.
    public var nextReloadAt: Double? {
        guard !ended, let lastLoadStart else { return nil }
        return lastLoadStart + (lastLoadChanged ? targetDuration : targetDuration / 2)
    }

    /// Takes a fresh load of the media playlist (the request was sent at `loadStartedAt`).
    public mutating func playlistLoaded(_ playlist: HLSMediaPlaylist, loadStartedAt: Double) -> [Event] {
        var events: [Event] = []
        guard !ended else { return events }
        targetDuration = Double(max(1, playlist.targetDuration))
        lastLoadStart = loadStartedAt
        // Sequence numbers a parsed playlist can hold (0…2⁶² and a playlist's length): the
        // arithmetic below never overflows, whatever value a caller builds.
        let segments = playlist.segments.filter { $0.sequence >= 0 && $0.sequence <= maximumHLSSequence + (1 << 60) }
        let listedLast = segments.last?.sequence

        var changed = false
        if let next = nextSequence, let first = segments.first, let last = listedLast {
            if last < next - 1 {
                // Older than what was handed out: a lagging copy, or a restart.
                let window = Int64(max(segments.count, 3))
                if last < next - 1 - window {
                    events.append(.restarted(from: next - 1, to: first.sequence))
                    join(segments, events: &events, announce: false)
                    pendingDiscontinuity = true
                    changed = true
                }
            } else {
                var startIndex = 0
                if first.sequence > next {
                    events.append(.skipped(count: first.sequence - next))
                    startIndex = max(0, liveEdgeIndex(segments))
                    pendingDiscontinuity = true
                } else {
                    startIndex = Int(next - first.sequence)
                }
                if startIndex < segments.count {
                    enqueue(segments[startIndex...], events: &events)
                    changed = true
                }
            }
        } else if nextSequence == nil, !segments.isEmpty {
            if playlist.endList {
                enqueue(segments[...], events: &events)
                events.insert(.joined(sequence: segments[0].sequence, secondsBehindLiveEdge: playlist.totalDuration), at: 0)
            } else {
                join(segments, events: &events, announce: true)
            }
            changed = true
        }
        if playlist.endList {
            ended = true
            events.append(.ended)
            changed = true
        }
        lastLoadChanged = changed
        if changed {
            unchangedLoads = 0
            lastChangeAt = loadStartedAt
        } else {
            unchangedLoads += 1
            events.append(.unchanged(times: unchangedLoads))
        }
        return events
    }

    /// The next segment to fetch, or nil when none is waiting (reload at `nextReloadAt`).
    public mutating func nextFetch() -> Fetch? {
        guard queueStart < queue.count else { return nil }
        let segment = queue[queueStart]
        queueStart += 1
        if queueStart == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueStart = 0
        }
        var initSection: HLSInitSection?
        if let wanted = segment.initSection, wanted != lastInitSection {
            initSection = wanted
            lastInitSection = wanted
        }
        let discontinuity = pendingDiscontinuity || segment.discontinuity
        pendingDiscontinuity = false
        if discontinuity, segment.initSection != nil, initSection == nil {
            // After a break the decoder starts over: it needs the init section again.
            initSection = segment.initSection
        }
        return Fetch(segment: segment, initSection: initSection, discontinuity: discontinuity)
    }

    /// The index of the segment a live playlist is joined at.
    private func liveEdgeIndex(_ segments: [HLSSegment]) -> Int {
        let wanted = liveEdgeTargetDurations * targetDuration
        var remaining = 0.0
        var index = segments.count
        while index > 0 && remaining < wanted {
            index -= 1
            remaining += segments[index].duration
        }
        return index
    }

    private mutating func join(_ segments: [HLSSegment], events: inout [Event], announce: Bool) {
        queue.removeAll()
        queueStart = 0
        let index = liveEdgeIndex(segments)
        guard index < segments.count else { return }
        if announce {
            let behind = segments[index...].reduce(0) { $0 + $1.duration }
            events.append(.joined(sequence: segments[index].sequence, secondsBehindLiveEdge: behind))
        }
        nextSequence = nil
        enqueue(segments[index...], events: &events)
    }

    private mutating func enqueue(_ segments: ArraySlice<HLSSegment>, events: inout [Event]) {
        for segment in segments {
            if let next = nextSequence, segment.sequence < next { continue }
            queue.append(segment)
            nextSequence = segment.sequence + 1
        }
        let excess = queuedCount - Self.maximumQueued
        if excess > 0 {
            queueStart += excess
            events.append(.skipped(count: Int64(excess)))
            pendingDiscontinuity = true
            queue.removeFirst(queueStart)
            queueStart = 0
        }
    }
}
