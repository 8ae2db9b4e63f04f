// The music index read as folders and by tag values (`MusicIndex+Browse`): what MPD's view asks.
import Foundation
import GRDB
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicBrowseTests {
    /// A small collection under `/music`, and one file of a second folder `/other`.
    func fixture() throws -> MusicFixture {
        let music = try MusicFixture()
        var loose = scannedFile("loose.flac", title: "Loose")
        loose.stamp = MusicFileStamp(size: 1, modifiedNanoseconds: 1_800_000_000_000_000_000)
        var files = [
            scannedFile("Alpha/One/1.flac", title: "A", artist: "Alpha", album: "One", date: "2001"),
            scannedFile("Alpha/One/2.flac", title: "B", artist: "Alpha", album: "One", date: "2001"),
            scannedFile("Alpha/Two/1.flac", title: "C", artist: "Alpha", album: "Two"),
            // A folder whose name extends another's: never inside it.
            scannedFile("Alpha Band/1.flac", title: "D", artist: "Alpha Band", album: "One", albumArtist: "Various"),
            scannedFile("Alpha0/1.flac", title: "E"),
            scannedFile("Zoë/Ünï/1.flac", title: "Café", artist: "Zoë", album: "Ünï"),
            loose,
            scannedFile("x.flac", title: "Elsewhere", artist: "Other", album: "Far", root: "/other"),
        ]
        files[0].audio.tags.genre = "Rock"
        try music.index.write(files: files)
        return music
    }

    @Test func aFoldersFilesAndSubfoldersComeFromTheIndex() throws {
        let music = try fixture()
        defer { withExtendedLifetime(music) {} }
        let index = music.index
        #expect(try index.files(root: "/music", in: "").map(\.relativePath) == ["loose.flac"])
        #expect(try index.subfolders(root: "/music", of: "").map(\.name) == ["Alpha", "Alpha Band", "Alpha0", "Zoë"])
        #expect(try index.subfolders(root: "/music", of: "Alpha").map(\.name) == ["One", "Two"])
        #expect(try index.files(root: "/music", in: "Alpha").isEmpty)
        #expect(try index.files(root: "/music", in: "Alpha/One").map(\.relativePath) == ["Alpha/One/1.flac", "Alpha/One/2.flac"])
        #expect(try index.subfolders(root: "/music", of: "Zoë").map(\.name) == ["Ünï"])
        // Recursive: only what lies under the folder, not under `Alpha Band` or `Alpha0`.
        #expect(
            try index.files(root: "/music", under: "Alpha").map(\.relativePath)
                == ["Alpha/One/1.flac", "Alpha/One/2.flac", "Alpha/Two/1.flac"])
        #expect(try index.files(root: "/music", under: "").count == 7)
        #expect(try index.hasFolder(root: "/music", "Alpha/Two"))
        #expect(try !index.hasFolder(root: "/music", "Alpha/Three"))
        #expect(try !index.hasFolder(root: "/music", "Alph"))
        #expect(try !index.hasFolder(root: "/music", "loose.flac"))
        // A folder's time is its newest file's.
        #expect(abs((try index.subfolders(root: "/music", of: "").first?.modified ?? 0) - 1_700_000_000.123) < 0.01)
    }

    @Test func filesOfAMissingFolderAreNotListed() throws {
        let music = try fixture()
        defer { withExtendedLifetime(music) {} }
        let index = music.index
        try index.setMissing(root: "/music", true)
        #expect(try index.files(root: "/music", under: "").isEmpty)
        #expect(try index.subfolders(root: "/music", of: "").isEmpty)
        #expect(try !index.hasFolder(root: "/music", "Alpha"))
        #expect(try index.distinctValues(of: .artist) == ["Other"])
        try index.setMissing(root: "/music", false)
        #expect(try index.files(root: "/music", under: "").count == 7)
    }

    @Test func tagConditionsNarrowTheCandidates() throws {
        let music = try fixture()
        defer { withExtendedLifetime(music) {} }
        let index = music.index
        func titles(_ conditions: [MusicTagCondition]) throws -> [String] {
            try index.tracks(matching: conditions).compactMap(\.audio.tags.title).sorted()
        }
        #expect(try titles([.equals(.album, "One")]) == ["A", "B", "D"])
        #expect(try titles([.equals(.album, "one")]).isEmpty)
        #expect(try titles([.equals(.artist, "Alpha"), .equals(.album, "One")]) == ["A", "B"])
        #expect(try titles([.equals(.albumArtistOrArtist, "Various")]) == ["D"])
        #expect(try titles([.equals(.albumArtistOrArtist, "Alpha")]) == ["A", "B", "C"])
        #expect(try titles([.containsFolded(.artist, "alp")]) == ["A", "B", "C", "D"])
        #expect(try titles([.containsFolded(.album, "ün")]) == ["Café"])
        #expect(try titles([.equals(.genre, "Rock")]) == ["A"])
        // A condition without a folded column keeps everything (the caller decides).
        #expect(try titles([.containsFolded(.genre, "ro")]).count == 8)
        // The title condition needs a Title tag: a file name never matches.
        #expect(try titles([.containsFolded(.title, "loose")]) == ["Loose"])
        #expect(try titles([]).count == 8)
        // Through the trigram index (three or more characters) as through the rows.
        #expect(try titles([.equals(.artist, "Alpha Band")]) == ["D"])
        #expect(try titles([.equals(.title, "Café")]) == ["Café"])
        #expect(try titles([.equals(.title, "café")]).isEmpty)
        #expect(try titles([.containsFolded(.title, "caf"), .containsFolded(.artist, "zo")]) == ["Café"])
        #expect(try titles([.containsFolded(.album, "one"), .equals(.album, "One")]) == ["A", "B", "D"])
        #expect(try titles([.containsFolded(.artist, "band\"x")]).isEmpty)
    }

    @Test func distinctValuesListAnEmptyValueForFilesWithoutTheTag() throws {
        let music = try fixture()
        defer { withExtendedLifetime(music) {} }
        let index = music.index
        #expect(Set(try index.distinctValues(of: .album)) == ["One", "Two", "Ünï", "Far", ""])
        #expect(Set(try index.distinctValues(of: .albumArtistOrArtist)) == ["Alpha", "Various", "Zoë", "Other", ""])
        #expect(Set(try index.distinctValues(of: .artist)) == ["Alpha", "Alpha Band", "Zoë", "Other", ""])
        #expect(Set(try index.distinctValues(of: .date)) == ["2001", ""])
        #expect(Set(try index.distinctValues(of: .genre)) == ["Rock", ""])
    }

    @Test func distinctCombinationsOfSeveralTags() throws {
        let music = try fixture()
        defer { withExtendedLifetime(music) {} }
        let pairs = try music.index.distinctValues(of: [.albumArtistOrArtist, .album])
        #expect(
            Set(pairs) == [
                ["Alpha", "One"], ["Alpha", "Two"], ["Various", "One"], ["Zoë", "Ünï"], ["Other", "Far"], ["", ""],
            ])
        let triples = try music.index.distinctValues(of: [.date, .artist, .album])
        #expect(
            Set(triples) == [
                ["2001", "Alpha", "One"], ["", "Alpha", "Two"], ["", "Alpha Band", "One"], ["", "Zoë", "Ünï"],
                ["", "Other", "Far"], ["", "", ""],
            ])
    }

    @Test func statsCountArtistAndAlbumTagsAsMPDDoes() throws {
        let music = try fixture()
        defer { withExtendedLifetime(music) {} }
        let stats = try music.index.tagStats()
        #expect(stats.songs == 8)
        #expect(stats.artists == 4)  // Alpha, Alpha Band, Zoë, Other: Artist tags, not AlbumArtist
        #expect(Set(stats.albums) == ["One", "Two", "Ünï", "Far"])
        #expect(stats.durationMilliseconds == 800_000)
    }

    @Test func tracksByPathInOneBatch() throws {
        let music = try fixture()
        defer { withExtendedLifetime(music) {} }
        let index = music.index
        let found = try index.tracks(root: "/music", relativePaths: ["loose.flac", "Alpha/Two/1.flac", "nothing.flac"])
        #expect(Set(found.keys) == ["loose.flac", "Alpha/Two/1.flac"])
        #expect(try index.tracks(root: "/other", relativePaths: ["loose.flac"]).isEmpty)
        let many = (0..<1200).map { "n\($0).flac" } + ["x.flac"]
        #expect(try index.tracks(root: "/other", relativePaths: many).keys.sorted() == ["x.flac"])
    }

    /// `tracks(root:relativePaths:)` reads its rows straight from SQLite: every value as the
    /// other reads give it (a missing tag, a number, a cover, no length), a path named many
    /// times (a playlist) found once, across the 500-path batches.
    @Test func tracksByPathReadEveryColumnAsTheOtherReadsDo() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        var files: [ScannedMusicFile] = []
        for number in 0..<700 {
            let title: String? = number % 3 == 0 ? nil : "T\(number)"
            let artist: String? = number % 2 == 0 ? "A" : nil
            let albumArtist: String? = number % 5 == 0 ? "AA" : nil
            let track: Int? = number % 4 == 0 ? nil : number
            let disc: Int? = number % 7 == 0 ? 2 : nil
            let date: String? = number % 6 == 0 ? "1999" : nil
            let duration: Double? = number % 9 == 0 ? nil : Double(number) + 0.25
            files.append(scannedFile(
                "F/\(number).flac", title: title, artist: artist, album: "Al", albumArtist: albumArtist, track: track,
                disc: disc, date: date, cover: number % 2 == 1, duration: duration))
        }
        files[1].audio.tags.genre = "Jazz"
        files[2].audio.codec = "mp3"
        files[2].audio.sampleRate = 48000
        files[2].audio.channels = 1
        try music.index.write(files: files)
        let expected = try music.index.files(root: "/music", under: "")
        #expect(expected.count == 700)
        // Every path three times, out of order, with one the index does not have.
        let inOrder: [String] = expected.map(\.relativePath)
        let paths: [String] = inOrder + ["F/none.flac"] + inOrder.reversed() + inOrder
        let found = try music.index.tracks(root: "/music", relativePaths: paths)
        #expect(found.count == 700)
        for track in expected { #expect(found[track.relativePath] == track) }
        // A missing music folder's files are found, marked missing.
        try music.index.setMissing(root: "/music", true)
        #expect(try music.index.tracks(root: "/music", relativePaths: ["F/1.flac"])["F/1.flac"]?.missing == true)
    }

    /// `tracks(root:distinctPaths:)` gives each path's file in the order asked, nil for a path
    /// the index does not have (or of another root), across the 500-path queries, every value as
    /// the other reads give it.
    @Test func tracksByDistinctPathsInTheOrderAsked() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        var files: [ScannedMusicFile] = []
        for number in 0..<1100 {
            files.append(scannedFile(
                "F/\(number).flac", title: number % 3 == 0 ? nil : "T\(number)", artist: "A", album: "Al", albumArtist: nil,
                track: number % 4 == 0 ? nil : number, disc: nil, date: nil, cover: number % 2 == 1,
                duration: number % 9 == 0 ? nil : Double(number)))
        }
        try music.index.write(files: files)
        let expected = try music.index.files(root: "/music", under: "")
        let byPath = Dictionary(uniqueKeysWithValues: expected.map { ($0.relativePath, $0) })
        // Reversed, with paths the index does not have among them (one in each query).
        var paths: [String] = expected.map(\.relativePath).reversed()
        paths.insert("F/none.flac", at: 0)
        paths.insert("F/other.flac", at: 700)
        let found = try music.index.tracks(root: "/music", distinctPaths: paths)
        #expect(found.count == paths.count)
        for (path, track) in zip(paths, found) { #expect(track == byPath[path]) }
        #expect(found[0] == nil && found[700] == nil)
        #expect(try music.index.tracks(root: "/other", distinctPaths: ["F/1.flac"]) == [nil])
        #expect(try music.index.tracks(root: "/music", distinctPaths: []).isEmpty)
    }

    /// `forEachTrack(root:distinctPaths:)` hands each path the index has once, with its number
    /// in the paths given and the track `tracks(root:distinctPaths:)` gives; a path it does not
    /// have (or of another root) is not handed; sought (a few paths) and scanned (most of the
    /// table) alike.
    @Test func forEachTrackHandsEachIndexedPathOnceWithItsNumber() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        try music.index.write(files: (0..<600).map { number in
            scannedFile(
                "F/\(number).flac", title: "T\(number)", artist: "A", album: "Al", albumArtist: nil, track: number,
                disc: nil, date: nil, cover: false, duration: Double(number))
        })
        let expected = try music.index.files(root: "/music", under: "")
        let byPath = Dictionary(uniqueKeysWithValues: expected.map { ($0.relativePath, $0) })
        for paths in [["F/7.flac", "F/none.flac", "F/3.flac"], ["F/none.flac"] + expected.map(\.relativePath).reversed()] {
            var handed: [Int: MusicTrack] = [:]
            try music.index.forEachTrack(root: "/music", distinctPaths: paths) { number, track in
                #expect(handed[number] == nil)
                handed[number] = track
            }
            let none = try #require(paths.firstIndex(of: "F/none.flac"))
            #expect(handed.count == paths.count - 1 && handed[none] == nil)
            for (number, track) in handed { #expect(track == byPath[paths[number]]) }
            #expect(try music.index.tracks(root: "/music", distinctPaths: paths) == paths.indices.map { handed[$0] })
        }
        var other = 0
        try music.index.forEachTrack(root: "/other", distinctPaths: ["F/1.flac"]) { _, _ in other += 1 }
        #expect(other == 0)
    }

    /// A track read column by column (`track(at:)`: a text's pointer taken as NULL or not, a
    /// number's type asked only when it reads 0) is the row's generic decode (`track(_:)`,
    /// through `files(root:under:)`) for odd values: empty texts, non-ASCII, long texts,
    /// numbers 0 (not NULL), negative numbers, NULLs; sought and scanned alike.
    @Test func aTrackReadColumnByColumnIsTheRowsGenericDecodeForOddValues() throws {
        let music = try MusicFixture()
        defer { withExtendedLifetime(music) {} }
        let long = String(repeating: "Lång tïtle ✓ ", count: 300)
        let texts: [String?] = [nil, "A", "Zoë Ünï", "\u{1F3B5} Song", long, "x"]
        var files: [ScannedMusicFile] = []
        for number in 0..<600 {
            let text = texts[number % texts.count]
            var file = scannedFile(
                "F/\(number) \(number % 7 == 0 ? "é" : "e").flac", title: text, artist: texts[(number + 1) % texts.count],
                album: texts[(number + 2) % texts.count], albumArtist: texts[(number + 3) % texts.count],
                track: [nil, 0, 1, -3, Int(Int32.max) + 1][number % 5], disc: [nil, 0, 2][number % 3],
                date: texts[(number + 4) % texts.count], cover: number % 2 == 1,
                duration: [nil, 0, 0.25, 3600.5][number % 4])
            file.audio.tags.genre = texts[(number + 5) % texts.count]
            file.audio.sampleRate = number % 11 == 0 ? 0 : 44100
            file.audio.channels = number % 13 == 0 ? 0 : 2
            file.audio.codec = number % 17 == 0 ? "" : "flac"
            file.stamp = MusicFileStamp(size: Int64(number % 3), modifiedNanoseconds: number % 5 == 0 ? 0 : 1_700_000_000_000_000_000)
            files.append(file)
        }
        try music.index.write(files: files)
        // An empty text where the writer stores NULL for one (a row written by an older Reel).
        try music.store.writing("empty texts") { db in
            try db.execute(sql: "UPDATE music_files SET title = '', date = '', genre = '' WHERE path = 'F/1 e.flac'")
        }
        let expected = try music.index.files(root: "/music", under: "")
        #expect(expected.count == 600)
        #expect(expected.contains { $0.audio.tags.title == "" } && expected.contains { $0.audio.tags.title == long })
        #expect(expected.contains { $0.audio.tags.track == 0 } && expected.contains { $0.audio.tags.track == nil })
        #expect(expected.contains { $0.audio.duration == 0 } && expected.contains { $0.audio.duration == nil })
        let byPath = Dictionary(uniqueKeysWithValues: expected.map { ($0.relativePath, $0) })
        // A few paths are sought, most of the table is scanned.
        for paths in [Array(expected.map(\.relativePath).prefix(40)), expected.map(\.relativePath).reversed()] {
            var handed = 0
            try music.index.forEachTrack(root: "/music", distinctPaths: paths) { number, track in
                #expect(track == byPath[paths[number]], "\(paths[number])")
                handed += 1
            }
            #expect(handed == paths.count)
        }
        // Both ways over every path (whole batches of 500 sought, and the rest), with the
        // columns `forEachTrack` asks for: root and path not read again (NULL in the query).
        #expect(MusicIndex.knownPathTrackColumns.hasPrefix("id, NULL, NULL, size, "))
        let paths = expected.map(\.relativePath)
        for lookup in [MusicIndex.PathLookup.seek, .scan] {
            let tracks = try music.store.reading("tracks") { db in
                var tracks: [Int: MusicTrack] = [:]
                try MusicIndex.forEachNumberedRow(
                    root: "/music", distinctPaths: paths, full: MusicIndex.fullNumberedPathsSQL,
                    columns: MusicIndex.knownPathTrackColumns, in: db, lookup: lookup
                ) { number, statement in
                    tracks[number] = MusicIndex.track(at: statement, firstColumn: 1, root: "/music", relativePath: paths[number])
                }
                return tracks
            }
            #expect(tracks.count == paths.count)
            for (number, track) in tracks where track != expected[number] { Issue.record("\(lookup): \(paths[number])") }
        }
    }

    /// Prints the p50/p99 of the MPD view's index queries over 20,000 files (500 artists × 4
    /// albums × 10 tracks), written straight to the index. Opt-in: `REEL_LIBRARY_MEASURE=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_LIBRARY_MEASURE"] == "1"))
    func measureBrowseQueriesOnTwentyThousandFiles() throws {
        let music = try MusicFixture()
        var files: [ScannedMusicFile] = []
        for artist in 0..<500 {
            for album in 0..<4 {
                for track in 1...10 {
                    files.append(scannedFile(
                        "Artist \(artist)/Album \(artist)-\(album)/\(track).flac", title: "Song \(artist)-\(album)-\(track)",
                        artist: "Artist \(artist)", album: "Album \(artist)-\(album)", track: track, date: "2001"))
                }
            }
        }
        for start in stride(from: 0, to: files.count, by: 500) {
            try music.index.write(files: Array(files[start..<min(start + 500, files.count)]))
        }
        let clock = ContinuousClock()
        func measure(_ label: String, _ body: () throws -> Int) throws {
            var samples: [Double] = []
            var count = 0
            for _ in 0..<200 {
                let start = clock.now
                count = try body()
                let elapsed = clock.now - start
                samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            }
            samples.sort()
            print("music browse: \(label): \(count) rows, p50 \(samples[100]) ms, p99 \(samples[197]) ms")
        }
        try measure("distinct albums") { try music.index.distinctValues(of: .album).count }
        try measure("distinct artists") { try music.index.distinctValues(of: .artist).count }
        try measure("search album contains 'album 12'") { try music.index.tracks(matching: [.containsFolded(.album, "album 12")]).count }
        try measure("find artist 'Artist 250'") { try music.index.tracks(matching: [.equals(.artist, "Artist 250")]).count }
        try measure("find album 'Album 250-1'") { try music.index.tracks(matching: [.equals(.album, "Album 250-1")]).count }
        try measure("search title contains 'so' (no trigram)") { try music.index.tracks(matching: [.containsFolded(.title, "so")]).count }
        try measure("folder listing") { try music.index.subfolders(root: "/music", of: "").count }
        try measure("files in an album folder") { try music.index.files(root: "/music", in: "Artist 7/Album 7-1").count }
    }
}
