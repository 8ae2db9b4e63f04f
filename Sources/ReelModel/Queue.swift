// The play queue as clients see it: its entries, its options and a summary (`protocol.md`, v2).

/// MPD's single mode: stop after the current entry (`on`), or do that once and go back to `off`
/// (`oneshot`). With repeat on, single repeats the current entry instead of stopping.
public enum SingleMode: String, Sendable, Equatable {
    case off, on, oneshot
}

/// How the queue plays: `{repeat, random, single, consume}` on the wire.
public struct QueueOptions: Sendable, Equatable {
    /// `repeat` on the wire (a Swift keyword, hence the name): after the last entry, start over.
    public var repeats: Bool
    /// Play in a shuffled order; every entry once per round.
    public var random: Bool
    public var single: SingleMode
    /// Remove each entry from the queue once it has been played.
    public var consume: Bool

    public init(repeats: Bool = false, random: Bool = false, single: SingleMode = .off, consume: Bool = false) {
        self.repeats = repeats
        self.random = random
        self.single = single
        self.consume = consume
    }
}

/// What a queue entry or a tree item shows of a music folder file besides its path: its title
/// (else its file name), artist and album, as indexed (a file the index does not have, and a
/// recording, have none).
public struct DisplayTags: Sendable, Equatable {
    public var title: String?
    public var artist: String?
    public var album: String?

    public init(title: String? = nil, artist: String? = nil, album: String? = nil) {
        self.title = title
        self.artist = artist
        self.album = album
    }

    /// Nil when no tag is set.
    public var nonEmpty: DisplayTags? { title == nil && artist == nil && album == nil ? nil : self }
}

/// An entry of the queue (`QueueEntry` in `protocol.md`).
public struct QueueEntry: Sendable, Equatable {
    /// Stable while reeld runs, never reused; not kept across a restart.
    public var id: Int
    /// The index in the queue, from 0; changes as entries before it are added, removed or moved.
    public var position: Int
    public var source: PlayerSource
    /// Seconds, once known.
    public var duration: Double?
    public var format: AudioFormat?
    /// The file is gone (deleted or moved away behind Reel's back); playing it is skipped.
    public var missing: Bool
    /// A music folder file's tags, as indexed when it was added.
    public var tags: DisplayTags?
    /// 0 to 255 (MPD's `prio`): in random mode, entries of a higher priority play first.
    public var priority: Int
    /// `duration` is an estimate (an MP3 without a Xing/Info tag, until its frames are counted).
    public var durationEstimated: Bool

    public init(
        id: Int, position: Int, source: PlayerSource, duration: Double? = nil, format: AudioFormat? = nil,
        missing: Bool = false, tags: DisplayTags? = nil, priority: Int = 0, durationEstimated: Bool = false
    ) {
        self.id = id
        self.position = position
        self.source = source
        self.duration = duration
        self.format = format
        self.missing = missing
        self.tags = tags
        self.priority = priority
        self.durationEstimated = durationEstimated
    }
}

/// An entry to add to the queue: what `QueueEntry` holds before the queue gives it an id.
public struct NewQueueEntry: Sendable, Equatable {
    public var source: PlayerSource
    public var duration: Double?
    public var format: AudioFormat?
    public var missing: Bool
    public var tags: DisplayTags?
    public var durationEstimated: Bool

    public init(
        source: PlayerSource, duration: Double? = nil, format: AudioFormat? = nil, missing: Bool = false,
        tags: DisplayTags? = nil, durationEstimated: Bool = false
    ) {
        self.source = source
        self.duration = duration
        self.format = format
        self.missing = missing
        self.tags = tags
        self.durationEstimated = durationEstimated
    }
}

/// The queue without its entries: the result of `queue.list` minus `entries`, and the value of the
/// `queue.changed` stream.
public struct QueueSummary: Sendable, Equatable {
    /// Goes up on every change of the entries, the current entry or the options.
    public var version: Int
    /// Goes up when the entries or their positions change (added, removed, moved, swapped,
    /// shuffled, cleared, consumed; an entry's length, format, missing flag or source), and not
    /// when only the current entry or the options change: MPD's `playlist` version. Not part of
    /// the JSON-RPC protocol; a summary read from JSON has it equal to `version`.
    public var entriesVersion: Int
    public var length: Int
    /// The id of the current entry: playing, paused, or where play will start.
    public var current: Int?
    /// The id of the entry that plays when the current one ends.
    public var next: Int?
    public var options: QueueOptions

    public init(version: Int, entriesVersion: Int, length: Int, current: Int?, next: Int?, options: QueueOptions) {
        self.version = version
        self.entriesVersion = entriesVersion
        self.length = length
        self.current = current
        self.next = next
        self.options = options
    }
}
