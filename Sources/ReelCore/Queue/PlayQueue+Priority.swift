// Priorities (MPD's `prio`/`prioid`): in random mode, entries of a higher priority play first.

import ReelModel

extension PlayQueue {
    /// The highest priority (`prio 255`).
    public static let priorities = 0...255

    /// Sets the priority of the entries `ids` (repeats count once), all or nothing: an unknown id
    /// is `not_found`, a priority outside 0...255 `out_of_range`, and nothing changes. The rules
    /// are MPD's (`Queue::SetPriority`), entry by entry in the order given:
    ///
    /// - Every entry has a priority, 0 when added. With random off it changes nothing but itself.
    /// - With random on, the play order holds the entries of a higher priority before those of a
    ///   lower one: each new shuffle (random turned on, a new round, the end of the queue) groups
    ///   them by priority, highest first, each group shuffled; an added entry (priority 0) is
    ///   shuffled in among the entries of priority 0 still to play.
    /// - An entry whose priority changes moves, in the play order, among the entries after the
    ///   current one, to a random place in the group of its new priority (before the entries of a
    ///   lower one). The current entry does not move. An entry already played this round (before
    ///   the current one in play order) moves only when its priority went up and is now above
    ///   the current entry's: it plays again this round.
    /// - The first entry of the next round is one of the highest priority.
    ///
    /// Changing a priority counts as a change of the entry (`changes(since:)`, both versions); a
    /// priority set to what it was changes nothing (MPD would count it).
    public mutating func setPriority(_ priority: Int, ids: [Int]) throws(ReelError) {
        guard Self.priorities.contains(priority) else {
            throw ReelError(.outOfRange, "a priority is from 0 to 255, not \(priority)")
        }
        var chosen: [Int] = []
        var seen = Set<Int>()
        for id in ids {
            guard let slot = slotOfID[id] else { throw ReelError(.notFound, "no queue entry with id \(id)") }
            if seen.insert(slot).inserted { chosen.append(slot) }
        }
        let value = UInt8(priority)
        guard chosen.contains(where: { slots[$0].priority != value }) else { return }
        beginEntriesChange()
        for slot in chosen { setPriority(value, of: slot) }
        keepNextRoundFirst()
        version += 1
    }

    private mutating func setPriority(_ priority: UInt8, of slot: Int) {
        let old = slots[slot].priority
        guard old != priority else { return }
        slots[slot].priority = priority
        slots[slot].changed = entriesVersion
        prioritized += (priority != 0 ? 1 : 0) - (old != 0 ? 1 : 0)
        guard options.random else { return }
        let index = orderOfSlot[slot]
        let current = currentSlot.map { orderOfSlot[$0] }
        if let current {
            if index == current { return }
            // Played already this round: again only when it now outranks the current entry.
            if index < current && (priority <= old || priority <= slots[order[current]].priority) { return }
        }
        // To the front of its group among the entries still to play...
        let start = (current ?? -1) + 1
        var before = order.count
        for candidate in start..<order.count where candidate != index && slots[order[candidate]].priority <= priority {
            before = candidate
            break
        }
        let target = before > index ? before - 1 : before
        order.remove(at: index)
        order.insert(slot, at: target)
        renumberOrder(from: min(index, target), through: max(index, target))
        // ...then to a random place in it.
        var end = target + 1
        while end < order.count && slots[order[end]].priority == priority { end += 1 }
        let other = Int.random(in: target..<end, using: &generator)
        order.swapAt(target, other)
        orderOfSlot[order[target]] = target
        orderOfSlot[order[other]] = other
    }
}
