// The player's state as saved across restarts, and bringing it back.

import Glibc
import ReelLibrary
import ReelModel

extension PlayerController {
    /// What to save now: the player's state and the queue (with its version, so an unchanged
    /// queue is not written again). Any thread.
    func savedState() -> (SavedPlayerState, (version: Int, saved: SavedQueue)) {
        let player = state
        return shared.withLock { shared in
            let entries = shared.queue.allEntries
            let current = shared.queue.current.flatMap { shared.queue.position(of: $0) }
            let saved = SavedPlayerState(current: current, position: current == nil ? 0 : player.position, state: player.state)
            // An estimated length is not kept: after a restart it would read as exact.
            let queue = SavedQueue(
                entries: entries.map {
                    SavedQueue.Entry(
                        source: $0.source, duration: $0.durationEstimated ? nil : $0.duration, format: $0.format, tags: $0.tags)
                },
                options: shared.queue.options)
            return (saved, (shared.queue.version, queue))
        }
    }

    /// Brings back a saved queue and (with `load`) loads its current entry where it was, paused
    /// or playing; a player saved stopped (or not loaded) stays stopped at its current entry,
    /// which `state` shows.
    /// Entries whose file or recording is gone stay, marked missing (skipped when reached); a
    /// recording's path and name are read again from the library.
    func restore(_ state: SavedPlayerState, queue saved: SavedQueue, load: Bool, playing: Bool) {
        let entries = saved.entries.map { entry -> NewQueueEntry in
            switch entry.source {
            case .file(let path):
                var info = stat()
                let exists = stat(path, &info) == 0
                return NewQueueEntry(
                    source: entry.source, duration: entry.duration, format: entry.format, missing: !exists, tags: entry.tags)
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
        let current = state.current.flatMap { $0 < entries.count ? $0 : nil }
        let entry = shared.withLock { shared -> Int? in
            shared.queue = PlayQueue(restoring: entries, current: current, options: saved.options)
            publishQueue(shared)
            return shared.queue.current
        }
        guard let entry, load, state.state != .stopped else {
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
