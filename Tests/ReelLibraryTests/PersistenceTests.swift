// The database on disk: reopening, and failures that must be io_error and never half-done.
import Foundation
import GRDB
import ReelModel
import ReelTestSupport
import Testing

@testable import ReelLibrary

@Suite struct PersistenceTests {
    let directory = TemporaryDirectory()

    @Test func reopeningTheStoreKeepsEverything() throws {
        var store: LibraryStore? = try LibraryStore(directory: directory.path)
        try store!.createFolder(name: "Meetings")
        let take = try store!.addRecording(parent: .path("/Meetings"), name: "Standup", format: flac)
        try store!.updateRecording(id: take.id, duration: 61.5, size: 1234, finished: true)
        try store!.createFolder(parent: .path("/Meetings"), name: "Old")
        let before = try store!.list(folder: .path("/Meetings"))
        store = nil

        let reopened = try LibraryStore(directory: directory.path)
        let after = try reopened.list(folder: .path("/Meetings"))
        #expect(after.folder == before.folder)
        #expect(after.items == before.items)
        #expect(try reopened.item(path: "/Meetings/Standup").duration == 61.5)
        #expect(try reopened.search(query: "stand").items.map(\.id) == [take.id])
        #expect(try reopened.item(path: "/").id == LibraryStore.rootID)
        // The reopened store still reports changes.
        let changes = ChangeRecorder(reopened)
        try reopened.rename(.path("/Meetings/Old"), to: "Older")
        #expect(changes.summary == [["renamed /Meetings/Older from /Meetings/Old"]])
    }

    @Test func aDirectoryThatCannotBeWrittenGivesIOErrorNotACrash() throws {
        var store: LibraryStore? = try LibraryStore(directory: directory.path)
        try store!.createFolder(name: "Kept")
        store = nil
        let dbFile = directory.file("library.sqlite")
        let madeReadOnly = makeReadOnly([directory.path, dbFile])
        defer { undoReadOnly([directory.path, dbFile]) }
        guard madeReadOnly else {
            print("note: cannot make a directory read-only here (root without chattr?); read-only case not exercised")
            return
        }

        do {
            let readOnly = try LibraryStore(directory: directory.path)
            // If SQLite could open it at all, writing must fail cleanly.
            let error = expectReason(.ioError) { try readOnly.createFolder(name: "New") }
            #expect(error?.message.contains(dbFile) == true)
        } catch {
            #expect(error.reason == .ioError)
            #expect(error.message.contains(directory.path))
        }
        undoReadOnly([directory.path, dbFile])
        #expect(try LibraryStore(directory: directory.path).list().items.map(\.name) == ["Kept"])
    }

    @Test func aLockedDatabaseGivesIOErrorAndChangesNothing() throws {
        let store = try LibraryStore(directory: directory.path, busyTimeout: 0.2)
        try store.createFolder(name: "A")
        let changes = ChangeRecorder(store)
        let other = try lockingConnection(store.databasePath)
        try other.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }

        let error = expectReason(.ioError) { try store.createFolder(name: "B") }
        #expect(error?.message.contains("locked") == true)
        #expect(error?.message.contains(store.databasePath) == true)
        expectReason(.ioError) { try store.delete(.path("/A")) }
        // Readers are not blocked by a writer in WAL mode.
        #expect(try store.list().items.map(\.name) == ["A"])

        try other.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
        try store.createFolder(name: "B")
        #expect(try store.list().items.map(\.name) == ["A", "B"])
        #expect(changes.summary == [["added /B"]])
    }

    @Test func aDataDirectoryThatCannotBeCreatedGivesIOError() throws {
        TestFiles.touch(directory.file("plain-file"))
        let error = expectReason(.ioError) { try LibraryStore(directory: directory.file("plain-file/library")) }
        #expect(error?.message.contains("plain-file") == true)
    }

    @Test func aFileThatIsNotADatabaseGivesIOError() throws {
        _ = FileManager.default.createFile(
            atPath: directory.file("library.sqlite"), contents: Data(repeating: 0x41, count: 8192))
        let error = expectReason(.ioError) { try LibraryStore(directory: directory.path) }
        #expect(error?.message.contains("library.sqlite") == true)
    }

    @Test func aDatabaseFromANewerReelIsRefused() throws {
        var store: LibraryStore? = try LibraryStore(directory: directory.path)
        try store!.pool.write { db in try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v999')") }
        store = nil
        let error = expectReason(.ioError) { try LibraryStore(directory: directory.path) }
        #expect(error?.message.contains("newer version") == true)
    }

    @Test func theSchemaHasForeignKeysAndWAL() throws {
        let store = try LibraryStore(directory: directory.path)
        let (journal, foreignKeys, migrations) = try store.pool.read { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"),
                try Bool.fetchOne(db, sql: "PRAGMA foreign_keys"),
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            )
        }
        #expect(journal == "wal")
        #expect(foreignKeys == true)
        #expect(migrations == ["v1", "v2", "v3", "v4", "schedules", "marks", "music_playlists"])
        // A row cannot point at a parent that does not exist.
        #expect(throws: DatabaseError.self) {
            try store.pool.write { db in
                try db.execute(
                    sql: "INSERT INTO items (id, parent, kind, name, name_fold, created) VALUES ('x', 'nope', 'folder', 'X', 'x', '')")
            }
        }
    }

    /// Read-only for this process even as root: `chmod` when not root, `chattr +i` when root.
    private func makeReadOnly(_ paths: [String]) -> Bool {
        if geteuid() != 0 {
            return paths.allSatisfy { chmod($0, AudioFiles.isDirectory($0) ? 0o555 : 0o444) == 0 }
        }
        return run("/usr/bin/chattr", ["+i"] + paths)
    }

    private func undoReadOnly(_ paths: [String]) {
        if geteuid() != 0 {
            for path in paths { chmod(path, AudioFiles.isDirectory(path) ? 0o755 : 0o644) }
        } else {
            _ = run("/usr/bin/chattr", ["-i"] + paths)
        }
    }

    /// Whether `tool` is there and succeeds.
    private func run(_ tool: String, _ arguments: [String]) -> Bool {
        FileManager.default.isExecutableFile(atPath: tool) && (try? TestTool.status(tool, arguments)) == 0
    }
}
