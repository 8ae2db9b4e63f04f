// Import: an existing audio file copied in as a recording, or nothing at all.
import Foundation
import GRDB
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct ImportTests {
    let directory = TemporaryDirectory()
    let sources = TemporaryDirectory()
    let store: LibraryStore

    init() throws {
        store = try LibraryStore(directory: directory.path, busyTimeout: 0.2)
    }

    @Test func aWAVFileIsCopiedInAsARecording() throws {
        let source = sources.file("Morning Notes.wav")
        TestFiles.writeWAV(to: source, rate: 8000, frames: 8000)
        try store.createFolder(name: "Notes")
        let changes = ChangeRecorder(store)

        let item = try store.importFile(path: source, folder: .path("/Notes"), probe: stubProbe)

        #expect(item.name == "Morning Notes")
        #expect(item.path == "/Notes/Morning Notes")
        #expect(item.kind == .recording)
        #expect(item.duration == 1.0)
        #expect(item.format == AudioFormat(codec: "wav", sampleRate: 8000, channels: 1))
        #expect(item.size == Int64(44 + 16_000))
        let copy = try store.audioPath(for: item)
        #expect(copy == directory.file("audio/\(item.id).wav"))
        #expect(FileManager.default.contents(atPath: copy) == FileManager.default.contents(atPath: source))
        #expect(TestFiles.exists(source), "the original stays")
        #expect(try store.item(path: "/Notes/Morning Notes") == item)
        #expect(try store.inProgressRecordings().isEmpty)
        #expect(changes.summary == [["added /Notes/Morning Notes"]])
        #expect(TestFiles.names(in: directory.file("audio")) == ["\(item.id).wav"])
    }

    @Test func theNameCanBeGivenAndMustBeFree() throws {
        let source = sources.file("take.final.wav")
        TestFiles.writeWAV(to: source)
        #expect(try store.importFile(path: source, probe: stubProbe).name == "take.final")
        let taken = expectReason(.nameTaken) { try store.importFile(path: source, probe: stubProbe) }
        #expect(taken?.message.contains("/take.final") == true)
        #expect(try store.importFile(path: source, name: "second", probe: stubProbe).path == "/second")
        expectReason(.invalidName) { try store.importFile(path: source, name: "a/b", probe: stubProbe) }
        #expect(TestFiles.names(in: directory.file("audio")).count == 2)
        #expect(LibraryStore.defaultName(ofFile: "/x/.hidden") == ".hidden")
        #expect(LibraryStore.defaultName(ofFile: "/x/plain") == "plain")
    }

    @Test func aFileThatDoesNotDecodeLeavesNothingBehind() throws {
        let source = sources.file("noise.wav")
        _ = FileManager.default.createFile(atPath: source, contents: Data("not audio".utf8))
        let changes = ChangeRecorder(store)
        let error = expectReason(.corruptFile) {
            try store.importFile(path: source, probe: { path throws(ReelError) in
                throw ReelError(.corruptFile, "\(path) is not an audio file libsndfile can read")
            })
        }
        #expect(error?.message.contains(source) == true)
        #expect(TestFiles.names(in: directory.file("audio")).isEmpty)
        #expect(try store.list().items.isEmpty)
        #expect(changes.received.isEmpty)
    }

    @Test func aFailedTransactionAfterTheCopyLeavesNothingBehind() throws {
        let source = sources.file("take.wav")
        TestFiles.writeWAV(to: source)
        // Another program holds the write lock, so the insert fails after the file was copied.
        let other = try lockingConnection(store.databasePath)
        try other.writeWithoutTransaction { db in try db.execute(sql: "BEGIN IMMEDIATE") }
        let error = expectReason(.ioError) { try store.importFile(path: source, probe: stubProbe) }
        #expect(error?.message.contains("locked") == true)
        try other.writeWithoutTransaction { db in try db.execute(sql: "ROLLBACK") }
        #expect(TestFiles.names(in: directory.file("audio")).isEmpty)
        #expect(try store.list().items.isEmpty)
        // And the same import works once the lock is gone.
        #expect(try store.importFile(path: source, probe: stubProbe).name == "take")
    }

    @Test func aMissingOrRelativeSourceIsNotFoundAndADirectoryIsNotAudio() throws {
        let missing = expectReason(.notFound) { try store.importFile(path: sources.file("gone.wav"), probe: stubProbe) }
        #expect(missing?.message.contains("gone.wav") == true)
        expectReason(.notFound) { try store.importFile(path: "relative.wav", probe: stubProbe) }
        // Something that is there but is not a file is not audio (the same answer as player.play).
        expectReason(.unsupportedFormat) { try store.importFile(path: sources.path, probe: stubProbe) }
        expectReason(.unsupportedFormat) { try store.importFile(path: "/dev/zero", probe: stubProbe) }
        expectReason(.notFound) {
            try store.importFile(path: "/etc/hostname", folder: .path("/No Such Folder"), probe: stubProbe)
        }
        #expect(TestFiles.names(in: directory.file("audio")).isEmpty)
    }
}
