// The answers of `list` without a filter, kept until the database changes.

import ReelCore
import ReelRuntime

/// `list Album`, `list Artist group Date`, …: what clients (M.A.L.P., ncmpcpp, Home Assistant)
/// ask again and again to draw their library views, and what only a scan or a change of the
/// recordings can change. The first answer is computed on the core's read queue and kept for
/// every connection, tagged with the database's generation read *before* computing it; a later
/// request takes it only if the generation is still the same, so an answer computed while a
/// change landed is never served after it.
///
/// The generation is the music scan's progress version (every watcher batch and scan publishes)
/// and the number of library updates published (every change of the recordings). Threads: any.
final class MPDListCache: Sendable {
    struct Generation: Equatable, Sendable {
        var scan: UInt64
        var library: UInt64
    }

    private let core: ReelCore
    private let answers = Locked<[String: (generation: Generation, response: MPDResponse)]>([:])
    /// Distinct requests kept at most (each answer is one tag's values: tens of KiB).
    static let capacity = 32

    init(core: ReelCore) {
        self.core = core
    }

    var generation: Generation {
        Generation(scan: core.music.progress.latest.version, library: core.library.updates.published)
    }

    /// The kept answer to `key` if the database has not changed since it was computed.
    func answer(_ key: String) -> MPDResponse? {
        let now = generation
        return answers.withLock { answers in
            guard let kept = answers[key], kept.generation == now else { return nil }
            return kept.response
        }
    }

    /// Keeps `response` for `key`, computed from the database as it was at `generation`.
    func keep(_ response: MPDResponse, for key: String, computedAt generation: Generation) {
        answers.withLock { answers in
            if answers[key] == nil, answers.count >= Self.capacity {
                // Answers of an older database go first; else any (they are cheap to recompute).
                let stale = answers.first { $0.value.generation != generation }?.key ?? answers.keys.first
                if let stale { answers[stale] = nil }
            }
            answers[key] = (generation, response)
        }
    }
}
