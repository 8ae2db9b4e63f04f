// The MPD view of the music folders: top-level names, what a URI names, songs as MPD prints them,
// listing order, and the conditions a filter hands to the index.
import ReelLibrary
import ReelModel
import Testing

@testable import ReelDaemon

@Suite struct MPDLibraryViewTests {
    func track(_ path: String, root: String = "/home/pi/Music", tags: TrackTags = TrackTags()) -> MusicTrack {
        MusicTrack(
            id: 1, root: root, relativePath: path, size: 10, modified: 1_795_341_600.75,
            audio: ScannedAudio(
                tags: tags, codec: "flac", sampleRate: 44100, channels: 2, duration: 61.5, hasEmbeddedCover: false))
    }

    @Test func oneMusicFolderIsTheRoot() {
        let view = MPDLibraryView(recordingsDirectory: "Recordings", musicRoots: ["/home/pi/Music"])
        #expect(view.musicFolders == [MusicFolder(root: "/home/pi/Music", directory: "")])
        #expect(view.target(of: "") == .root)
        #expect(view.target(of: "Artist/Album/1.flac") == .music(root: "/home/pi/Music", path: "Artist/Album/1.flac"))
        #expect(view.target(of: "Recordings") == .folder("/"))
        #expect(view.target(of: "Recordings/Notes") == .treeItem("/Notes"))
        #expect(view.target(of: "Artist/../x") == nil)
        #expect(view.target(of: "../x") == nil)
        #expect(view.target(of: "Artist//x") == nil)
        #expect(view.musicURI(root: "/home/pi/Music", path: "A/b.flac") == "A/b.flac")
        #expect(view.musicLocation(ofFile: "/home/pi/Music/A/b.flac")! == ("/home/pi/Music", "A/b.flac"))
        #expect(view.musicLocation(ofFile: "/home/pi/Music/../secret") == nil)
        #expect(view.musicLocation(ofFile: "/home/pi/MusicOther/x.flac") == nil)
    }

    @Test func severalMusicFoldersAreADirectoryEachWithUniqueNames() {
        let view = MPDLibraryView(
            recordingsDirectory: "Recordings",
            musicRoots: ["/mnt/usb/Music", "/home/pi/Music", "/srv/Recordings", "/data/Music/"])
        #expect(view.musicFolders.map(\.directory) == ["Music", "Music (2)", "Recordings (2)", "Music (3)"])
        #expect(view.target(of: "Music (2)/A/1.flac") == .music(root: "/home/pi/Music", path: "A/1.flac"))
        #expect(view.target(of: "Music") == .music(root: "/mnt/usb/Music", path: ""))
        #expect(view.target(of: "Nothing/x.flac") == nil)
        #expect(view.musicURI(root: "/data/Music/", path: "x.flac") == "Music (3)/x.flac")
        #expect(view.musicURI(root: "/data/Music/", path: "") == "Music (3)")
    }

    @Test func aMusicFilePrintsOnlyTheTagsItHasInMPDsOrder() {
        let view = MPDLibraryView(recordingsDirectory: "Recordings", musicRoots: ["/home/pi/Music"])
        let tags = TrackTags(title: "Dawn", artist: "Alpha", album: "", track: 3, date: "2001", genre: "Rock")
        var response = MPDResponse()
        view.song(of: track("A/01 Dawn.flac", tags: tags)).write(into: &response, tags: .all)
        #expect(
            response.text == """
                file: A/01 Dawn.flac
                Last-Modified: 2026-11-22T10:00:00Z
                Format: 44100:16:2
                Artist: Alpha
                Title: Dawn
                Track: 3
                Genre: Rock
                Date: 2001
                Time: 62
                duration: 61.500

                """)
        var untagged = MPDResponse()
        view.song(of: track("B/x.flac")).write(into: &untagged, tags: .all)
        #expect(!untagged.text.contains("Title"))
        #expect(untagged.text.hasPrefix("file: B/x.flac\nLast-Modified: "))
    }

    @Test func songsListInListallOrder() {
        func song(_ uri: String) -> MPDDatabase.Song {
            MPDDatabase.Song(song: MPDSong(uri: uri), source: .music(track(uri)))
        }
        let uris = ["b/z.flac", "a.flac", "B.flac", "b/c/d.flac", "Recordings/x.flac", "b/a.flac", "c.flac"]
        let sorted = MPDDatabase.sortedForListing(uris.map(song)).map(\.song.uri)
        #expect(sorted == ["a.flac", "B.flac", "c.flac", "b/a.flac", "b/z.flac", "b/c/d.flac", "Recordings/x.flac"])
    }

    @Test func filtersHandTheIndexOnlyConditionsThatKeepEveryMatch() throws {
        func conditions(_ arguments: [String], foldCase: Bool = false) throws -> [MusicTagCondition] {
            try MPDFilter.parse(arguments, foldCase: foldCase).filter.indexConditions
        }
        #expect(try conditions(["album", "One"]) == [.equals(.album, "One")])
        #expect(try conditions(["album", "One"], foldCase: true) == [.containsFolded(.album, "one")])
        #expect(try conditions(["albumartist", "VA"]) == [.equals(.albumArtistOrArtist, "VA")])
        #expect(
            try conditions(["((Artist == 'A') AND (Genre contains 'Ro'))"])
                == [.equals(.artist, "A"), .containsFolded(.genre, "ro")])
        // Negations, regular expressions, empty values, `any`, and values the folding changes
        // (typographic marks) give none: the filter decides alone.
        #expect(try conditions(["(Artist != 'A')"]).isEmpty)
        #expect(try conditions(["(Artist =~ 'A.*')"]).isEmpty)
        #expect(try conditions(["artist", ""]).isEmpty)
        #expect(try conditions(["any", "A"]).isEmpty)
        // Only the runs of plain ASCII characters, split where folding could differ.
        #expect(
            try conditions(["title", "Don't Stop"], foldCase: true)
                == [.containsFolded(.title, "don"), .containsFolded(.title, "t stop")])
        #expect(try conditions(["title", "Café"], foldCase: true) == [.containsFolded(.title, "caf")])
        #expect(try conditions(["album", "Album 12-1"], foldCase: true) == [.containsFolded(.album, "album 12"), .containsFolded(.album, "1")])
        #expect(try conditions(["title", "e\u{301}t"], foldCase: true) == [.containsFolded(.title, "t")])
        #expect(try conditions(["title", "…"], foldCase: true).isEmpty)
        #expect(try conditions(["(!(Artist == 'A'))"]).isEmpty)
        #expect(try conditions(["track", "3"]).isEmpty)
    }

    @Test func isoTimeIsUTC() {
        #expect(isoTime(0) == "1970-01-01T00:00:00Z")
        #expect(isoTime(1_795_341_600) == "2026-11-22T10:00:00Z")
    }
}
