import Foundation
import GRDB
@testable import ReelLibrary
import ReelModel
import Testing

/// The `marks` table: a library from before it keeps its data and gains it; marks are kept by
/// frame with their recording, listed by `itemWithMarks`, gone with it.
@Suite struct MarkStoreTests {
    let directory = NSTemporaryDirectory() + "reel-markstore-\(UUID().uuidString)"

    @Test func aLibraryFromBeforeMarksKeepsItsRecordingsAndGainsMarks() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            let before = try DatabaseQueue(path: directory + "/library.sqlite")
            try LibrarySchema.migrator().migrate(before, upTo: "schedules")
            try before.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO items (id, parent, kind, name, name_fold, created, duration, codec, sample_rate,
                                           channels, size, file_ext)
                        VALUES ('old', ?, 'recording', 'Old', 'old', '2025-01-01T00:00:00Z', 2.0, 'wav', 8000, 1, 32044, 'wav')
                        """,
                    arguments: [LibraryStore.rootID])
            }
            #expect(try before.read { db in try db.tableExists("marks") } == false)
            try before.close()
        }
        let store = try LibraryStore(directory: directory)
        let old = try store.item(path: "/Old")
        #expect(old.id == "old" && old.duration == 2 && old.format == AudioFormat(codec: "wav", sampleRate: 8000, channels: 1))
        #expect(try store.itemWithMarks(.path("/Old")).marks == [])

        try store.addMark(recording: "old", frame: 12000, label: "late")
        try store.addMark(recording: "old", frame: 4000, label: nil)
        let marks = try #require(try store.itemWithMarks(.id("old")).marks)
        #expect(marks == [Mark(frame: 4000, label: nil, sampleRate: 8000), Mark(frame: 12000, label: "late", sampleRate: 8000)])
        #expect(marks.map(\.seconds) == [0.5, 1.5])
        #expect(try store.item(id: "old").marks == nil, "plain reads (listings) carry no marks")

        do {
            try store.addMark(recording: LibraryStore.rootID, frame: 0, label: nil)
            Issue.record("a mark in a folder was taken")
        } catch {
            #expect(error.reason == .notARecording)
        }
        try store.delete(.id("old"))
        let left = try store.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM marks") }
        #expect(left == 0, "a recording's marks go with it")
    }

    @Test func chapterTimesAreHoursMinutesSecondsAndMilliseconds() {
        #expect(Mark(frame: 0, label: nil, sampleRate: 48000).chapterTime == "00:00:00.000")
        #expect(Mark(frame: 62 * 48000 + 24000, label: nil, sampleRate: 48000).chapterTime == "00:01:02.500")
        // Rounded down: the chapter never begins after its mark.
        #expect(Mark(frame: 47, label: nil, sampleRate: 48000).chapterTime == "00:00:00.000")
        #expect(Mark(frame: Int64(3 * 3600 + 59) * 8000 + 7999, label: nil, sampleRate: 8000).chapterTime == "03:00:59.999")
    }

    @Test func aChaptersCopyLeftByACrashIsRemovedAtTheNextStart() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LibraryStore(directory: directory)
        let copy = store.chaptersCopyPath(forRecording: "01a21eae-39e9-7acc-adb3-311f8d91a59e")
        #expect(copy.hasPrefix(store.audioDirectory + "/.chapters-"))
        #expect(FileManager.default.createFile(atPath: copy, contents: Data("half a copy".utf8)))
        let report = try store.reconcile()
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(report.strayFiles.isEmpty, "not moved to lost+found: the recording's own file was never touched")
        #expect(report.partialImports == [String(copy.split(separator: "/").last!)])
    }
}
