// A library the size of the benchmark's: 100,000 recordings in 1,000 folders.
import Foundation
import ReelModel
import Testing

@testable import ReelLibrary

/// Builds the benchmark's tree: `folders` folders under the root (`Folder 0000`…), each with
/// `perFolder` recordings (`Take 00000`… numbered across the tree), optionally with empty files
/// so that `reconcile()` finds every recording's audio.
func buildLargeTree(_ store: LibraryStore, folders: Int, perFolder: Int, files: Bool = false) throws -> [Item] {
    func padded(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
    let folderItems = try store.createFolders(names: (0..<folders).map { "Folder \(padded($0, 4))" })
    var batch: [NewRecording] = []
    batch.reserveCapacity(folders * perFolder)
    for (f, folder) in folderItems.enumerated() {
        for r in 0..<perFolder {
            batch.append(
                NewRecording(
                    parent: folder.id, name: "Take \(padded(f * perFolder + r, 5))", format: flac, duration: 60,
                    size: 1_000_000))
        }
    }
    let recordings = try store.insertRecordings(batch)
    if files {
        for recording in recordings { TestFiles.touch(store.audioPath(id: recording.id, ext: "flac")) }
    }
    return folderItems
}

@Suite struct ScaleTests {
    @Test func aHundredThousandRecordingsInAThousandFoldersAreBuiltInOneTransaction() throws {
        let directory = TemporaryDirectory()
        let store = try LibraryStore(directory: directory.path)
        let changes = ChangeRecorder(store)
        let clock = ContinuousClock()
        let start = clock.now
        let folders = try buildLargeTree(store, folders: 1000, perFolder: 100)
        let elapsed = clock.now - start
        print("built 1,000 folders and 100,000 recordings in \(elapsed)")
        #expect(changes.received.count == 2, "one batch for the folders, one for the recordings")
        #expect(changes.received.last?.count == 100_000)
        let listing = try store.list(folder: .id(folders[500].id))
        #expect(listing.items.count == 100)
        #expect(listing.items.first?.path == "/Folder 0500/Take 50000")
        #expect(try store.search(query: "take 9999").items.map(\.name) == (99990...99999).map { "Take \($0)" })
        #expect(try store.delete(.id(folders[0].id)) == 101)
    }

    /// Prints latencies on the benchmark's tree. Opt-in: `REEL_LIBRARY_MEASURE=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_LIBRARY_MEASURE"] == "1"))
    func measureListSearchAndOpenOnTheBenchmarkTree() throws {
        let directory = TemporaryDirectory()
        let clock = ContinuousClock()
        var store: LibraryStore? = try LibraryStore(directory: directory.path)
        var start = clock.now
        let folders = try buildLargeTree(store!, folders: 1000, perFolder: 100, files: true)
        print("build (rows and 100k empty files): \(ms(clock.now - start)) ms")
        store = nil

        start = clock.now
        let opened = try LibraryStore(directory: directory.path)
        let openTime = clock.now - start
        start = clock.now
        let report = try opened.reconcile()
        let reconcileTime = clock.now - start
        print("open: \(ms(openTime)) ms; reconcile of 100k files: \(ms(reconcileTime)) ms; clean: \(report.isClean)")

        func measure(_ label: String, _ body: (Int) throws -> Int) rethrows {
            var samples: [Double] = []
            var count = 0
            for i in 0..<200 {
                let t = clock.now
                count = try body(i)
                samples.append(ms(clock.now - t))
            }
            samples.sort()
            print(
                "\(label): p50 \(String(format: "%.3f", samples[100])) ms, p99 \(String(format: "%.3f", samples[197])) ms, max \(String(format: "%.3f", samples[199])) ms (\(count) items)"
            )
        }
        try measure("list of a 100-item folder") { i in try opened.list(folder: .id(folders[(i * 7) % 1000].id)).items.count }
        try measure("list by path") { i in try opened.list(folder: .path(folders[(i * 7) % 1000].path)).items.count }
        try measure("search, few matches (\"take 1234\")") { i in try opened.search(query: "take \(1234 + i % 7)").items.count }
        try measure("search, no match") { _ in try opened.search(query: "zzz").items.count }
        try measure("search, many matches (\"take\", limit 50)") { _ in try opened.search(query: "take").items.count }
        var cursor: String?
        try measure("search, many matches, next pages") { _ in
            let page = try opened.search(query: "take", cursor: cursor)
            cursor = page.nextCursor
            return page.items.count
        }
        let size = ["library.sqlite", "library.sqlite-wal"].compactMap {
            AudioFiles.regularFileSize(directory.file($0))
        }.reduce(0, +)
        print("database size: \(size / 1024) KiB")
    }

    private func ms(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
