// The play queue as a value: entries, play order and options under MPD's rules. No I/O, no
// threads; the core holds one under its lock and applies commands and track changes to it.

import ReelModel

/// The play queue: what `queue.*`, `player.next`/`previous` and the end of an entry change.
///
/// Ids are handed out from 1 upwards and never reused (not even after `clear`); positions are
/// the indices in queue order and change as entries are added, removed and moved. The *play
/// order* is the queue order, or, with random on, a shuffle of it in which every entry plays
/// once per round (see `PlayQueue+Order.swift`), entries of a higher priority first (MPD's
/// `prio`, see `PlayQueue+Priority.swift`).
///
/// `version` goes up by one on every change of the entries, the current entry or the options,
/// and only then: a command that fails or changes nothing leaves it alone. The queries are pure
/// functions of the value: `successor(of:_:)` answers the same until the next change, so a
/// player that decoded the next entry ahead compares `summary.next` after each command.
///
/// `entriesVersion` goes up with `version` when the entries or their positions change, and not
/// when only the current entry or the options do (MPD's queue version); each entry keeps the
/// `entriesVersion` at which it was added, last moved or last changed, for `changes(since:)`
/// (MPD's `plchanges`; see `PlayQueue+Changes.swift`).
///
/// Cost: every operation is O(n) at most, in a few passes over integer arrays. An entry lives in
/// a *slot* whose index never changes while the entry lives, so adding, removing or moving shifts
/// only the queue's array of slot numbers and renumbers the positions behind the change; the
/// map from id to slot (`SlotsByID`) changes only for the ids added or removed.
public struct PlayQueue: Sendable {
    /// How an entry follows another (see `successor(of:_:)`).
    public enum Advance: Sendable, Equatable {
        /// The entry played to its end.
        case automatic
        /// `player.next`: single mode does not apply.
        case manual
    }

    /// What `remove(ids:)` did to the current entry.
    public enum CurrentRemoval: Sendable, Equatable {
        /// The current entry (or the absence of one) stayed.
        case untouched
        /// The current entry was removed; `successor` is the current entry now (nil: none).
        case removed(successor: Int?)
    }

    /// An entry in its slot; a free slot has id 0. What the entry plays and what is known of it
    /// is a row of `contents`, which entries added together from the same source share (a
    /// playlist that names 200 files 50 times holds 200 rows): a slot holds no strings.
    struct Slot {
        var id: Int
        /// The entry's row of `contents`.
        var content: Int
        /// The `entriesVersion` at which the entry was added, or last changed its position or
        /// content.
        var changed: Int
        /// MPD's priority (see `PlayQueue+Priority.swift`); 0 when added.
        var priority: UInt8 = 0

        static let free = Slot(id: 0, content: -1, changed: 0)
    }

    /// What an entry plays and what is known of it: a row of `contents`, shared by the entries
    /// that use it (`contentUses`). Changing one entry's row gives that entry a row of its own
    /// first (`PlayQueue+Storage.swift`).
    struct Content: Equatable {
        var source: PlayerSource
        var duration: Double?
        var format: AudioFormat?
        var missing: Bool
        var tags: DisplayTags?
        var durationEstimated = false

        static let free = Content(source: .file(path: ""), duration: nil, format: nil, missing: false, tags: nil)
    }

    var slots: [Slot] = []
    var freeSlots: [Int] = []
    /// The entries' contents (indexed by `Slot.content`), how many entries use each row, and
    /// the rows no entry uses.
    var contents: [Content] = []
    var contentUses: [Int] = []
    var freeContents: [Int] = []
    var slotOfID = SlotsByID()
    /// The slot at each position: the queue order.
    var queue: [Int] = []
    /// The position of each slot in use (indexed by slot).
    var positionOfSlot: [Int] = []
    /// With random on: the slots in play order, and each slot's index in it (indexed by slot).
    /// With random off `order` is empty and the play order is the queue order.
    var order: [Int] = []
    var orderOfSlot: [Int] = []
    /// With random on: the entry that starts the next round once this one has played (repeat).
    /// Always in the queue, and never the last of the play order unless it is the only entry.
    var nextRoundFirst: Int?
    /// How many entries have a priority above 0: while none has, the priority rules cost nothing.
    var prioritized = 0
    var nextID = 1
    var generator: Xoshiro

    public internal(set) var version = 0
    /// Goes up on every change of the entries or their positions only (see above).
    public internal(set) var entriesVersion = 0
    /// Goes up when an entry's source, length or format changes in place (not when entries are
    /// added, removed or moved): what the saved state's journal does not record (see
    /// `PlayQueue+Layout.swift`).
    public internal(set) var contentVersion = 0
    /// Tells this queue from any other value made with `init` (a restored one): a saved layout
    /// belongs to one queue (see `PlayQueue+Layout.swift`).
    let identity = PlayQueue.newIdentity()
    public internal(set) var options = QueueOptions()
    /// The id of the current entry: playing, paused, or where play and resume start.
    public internal(set) var current: Int?

    /// An empty queue. `generator` seeds the queue's own generator for random mode, so a seeded
    /// one (in tests) makes every shuffle repeat from run to run.
    public init(generator: some RandomNumberGenerator = SystemRandomNumberGenerator()) {
        var source = generator
        self.generator = Xoshiro(seededFrom: &source)
    }

    /// A saved queue: `entries` in queue order get new ids from 1 (ids need not survive a restart),
    /// `current` is a position (one outside the queue is ignored), and with random on the play
    /// order is a fresh shuffle with the current entry first. The current entry's new id is
    /// `current` of the result; `version` and `entriesVersion` are 1.
    public init(
        restoring entries: [NewQueueEntry], current: Int?, options: QueueOptions,
        generator: some RandomNumberGenerator = SystemRandomNumberGenerator()
    ) {
        self.init(restoring: NewQueueRun(entries), current: current, options: options, generator: generator)
    }

    /// `init(restoring:current:options:generator:)` of the entries of `run` in its order (the
    /// entries that name one source share it).
    public init(
        restoring run: NewQueueRun, current: Int?, options: QueueOptions,
        generator: some RandomNumberGenerator = SystemRandomNumberGenerator()
    ) {
        self.init(generator: generator)
        entriesVersion = 1
        reserveSlots(run.count)
        let added = allocate(run)
        queue = added
        renumber(from: 0)
        self.options = options
        if let current, queue.indices.contains(current) { self.current = slots[queue[current]].id }
        if options.random { shuffleOrder(first: currentSlot) }
        version = 1
    }

    // MARK: Reading

    public var length: Int { queue.count }

    /// The entry with this id, nil if there is none. O(1).
    public func entry(id: Int) -> QueueEntry? {
        slotOfID[id].map(makeEntry)
    }

    /// The position of the entry with this id, nil if there is none. O(1).
    public func position(of id: Int) -> Int? {
        slotOfID[id].map { positionOfSlot[$0] }
    }

    /// The id of the entry at this position, nil outside the queue. O(1).
    public func id(at position: Int) -> Int? {
        queue.indices.contains(position) ? slots[queue[position]].id : nil
    }

    /// The entry at this position, nil outside the queue. O(1).
    public func entry(at position: Int) -> QueueEntry? {
        queue.indices.contains(position) ? makeEntry(queue[position]) : nil
    }

    /// Up to `count` entries from position `start`, clamped to the queue (a negative start counts
    /// as 0; nothing when `start` is at or beyond the end or `count` is not positive).
    public func entries(start: Int, count: Int) -> [QueueEntry] {
        let lower = max(start, 0)
        guard lower < queue.count, count > 0 else { return [] }
        let upper = lower + min(count, queue.count - lower)
        return queue[lower..<upper].map(makeEntry)
    }

    public var allEntries: [QueueEntry] { queue.map(makeEntry) }

    /// The ids of the entries in queue order (no entry value made).
    public var ids: [Int] { queue.map { slots[$0].id } }

    /// `next` is what plays when the current entry ends: `successor(of: current, .automatic)`.
    public var summary: QueueSummary {
        QueueSummary(
            version: version, entriesVersion: entriesVersion, length: queue.count, current: current,
            next: current.flatMap { successor(of: $0, .automatic) }, options: options)
    }

    // MARK: Editing

    /// Inserts `entries`, in this order, at `position` (nil, or the length, appends), or with
    /// `afterCurrent` right after the current entry (appending when there is none; `position` is
    /// then not looked at). Returns the new entries with their ids and positions.
    ///
    /// With random on, each new entry goes to a random place after the current entry in play
    /// order, so it plays in this round (MPD); with `afterCurrent` they play right after the
    /// current entry, in the order given ("play next" means next in shuffle too; MPD would
    /// shuffle them in).
    ///
    /// Throws `not_found` for no entries (e.g. a folder without recordings) and `out_of_range`
    /// for a position outside 0...length; then nothing changes.
    public mutating func add(
        _ entries: [NewQueueEntry], at position: Int?, afterCurrent: Bool
    ) throws(ReelError) -> [QueueEntry] {
        let positions = try insert(NewQueueRun(entries), at: position, afterCurrent: afterCurrent)
        return queue[positions].map(makeEntry)
    }

    /// `add(_:at:afterCurrent:)` of the entries of `run` in its order, returning only the
    /// positions they took (in queue order, one after another): no entry value is made (a
    /// playlist's `load` answers with nothing but OK). Entries that `run` names more than once
    /// share one row of `contents`; `edit(since:)` and `savedQueue` keep them shared.
    public mutating func insert(
        _ run: NewQueueRun, at position: Int?, afterCurrent: Bool
    ) throws(ReelError) -> Range<Int> {
        guard run.count > 0 else { throw ReelError(.notFound, "there is nothing to add to the queue") }
        let currentSlot = self.currentSlot
        let insertion: Int
        if afterCurrent {
            insertion = currentSlot.map { positionOfSlot[$0] + 1 } ?? queue.count
        } else if let position {
            guard position >= 0, position <= queue.count else {
                throw ReelError(
                    .outOfRange,
                    "cannot add at position \(position): the queue has \(Self.entries(queue.count)) (0 to \(queue.count) are valid)")
            }
            insertion = position
        } else {
            insertion = queue.count
        }
        beginEntriesChange()
        reserveSlots(run.count)
        let added = allocate(run)
        queue.insert(contentsOf: added, at: insertion)
        renumber(from: insertion)
        if options.random { placeInOrder(added, after: currentSlot, rightAfter: afterCurrent) }
        version += 1
        return insertion..<insertion + added.count
    }

    /// Removes the entries with these ids (repeats count once), all or nothing: an unknown id
    /// throws `not_found` and nothing changes. `playing` is whether the player is playing or
    /// paused (MPD's `playing`). Then, when the current entry goes, the current entry becomes the
    /// one that followed it in play order and stays (MPD; the player starts it when it was
    /// playing, stops when paused); with repeat, past the end of the play order that is the start
    /// of the next round. Unlike MPD this ignores single mode (MPD's single + repeat would leave
    /// no current entry). When stopped, removing the current entry leaves none, and play starts
    /// at the first entry (MPD's `DeleteInternal`).
    public mutating func remove(ids: [Int], playing: Bool) throws(ReelError) -> CurrentRemoval {
        var doomed = [Bool](repeating: false, count: slots.count)
        var any = false
        for id in ids {
            guard let slot = slotOfID[id] else { throw ReelError(.notFound, "no queue entry with id \(id)") }
            doomed[slot] = true
            any = true
        }
        guard any else { return .untouched }
        beginEntriesChange()
        guard let slot = currentSlot, doomed[slot] else {
            removeSlots(doomed)
            version += 1
            return .untouched
        }
        guard playing else {
            removeSlots(doomed)
            current = nil
            version += 1
            return .removed(successor: nil)
        }
        let follower = firstSurvivor(after: slot, doomed: doomed).map { slots[$0].id }
        // Past the end with repeat: the next round, starting where `successor` said it would
        // (unless that entry goes too).
        let plannedStart = follower == nil && options.repeats ? roundStart : nil
        removeSlots(doomed)
        if follower != nil || !options.repeats || queue.isEmpty {
            current = follower
        } else if options.random {
            let start = plannedStart.flatMap { slotOfID[$0] } ?? nextRoundFirst.flatMap { slotOfID[$0] } ?? order[0]
            shuffleOrder(first: start)
            current = slots[start].id
        } else {
            current = slots[queue[0]].id
        }
        version += 1
        return .removed(successor: current)
    }

    /// Moves the entry to `position` (0..<length); the others shift. The play order follows the
    /// entries (MPD): with random off it is the new queue order, with random on it stays as it was.
    public mutating func move(id: Int, to position: Int) throws(ReelError) {
        guard let slot = slotOfID[id] else { throw ReelError(.notFound, "no queue entry with id \(id)") }
        guard position >= 0, position < queue.count else {
            throw ReelError(
                .outOfRange, "cannot move to position \(position): the queue has \(Self.entries(queue.count))")
        }
        let from = positionOfSlot[slot]
        guard from != position else { return }
        beginEntriesChange()
        queue.remove(at: from)
        queue.insert(slot, at: position)
        renumber(from: min(from, position), through: max(from, position))
        version += 1
    }

    /// Empties the queue; there is no current entry after it. Ids go on counting.
    ///
    /// Freeing the entries frees the strings of their contents (a playlist's 10,000 entries of 200
    /// files: 200 rows); a caller that holds a lock can keep the old value (`let old = queue; queue.clear()`) and let it go after unlocking.
    public mutating func clear() {
        guard !queue.isEmpty || current != nil else { return }
        if !queue.isEmpty { beginEntriesChange() }
        slots = []
        freeSlots = []
        contents = []
        contentUses = []
        freeContents = []
        slotOfID = SlotsByID()
        queue = []
        positionOfSlot = []
        order = []
        orderOfSlot = []
        nextRoundFirst = nil
        prioritized = 0
        current = nil
        version += 1
    }

    /// Sets the options given (nil leaves one as it is). Random on shuffles the play order with
    /// the current entry first, so it keeps playing and every other entry follows once; random off
    /// makes the play order the queue order. Turning random on when it is on does not reshuffle.
    public mutating func setOptions(repeats: Bool?, random: Bool?, single: SingleMode?, consume: Bool?) {
        var changed = false
        if let repeats, repeats != options.repeats { options.repeats = repeats; changed = true }
        if let single, single != options.single { options.single = single; changed = true }
        if let consume, consume != options.consume { options.consume = consume; changed = true }
        if let random, random != options.random {
            options.random = random
            changed = true
            if random {
                shuffleOrder(first: currentSlot)
            } else {
                order = []
                nextRoundFirst = nil
            }
        }
        if changed { version += 1 }
    }

    /// Makes the entry current (nil: none), e.g. for `player.play` with an entry. With random on
    /// the entry moves in the play order, as MPD does, so the round goes on from it: right after
    /// the old current entry when that one was playing (`currentWasPlaying`, it has been heard),
    /// right before it when not (it still plays this round), to the front when there was none.
    /// `keepOrder` leaves the play order alone: for `player.previous`, whose `predecessor` is
    /// where it is (MPD; moving it would make a second previous come back). Unknown id: `not_found`.
    public mutating func setCurrent(
        _ id: Int?, currentWasPlaying: Bool = true, keepOrder: Bool = false
    ) throws(ReelError) {
        guard let id else {
            if current != nil { current = nil; version += 1 }
            return
        }
        guard let slot = slotOfID[id] else { throw ReelError(.notFound, "no queue entry with id \(id)") }
        guard id != current else { return }
        if options.random && !keepOrder {
            let from = orderOfSlot[slot]
            var to = 0
            if let old = currentSlot.map({ orderOfSlot[$0] }) {
                to = currentWasPlaying ? (from > old ? old + 1 : old) : (from < old ? old - 1 : old)
            }
            order.remove(at: from)
            order.insert(slot, at: to)
            renumberOrder(from: min(from, to), through: max(from, to))
            keepNextRoundFirst()
        }
        current = id
        version += 1
    }

    /// Records what opening the file told: its length (`estimated` while it is an estimate),
    /// format, or that it is missing. Changes the versions (both) only when something changed; an
    /// unknown id is ignored (it was removed meanwhile).
    public mutating func setDuration(
        _ duration: Double?, estimated: Bool = false, format: AudioFormat?, missing: Bool, for id: Int
    ) {
        guard let slot = slotOfID[id] else { return }
        let old = contents[slots[slot].content]
        let estimated = estimated && duration != nil
        guard old.duration != duration || old.durationEstimated != estimated || old.format != format
            || old.missing != missing
        else { return }
        beginEntriesChange()
        if old.duration != duration || old.durationEstimated != estimated || old.format != format { contentVersion += 1 }
        slots[slot].changed = entriesVersion
        changeContent(of: slot) { content in
            content.duration = duration
            content.durationEstimated = estimated
            content.format = format
            content.missing = missing
        }
        version += 1
    }

    /// Follows a recording that was renamed or moved. Changes the versions (both) only when the
    /// source changed; an unknown id is ignored.
    public mutating func updateSource(_ source: PlayerSource, for id: Int) {
        guard let slot = slotOfID[id], contents[slots[slot].content].source != source else { return }
        beginEntriesChange()
        contentVersion += 1
        slots[slot].changed = entriesVersion
        changeContent(of: slot) { $0.source = source }
        version += 1
    }
}

extension PlayQueue {
    /// Sets an entry's tags (a URL entry's, set by a client). Changes the versions (both) only
    /// when they changed; an unknown id is ignored.
    public mutating func updateTags(_ tags: DisplayTags?, for id: Int) {
        guard let slot = slotOfID[id], contents[slots[slot].content].tags != tags else { return }
        beginEntriesChange()
        contentVersion += 1
        slots[slot].changed = entriesVersion
        changeContent(of: slot) { $0.tags = tags }
        version += 1
    }

    /// "1 entry", "3 entries", for messages.
    static func entries(_ count: Int) -> String { count == 1 ? "1 entry" : "\(count) entries" }
}
