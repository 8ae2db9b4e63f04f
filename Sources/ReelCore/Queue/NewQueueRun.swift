// Entries to add to the queue as their distinct entries and the order of all: how a playlist
// that repeats its files reaches the queue and the saved state without a copy per line.

import ReelModel

/// Entries to add, in `order`: each an index into `distinct`. A playlist that names 200 files
/// 50 times is 200 entries and 10,000 indices; the queue keeps the entries that share an index
/// sharing their contents (`PlayQueue.insert(_:at:afterCurrent:)`).
public struct NewQueueRun: Sendable {
    public var distinct: [NewQueueEntry]
    /// Indices into `distinct`, one per entry added.
    public var order: [Int]

    /// How many entries are added.
    public var count: Int { order.count }

    /// Entries `order` names by their index in `distinct`; an index outside it is a
    /// programming error.
    public init(distinct: [NewQueueEntry], order: [Int]) {
        precondition(order.allSatisfy { distinct.indices.contains($0) }, "an order names an entry the run does not have")
        self.distinct = distinct
        self.order = order
    }

    /// Each entry once, in this order.
    public init(_ entries: [NewQueueEntry]) {
        distinct = entries
        order = Array(entries.indices)
    }

    /// The entries in order, each made from its distinct entry.
    public var entries: [NewQueueEntry] { order.map { distinct[$0] } }
}
