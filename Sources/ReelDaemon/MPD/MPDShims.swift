// Temporary: entry look-ups until the core's own land.

import ReelCore
import ReelModel

extension PlayerController {
    func entry(at position: Int) -> QueueEntry? {
        guard position >= 0 else { return nil }
        return (try? listQueue(start: position, count: 1))?.entries.first
    }

    func entry(id: Int) -> QueueEntry? {
        (try? listQueue())?.entries.first { $0.id == id }
    }
}

extension QueueSummary {
    var entriesVersion: Int { version }
}

extension PlayerController {
    func queueChanges(since version: Int) -> [QueueEntry] { (try? listQueue().entries) ?? [] }
    func swapEntries(id: Int, with other: Int) throws(ReelError) -> QueueSummary { throw ReelError(.busy, "not yet") }
    func moveEntries(range: Range<Int>, to: Int) throws(ReelError) -> QueueSummary { throw ReelError(.busy, "not yet") }
    func shuffleQueue(range: Range<Int>?) throws(ReelError) -> QueueSummary { throw ReelError(.busy, "not yet") }
}
