// The player's state as saved across restarts, and bringing it back.

import Glibc
internal import ReelLibrary
import ReelModel

/// What `PlayerController.saveSnapshot` took.
struct SaveSnapshot {
    var player: SavedPlayerState
    /// The queue's entries as pieces of those the layout had (an add as the positions it
    /// added); nil when none was added, removed or moved.
    var edit: [QueueEditRun]?
    var length: Int
    var options: QueueOptions
    var contentVersion: Int
    /// The queue's entries at that moment: what `edit` added, and for a full save (`full`)
    /// every entry, are written from them (shared with the queue, not copied).
    var rows: QueueRows
    var full: Bool
}

extension PlayerController {
    /// What the state file records at a save, taken at one moment: the player's state, the
    /// queue's options and content version, the edit of its entries since `layout` (which it
    /// brings up to date), and the queue's rows (every entry, for `full`). Any thread; one take
    /// of the queue's lock, O(queue length) over integers: no entry is copied.
    func saveSnapshot(layout: inout SavedLayout, full: Bool) -> SaveSnapshot {
        let player = state
        let timers = sleep.current
        return shared.withLock { shared in
            let queue = shared.queue
            let current = queue.current.flatMap { queue.position(of: $0) }
            var saved = SavedPlayerState(current: current, position: current == nil ? 0 : player.position, state: player.state)
            saved.sleep = timers.at.map { SavedSleep(at: $0, fadeOut: timers.fadeOut) }
            saved.stop = timers.stop.map { stop in
                SavedStop(at: stop.at, positions: stop.entries.compactMap { queue.position(of: $0) }.sorted())
            }
            return SaveSnapshot(
                player: saved,
                edit: queue.editRuns(since: &layout), length: queue.length, options: queue.options,
                contentVersion: queue.contentVersion, rows: queue.rows, full: full)
        }
    }

    /// Brings back a saved queue and (with `load`) loads its current entry where it was, paused
    /// or playing; a player saved stopped (or not loaded) stays stopped at its current entry,
    /// which `state` shows.
    /// Entries whose file or recording is gone stay, marked missing (skipped when reached); a
    /// recording's path and name are read again from the library. The sleep timer and a
    /// scheduled play's `stopAfter` are armed again; one that fell due while reeld was down
    /// leaves the player stopped (`PlayerStopTimers`).
    func restore(_ state: SavedPlayerState, queue saved: SavedQueue, load: Bool, playing: Bool, now: Double = wallClockNow()) {
        // Each distinct entry looked at once (a file's existence, a recording's name), shared
        // by the places the order names it.
        let distinct = saved.saved.entries.map { entry -> NewQueueEntry in
            switch entry.source {
            case .file(let path):
                var info = stat()
                let exists = stat(path, &info) == 0
                return NewQueueEntry(
                    source: entry.source, duration: entry.duration, format: entry.format, missing: !exists, tags: entry.tags)
            case .url:
                return NewQueueEntry(source: entry.source, duration: nil, format: entry.format, tags: entry.tags)
            case .item(let id, let path, let name):
                guard let item = try? store.item(id: id) else {
                    self.logger.warning(
                        "the saved recording is gone; its queue entry stays, marked missing",
                        metadata: ["item": "\(id)", "path": "\(path)"])
                    return NewQueueEntry(source: entry.source, duration: entry.duration, format: entry.format, missing: true)
                }
                _ = name
                return NewQueueEntry(
                    source: .item(id: item.id, path: item.path, name: item.name), duration: item.duration ?? entry.duration,
                    format: item.format ?? entry.format)
            }
        }
        let run = NewQueueRun(distinct: distinct, order: saved.saved.order ?? Array(distinct.indices))
        let current = state.current.flatMap { $0 < run.count ? $0 : nil }
        let (entry, ids) = shared.withLock { shared -> (Int?, [Int]) in
            shared.queue = PlayQueue(restoring: run, current: current, options: saved.options)
            publishQueue(shared)
            return (shared.queue.current, shared.queue.ids)
        }
        let timers = PlayerStopTimers.restored(sleep: state.sleep, stop: state.stop, current: current, now: now)
        rearmTimers(timers, saved: state) { ids.indices.contains($0) ? ids[$0] : nil }
        if timers.stopped {
            logger.info("a sleep timer or an alarm's stopAfter fell due while reeld was down: the player stays stopped")
        }
        guard let entry, load, state.state != .stopped, !timers.stopped else {
            publishState()  // stopped at the current entry, not loaded: the player shows it
            return
        }
        let logger = self.logger
        logger.info("restoring the player", metadata: ["entry": "\(entry)", "position": "\(state.position)", "playing": "\(playing)"])
        self.load(entry: entry, position: state.position, playing: playing) { result in
            if case .failure(let error) = result {
                logger.warning("cannot restore the saved entry; the queue stays", metadata: ["error": "\(error.message)"])
            }
        }
    }
}
