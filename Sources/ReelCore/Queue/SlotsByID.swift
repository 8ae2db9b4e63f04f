// The slot of each queue entry by its id, for ids handed out in increasing order.

/// The slot of each entry of a `PlayQueue` by id. Ids are handed out one after another and
/// never reused, so the entries of the ids from `base` on are an array indexed by `id - base`
/// (-1: removed): adding the 10,000 entries of a playlist appends to it, with no hashing. When
/// removals leave it mostly empty (a few entries kept while many after them came and went),
/// its live entries move to a dictionary and the array starts again at the next id. Value type;
/// the queue's lock guards it with the rest of the queue.
struct SlotsByID: Sendable {
    /// The id of `recent[0]`.
    private var base = 0
    private var recent: [Int] = []
    /// How many of `recent` are entries (not -1).
    private var live = 0
    /// Entries older than `base`.
    private var older: [Int: Int] = [:]

    /// How many ids have a slot.
    var count: Int { live + older.count }

    /// Makes room for `count` more ids (a playlist's load grows the array once); still at least
    /// doubling, so that many adds of one entry each stay linear.
    mutating func reserveCapacity(_ count: Int) {
        let needed = recent.count + count
        if needed > recent.capacity { recent.reserveCapacity(max(needed, recent.capacity * 2)) }
    }

    subscript(id: Int) -> Int? {
        get {
            let index = id &- base
            if index >= 0, index < recent.count {
                let slot = recent[index]
                return slot >= 0 ? slot : nil
            }
            return older.isEmpty ? nil : older[id]
        }
        set {
            let index = id &- base
            guard let slot = newValue else {
                if index >= 0, index < recent.count {
                    guard recent[index] >= 0 else { return }
                    recent[index] = -1
                    live -= 1
                    moveIfSparse()
                } else {
                    older[id] = nil
                }
                return
            }
            if index >= 0, index < recent.count {
                if recent[index] < 0 { live += 1 }
                recent[index] = slot
            } else if !older.isEmpty, older[id] != nil {
                older[id] = slot
            } else if recent.isEmpty {
                base = id
                recent.append(slot)
                live += 1
            } else if index >= recent.count {
                // A new id (ids only grow): after any ids between, which have no slot.
                if index > recent.count { recent.append(contentsOf: repeatElement(-1, count: index - recent.count)) }
                recent.append(slot)
                live += 1
            } else {
                older[id] = slot
            }
        }
    }

    /// When fewer than a quarter of `recent`'s ids (of at least 1,024) still have a slot, they
    /// move to `older`, and the array starts again at the next id: its size stays within four
    /// times the entries it holds.
    private mutating func moveIfSparse() {
        if live == 0 {
            recent = []
            return
        }
        guard recent.count >= 1024, live * 4 < recent.count else { return }
        for (index, slot) in recent.enumerated() where slot >= 0 { older[base + index] = slot }
        recent = []
        live = 0
    }
}
