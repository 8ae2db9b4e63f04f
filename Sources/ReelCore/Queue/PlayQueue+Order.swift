// The play order: which entry follows which, the random shuffle, and what happens when an entry ends.

import ReelModel

extension PlayQueue {
    /// What `advance(from:to:_:)` did.
    public struct Advanced: Sendable, Equatable {
        /// The finished entry, when consume removed it.
        public var consumed: Int?
        /// The current entry now.
        public var current: Int?
        /// Single was `oneshot` and went back to `off` because it stopped playback.
        public var singleWentOff: Bool

        public init(consumed: Int? = nil, current: Int?, singleWentOff: Bool = false) {
            self.consumed = consumed
            self.current = current
            self.singleWentOff = singleWentOff
        }
    }

    /// The entry that plays after `id`; nil when playback ends there, or for an unknown id.
    ///
    /// `.automatic` (the entry played to its end) follows MPD's `Queue::GetNextOrder`:
    /// - single (on or oneshot) with repeat and without consume: `id` again;
    /// - single without repeat: nil, playback stops (MPD instead pauses at the start of the next
    ///   entry; Reel stops after the entry, see `advance`);
    /// - otherwise the next in play order; after the last one, with repeat, the first of the next
    ///   round, except when consume is on and `id` is the only entry (consuming it leaves nothing
    ///   to repeat: MPD's `repeat && (order > 0 || consume == OFF)`); else nil.
    ///   With random on the next round is a new shuffle (MPD reshuffles on every wrap); its first
    ///   entry is drawn ahead (`nextRoundFirst`, never the entry that ends this round unless it is
    ///   the only one) so this query is stable, and `advance` shuffles the rest of the round.
    ///
    /// `.manual` (`player.next`) is the same without the single rules.
    public func successor(of id: Int, _ advance: Advance) -> Int? {
        guard let slot = slotOfID[id] else { return nil }
        if advance == .automatic && options.single != .off {
            if !options.repeats { return nil }
            if !options.consume { return id }
        }
        let index = playIndex(of: slot)
        if index + 1 < queue.count { return slots[slotAt(playIndex: index + 1)].id }
        guard options.repeats, index > 0 || !options.consume else { return nil }
        return roundStart
    }

    /// The entry `player.previous` goes to: the previous one in play order; from the first one,
    /// the last with repeat, else the same entry (it restarts). Nil for an unknown id. (MPD.)
    public func predecessor(of id: Int) -> Int? {
        guard let slot = slotOfID[id] else { return nil }
        let index = playIndex(of: slot)
        if index > 0 { return slots[slotAt(playIndex: index - 1)].id }
        return options.repeats ? slots[slotAt(playIndex: queue.count - 1)].id : id
    }

    /// The first entry in play order (where play starts when there is no current entry), nil
    /// when the queue is empty.
    public var first: Int? {
        queue.isEmpty ? nil : slots[slotAt(playIndex: 0)].id
    }

    /// The entry `finished` is done and `next` starts (its first frame is audible), or playback
    /// ends (`next` nil). Use it for an entry that ended (`.automatic`, with `next` from
    /// `successor(of: finished, .automatic)`) and for `player.next` (`.manual`); use `setCurrent`
    /// for playing a chosen entry, and with `keepOrder: true` for `player.previous`.
    ///
    /// - Consume removes `finished` (unless `next` is `finished` itself).
    /// - With random on, a `next` that comes earlier in play order than `finished` starts a new
    ///   round: the play order is reshuffled with `next` first.
    /// - `next` nil where single (no repeat, `.automatic`) stopped playback: `finished` stays
    ///   current, so play starts it again, as after `player.stop`; when consume removed it, the
    ///   entry that followed it in play order becomes current (where MPD's pause at the next
    ///   entry would leave it), nil if none. Single `oneshot` goes back to `off`. (MPD resets
    ///   oneshot only when it stops playback, so with repeat, oneshot keeps repeating the entry.)
    /// - `next` nil otherwise (the end of the queue, or nothing playable): no current entry (MPD),
    ///   and with random on the play order is reshuffled for the next play (MPD's stop).
    ///
    /// An unknown `next` counts as nil; an unknown `finished` (removed meanwhile) is not consumed,
    /// and with single it leaves the current entry as it is.
    @discardableResult
    public mutating func advance(from finished: Int, to next: Int?, _ advance: Advance = .automatic) -> Advanced {
        let finishedSlot = slotOfID[finished]
        let nextSlot = next.flatMap { slotOfID[$0] }
        let before = (current, options)
        var result = Advanced(current: nil)
        var doomed: [Bool]?
        if options.consume, let finishedSlot, nextSlot != finishedSlot {
            doomed = [Bool](repeating: false, count: slots.count)
            doomed?[finishedSlot] = true
            result.consumed = finished
            beginEntriesChange()
        }
        if let nextSlot {
            let wraps = options.random && finishedSlot.map { orderOfSlot[nextSlot] < orderOfSlot[$0] } == true
            if let doomed { removeSlots(doomed) }
            if wraps { shuffleOrder(first: nextSlot) }
            current = slots[nextSlot].id
        } else if advance == .automatic && options.single != .off && !options.repeats {
            if options.single == .oneshot {
                options.single = .off
                result.singleWentOff = true
            }
            if let doomed, let finishedSlot {
                let follower = firstSurvivor(after: finishedSlot, doomed: doomed).map { slots[$0].id }
                removeSlots(doomed)
                current = follower
            } else if finishedSlot != nil {
                current = finished
            }
        } else {
            if let doomed { removeSlots(doomed) }
            current = nil
            if options.random { shuffleOrder(first: nil) }
        }
        result.current = current
        if result.consumed != nil || (current, options) != before { version += 1 }
        return result
    }

    // MARK: The play order

    /// The index in play order of the entry in `slot`.
    func playIndex(of slot: Int) -> Int {
        options.random ? orderOfSlot[slot] : positionOfSlot[slot]
    }

    /// The slot at `index` in play order.
    func slotAt(playIndex index: Int) -> Int {
        options.random ? order[index] : queue[index]
    }

    /// The id that starts the next round of the play order (the queue is not empty).
    var roundStart: Int? {
        options.random ? nextRoundFirst : slots[queue[0]].id
    }

    /// The first entry after `slot` in play order that is not marked in `doomed`, without wrapping.
    func firstSurvivor(after slot: Int, doomed: [Bool]) -> Int? {
        var index = playIndex(of: slot) + 1
        while index < queue.count {
            let candidate = slotAt(playIndex: index)
            if !doomed[candidate] { return candidate }
            index += 1
        }
        return nil
    }

    /// A new random play order of the whole queue, `first` (a slot) at its front, and a new first
    /// entry for the round after it. Entries of a higher priority come first, each priority's
    /// entries shuffled among themselves (MPD's `ShuffleOrder`); `first` is moved to the front
    /// whatever its priority (MPD's random on while playing).
    mutating func shuffleOrder(first: Int?) {
        order = queue
        if prioritized > 0 {
            order.sort { slots[$0].priority > slots[$1].priority }
            var start = 0
            while start < order.count {
                var end = start + 1
                while end < order.count && slots[order[end]].priority == slots[order[start]].priority { end += 1 }
                order[start..<end].shuffle(using: &generator)
                start = end
            }
        } else {
            order.shuffle(using: &generator)
        }
        if let first, let index = order.firstIndex(of: first) {
            order.remove(at: index)
            order.insert(first, at: 0)
        }
        renumberOrder(from: 0)
        nextRoundFirst = nil
        keepNextRoundFirst()
    }

    /// Puts the new slots `added` (already in the queue) into the random play order: each at a
    /// random place after the current entry `after` (MPD: appended, then swapped with a random
    /// entry of the rest of the round), or with `rightAfter`, right after it in the order given.
    mutating func placeInOrder(_ added: [Int], after currentSlot: Int?, rightAfter: Bool) {
        if rightAfter, let currentSlot {
            let start = orderOfSlot[currentSlot] + 1
            order.insert(contentsOf: added, at: start)
            renumberOrder(from: start)
        } else {
            let start = currentSlot.map { orderOfSlot[$0] + 1 } ?? 0
            for slot in added {
                order.append(slot)
                let last = order.count - 1
                // Among the entries of its own priority (0) only, which come after those of a
                // higher one (MPD's `ShuffleOrderLastWithPriority`).
                var lower = start
                if prioritized > 0 {
                    while lower < last && slots[order[lower]].priority != slots[slot].priority { lower += 1 }
                }
                let other = Int.random(in: lower...last, using: &generator)
                order.swapAt(other, last)
                orderOfSlot[order[other]] = other
                orderOfSlot[order[last]] = last
            }
        }
        keepNextRoundFirst()
    }

    /// Keeps `nextRoundFirst` an entry of the queue that does not end this round (unless it is the
    /// only one), drawing a new one when it is not. With priorities, it is one of the highest
    /// priority among those (the next round's order starts with them, as MPD's reshuffle does).
    mutating func keepNextRoundFirst() {
        guard options.random, !order.isEmpty else {
            nextRoundFirst = nil
            return
        }
        let last = order.count - 1
        guard prioritized > 0, last > 0 else {
            if let id = nextRoundFirst, let slot = slotOfID[id], last == 0 || orderOfSlot[slot] != last { return }
            nextRoundFirst = slots[order[last == 0 ? 0 : Int.random(in: 0..<last, using: &generator)]].id
            return
        }
        var highest: UInt8 = 0
        for index in 0..<last { highest = max(highest, slots[order[index]].priority) }
        if let id = nextRoundFirst, let slot = slotOfID[id], orderOfSlot[slot] != last, slots[slot].priority == highest {
            return
        }
        let candidates = (0..<last).filter { slots[order[$0]].priority == highest }
        nextRoundFirst = slots[order[candidates[Int.random(in: 0..<candidates.count, using: &generator)]]].id
    }
}

/// xoshiro256** (Blackman and Vigna): the queue's shuffling generator, seeded from the one given
/// to `PlayQueue.init`. A concrete type: shuffling 10,000 entries through an existential generator
/// took ten times as long.
struct Xoshiro: RandomNumberGenerator, Sendable {
    var state: (UInt64, UInt64, UInt64, UInt64)

    init(seededFrom source: inout some RandomNumberGenerator) {
        repeat {
            state = (source.next(), source.next(), source.next(), source.next())
        } while state == (0, 0, 0, 0)
    }

    mutating func next() -> UInt64 {
        let result = rotate(state.1 &* 5, 7) &* 9
        let shifted = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= shifted
        state.3 = rotate(state.3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value << count) | (value >> (64 - count))
    }
}
