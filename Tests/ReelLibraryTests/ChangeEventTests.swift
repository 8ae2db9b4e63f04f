// Change events: one batch per committed transaction, in commit order, each change exactly once.
import Foundation
import GRDB
import ReelModel
import Synchronization
import Testing

@testable import ReelLibrary

@Suite struct ChangeEventTests {
    let directory = TemporaryDirectory()
    let store: LibraryStore

    init() throws {
        store = try LibraryStore(directory: directory.path)
    }

    @Test func eachCommittedChangeArrivesOnceInCommitOrder() throws {
        let changes = ChangeRecorder(store)
        let a = try store.createFolder(name: "A")
        try store.createFolder(name: "B")
        try store.rename(.path("/A"), to: "C")
        try store.move(.path("/B"), to: .path("/C"))
        let take = try store.addRecording(parent: .path("/C/B"), name: "Take", format: flac)
        try store.updateRecording(id: take.id, duration: 2, size: 10, finished: true)
        try store.delete(.path("/C"))

        #expect(
            changes.summary.prefix(6) == [
                ["added /A"], ["added /B"], ["renamed /C from /A"], ["moved /C/B from /B"], ["added /C/B/Take"],
                ["updated /C/B/Take"],
            ])
        let batches = changes.received
        #expect(batches.count == 7)
        #expect(Set(batches[6].map(describe)) == ["removed /C", "removed /C/B", "removed /C/B/Take"])

        #expect(batches[0][0].item.id == a.id)
        #expect(batches[0][0].parent?.id == LibraryStore.rootID)
        #expect(batches[2][0].parent?.path == "/")
        let moved = batches[3][0]
        #expect(moved.oldParent?.path == "/")
        #expect(moved.parent?.path == "/C")
        #expect(batches[4][0].item.format == flac)
        #expect(batches[5][0].item.duration == 2)
        let removedTake = batches[6].first { $0.item.id == take.id }
        #expect(removedTake?.parent?.path == "/C/B", "a removed item's parent is its former parent")
    }

    @Test func aFailedOrRolledBackTransactionReportsNothing() throws {
        let changes = ChangeRecorder(store)
        try store.createFolder(name: "A")
        expectReason(.nameTaken) { try store.createFolder(name: "A") }
        expectReason(.nameTaken) { try store.createFolders(names: ["B", "A"]) }
        // A writer that inserts a row and then fails: the row and its event vanish together.
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try store.pool.write { db in
                try db.execute(
                    sql: "INSERT INTO items (id, parent, kind, name, name_fold, created) VALUES ('x', ?, 'folder', 'X', 'x', '')",
                    arguments: [LibraryStore.rootID])
                throw Abort()
            }
        }
        try store.createFolder(name: "C")
        #expect(changes.summary == [["added /A"], ["added /C"]])
        expectReason(.notFound) { try store.item(path: "/B") }
        expectReason(.notFound) { try store.item(path: "/X") }
    }

    @Test func changesMadeByAnyWriterOfTheStoreAreReported() throws {
        let folder = try store.createFolder(name: "F")
        let changes = ChangeRecorder(store)
        // Raw SQL through the store's connection, as a later feature might write.
        try store.pool.write { db in
            try db.execute(
                sql: "INSERT INTO items (id, parent, kind, name, name_fold, created) VALUES ('raw', ?, 'folder', 'Raw', 'raw', '')",
                arguments: [folder.id])
            try db.execute(sql: "UPDATE items SET name = 'Renamed', name_fold = 'renamed' WHERE id = ?", arguments: [folder.id])
        }
        try store.insertRecordings((0..<3).map { NewRecording(parent: folder.id, name: "r\($0)", format: flac) })
        let batches = changes.summary
        #expect(batches.count == 2)
        #expect(Set(batches[0]) == ["added /Renamed/Raw", "renamed /Renamed from /F"])
        #expect(batches[1] == ["added /Renamed/r0", "added /Renamed/r1", "added /Renamed/r2"])
    }

    @Test func anItemAppearsOncePerBatchWithItsNetChange() throws {
        let folder = try store.createFolder(name: "F")
        let changes = ChangeRecorder(store)
        try store.pool.write { db in
            // Added then renamed: added, with the final name.
            try db.execute(
                sql: "INSERT INTO items (id, parent, kind, name, name_fold, created) VALUES ('n', ?, 'folder', 'N', 'n', '')",
                arguments: [LibraryStore.rootID])
            try db.execute(sql: "UPDATE items SET name = 'N2', name_fold = 'n2' WHERE id = 'n'")
            // Added then deleted: nothing.
            try db.execute(
                sql: "INSERT INTO items (id, parent, kind, name, name_fold, created) VALUES ('t', ?, 'folder', 'T', 't', '')",
                arguments: [LibraryStore.rootID])
            try db.execute(sql: "DELETE FROM items WHERE id = 't'")
            // Renamed then moved: moved, from the old path.
            try db.execute(sql: "UPDATE items SET name = 'G', name_fold = 'g' WHERE id = ?", arguments: [folder.id])
            try db.execute(sql: "UPDATE items SET parent = 'n' WHERE id = ?", arguments: [folder.id])
        }
        #expect(changes.summary == [["added /N2", "moved /N2/G from /F"]])
    }

    @Test func noChangeMeansNoBatch() throws {
        try store.createFolder(name: "A")
        let changes = ChangeRecorder(store)
        try store.rename(.path("/A"), to: "A")
        try store.move(.path("/A"), to: .root)
        _ = try store.list()
        _ = try store.search(query: "a")
        #expect(changes.received.isEmpty)
    }

    @Test func aRemovedObserverHearsNothingMore() throws {
        // Removing it before a committed batch is delivered also drops that batch.
        let early = ChangeRecorder(store)
        store.removeObserver(early.token)
        try store.createFolder(name: "Early")
        #expect(early.received.isEmpty)

        let changes = ChangeRecorder(store)
        try store.createFolder(name: "A")
        store.waitUntilChangesDelivered()
        store.removeObserver(changes.token)
        try store.createFolder(name: "B")
        #expect(changes.summary == [["added /A"]])
    }

    @Test func concurrentWritersEachReachEveryObserverExactlyOnce() async throws {
        let first = ChangeRecorder(store)
        let second = ChangeRecorder(store)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask { [store] in
                    for n in 0..<40 { _ = try? store.createFolder(name: "w\(writer)-\(n)") }
                }
            }
        }
        for recorder in [first, second] {
            let batches = recorder.received
            #expect(batches.count == 320)
            let names = batches.flatMap { $0 }.map(\.item.name)
            #expect(Set(names).count == 320)
            #expect(names.count == 320)
        }
        // Commit order is the order rows were inserted.
        let order = try await store.pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM items WHERE parent IS NOT NULL ORDER BY seq") }
        #expect(first.received.flatMap { $0 }.map(\.item.name) == order)
        #expect(second.received.flatMap { $0 }.map(\.item.name) == order)
    }

    @Test func anObserverMayReadTheStoreWhileHandlingChanges() throws {
        let seen = Mutex<[Int]>([])
        let token = store.observe { [store] _ in
            let count = (try? store.list().items.count) ?? -1
            seen.withLock { $0.append(count) }
        }
        defer { store.removeObserver(token) }
        try store.createFolder(name: "A")
        try store.createFolder(name: "B")
        store.waitUntilChangesDelivered()
        #expect(seen.withLock { $0 }.count == 2)
        #expect(seen.withLock { $0 }.allSatisfy { $0 >= 1 })
    }
}
