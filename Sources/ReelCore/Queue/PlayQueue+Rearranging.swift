// Rearranging entries without adding or removing any: swapping two, moving a range, shuffling a
// range (MPD's `swapid`, `move START:END TO`, `shuffle [START:END]`).

import ReelModel

extension PlayQueue {
    /// Swaps the positions of the entries `id` and `other` (MPD's `swapid`; `swap` by position
    /// looks the ids up with `id(at:)`). The play order follows the entries (MPD): with random
    /// off it is the new queue order, with random on it stays as it was. Both entries count as
    /// changed. An entry swapped with itself changes nothing (MPD would count it as a change).
    /// Unknown id: `not_found`, and nothing changes.
    public mutating func swap(id: Int, with other: Int) throws(ReelError) {
        guard let first = slotOfID[id] else { throw ReelError(.notFound, "no queue entry with id \(id)") }
        guard let second = slotOfID[other] else { throw ReelError(.notFound, "no queue entry with id \(other)") }
        guard first != second else { return }
        beginEntriesChange()
        let (a, b) = (positionOfSlot[first], positionOfSlot[second])
        queue.swapAt(a, b)
        renumber(from: a, through: a)
        renumber(from: b, through: b)
        version += 1
    }

    /// Moves the entries at the positions `range` (in their order) so that the first of them is
    /// at `position` afterwards (MPD's `move START:END TO`): `position` is from 0 to
    /// `length - range.count`, the entries outside the range keep their order around them. The
    /// play order follows the entries, as with `move(id:to:)`. Every entry whose position
    /// changes counts as changed; moving a range to where it is changes nothing.
    ///
    /// Throws `out_of_range`, and changes nothing, for a range that is empty or not inside the
    /// queue, and for a `position` outside 0...(length - range.count). (MPD refuses the same;
    /// the relative targets `+N`/`-N` are the front end's, from the current entry's position.)
    public mutating func move(range: Range<Int>, to position: Int) throws(ReelError) {
        guard !range.isEmpty else {
            throw ReelError(
                .outOfRange, "cannot move the empty range \(range.lowerBound)..<\(range.upperBound): it holds no entries")
        }
        guard range.lowerBound >= 0, range.upperBound <= queue.count else {
            throw ReelError(
                .outOfRange,
                "cannot move positions \(range.lowerBound) to \(range.upperBound - 1): the queue has \(Self.entries(queue.count))")
        }
        let last = queue.count - range.count
        guard position >= 0, position <= last else {
            throw ReelError(
                .outOfRange,
                "cannot move \(Self.entries(range.count)) to position \(position): the queue has \(Self.entries(queue.count)) (0 to \(last) are valid)")
        }
        guard position != range.lowerBound else { return }
        beginEntriesChange()
        let moved = Array(queue[range])
        queue.removeSubrange(range)
        queue.insert(contentsOf: moved, at: position)
        renumber(from: min(range.lowerBound, position), through: max(range.upperBound, position + range.count) - 1)
        version += 1
    }

    /// Shuffles the entries at the positions `range` (nil: the whole queue) in the queue order
    /// (MPD's `shuffle [START:END]`). An end past the queue is clipped to it (MPD); a range of
    /// fewer than two entries changes nothing. Every entry of the range counts as changed.
    ///
    /// `playing` is whether the player is playing or paused (MPD's `playing`). Then the current
    /// entry keeps playing: when it is inside the range it first moves to the range's start,
    /// swapping places with the entry there, and the rest of the range is shuffled behind it, so
    /// with random off the rest of the range follows it. When stopped there is no current entry
    /// afterwards, and play starts at the first entry (MPD).
    ///
    /// With random on the play order follows the entries (as for `move` and `swap`): shuffling
    /// positions does not change which entries are still to play in this round. (MPD's play
    /// order points at positions, so there the entries of the range trade their places in the
    /// play order too, and the current entry takes the place of the one at the range's start.)
    ///
    /// Throws `out_of_range` for a start outside 0...length; then nothing changes.
    public mutating func shuffle(range: Range<Int>? = nil, playing: Bool) throws(ReelError) {
        var start = range?.lowerBound ?? 0
        let end = min(range?.upperBound ?? queue.count, queue.count)
        guard start >= 0, start <= queue.count else {
            throw ReelError(
                .outOfRange,
                "cannot shuffle from position \(start): the queue has \(Self.entries(queue.count)) (0 to \(queue.count) are valid)")
        }
        guard end - start >= 2 else { return }
        beginEntriesChange()
        let first = start
        if playing, let slot = currentSlot {
            let position = positionOfSlot[slot]
            if position >= start && position < end {
                queue.swapAt(start, position)
                start += 1
            }
        } else {
            current = nil
        }
        queue[start..<end].shuffle(using: &generator)
        renumber(from: first, through: end - 1)
        version += 1
    }
}
