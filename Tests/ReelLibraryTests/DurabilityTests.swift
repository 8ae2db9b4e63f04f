// What the library does so that a power cut keeps every change it answered.
import Foundation
import GRDB
import Testing

@testable import ReelLibrary

@Suite struct DurabilityTests {
    let directory = TemporaryDirectory()

    /// Regression (found by the power-cut test, Tests/PowerCut): GRDB opens a pool's writer in
    /// WAL mode with `synchronous = NORMAL`, where a commit reaches the disk only at the next
    /// checkpoint; a power cut then took away folders, renames and deletions already answered.
    @Test func everyCommitIsSyncedToDisk() throws {
        let store = try LibraryStore(directory: directory.path)
        let level = try store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(level == 2, "PRAGMA synchronous is \(level.map(String.init) ?? "nil"); FULL (2) syncs the WAL at every commit")
        #expect(try store.pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
    }
}
