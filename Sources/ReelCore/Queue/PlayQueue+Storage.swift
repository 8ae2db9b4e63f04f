// Where the entries live: slots that keep their index while an entry lives, and the integer
// arrays that give positions and play order.

import ReelModel

extension PlayQueue {
    var currentSlot: Int? { current.flatMap { slotOfID[$0] } }

    func makeEntry(_ slot: Int) -> QueueEntry {
        let stored = slots[slot]
        let content = contents[stored.content]
        return QueueEntry(
            id: stored.id, position: positionOfSlot[slot], source: content.source, duration: content.duration,
            format: content.format, missing: content.missing, tags: content.tags, priority: Int(stored.priority),
            durationEstimated: content.durationEstimated)
    }

    /// The contents of the entry in `slot`.
    func content(of slot: Int) -> Content { contents[slots[slot].content] }

    /// Starts a change of the entries or their positions: `entriesVersion` goes up, and the slots
    /// that `allocate`, `renumber` and `removeSlots` reach after it are stamped with the new
    /// value. Called once per change, after every check that can throw.
    mutating func beginEntriesChange() {
        entriesVersion += 1
    }

    /// Makes room for `count` more entries at once (a playlist of 10,000 grows each table once,
    /// not step by step); still at least doubling, so that many small adds stay linear.
    mutating func reserveSlots(_ count: Int) {
        let needed = slots.count + max(0, count - freeSlots.count)
        if needed > slots.capacity {
            let capacity = max(needed, slots.capacity * 2)
            slots.reserveCapacity(capacity)
            positionOfSlot.reserveCapacity(capacity)
            orderOfSlot.reserveCapacity(capacity)
        }
        if queue.count + count > queue.capacity { queue.reserveCapacity(max(queue.count + count, queue.capacity * 2)) }
        slotOfID.reserveCapacity(count)
    }

    /// Gives each entry of `run`, in its order, the next id and a slot stamped with
    /// `entriesVersion`, the entries of one distinct entry sharing a row of `contents`; returns
    /// the slots, which the caller puts in the queue.
    mutating func allocate(_ run: NewQueueRun) -> [Int] {
        // The rows' table grows once for a large run (still at least doubling).
        let needed = contents.count + max(0, run.distinct.count - freeContents.count)
        if needed > contents.capacity {
            contents.reserveCapacity(max(needed, contents.capacity * 2))
            contentUses.reserveCapacity(max(needed, contentUses.capacity * 2))
        }
        let rows = run.distinct.map { new in
            addContent(Content(
                source: new.source, duration: new.duration, format: new.format, missing: new.missing, tags: new.tags,
                durationEstimated: new.durationEstimated && new.duration != nil))
        }
        var added: [Int] = []
        added.reserveCapacity(run.count)
        for index in run.order {
            let row = rows[index]
            contentUses[row] += 1
            added.append(allocate(content: row))
        }
        for row in rows where contentUses[row] == 0 {
            contents[row] = .free
            freeContents.append(row)
        }
        return added
    }

    /// A row of `contents` holding `content`, used by no entry yet.
    mutating func addContent(_ content: Content) -> Int {
        if let reused = freeContents.popLast() {
            contents[reused] = content
            return reused
        }
        contents.append(content)
        contentUses.append(0)
        return contents.count - 1
    }

    /// Gives an entry of the row `content` (whose use the caller counted) the next id and a
    /// slot stamped with `entriesVersion`.
    private mutating func allocate(content: Int) -> Int {
        let stored = Slot(id: nextID, content: content, changed: entriesVersion)
        nextID += 1
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[slot] = stored
        } else {
            slot = slots.count
            slots.append(stored)
            positionOfSlot.append(0)
            orderOfSlot.append(0)
        }
        slotOfID[stored.id] = slot
        return slot
    }

    /// One entry less uses the row `content`; a row no entry uses is freed (its strings with it).
    mutating func releaseContent(_ content: Int) {
        contentUses[content] -= 1
        if contentUses[content] == 0 {
            contents[content] = .free
            freeContents.append(content)
        }
    }

    /// Changes the contents of the entry in `slot` only: a row other entries share is copied
    /// for it first.
    mutating func changeContent(of slot: Int, _ change: (inout Content) -> Void) {
        let row = slots[slot].content
        if contentUses[row] == 1 { return change(&contents[row]) }
        var copy = contents[row]
        change(&copy)
        releaseContent(row)
        let own = addContent(copy)
        contentUses[own] = 1
        slots[slot].content = own
    }

    /// Removes the slots marked in `doomed` (indexed by slot) from the queue and the play order in
    /// one pass each, and frees them. The entries that move up are stamped with `entriesVersion`.
    mutating func removeSlots(_ doomed: [Bool]) {
        var kept = 0
        for position in queue.indices {
            let slot = queue[position]
            if doomed[slot] {
                if slots[slot].priority != 0 { prioritized -= 1 }
                slotOfID[slots[slot].id] = nil
                releaseContent(slots[slot].content)
                slots[slot] = .free
                freeSlots.append(slot)
            } else {
                queue[kept] = slot
                if positionOfSlot[slot] != kept {
                    positionOfSlot[slot] = kept
                    slots[slot].changed = entriesVersion
                }
                kept += 1
            }
        }
        queue.removeLast(queue.count - kept)
        guard options.random else { return }
        kept = 0
        for index in order.indices where !doomed[order[index]] {
            order[kept] = order[index]
            orderOfSlot[order[kept]] = kept
            kept += 1
        }
        order.removeLast(order.count - kept)
        keepNextRoundFirst()
    }

    /// Brings `positionOfSlot` up to date for the positions from `start` (through `end`), and
    /// stamps the entries there with `entriesVersion`: callers pass the positions whose entries
    /// changed.
    mutating func renumber(from start: Int, through end: Int? = nil) {
        let last = end ?? queue.count - 1
        guard start <= last else { return }
        for position in start...last {
            let slot = queue[position]
            positionOfSlot[slot] = position
            slots[slot].changed = entriesVersion
        }
    }

    /// Brings `orderOfSlot` up to date for the play order indices from `start` (through `end`).
    mutating func renumberOrder(from start: Int, through end: Int? = nil) {
        let last = end ?? order.count - 1
        guard start <= last else { return }
        for index in start...last { orderOfSlot[order[index]] = index }
    }
}
