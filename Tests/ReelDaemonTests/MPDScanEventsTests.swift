// The idle events a music scan's progress gives MPD clients: `update` at its start and end,
// `database` when it changed the index.
import ReelModel
import Testing

@testable import ReelDaemon

@Suite struct MPDScanEventsTests {
    func progress(_ scan: Int, running: Bool, indexed: Int = 0, removed: Int = 0, seen: Int = 0) -> MusicScanProgress {
        MusicScanProgress(scan: scan, running: running, seen: seen, indexed: indexed, removed: removed)
    }

    @Test func aScanStartingAndEndingIsUpdate() {
        #expect(MPDEventHub.events(from: progress(1, running: false), to: progress(2, running: true)) == .update)
        // Steps of a running scan are nothing new.
        #expect(MPDEventHub.events(from: progress(2, running: true), to: progress(2, running: true, seen: 40)).isEmpty)
        #expect(MPDEventHub.events(from: progress(2, running: true), to: progress(2, running: false)) == .update)
    }

    @Test func aScanThatChangedTheIndexEndsWithDatabaseToo() {
        #expect(
            MPDEventHub.events(from: progress(2, running: true), to: progress(2, running: false, indexed: 3))
                == [.update, .database])
        #expect(
            MPDEventHub.events(from: progress(2, running: true), to: progress(2, running: false, removed: 1))
                == [.update, .database])
        // A start and end seen as one change (the feed keeps the latest) still tell both.
        #expect(
            MPDEventHub.events(from: progress(2, running: false), to: progress(3, running: false, indexed: 1))
                == [.update, .database])
        // The same ended scan seen again tells nothing.
        #expect(
            MPDEventHub.events(from: progress(3, running: false, indexed: 1), to: progress(3, running: false, indexed: 1))
                .isEmpty)
    }

    /// A watcher batch that only moved files, or a music folder that went or came back, changed
    /// the database as much as new files do. (Regression: only indexed and removed counted.)
    @Test func movesAndFoldersGoingOrComingBackAreDatabaseChanges() {
        for change in [\MusicScanProgress.moved, \.missing, \.restored] {
            var ended = progress(4, running: false)
            ended[keyPath: change] = 2
            #expect(MPDEventHub.events(from: progress(4, running: true), to: ended) == [.update, .database])
        }
        #expect(MPDEventHub.events(from: progress(4, running: true), to: progress(4, running: false, seen: 9)) == .update)
    }
}
