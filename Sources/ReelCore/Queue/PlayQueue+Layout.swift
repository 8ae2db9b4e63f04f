// What the saved state last recorded of the queue, and the edit that turns that into the queue
// now: how a queue command is saved without writing the whole queue again.

import ReelModel
import Synchronization

private let identities = Atomic<Int>(0)

/// The queue's entries as the saved state last recorded them: the position each entry had then
/// (by slot: an entry keeps its slot while it lives) and the highest id handed out by then (ids
/// grow and are never reused, so a higher id is an entry added since). Kept by the state file,
/// brought up to date by `PlayQueue.edit(since:)`.
struct SavedLayout: Sendable {
    /// The queue it was taken from (`PlayQueue.identity`); 0: none.
    var queue = 0
    /// The position of each slot's entry then, for the slots of entries that lived then.
    var positionOfSlot: [Int] = []
    /// Ids up to this one were handed out by then.
    var lastID = 0
    /// The queue's length then.
    var length = 0
    /// The queue's `entriesVersion` then; -1 before the first record.
    var entriesVersion = -1
}

/// A piece of the queue's new list of entries: a run of the list before, or entries added.
enum QueueEditPiece: Equatable, Sendable {
    /// The entries at positions `start..<start + count` of the list before, in that order.
    case keep(start: Int, count: Int)
    /// New entries: each distinct one once and their order (`SavedEntries`).
    case add(SavedEntries)
}

extension PlayQueue {
    /// The pieces that make the queue's list of entries now out of the list `layout` recorded,
    /// in order, and `layout` brought up to date; nil when no entry was added, removed or moved
    /// (an entry's length or source changing in place is not an edit: see `contentVersion`).
    /// Removing one entry is two `keep` pieces, moving one three or four, adding some a `keep`
    /// or two around an `add`; a shuffle is up to one piece per entry.
    ///
    /// Cost: one pass over the queue's slot numbers, reading each entry's id; no dictionary is
    /// built (the layout is indexed by slot). Against another queue's layout (this one was
    /// restored since) it is one `add` of every entry.
    func edit(since layout: inout SavedLayout) -> [QueueEditPiece]? {
        let replaced = layout.queue != identity
        guard replaced || layout.entriesVersion != entriesVersion else { return nil }
        var pieces: [QueueEditPiece] = []
        var run: (start: Int, count: Int)? = nil
        var added = SavedEntriesBuilder(self)
        let lastID = layout.lastID
        let known = layout.positionOfSlot.count
        for slot in queue {
            // Only the id of an entry that was there: copying the whole slot would retain its strings.
            if replaced || slots[slot].id > lastID || slot >= known {
                if let kept = run {
                    pieces.append(.keep(start: kept.start, count: kept.count))
                    run = nil
                }
                added.append(slot, of: self)
                continue
            }
            if !added.isEmpty { pieces.append(.add(added.take())) }
            let before = layout.positionOfSlot[slot]
            if let kept = run, kept.start + kept.count == before {
                run = (kept.start, kept.count + 1)
            } else {
                if let kept = run { pieces.append(.keep(start: kept.start, count: kept.count)) }
                run = (before, 1)
            }
        }
        if let kept = run { pieces.append(.keep(start: kept.start, count: kept.count)) }
        if !added.isEmpty { pieces.append(.add(added.take())) }
        let unchanged = !replaced && queue.count == layout.length
            && (queue.isEmpty || pieces == [.keep(start: 0, count: queue.count)])
        layout = self.layout
        return unchanged ? nil : pieces
    }

    /// What the saved state records of `content`: `SavedQueue.Entry(saving:)` of an entry of
    /// it, without making the whole entry first.
    static func savedEntry(_ content: Content) -> SavedQueue.Entry {
        SavedQueue.Entry(
            source: content.source, duration: content.durationEstimated ? nil : content.duration, format: content.format,
            tags: content.tags)
    }

    /// Every entry as the saved state records it, in queue order: each row of `contents` once,
    /// and the order of all (what a full save writes). O(length), no hashing.
    var savedEntries: SavedEntries {
        var builder = SavedEntriesBuilder(self)
        for slot in queue { builder.append(slot, of: self) }
        return builder.take()
    }

    /// The layout of the queue as it is now (what a full save records).
    var layout: SavedLayout {
        SavedLayout(
            queue: identity, positionOfSlot: positionOfSlot, lastID: nextID - 1, length: queue.count,
            entriesVersion: entriesVersion)
    }

    static func newIdentity() -> Int {
        identities.add(1, ordering: .relaxed).newValue
    }
}

/// Collects entries of a queue as the saved state records them: the row of `contents` each
/// uses, written once per collection, and the order of the entries as indices into those.
struct SavedEntriesBuilder {
    /// For each row of the queue's `contents`: its index among the entries collected, or -1
    /// (made at the first `append`: an edit without adds needs none).
    private var indexOfRow: [Int] = []
    private let rowCount: Int
    /// The rows collected since the last `take`, to reset their marks.
    private var rows: [Int] = []
    private var entries: [SavedQueue.Entry] = []
    private var order: [Int] = []

    init(_ queue: PlayQueue) {
        rowCount = queue.contents.count
    }

    var isEmpty: Bool { order.isEmpty }

    mutating func append(_ slot: Int, of queue: PlayQueue) {
        if indexOfRow.isEmpty { indexOfRow = [Int](repeating: -1, count: rowCount) }
        let row = queue.slots[slot].content
        var index = indexOfRow[row]
        if index < 0 {
            index = entries.count
            indexOfRow[row] = index
            rows.append(row)
            entries.append(PlayQueue.savedEntry(queue.contents[row]))
        }
        order.append(index)
    }

    /// The entries collected since the last `take`, and starts again.
    mutating func take() -> SavedEntries {
        for row in rows { indexOfRow[row] = -1 }
        rows = []
        defer {
            entries = []
            order = []
        }
        return SavedEntries(entries: entries, order: order)
    }
}

extension QueueEditPiece {
    /// Applies `pieces` to `list` (any element: the saved entries, or indices of them), or nil
    /// when a piece does not fit the list (a `keep` outside it) or the result is not `length`
    /// long. `add` pieces go through `adding`, which gives the element for each distinct new
    /// entry (once, however often the piece names it).
    static func apply<Element>(
        _ pieces: [QueueEditPiece], to list: [Element], length: Int, adding: (SavedQueue.Entry) -> Element
    ) -> [Element]? {
        var result: [Element] = []
        result.reserveCapacity(length)
        for piece in pieces {
            switch piece {
            case .keep(let start, let count):
                guard start >= 0, count > 0, start <= list.count - count else { return nil }
                result.append(contentsOf: list[start..<start + count])
            case .add(let added):
                guard !added.isEmpty else { return nil }
                let made = added.entries.map(adding)
                if let order = added.order {
                    for index in order { result.append(made[index]) }
                } else {
                    result.append(contentsOf: made)
                }
            }
        }
        return result.count == length ? result : nil
    }
}
