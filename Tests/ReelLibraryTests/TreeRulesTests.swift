// The rules of the tree: addresses, names, listing order, moves, cycles, the root, deletes.
import Foundation
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct TreeRulesTests {
    let directory = TemporaryDirectory()
    let store: LibraryStore

    init() throws {
        store = try LibraryStore(directory: directory.path)
    }

    @Test func theRootAlwaysExistsAtSlashWithNoParent() throws {
        let root = try store.item(path: "/")
        #expect(root.id == LibraryStore.rootID)
        #expect(root.kind == .folder)
        #expect(root.parent == nil)
        #expect(root.path == "/")
        #expect(try store.item(id: LibraryStore.rootID) == root)
        #expect(try store.list().folder == root)
        #expect(TestFiles.exists(directory.file("library.sqlite")))
        #expect(AudioFiles.isDirectory(directory.file("audio")))
    }

    @Test func itemsAreAddressedByIdAndByPath() throws {
        let meetings = try store.createFolder(name: "Meetings")
        let standup = try store.addRecording(parent: .path("/Meetings"), name: "Standup", format: flac)
        #expect(meetings.path == "/Meetings")
        #expect(meetings.parent == LibraryStore.rootID)
        #expect(standup.path == "/Meetings/Standup")
        #expect(standup.parent == meetings.id)
        #expect(standup.format == flac)
        #expect(standup.duration == 0)
        #expect(standup.size == 0)
        #expect(try store.item(path: "/Meetings/Standup") == standup)
        #expect(try store.item(id: standup.id) == standup)
        #expect(try store.item(.id(meetings.id)) == meetings)
        // Redundant slashes do not change the address.
        #expect(try store.item(path: "/Meetings//Standup/").id == standup.id)
        #expect(standup.created.hasSuffix("Z") && standup.created.count == 20)
    }

    @Test func unknownItemsAreNotFoundAndTheMessageNamesThem() throws {
        try store.addRecording(name: "Talk", format: flac)
        #expect(expectReason(.notFound) { try store.item(path: "/Talks/x") }?.message == "no item at /Talks/x")
        #expect(expectReason(.notFound) { try store.item(id: "1234") }?.message.contains("1234") == true)
        #expect(expectReason(.notFound) { try store.item(path: "/Talk/x") }?.message.contains("/Talk is a recording") == true)
        expectReason(.notFound) { try store.list(folder: .path("/nope")) }
        expectReason(.notFound) { try store.rename(.path("/nope"), to: "x") }
        expectReason(.notFound) { try store.move(.path("/nope"), to: .root) }
        expectReason(.notFound) { try store.move(.path("/Talk"), to: .path("/nope")) }
        expectReason(.notFound) { try store.delete(.path("/nope")) }
        expectReason(.notFound) { try store.createFolder(parent: .id("nope"), name: "x") }
        expectReason(.notFound) { try store.updateRecording(id: "nope", size: 1) }
        expectReason(.invalidName) { try store.item(path: "relative/path") }
    }

    @Test func namesAreUniqueAmongSiblingsButRepeatInOtherFolders() throws {
        let a = try store.createFolder(name: "A")
        let b = try store.createFolder(name: "B")
        try store.createFolder(parent: .id(a.id), name: "Notes")
        try store.createFolder(parent: .id(b.id), name: "Notes")
        let error = expectReason(.nameTaken) { try store.createFolder(parent: .id(a.id), name: "Notes") }
        #expect(error?.message.contains("/A/Notes") == true)
        expectReason(.nameTaken) { try store.addRecording(parent: .path("/A"), name: "Notes", format: flac) }
        try store.addRecording(parent: .path("/A"), name: "Take", format: flac)
        expectReason(.nameTaken) { try store.rename(.path("/A/Take"), to: "Notes") }
        expectReason(.nameTaken) { try store.move(.path("/A/Notes"), to: .path("/B")) }
        expectReason(.nameTaken) {
            try store.insertRecordings([NewRecording(parent: a.id, name: "Take", format: flac)])
        }
        expectReason(.nameTaken) { try store.createFolders(names: ["C", "C"]) }
        // Names compare byte for byte: case differs, so these are different names.
        try store.createFolder(parent: .id(a.id), name: "notes")
        #expect(try store.list(folder: .id(a.id)).items.map(\.name) == ["Notes", "notes", "Take"])
        // A batch that fails adds nothing.
        expectReason(.notFound) { try store.item(path: "/C") }
    }

    @Test func invalidNamesAreRefusedEverywhere() throws {
        try store.createFolder(name: "Ok")
        for name in ["", "a/b", ".", "..", "nul\u{0}name", String(repeating: "x", count: 256)] {
            expectReason(.invalidName) { try store.createFolder(name: name) }
            expectReason(.invalidName) { try store.rename(.path("/Ok"), to: name) }
            expectReason(.invalidName) { try store.addRecording(name: name, format: flac) }
            expectReason(.invalidName) {
                try store.insertRecordings([NewRecording(parent: LibraryStore.rootID, name: name, format: flac)])
            }
        }
        // 255 bytes of UTF-8 is the longest name.
        try store.createFolder(name: String(repeating: "é", count: 127) + "x")
        #expect(try store.list().items.count == 2)
    }

    @Test func listingShowsFoldersFirstThenNamesIgnoringCaseThenByBytes() throws {
        for name in ["zeta", "Alpha", "Éclair"] { try store.createFolder(name: name) }
        for name in ["beta", "Charlie", "alpha", "Beta", "éclair"] { try store.addRecording(name: name, format: flac) }
        let listing = try store.list()
        #expect(listing.items.map(\.name) == ["Alpha", "zeta", "Éclair", "alpha", "Beta", "beta", "Charlie", "éclair"])
        #expect(listing.items.map(\.path) == listing.items.map { "/" + $0.name })
    }

    @Test func onlyFoldersCanBeListedOrHoldItems() throws {
        try store.createFolder(name: "F")
        try store.addRecording(name: "R", format: flac)
        #expect(expectReason(.notAFolder) { try store.list(folder: .path("/R")) }?.message.contains("/R") == true)
        expectReason(.notAFolder) { try store.createFolder(parent: .path("/R"), name: "x") }
        expectReason(.notAFolder) { try store.move(.path("/F"), to: .path("/R")) }
        expectReason(.notAFolder) { try store.addRecording(parent: .path("/R"), name: "x", format: flac) }
        expectReason(.notAFolder) { try store.importFile(path: "/etc/hostname", folder: .path("/R"), probe: stubProbe) }
        let r = try store.item(path: "/R")
        expectReason(.notAFolder) { try store.insertRecordings([NewRecording(parent: r.id, name: "x", format: flac)]) }
    }

    @Test func onlyRecordingsHaveAudio() throws {
        let folder = try store.createFolder(name: "F")
        expectReason(.notARecording) { try store.updateRecording(id: folder.id, duration: 3) }
        expectReason(.notARecording) { try store.audioPath(for: folder) }
        let recording = try store.addRecording(parent: .id(folder.id), name: "R", format: AudioFormat(codec: "vorbis", sampleRate: 44100, channels: 2))
        #expect(try store.audioPath(for: recording) == directory.file("audio/\(recording.id).ogg"))
    }

    @Test func fileExtensionsFollowTheCodec() {
        #expect(LibraryStore.fileExtension(forCodec: "wav") == "wav")
        #expect(LibraryStore.fileExtension(forCodec: "flac") == "flac")
        #expect(LibraryStore.fileExtension(forCodec: "vorbis") == "ogg")
        #expect(LibraryStore.fileExtension(forCodec: "ogg") == "ogg")
        #expect(LibraryStore.fileExtension(forCodec: "opus") == "opus")
        #expect(LibraryStore.fileExtension(forCodec: "mp3") == "mp3")
        #expect(LibraryStore.fileExtension(forCodec: "aiff") == "aiff")
        #expect(LibraryStore.fileExtension(forCodec: "../x") == "audio")
    }

    @Test func renameKeepsTheItemAndChangesItsPathAndItsChildrensPaths() throws {
        let folder = try store.createFolder(name: "Old")
        let inner = try store.addRecording(parent: .id(folder.id), name: "Take", format: flac)
        let renamed = try store.rename(.id(folder.id), to: "New")
        #expect(renamed.id == folder.id)
        #expect(renamed.path == "/New")
        #expect(try store.item(id: inner.id).path == "/New/Take")
        expectReason(.notFound) { try store.item(path: "/Old") }
        #expect(try store.rename(.path("/New"), to: "New") == renamed)
    }

    @Test func moveCarriesAFolderWithEverythingInIt() throws {
        try store.createFolder(name: "A")
        let b = try store.createFolder(parent: .path("/A"), name: "B")
        let take = try store.addRecording(parent: .id(b.id), name: "Take", format: flac)
        try store.createFolder(name: "Archive")
        let moved = try store.move(.path("/A/B"), to: .path("/Archive"))
        #expect(moved.path == "/Archive/B")
        #expect(moved.parent == (try store.item(path: "/Archive")).id)
        #expect(try store.item(id: take.id).path == "/Archive/B/Take")
        #expect(try store.list(folder: .path("/A")).items.isEmpty)
        // Moving where it already is changes nothing.
        #expect(try store.move(.id(b.id), to: .path("/Archive")) == moved)
        // A recording moves too.
        #expect(try store.move(.id(take.id), to: .root).path == "/Take")
    }

    @Test func aFolderCannotMoveIntoItselfOrItsDescendants() throws {
        try store.createFolder(name: "A")
        try store.createFolder(parent: .path("/A"), name: "B")
        try store.createFolder(parent: .path("/A/B"), name: "C")
        try store.createFolder(name: "AB")
        let error = expectReason(.cycle) { try store.move(.path("/A"), to: .path("/A")) }
        #expect(error?.message.contains("/A") == true)
        expectReason(.cycle) { try store.move(.path("/A"), to: .path("/A/B")) }
        expectReason(.cycle) { try store.move(.path("/A"), to: .path("/A/B/C")) }
        expectReason(.cycle) { try store.move(.path("/A/B"), to: .path("/A/B/C")) }
        // A sibling whose name starts the same is not a descendant.
        #expect(try store.move(.path("/A"), to: .path("/AB")).path == "/AB/A")
        #expect(try store.move(.path("/AB/A/B/C"), to: .root).path == "/C")
    }

    @Test func theRootCannotBeRenamedMovedOrDeleted() throws {
        let folder = try store.createFolder(name: "F")
        #expect(expectReason(.root) { try store.rename(.root, to: "x") }?.message == "the root folder cannot be renamed")
        expectReason(.root) { try store.move(.root, to: .id(folder.id)) }
        expectReason(.root) { try store.delete(.root) }
        expectReason(.root) { try store.delete(.path("/")) }
        #expect(try store.item(path: "/F") == folder)
    }

    @Test func deletingADeepFolderRemovesEveryRowAndFileAndReportsEachItemOnce() throws {
        // Ten levels, each with a folder, two recordings with files, and an empty folder.
        var parent = ItemReference.root
        var created: [Item] = []
        for level in 0..<10 {
            let folder = try store.createFolder(parent: parent, name: "L\(level)")
            created.append(folder)
            created.append(try store.createFolder(parent: .id(folder.id), name: "empty"))
            for take in 0..<2 {
                let recording = try store.addRecording(parent: .id(folder.id), name: "take \(take)", format: flac)
                TestFiles.touch(try store.audioPath(for: recording))
                created.append(recording)
            }
            parent = .id(folder.id)
        }
        let keep = try store.addRecording(name: "keep", format: flac)
        TestFiles.touch(try store.audioPath(for: keep))
        let changes = ChangeRecorder(store)

        #expect(try store.delete(.path("/L0")) == created.count)

        for item in created { expectReason(.notFound) { try store.item(id: item.id) } }
        #expect(TestFiles.names(in: directory.file("audio")) == ["\(keep.id).flac"])
        #expect(try store.list().items.map(\.name) == ["keep"])
        let batches = changes.received
        #expect(batches.count == 1, "one transaction, one batch")
        let removed = batches.flatMap { $0 }
        #expect(removed.allSatisfy { $0.kind == .removed })
        #expect(removed.map(\.item.id).sorted() == created.map(\.id).sorted())
        #expect(Set(removed.map(\.item.path)) == Set(created.map(\.path)))
        let top = removed.first { $0.item.path == "/L0" }
        #expect(top?.parent?.id == LibraryStore.rootID)
        let deepTake = removed.first { $0.item.path == "/L0/L1/L2/L3/L4/L5/L6/L7/L8/L9/take 1" }
        #expect(deepTake?.parent?.path == "/L0/L1/L2/L3/L4/L5/L6/L7/L8/L9")
        #expect(deepTake?.item.format == flac)
    }

    @Test func deletingARecordingRemovesItsFileAfterTheRow() throws {
        let recording = try store.addRecording(name: "R", format: flac)
        let file = try store.audioPath(for: recording)
        TestFiles.touch(file)
        #expect(try store.delete(.id(recording.id)) == 1)
        #expect(!TestFiles.exists(file))
        // A recording whose file was never written deletes cleanly too.
        let unwritten = try store.addRecording(name: "U", format: flac)
        #expect(try store.delete(.id(unwritten.id)) == 1)
    }

    @Test func recordingsInProgressAreListedUntilFinished() throws {
        let recording = try store.addRecording(name: "Live", format: flac)
        #expect(try store.inProgressRecordings().map(\.id) == [recording.id])
        let updated = try store.updateRecording(id: recording.id, duration: 12.5, size: 4096)
        #expect(updated.duration == 12.5)
        #expect(updated.size == 4096)
        #expect(updated.format == flac)
        #expect(try store.inProgressRecordings().count == 1)
        let finished = try store.updateRecording(
            id: recording.id, format: AudioFormat(codec: "flac", sampleRate: 44100, channels: 2), finished: true)
        #expect(finished.duration == 12.5)
        #expect(finished.format?.sampleRate == 44100)
        #expect(try store.inProgressRecordings().isEmpty)
        #expect(try store.audioPath(for: finished).hasSuffix(".flac"))
    }
}
