// Reconciliation at start: stray files go to lost+found, rows without files are marked missing.
import Foundation
import Logging
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct ReconcileTests {
    let directory = TemporaryDirectory()
    let logs = LogRecords()

    @Test func strayFilesAreMovedOutAndMissingFilesAreMarkedAndLogged() throws {
        var store: LibraryStore? = try LibraryStore(directory: directory.path, logger: logs.logger())
        try store!.createFolder(name: "Talks")
        let kept = try store!.addRecording(parent: .path("/Talks"), name: "kept", format: flac)
        let lost = try store!.addRecording(parent: .path("/Talks"), name: "lost", format: flac)
        TestFiles.touch(try store!.audioPath(for: kept))
        _ = FileManager.default.createFile(atPath: try store!.audioPath(for: lost), contents: Data("abc".utf8))
        try store!.updateRecording(id: lost.id, size: 3, finished: true)
        store = nil

        // While the daemon was down: a file lost its row, a row lost its file, an import was cut short.
        let audio = directory.file("audio")
        try FileManager.default.removeItem(atPath: "\(audio)/\(lost.id).flac")
        TestFiles.touch("\(audio)/0badf00d-0000-0000-0000-000000000000.flac")
        TestFiles.touch("\(audio)/\(kept.id).wav")  // right id, wrong extension
        TestFiles.touch("\(audio)/.import-1234.part")

        let reopened = try LibraryStore(directory: directory.path, logger: logs.logger())
        let report = try reopened.reconcile()

        #expect(report.strayFiles == ["0badf00d-0000-0000-0000-000000000000.flac", "\(kept.id).wav"].sorted())
        #expect(report.partialImports == [".import-1234.part"])
        #expect(report.missingRecordings.map(\.path) == ["/Talks/lost"])
        #expect(report.restoredRecordings.isEmpty)
        #expect(!report.isClean)
        #expect(TestFiles.names(in: audio) == ["\(kept.id).flac"])
        #expect(
            TestFiles.names(in: directory.file("lost+found"))
                == ["0badf00d-0000-0000-0000-000000000000.flac", "\(kept.id).wav"].sorted())
        // The recording stays in the tree, marked missing, with size 0.
        let missing = try reopened.item(path: "/Talks/lost")
        #expect(missing.size == 0)
        #expect(try reopened.missingRecordings().map(\.id) == [lost.id])

        let warnings = logs.all.filter { $0.level == .warning }
        #expect(warnings.contains { $0.metadata["path"] == "/Talks/lost" })
        #expect(warnings.contains { $0.metadata["file"] == "\(audio)/0badf00d-0000-0000-0000-000000000000.flac" })
        #expect(warnings.contains { $0.metadata["file"] == "\(audio)/.import-1234.part" })
        #expect(warnings.count == 4)

        // The file comes back: the next reconcile restores the recording with its size.
        _ = FileManager.default.createFile(atPath: "\(audio)/\(lost.id).flac", contents: Data("abcd".utf8))
        TestFiles.touch("\(audio)/0badf00d-0000-0000-0000-000000000000.flac")
        let again = try reopened.reconcile()
        #expect(again.restoredRecordings.map(\.path) == ["/Talks/lost"])
        #expect(again.restoredRecordings.first?.size == 4)
        #expect(again.strayFiles == ["0badf00d-0000-0000-0000-000000000000.flac.2"], "an earlier stray is not overwritten")
        #expect(try reopened.missingRecordings().isEmpty)
        #expect(try reopened.reconcile().isClean)
    }

    /// Regression (found by the power-cut test, Tests/PowerCut): an import whose row was
    /// committed but whose rename a power cut took away was listed without its file.
    @Test func anImportCutShortAfterItsCommitIsPutInPlace() throws {
        var store: LibraryStore? = try LibraryStore(directory: directory.path, logger: logs.logger())
        let source = directory.file("talk.wav")
        TestFiles.writeWAV(to: source)
        let item = try store!.importFile(path: source, probe: stubProbe)
        store = nil
        // What the disk holds after the cut: the row, and the copy under its temporary name.
        let audio = directory.file("audio")
        try FileManager.default.moveItem(atPath: "\(audio)/\(item.id).wav", toPath: "\(audio)/.import-\(item.id).part")

        let reopened = try LibraryStore(directory: directory.path, logger: logs.logger())
        let report = try reopened.reconcile()
        #expect(report.missingRecordings.isEmpty)
        #expect(report.partialImports.isEmpty)
        #expect(TestFiles.names(in: audio) == ["\(item.id).wav"])
        #expect(try reopened.item(id: item.id).size == item.size)
        #expect(logs.all.contains { $0.level == .notice && $0.metadata["file"] == "\(audio)/\(item.id).wav" })
        // The copy of an import whose row never committed still goes.
        TestFiles.touch("\(audio)/.import-0badf00d-0000-0000-0000-000000000000.part")
        #expect(try reopened.reconcile().partialImports == [".import-0badf00d-0000-0000-0000-000000000000.part"])
    }

    /// A power cut after a chapter rewrite's rename and before the row's new size: the next
    /// start reads the size of each recording with marks again (only those: the others' files
    /// are never rewritten).
    @Test func aRecordingWithMarksWhoseSizeIsNotItsFilesIsResized() throws {
        var store: LibraryStore? = try LibraryStore(directory: directory.path, logger: logs.logger())
        let marked = try store!.addRecording(name: "marked", format: flac)
        let plain = try store!.addRecording(name: "plain", format: flac)
        for item in [marked, plain] {
            _ = FileManager.default.createFile(atPath: try store!.audioPath(for: item), contents: Data("abc".utf8))
            try store!.updateRecording(id: item.id, size: 3, finished: true)
        }
        _ = try store!.addMark(recording: marked.id, frame: 10, label: "here")
        #expect(try store!.reconcile() == ReconcileReport())
        // The rewritten files (one more byte each), their rows not updated.
        for item in [marked, plain] {
            _ = FileManager.default.createFile(atPath: try store!.audioPath(for: item), contents: Data("abcd".utf8))
        }
        store = nil

        let reopened = try LibraryStore(directory: directory.path, logger: logs.logger())
        let report = try reopened.reconcile()
        #expect(report.resizedRecordings == ["/marked"])
        #expect(!report.isClean)
        #expect(try reopened.item(id: marked.id).size == 4)
        #expect(try reopened.item(id: plain.id).size == 3)
        #expect(logs.all.contains { $0.level == .notice && $0.metadata["path"] == "/marked" })
        #expect(try reopened.reconcile().isClean)
    }

    /// A chapters copy cut short goes; a chapters journal the start could not finish
    /// (`keeping`) stays, since it holds the only whole copy of that file's header.
    @Test func aChaptersCopyGoesButAJournalKeptByTheStartStays() throws {
        let store = try LibraryStore(directory: directory.path, logger: logs.logger())
        let audio = directory.file("audio")
        TestFiles.touch("\(audio)/.chapters-a.part")
        TestFiles.touch("\(audio)/.chapters-b.part")
        let report = try store.reconcile(keeping: [".chapters-b.part"])
        #expect(report.partialImports == [".chapters-a.part"])
        #expect(!TestFiles.exists("\(audio)/.chapters-a.part"))
        #expect(TestFiles.exists("\(audio)/.chapters-b.part"))
    }

    @Test func aConsistentLibraryReconcilesCleanlyAndLogsNothing() throws {
        let store = try LibraryStore(directory: directory.path, logger: logs.logger())
        let recording = try store.addRecording(name: "R", format: flac)
        TestFiles.touch(try store.audioPath(for: recording))
        #expect(try store.reconcile() == ReconcileReport())
        #expect(logs.all.filter { $0.level >= .warning }.isEmpty)
        #expect(!TestFiles.exists(directory.file("lost+found")))
    }
}

/// Regression: listing a directory copied each entry's 256-byte `d_name` whole, reading past a
/// short record at the end of readdir's buffer (found by AddressSanitizer at start-up).
@Suite struct DirectoryListingTests {
    @Test func namesOfEveryLengthAreListedExactly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-listing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let names = (1...255).map { String(repeating: "n", count: $0) }
        for name in names { FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil) }
        let listed = try AudioFiles.entries(of: directory.path)
        #expect(Set(listed.map(\.name)) == Set(names))
        #expect(listed.allSatisfy { !$0.isDirectory })
    }
}
