// How the index finds many distinct paths (`MusicIndex.forEachNumberedRow`): sought a few at a
// time, or the table read once and each row's path matched by its bytes (`MusicPathNumbers`);
// both find the same rows, under the same rule for case and Unicode as SQLite's `path = ?`.
import Foundation
import GRDB
import GRDBSQLite
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicPathLookupTests {
    /// Each path by its number; a path not given, or differing by case or by Unicode
    /// normalization only, is not found; the empty path is a path; one given twice is found
    /// under both numbers; thousands of paths (many sharing a long prefix) all found.
    @Test func pathNumbersFindEachPathByItsBytes() {
        let nfc = "Caf\u{E9}/1.flac"
        let nfd = "Cafe\u{301}/1.flac"
        #expect(nfc == nfd, "Swift's String equality is canonical: the bytes differ")
        var paths = (0..<3000).map { "Artist \($0 / 20)/Album \($0 / 10)/\($0 % 10) Track \($0).flac" }
        paths += [nfc, "", "Upper/A.flac", "Upper/A.flac"]
        let numbers = MusicPathNumbers(paths)
        func found(_ path: String) -> [Int] {
            var found: [Int] = []
            var bytes = Array(path.utf8)
            bytes.withUnsafeMutableBytes { numbers.forEachNumber(of: UnsafeRawBufferPointer($0)) { found.append($0) } }
            return found.sorted()
        }
        for (number, path) in paths.enumerated().prefix(3000) { #expect(found(path) == [number]) }
        #expect(found(nfc) == [3000])
        #expect(found(nfd) == [])
        #expect(found("") == [3001])
        #expect(found("Upper/A.flac") == [3002, 3003])
        #expect(found("upper/a.flac") == [])
        #expect(found("Artist 0/Album 0/0 Track 0.fla") == [])
        #expect(found("Artist 0/Album 0/0 Track 0.flac ") == [])
        var none: [Int] = []
        MusicPathNumbers([]).forEachNumber(of: UnsafeRawBufferPointer(start: nil, count: 0)) { none.append($0) }
        #expect(none.isEmpty)
    }

    /// A few paths are sought; paths numbering half the table's rows or more are scanned (the
    /// table counted by the span of its ids); fewer than `minimumScanPaths` always sought.
    @Test func fewPathsAreSoughtAndALargeShareIsScanned() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        try music.index.write(files: (0..<1000).map { scannedFile("F/\($0).flac") })
        let choice = { (count: Int) throws -> MusicIndex.PathLookup in
            try music.store.reading("choose") { db in try MusicIndex.pathLookup(count: count, in: db) }
        }
        #expect(try choice(10) == .seek)
        #expect(try choice(MusicIndex.minimumScanPaths) == .seek)
        #expect(try choice(499) == .seek)
        #expect(try choice(500) == .scan)
        #expect(try choice(1000) == .scan)
        #expect(try choice(5000) == .scan)
        // An empty table: nothing to scan.
        let empty = try MusicFixture()
        defer { withExtendedLifetime(empty) {} }
        #expect(try empty.store.reading("choose") { db in try MusicIndex.pathLookup(count: 1000, in: db) } == .seek)
    }

    /// Both ways find, for each path asked, the row of that root and path, whatever the order
    /// asked, and nothing for a path the index does not have, of another root, or differing by
    /// case or Unicode normalization; a path asked twice is found under both numbers.
    @Test func seekingAndScanningFindTheSameRows() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        var files = (0..<600).map { scannedFile("F/\($0).flac") }
        files.append(scannedFile("Caf\u{E9}/1.flac"))
        files.append(scannedFile("Upper/A.flac"))
        // The same paths in another music folder: never found for this one.
        files += (0..<600).map { scannedFile("F/\($0).flac", root: "/other") }
        try music.index.write(files: files)
        var paths = (0..<600).reversed().map { "F/\($0).flac" }
        paths.insert("F/none.flac", at: 0)
        paths.insert("Cafe\u{301}/1.flac", at: 300)
        paths.insert("upper/a.flac", at: 400)
        paths += ["Upper/A.flac", "Caf\u{E9}/1.flac", "F/7.flac"]
        let ids = try music.store.reading("ids") { db in
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT path, id FROM music_files WHERE root = '/music'").map {
                    (row: Row) -> (String, Int64) in (row[0], row[1])
                })
        }
        func found(_ lookup: MusicIndex.PathLookup) throws -> [Int: Int64] {
            try music.store.reading("find") { db in
                var found: [Int: Int64] = [:]
                let used = try MusicIndex.forEachNumberedRow(
                    root: "/music", distinctPaths: paths, full: MusicIndex.fullNumberedQueueFilesSQL,
                    columns: MusicIndex.queueFileColumns, in: db, lookup: lookup
                ) { number, statement in
                    #expect(found[number] == nil, "each number once")
                    found[number] = sqlite3_column_int64(statement, 1)
                }
                #expect(used == lookup)
                return found
            }
        }
        var expected: [Int: Int64] = [:]
        for (number, path) in paths.enumerated() {
            // (By the index's bytes: a dictionary keyed by String would match the NFD path.)
            if let id = ids.first(where: { Array($0.key.utf8) == Array(path.utf8) })?.value { expected[number] = id }
        }
        #expect(expected.count == 603)
        #expect(try found(.seek) == expected)
        #expect(try found(.scan) == expected)
    }

    /// The public reads give the same values whichever way their paths were found: a few paths
    /// (sought) and all of them (scanned), with a path the index does not have among them.
    @Test func tracksAndQueueFilesAreTheSameSoughtOrScanned() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        try music.index.write(files: (0..<800).map {
            scannedFile("F/\($0).flac", title: $0 % 3 == 0 ? nil : "T\($0)", artist: $0 % 5 == 0 ? nil : "A", track: $0)
        })
        let all = ["F/none.flac"] + (0..<800).map { "F/\($0).flac" }.shuffled()
        let few = Array(all.prefix(20))
        let scanned = try music.index.tracks(root: "/music", distinctPaths: all)
        let sought = try music.index.tracks(root: "/music", distinctPaths: few)
        #expect(try music.store.reading("choose") { db in try MusicIndex.pathLookup(count: all.count, in: db) } == .scan)
        #expect(try music.store.reading("choose") { db in try MusicIndex.pathLookup(count: few.count, in: db) } == .seek)
        #expect(scanned[0] == nil && sought[0] == nil)
        #expect(scanned.compactMap { $0 }.count == 800)
        #expect(Array(scanned.prefix(20)) == sought)
        for (path, track) in zip(all, scanned) where track != nil { #expect(track?.relativePath == path) }
        var queueFiles: [Int: MusicQueueFile] = [:]
        try music.index.queueFiles(root: "/music", distinctPaths: all) { queueFiles[$0] = $1 }
        #expect(queueFiles.count == 800)
        for (number, track) in scanned.enumerated() { #expect(queueFiles[number] == track.map(MusicQueueFile.init)) }
    }
}
