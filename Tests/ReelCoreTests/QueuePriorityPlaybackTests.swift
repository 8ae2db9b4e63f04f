import Foundation
@testable import ReelCore
import ReelModel
import Testing

/// Priorities through the player (the rules are `PlayQueueTests`'): a new priority in random
/// mode changes what plays next, even when the next entry is already lined up.
extension QueuePlaybackTests {
    @Test func aNewPriorityWhilePausedChangesWhatPlaysNextInRandomMode() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        try writeWAV(directory + "/long.wav", frames: 8000 * 20)
        _ = try add(core, .file(directory + "/long.wav")).get()
        for path in try files(directory, count: 4) { _ = try add(core, .file(path)).get() }
        let ids = try core.player.listQueue().entries.map(\.id)
        _ = core.player.setQueueOptions(random: true)
        let log = QueueLog(core.player.queueChanges)
        _ = try run { core.player.load(entry: ids[0], position: 0, playing: false, reply: $0) }.get()
        #expect(waitUntil { core.player.engine.snapshot.lined.count == 2 }, "the entry after it is lined up")
        let lined = try #require(core.player.queueSummary.next)
        let chosen = try #require(ids.dropFirst().first { $0 != lined })

        let summary = try core.player.setPriority(5, ids: [chosen])
        #expect(summary.next == chosen)
        #expect(core.player.entry(id: chosen)?.priority == 5)
        #expect(log.summaries.last == summary, "the change is published")
        #expect(throws: ReelError(.notFound, "no queue entry with id 99")) { try core.player.setPriority(1, ids: [99]) }
        // The chain is brought in line on the player's queue before the resume below.
        core.player.work.sync {}
        _ = try run { core.player.resume(reply: $0) }.get()
        #expect(waitUntil { core.player.state.state == .stopped && core.player.queueSummary.current == nil })
        #expect(Array(log.played.prefix(2)) == [ids[0], chosen], "played \(log.played)")
        #expect(Set(log.played) == Set(ids), "every entry once")
    }
}
