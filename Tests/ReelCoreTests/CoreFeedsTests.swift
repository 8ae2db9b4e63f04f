import Foundation
import ReelModel
import ReelRuntime
import Testing

@testable import ReelCore

/// The catalog of the core's feeds (`core.feeds`): every `CoreFeed` is followed on the feed it
/// names, taken as the `CoreChange` of the same kind, and left.
@Suite struct CoreFeedsTests {
    /// Publishes a value on the feed `feed` names, as its producer would.
    static func publish(_ feed: CoreFeed, on core: ReelCore) {
        switch feed {
        case .player: core.player.changes.publish(core.player.changes.latest.value)
        case .queue: core.player.queueChanges.publish(core.player.queueChanges.latest.value)
        case .recorder: core.recorder.changes.publish(core.recorder.changes.latest.value)
        case .mixer: core.mixer.changes.publish(core.mixer.state)
        case .outputs: core.outputs.changes.publish(core.outputs.list)
        case .library: core.library.updates.publish(LibraryUpdate(changes: [], folders: [:], items: [:]))
        case .scan: core.music.progress.publish(MusicScanProgress())
        case .schedules: core.schedules.changes.publish([])
        case .playlists: core.playlists.changes.publish(["road trip"])
        }
    }

    /// The feed a change came from.
    static func feed(of change: CoreChange) -> CoreFeed {
        switch change {
        case .player: .player
        case .queue: .queue
        case .recorder: .recorder
        case .mixer: .mixer
        case .outputs: .outputs
        case .library: .library
        case .scan: .scan
        case .schedules: .schedules
        case .playlists: .playlists
        }
    }

    @Test(arguments: CoreFeed.allCases)
    func eachFeedWakesItsConsumerOnceAndIsTakenAsItsOwnKindOfChange(_ feed: CoreFeed) throws {
        let (core, directory) = try makeCore()
        defer {
            core.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let wakes = Locked(0)
        let consumer = core.feeds.follow(feed) { wakes.withLock { $0 += 1 } }
        #expect(consumer.feed == feed)
        Self.publish(feed, on: core)
        Self.publish(feed, on: core)
        #expect(wakes.current == 1, "a burst wakes the consumer once until it takes")
        let change = consumer.take()
        #expect(Self.feed(of: change) == feed)
        if case .playlists(let batch) = change {
            #expect(batch.events == [["road trip"], ["road trip"]], "an event feed gives every event")
        }
        Self.publish(feed, on: core)
        #expect(wakes.current == 2, "taken: the next publish wakes it again")
        consumer.leave()
        Self.publish(feed, on: core)
        #expect(wakes.current == 2, "left: no more wake-ups")
    }

    @Test func theStateFeedsHaveACurrentValueAndTheEventFeedsNone() throws {
        let (core, directory) = try makeCore()
        defer {
            core.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
        for feed in CoreFeed.allCases {
            let current = core.feeds.current(feed)
            switch feed {
            case .library, .playlists:
                #expect(current == nil, "\(feed)")
            case .player, .queue, .recorder, .mixer, .outputs, .scan, .schedules:
                #expect(current.map(Self.feed(of:)) == feed, "\(feed)")
            }
        }
    }
}
