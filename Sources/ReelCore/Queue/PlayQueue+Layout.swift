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

/// A piece of the queue's new list of entries as the state file takes it (`PlayQueue.editRuns`):
/// a run of the list before, or a run of positions of the queue now whose entries were added
/// (written straight from the queue's rows: `QueueRows`).
enum QueueEditRun: Equatable, Sendable {
    /// The entries at positions `start..<start + count` of the list before, in that order.
    case keep(start: Int, count: Int)
    /// The entries at positions `start..<start + count` of the queue now, added since.
    case added(start: Int, count: Int)
}

/// The queue's entries at one moment, to be written out of the queue's lock: its slots, their
/// rows and their order, as the arrays themselves (shared with the queue, not copied, until the
/// queue changes one of them).
struct QueueRows: Sendable {
    var slots: [PlayQueue.Slot]
    var contents: [PlayQueue.Content]
    var queue: [Int]
}

extension PlayQueue {
    /// The pieces that make the queue's list of entries now out of the list `layout` recorded,
    /// in order, and `layout` brought up to date; nil when no entry was added, removed or moved
    /// (an entry's length or source changing in place is not an edit: see `contentVersion`).
    /// Removing one entry is two `keep` pieces, moving one three or four, adding some a `keep`
    /// or two around an `add`; a shuffle is up to one piece per entry.
    ///
    /// Cost: one pass over the queue's slot numbers, reading each entry's id; no dictionary is
    /// built (the layout is indexed by slot), and no entry is copied (`editRuns(since:)`).
    /// Against another queue's layout (this one was restored since) it is one `add` of every
    /// entry.
    func edit(since layout: inout SavedLayout) -> [QueueEditPiece]? {
        guard let runs = editRuns(since: &layout) else { return nil }
        let rows = self.rows
        return runs.map { run in
            switch run {
            case .keep(let start, let count): .keep(start: start, count: count)
            case .added(let start, let count): .add(rows.savedEntries(positions: start..<start + count))
            }
        }
    }

    /// `edit(since:)` with each `add` as the run of the queue's positions it adds (its entries
    /// are then written from `rows`, not copied).
    func editRuns(since layout: inout SavedLayout) -> [QueueEditRun]? {
        let replaced = layout.queue != identity
        guard replaced || layout.entriesVersion != entriesVersion else { return nil }
        var pieces: [QueueEditRun] = []
        var run: (start: Int, count: Int)? = nil
        var added: (start: Int, count: Int)? = nil
        let lastID = layout.lastID
        let known = layout.positionOfSlot.count
        for (position, slot) in queue.enumerated() {
            // Only the id of an entry that was there: copying the whole slot would retain its strings.
            if replaced || slots[slot].id > lastID || slot >= known {
                if let kept = run {
                    pieces.append(.keep(start: kept.start, count: kept.count))
                    run = nil
                }
                added = added.map { ($0.start, $0.count + 1) } ?? (position, 1)
                continue
            }
            if let new = added {
                pieces.append(.added(start: new.start, count: new.count))
                added = nil
            }
            let before = layout.positionOfSlot[slot]
            if let kept = run, kept.start + kept.count == before {
                run = (kept.start, kept.count + 1)
            } else {
                if let kept = run { pieces.append(.keep(start: kept.start, count: kept.count)) }
                run = (before, 1)
            }
        }
        if let kept = run { pieces.append(.keep(start: kept.start, count: kept.count)) }
        if let new = added { pieces.append(.added(start: new.start, count: new.count)) }
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
    /// and the order of all. O(length), no hashing. (A full save writes them from `rows`.)
    var savedEntries: SavedEntries { rows.savedEntries(positions: queue.indices) }

    /// The queue's entries now, to be written out of the lock.
    var rows: QueueRows { QueueRows(slots: slots, contents: contents, queue: queue) }

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

extension QueueRows {
    /// The entries at `positions` as the saved state records them: the row of `contents` each
    /// uses once, in the order of first use, and the order of the entries as indices into those.
    func savedEntries(positions: Range<Int>) -> SavedEntries {
        var entries: [SavedQueue.Entry] = []
        let order = distinctRows(positions) { row in entries.append(PlayQueue.savedEntry(contents[row])) }
        return SavedEntries(entries: entries, order: order)
    }

    /// Writes the members `"KEY":[…]` and, unless each entry is there once in order,
    /// `,"order":[…]` of the entries at `positions`: byte for byte
    /// `savedEntries(positions:).writeJSON(into:entriesKey:)`, but straight from the rows, each
    /// row's entry written at its first use (no entry value made). Whenever `out` holds
    /// `flushAt` bytes or more between two entries, `flush` is called to take them.
    func writeEntries(
        positions: Range<Int>, key: String, into out: inout [UInt8], flushAt: Int = .max,
        flush: (inout [UInt8]) -> Void = { _ in }
    ) {
        out.append(0x22)
        out.append(contentsOf: key.utf8)
        out.append(contentsOf: #"":["#.utf8)
        var distinct = 0
        // Each row read in place (not copied out of the array: no retain and release of its
        // strings per entry, 10,000 of them in a `load`'s record).
        let order = contents.withUnsafeBufferPointer { contents in
            distinctRows(positions) { row in
                if distinct > 0 { out.append(0x2C) }
                distinct += 1
                SavedQueue.Entry.writeJSON(
                    source: contents[row].source, duration: contents[row].durationEstimated ? nil : contents[row].duration,
                    format: contents[row].format, tags: contents[row].tags, into: &out)
                if out.count >= flushAt { flush(&out) }
            }
        }
        out.append(0x5D)
        // Each entry once, in order: the order is the entries as they are.
        guard distinct < order.count else { return }
        SavedEntries.writeOrder(order, into: &out, flushAt: flushAt, flush: flush)
    }

    /// For each entry at `positions`, the index of its row among the distinct rows in the
    /// order of first use; `first` is called with each row at its first use. No hashing: a
    /// mark per row of `contents`.
    private func distinctRows(_ positions: Range<Int>, first: (_ row: Int) -> Void) -> [Int] {
        var indexOfRow = [Int](repeating: -1, count: contents.count)
        var distinct = 0
        var order: [Int] = []
        order.reserveCapacity(positions.count)
        for position in positions {
            let row = slots[queue[position]].content
            var index = indexOfRow[row]
            if index < 0 {
                index = distinct
                indexOfRow[row] = index
                distinct += 1
                first(row)
            }
            order.append(index)
        }
        return order
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
