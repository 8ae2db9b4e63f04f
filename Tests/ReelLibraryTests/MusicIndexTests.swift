// Browsing the music index: artists, albums, an album's tracks, search with paging, figures.
import Foundation
import GRDB
import ReelModel
import Testing

@testable import ReelLibrary

/// A file for `MusicIndex.write`, under the root `/music`.
func scannedFile(
    _ path: String, title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
    track: Int? = nil, disc: Int? = nil, date: String? = nil, cover: Bool = false, duration: Double? = 100,
    root: String = "/music"
) -> ScannedMusicFile {
    ScannedMusicFile(
        root: root, relativePath: path, stamp: MusicFileStamp(size: 1000, modifiedNanoseconds: 1_700_000_000_123_456_789),
        audio: ScannedAudio(
            tags: TrackTags(
                title: title, artist: artist, album: album, albumArtist: albumArtist, track: track, disc: disc,
                date: date),
            codec: "flac", sampleRate: 44100, channels: 2, duration: duration, hasEmbeddedCover: cover))
}

@Suite struct MusicIndexTests {
    @Test func albumsGroupByAlbumArtistElseArtist() throws {
        let music = try MusicFixture()
        try music.index.write(files: [
            // A compilation: one album under its AlbumArtist, whatever the track artists.
            scannedFile("Comp/1.flac", title: "A", artist: "Alpha", album: "Hits", albumArtist: "Various Artists", date: "2001"),
            scannedFile("Comp/2.flac", title: "B", artist: "Beta", album: "Hits", albumArtist: "Various Artists", date: "1999", cover: true),
            // The same album name by another artist, without AlbumArtist: another album.
            scannedFile("Alpha/Hits/1.flac", title: "C", artist: "Alpha", album: "Hits"),
            scannedFile("Alpha/Other/1.flac", title: "D", artist: "Alpha", album: "Other", duration: nil),
            // No artist at all: an album with no artist, and no artist listed.
            scannedFile("Anon/1.flac", title: "E", album: "Nameless"),
            // No album: in no album, still counted for its artist.
            scannedFile("Loose/1.flac", title: "F", artist: "Gamma"),
            // Empty tags are no tags.
            scannedFile("Empty/1.flac", title: "", artist: "", album: "", albumArtist: ""),
        ])
        #expect(try music.index.albums() == [
            MusicAlbum(name: "Hits", albumArtist: "Alpha", date: nil, trackCount: 1, duration: 100, hasCover: false),
            MusicAlbum(name: "Hits", albumArtist: "Various Artists", date: "1999", trackCount: 2, duration: 200, hasCover: true),
            MusicAlbum(name: "Nameless", albumArtist: nil, date: nil, trackCount: 1, duration: 100, hasCover: false),
            MusicAlbum(name: "Other", albumArtist: "Alpha", date: nil, trackCount: 1, duration: 0, hasCover: false),
        ])
        #expect(try music.index.albums(ofArtist: "Alpha").map(\.name) == ["Hits", "Other"])
        #expect(try music.index.albums(ofArtist: "Various Artists").map(\.trackCount) == [2])
        #expect(try music.index.albums(ofArtist: "Beta").isEmpty, "Beta is a track artist of a compilation only")
        #expect(try music.index.albums(ofArtist: "alpha").isEmpty, "the artist is matched exactly")
        #expect(try music.index.artists() == [
            MusicArtist(name: "Alpha", albumCount: 2, trackCount: 2),
            MusicArtist(name: "Gamma", albumCount: 0, trackCount: 1),
            MusicArtist(name: "Various Artists", albumCount: 1, trackCount: 2),
        ])
        #expect(try music.index.tracks(inAlbum: "Hits", albumArtist: "Various Artists").map(\.audio.tags.title) == ["A", "B"])
        #expect(try music.index.tracks(inAlbum: "Nameless", albumArtist: nil).map(\.relativePath) == ["Anon/1.flac"])
        let empty = try #require(try music.index.track(root: "/music", relativePath: "Empty/1.flac"))
        #expect(empty.audio.tags == TrackTags())
        #expect(empty.displayTitle == "1")
        #expect(try music.index.stats() == MusicStats(artists: 3, albums: 3, songs: 7, totalDuration: 600))
    }

    @Test func aBatchLargerThanOneStatementReturnsEachFilesIdInOrder() throws {
        let music = try MusicFixture()
        // 250 files: three upsert statements (100, 100, 50 rows), two of them music folders.
        let first = (0..<250).map { n in
            scannedFile("A/\(n).flac", title: "Song \(n)", artist: "Artist \(n % 7)", album: "Album \(n % 20)",
                        root: n % 2 == 0 ? "/music" : "/other")
        }
        let ids = try music.index.write(files: first)
        #expect(ids.count == 250)
        #expect(Set(ids).count == 250)
        for (file, id) in zip(first, ids) {
            #expect(try music.index.track(root: file.root, relativePath: file.relativePath)?.id == id)
        }
        // Again, mixed: files already there (updated in place, same id), new files, and a move
        // of an indexed file onto a new path under its old id.
        var again = (0..<150).map { n in
            scannedFile("A/\(n * 2).flac", title: "Renamed \(n)", artist: "Other", album: "Album \(n % 20)")
        }
        again += (0..<60).map { n in scannedFile("B/\(n).flac", title: "New \(n)", artist: "New", album: "Fresh") }
        var moved = scannedFile("C/moved.flac", title: "Song 1", artist: "Artist 1", album: "Album 1", root: "/other")
        moved.replacing = ids[1]
        again.insert(moved, at: 70)
        let ids2 = try music.index.write(files: again)
        #expect(ids2.count == again.count)
        for (file, id) in zip(again, ids2) {
            let track = try #require(try music.index.track(root: file.root, relativePath: file.relativePath))
            #expect(track.id == id)
            #expect(track.audio.tags.title == file.audio.tags.title)
        }
        #expect(ids2[70] == ids[1], "the moved file keeps its id")
        #expect(Array(ids2[0..<70]) == (0..<70).map { ids[$0 * 2] }, "updated in place: the same ids")
        #expect(try music.index.track(root: "/other", relativePath: "A/1.flac") == nil)
        #expect(try music.index.search(text: "renamed", limit: 500).tracks.count == 150)
        #expect(try music.index.search(text: "new ", limit: 500).tracks.count == 60)
        #expect(try music.index.stats().songs == 335, "250, then 25 + 60 new; the move adds none")
    }

    @Test func anAlbumsTracksComeInDiscThenTrackOrder() throws {
        let music = try MusicFixture()
        try music.index.write(files: [
            scannedFile("x/d2t1.flac", title: "2-1", artist: "A", album: "Box", track: 1, disc: 2),
            scannedFile("x/d1t10.flac", title: "1-10", artist: "A", album: "Box", track: 10, disc: 1),
            scannedFile("x/d1t2.flac", title: "1-2", artist: "A", album: "Box", track: 2, disc: 1),
            scannedFile("x/none-b.flac", title: "no number b", artist: "A", album: "Box"),
            scannedFile("x/none-a.flac", title: "no number a", artist: "A", album: "Box"),
            scannedFile("x/t1.flac", title: "1 (no disc)", artist: "A", album: "Box", track: 1),
            scannedFile("x/d3t1.flac", title: "3-1", artist: "A", album: "Box", track: 1, disc: 3),
            scannedFile("y/other.flac", title: "elsewhere", artist: "B", album: "Box", track: 1),
        ])
        #expect(try music.index.tracks(inAlbum: "Box", albumArtist: "A").map(\.audio.tags.title) == [
            "1 (no disc)", "1-2", "1-10", "no number a", "no number b", "2-1", "3-1",
        ])
        #expect(try music.index.tracks(inAlbum: "box", albumArtist: "A").isEmpty, "the album is matched exactly")
    }

    @Test func artistsAndAlbumsAreOrderedCaseInsensitively() throws {
        let music = try MusicFixture()
        try music.index.write(files: [
            scannedFile("1.flac", artist: "beatles", album: "abbey road"),
            scannedFile("2.flac", artist: "ABBA", album: "Arrival"),
            scannedFile("3.flac", artist: "Cure", album: "Disintegration"),
            scannedFile("4.flac", artist: "abba", album: "arrival"),
            scannedFile("5.flac", artist: "Ärzte", album: "Bäst"),
            scannedFile("6.flac", artist: "Beatles", album: "Abbey Road"),
        ])
        // Case-insensitive first, then exact text: total and stable.
        #expect(try music.index.artists().map(\.name) == ["ABBA", "abba", "Beatles", "beatles", "Cure", "Ärzte"])
        #expect(try music.index.albums().map(\.name) == [
            "Abbey Road", "abbey road", "Arrival", "arrival", "Bäst", "Disintegration",
        ])
    }

    @Test func searchFindsTitlesArtistsAndAlbumsPageByPage() throws {
        let music = try MusicFixture()
        var files: [ScannedMusicFile] = []
        for n in 0..<7 { files.append(scannedFile("love/\(n).flac", title: "Love Song \(n)", artist: "X", album: "Y")) }
        files.append(scannedFile("a/1.flac", title: "Nothing", artist: "Lovelace", album: "Z"))
        files.append(scannedFile("a/2.flac", title: "Nothing", artist: "Q", album: "Glove Box"))
        files.append(scannedFile("a/3.flac", title: "Unrelated", artist: "Q", album: "Z"))
        files.append(scannedFile("untagged/lovely day.flac"))
        try music.index.write(files: files)

        var seen: [Int64] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try music.index.search(text: "LOVE", limit: 3, cursor: cursor)
            #expect(page.tracks.count <= 3)
            seen += page.tracks.map(\.id)
            cursor = page.nextCursor
            pages += 1
        } while cursor != nil
        #expect(pages == 4)
        #expect(seen.count == 10 && Set(seen).count == 10)
        // By artist (Lovelace, Q, X; the untagged file last), then album and path.
        let titles = try seen.map { try music.index.track(id: $0).displayTitle }
        #expect(titles == ["Nothing", "Nothing"] + (0..<7).map { "Love Song \($0)" } + ["lovely day"])
        #expect(!seen.contains(try #require(try music.index.track(root: "/music", relativePath: "a/3.flac")).id))

        // A text under three code points scans; same rule, same paging.
        let short = try music.index.search(text: "ov", limit: 4)
        #expect(short.tracks.count == 4 && short.nextCursor != nil)
        let rest = try music.index.search(text: "ov", limit: 50, cursor: short.nextCursor)
        #expect(rest.tracks.count == 6 && rest.nextCursor == nil)

        expectReason(.outOfRange) { try music.index.search(text: "love", cursor: short.nextCursor) }
        expectReason(.outOfRange) { try music.index.search(text: "love", cursor: "garbage") }
        expectReason(.outOfRange) { try music.index.search(text: "love", limit: 0) }
        // A cursor of the tree's search is not one of music search.
        let treeCursor = SearchCursor.encode(after: 1, query: "love")
        expectReason(.outOfRange) { try music.index.search(text: "love", cursor: treeCursor) }
        #expect(try music.index.search(text: "\"quoted\" * (").tracks.isEmpty)
    }

    @Test func searchResultsComeByArtistAlbumDiscAndTrackNotByWhenTheyWereIndexed() throws {
        let music = try MusicFixture()
        // Written (so numbered) in an order that is none of the expected one.
        try music.index.write(files: [
            scannedFile("n/03 Small Hours.flac", title: "Small Hours", artist: "Night", album: "Small Hours", track: 3),
            scannedFile("loose hours.flac", title: "Loose hours"),
            scannedFile("n/01 Dusk.flac", title: "Dusk", artist: "Night", album: "Small Hours", track: 1),
            scannedFile("b/2-1.flac", title: "Hours Two", artist: "band", album: "Box", track: 1, disc: 2),
            scannedFile("n/02 Midnight.flac", title: "Midnight", artist: "Night", album: "Small Hours", track: 2),
            scannedFile("b/no-number.flac", title: "Hours Unnumbered", artist: "band", album: "Box"),
            scannedFile("b/1-9.flac", title: "Hours Nine", artist: "band", album: "Box", track: 9),
            scannedFile("a/x.flac", title: "Hours", artist: "Night", album: "After Hours", albumArtist: "Another"),
            scannedFile("b/other.flac", title: "Hours Other", artist: "Band", album: "Box", track: 1),
        ])
        let expected = [
            "Hours",  // AlbumArtist "Another" before "band"
            "Hours Other",  // "Band" before "band": case-insensitive, then exact (as music.artists)
            "Hours Nine", "Hours Unnumbered", "Hours Two",  // disc 1 (none is 1): numbered, unnumbered; then disc 2
            "Dusk", "Midnight", "Small Hours",  // track order
            "Loose hours",  // no artist: last
        ]
        #expect(try music.index.search(text: "hours").tracks.map(\.displayTitle) == expected)
        // The scan of a short text has the same order; so does paging one track at a time,
        // through every step of the order.
        #expect(try music.index.search(text: "h").tracks.map(\.displayTitle) == expected)
        for text in ["hours", "h"] {
            var names: [String] = []
            var cursor: String?
            repeat {
                let page = try music.index.search(text: text, limit: 1, cursor: cursor)
                names += page.tracks.map(\.displayTitle)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(names == expected, "\(text)")
        }
    }

    @Test func searchPagesKeepTheirPlaceWhileFilesChange() throws {
        let music = try MusicFixture()
        let ids = try music.index.write(files: (1...4).map { (n: Int) in
            scannedFile("t\(n).flac", title: "Tune \(n)", artist: "A", album: "B", track: n)
        })
        let first = try music.index.search(text: "tune", limit: 2)
        #expect(first.tracks.map(\.displayTitle) == ["Tune 1", "Tune 2"])
        // Meanwhile: the page's last file is removed, one is added before the cursor and one
        // after it, and one already returned is retagged to sort after the cursor.
        #expect(try music.index.remove(ids: [ids[1]]) == 1)
        try music.index.write(files: [
            scannedFile("t0.flac", title: "Tune 0", artist: "A", album: "B", track: 0),
            scannedFile("t5.flac", title: "Tune 5", artist: "A", album: "B", track: 5),
            scannedFile("t1.flac", title: "Tune 1 again", artist: "A", album: "B", track: 6),
        ])
        let second = try music.index.search(text: "tune", limit: 10, cursor: first.nextCursor)
        #expect(second.tracks.map(\.displayTitle) == ["Tune 3", "Tune 4", "Tune 5", "Tune 1 again"])
        #expect(second.nextCursor == nil)
    }

    @Test func aMusicSearchCursorIsCheckedBeforeItIsUsed() throws {
        let music = try MusicFixture()
        try music.index.write(files: (1...3).map { scannedFile("\($0).flac", title: "Song \($0)") })
        let page = try music.index.search(text: "song", limit: 1)
        let cursor = try #require(page.nextCursor)
        #expect(try MusicSearchCursor.decode(cursor, query: "music:song").path == "1.flac")
        let garbled = [
            "", "bTE6eDpbXQ", Data("m1:\(SearchCursor.fingerprint("music:song")):[1,2]".utf8).base64EncodedString(),
            Data("m1:\(SearchCursor.fingerprint("music:song")):[0,\"\",\"\",\"\",\"\",1,1.5,\"p\",1]".utf8).base64EncodedString(),
            Data("m1:\(SearchCursor.fingerprint("music:song")):[0,\"\",\"\",\"\",\"\",1,1,\"p\",1,2]".utf8).base64EncodedString(),
        ]
        for bad in garbled {
            expectReason(.outOfRange) { try music.index.search(text: "song", cursor: bad) }
        }
        expectReason(.outOfRange) { try music.index.search(text: "other", cursor: cursor) }
    }

    @Test func theTrigramIndexFollowsWritesMovesAndRemovals() throws {
        let music = try MusicFixture()
        let ids = try music.index.write(files: [
            scannedFile("a.flac", title: "Alpha"), scannedFile("b.flac", title: "Bravo"),
        ])
        // Rewritten in place with another title.
        try music.index.write(files: [scannedFile("a.flac", title: "Charlie")])
        // Moved onto a new path, keeping its id.
        var moved = scannedFile("c/b.flac", title: "Bravo")
        moved.replacing = ids[1]
        #expect(try music.index.write(files: [moved]) == [ids[1]])
        #expect(try music.index.search(text: "alpha").tracks.isEmpty)
        #expect(try music.index.search(text: "charlie").tracks.map(\.id) == [ids[0]])
        #expect(try music.index.search(text: "bravo").tracks.map(\.relativePath) == ["c/b.flac"])
        #expect(try music.index.remove(ids: [ids[0]]) == 1)
        #expect(try music.index.search(text: "charlie").tracks.isEmpty)
        try music.store.pool.write { db in
            try db.execute(sql: "INSERT INTO music_fts (music_fts, rank) VALUES ('integrity-check', 1)")
        }
    }

    @Test func theSchemaMigratesALibraryFromBeforeV3() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("library.sqlite")
        let queue = try DatabaseQueue(path: path)
        try LibrarySchema.migrator().migrate(queue, upTo: "v2")
        try queue.close()
        let store = try LibraryStore(directory: directory.path)
        try MusicIndex(store: store).write(files: [scannedFile("a.flac", title: "After the upgrade")])
        #expect(try MusicIndex(store: store).search(text: "upgrade").tracks.count == 1)
        #expect(try store.list().items.isEmpty)
    }
}

/// `music_albums` must always equal the grouping of the present files it stands for.
func expectAlbumTableMatchesFiles(_ store: LibraryStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try store.pool.read { db in
        let kept = try Row.fetchAll(
            db,
            sql: """
                SELECT album_key, artist_key, album, group_artist, album_fold, group_fold, tracks, duration_ms, covers, date
                FROM music_albums ORDER BY album_key, artist_key
                """)
        let computed = try Row.fetchAll(
            db,
            sql: """
                SELECT coalesce(album, ''), coalesce(group_artist, ''), album, group_artist, album_fold, group_fold,
                       count(*), sum(CAST(round(coalesce(duration, 0) * 1000) AS INTEGER)), sum(has_cover), min(date)
                FROM music_files WHERE missing = 0
                GROUP BY coalesce(album, ''), coalesce(group_artist, '') ORDER BY 1, 2
                """)
        #expect(kept.map { Array($0.databaseValues) } == computed.map { Array($0.databaseValues) }, sourceLocation: sourceLocation)
    }
}

extension MusicIndexTests {
    @Test func theAlbumTableFollowsEveryKindOfWrite() throws {
        let music = try MusicFixture()
        let index = music.index
        let ids = try index.write(files: [
            scannedFile("1.flac", artist: "A", album: "X", date: "2003", cover: true, duration: 10.5),
            scannedFile("2.flac", artist: "A", album: "X", date: "2001", duration: 20.25),
            scannedFile("3.flac", artist: "B", album: "X", albumArtist: "A", date: "2002"),
            scannedFile("4.flac", artist: "A"),
            scannedFile("5.flac"),
            scannedFile("6.flac", artist: "C", album: "Y", duration: nil, root: "/usb"),
        ])
        try expectAlbumTableMatchesFiles(music.store)
        #expect(try index.albums().first == MusicAlbum(
            name: "X", albumArtist: "A", date: "2001", trackCount: 3, duration: 130.75, hasCover: true))
        // Retagged: the earliest date goes, the file changes album.
        try index.write(files: [scannedFile("2.flac", artist: "A", album: "Z", date: "2010")])
        try expectAlbumTableMatchesFiles(music.store)
        #expect(try index.albums().first?.date == "2002")
        // Moved, keeping its id.
        var moved = scannedFile("sub/1.flac", artist: "A", album: "X", date: "2003", cover: false, duration: 10.5)
        moved.replacing = ids[0]
        try index.write(files: [moved])
        try expectAlbumTableMatchesFiles(music.store)
        // A folder missing, and back.
        try index.setMissing(root: "/usb", true)
        try expectAlbumTableMatchesFiles(music.store)
        #expect(try !index.albums().contains { $0.name == "Y" })
        try index.setMissing(root: "/usb", false)
        try expectAlbumTableMatchesFiles(music.store)
        // Removed, one by one and a whole folder.
        try index.remove(ids: [ids[2], ids[4]])
        try expectAlbumTableMatchesFiles(music.store)
        try index.removeRoots(notIn: ["/music"])
        try expectAlbumTableMatchesFiles(music.store)
        #expect(try index.stats() == MusicStats(artists: 1, albums: 2, songs: 3, totalDuration: 10.5 + 100 + 100))
        try index.remove(ids: ids)
        try expectAlbumTableMatchesFiles(music.store)
        #expect(try index.albums().isEmpty && index.artists().isEmpty)
        #expect(try index.stats() == MusicStats(artists: 0, albums: 0, songs: 0, totalDuration: 0))
    }
}

extension MusicIndexTests {
    @Test func aFileOrFolderMovedAsAWatcherSeesItKeepsItsIds() throws {
        let music = try MusicFixture()
        let index = music.index
        let ids = try index.write(files: [
            scannedFile("Inbox/Album/1.flac", title: "One", artist: "A", album: "Al"),
            scannedFile("Inbox/Album/2.flac", title: "Two", artist: "A", album: "Al"),
            scannedFile("Inbox/Albumen.flac", title: "Not inside the folder"),
            scannedFile("Inbox/untitled take.flac"),
            scannedFile("A/Al/1.flac", title: "Replaced by the move"),
        ])
        // A folder: every file under it, nothing that only shares the prefix.
        #expect(try index.move(root: "/music", from: "Inbox/Album", to: "A/Al") == 2)
        #expect(try index.tracks(inAlbum: "Al", albumArtist: "A").map(\.id) == [ids[0], ids[1]])
        #expect(try index.tracks(inAlbum: "Al", albumArtist: "A").map(\.relativePath) == ["A/Al/1.flac", "A/Al/2.flac"])
        #expect(try index.track(root: "/music", relativePath: "Inbox/Albumen.flac")?.id == ids[2])
        expectReason(.notFound) { try index.track(id: ids[4]) }
        // A file, to another music folder; an untagged file is found by its new name.
        #expect(try index.move(root: "/music", from: "Inbox/untitled take.flac", toRoot: "/usb", to: "best take.flac") == 1)
        let moved = try index.track(id: ids[3])
        #expect(moved.root == "/usb" && moved.relativePath == "best take.flac" && moved.displayTitle == "best take")
        #expect(try index.search(text: "best take").tracks.map(\.id) == [ids[3]])
        #expect(try index.search(text: "untitled").tracks.isEmpty)
        #expect(try index.move(root: "/music", from: "nothing", to: "else") == 0)
        try expectAlbumTableMatchesFiles(music.store)
        try music.store.pool.write { db in
            try db.execute(sql: "INSERT INTO music_fts (music_fts, rank) VALUES ('integrity-check', 1)")
        }
    }
}
