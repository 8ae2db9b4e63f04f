// What the queue reads of a playlist's indexed files (`MusicIndex.queueFiles`): the same values
// as the whole tracks, by the path's number, across the 500-path queries.
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicQueueFilesTests {
    /// Each path the index has is handed back once, by its number in the list asked, with the
    /// values of its whole track (`MusicQueueFile(track)`); a path the index does not have (or of
    /// another root) is not; a missing music folder's files come back marked missing.
    @Test func eachIndexedPathComesBackByItsNumberWithItsTracksValues() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        var files: [ScannedMusicFile] = []
        for number in 0..<1100 {
            files.append(scannedFile(
                "F/\(number).flac", title: number % 3 == 0 ? nil : "T\(number)", artist: number % 5 == 0 ? nil : "A",
                album: number % 7 == 0 ? nil : "Al", track: number, cover: number % 2 == 1,
                duration: number % 9 == 0 ? nil : Double(number) + 0.25))
        }
        try music.index.write(files: files)
        var paths: [String] = files.map(\.relativePath).reversed()
        paths.insert("F/none.flac", at: 0)
        paths.insert("F/other.flac", at: 700)
        let tracks = try music.index.tracks(root: "/music", distinctPaths: paths)
        var found: [(number: Int, file: MusicQueueFile)] = []
        try music.index.queueFiles(root: "/music", distinctPaths: paths) { found.append(($0, $1)) }
        let expected = tracks.enumerated().compactMap { number, track in track.map { (number, MusicQueueFile($0)) } }
        #expect(found.count == 1100)
        // (In no set order: these paths are half the table's rows or more, read whole.)
        found.sort { $0.number < $1.number }
        #expect(found.map(\.number) == expected.map(\.0), "each once, without the paths not indexed")
        #expect(found.map(\.file) == expected.map(\.1))
        #expect(found.allSatisfy { !$0.file.missing })
        // Nothing asked, or another root: nothing called.
        var calls = 0
        try music.index.queueFiles(root: "/music", distinctPaths: []) { _, _ in calls += 1 }
        try music.index.queueFiles(root: "/other", distinctPaths: ["F/1.flac"]) { _, _ in calls += 1 }
        #expect(calls == 0)
        try music.index.setMissing(root: "/music", true)
        var missing: [MusicQueueFile] = []
        try music.index.queueFiles(root: "/music", distinctPaths: ["F/1.flac"]) { missing.append($1) }
        #expect(missing.map(\.missing) == [true])
    }
}
