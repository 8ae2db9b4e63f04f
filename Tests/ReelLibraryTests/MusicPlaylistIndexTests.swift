// Playlist files of the music folders in the index: found by a scan, kept current by rescans,
// partial updates and moves, hidden with a missing folder, never reached through a link out.
import Foundation
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicPlaylistIndexTests {
    @Test func aScanRecordsPlaylistFilesBesideTheAudioFilesAndOnlyThose() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Air/Moon Safari/01.flac", title: "One")
        tree.write("Air/Moon Safari/list.m3u", "01.flac\n")
        tree.write("Air/mix.M3U8", "Moon Safari/01.flac\n")
        tree.write("Only Lists/radio.PLS", "[playlist]\nFile1=http://radio.example/\n")
        tree.write("top.m3u", "Air/Moon Safari/01.flac\n")
        tree.write("Air/notes.txt", "not a playlist")
        tree.write("Air/list.xspf", "<playlist/>")
        tree.write("Air/.hidden.m3u", "01.flac\n")
        tree.write(".stash/secret.m3u", "01.flac\n")
        tree.setModified("top.m3u", 1_600_000_000)

        let outcome = try music.scan([tree.root])
        #expect(outcome.progress.playlists == 4)
        #expect(outcome.progress.seen == 1 && outcome.progress.indexed == 1, "playlist files are not audio files")
        #expect(outcome.progress.changedIndex)
        #expect(try music.index.indexedPlaylists(root: tree.root).keys.sorted() == [
            "Air/Moon Safari/list.m3u", "Air/mix.M3U8", "Only Lists/radio.PLS", "top.m3u",
        ])
        #expect(try music.index.playlists(root: tree.root, in: "").map(\.relativePath) == ["top.m3u"])
        #expect(try music.index.playlists(root: tree.root, in: "Air").map(\.relativePath) == ["Air/mix.M3U8"])
        #expect(try music.index.playlists(root: tree.root, under: "Air").map(\.relativePath) == [
            "Air/Moon Safari/list.m3u", "Air/mix.M3U8",
        ])
        let top = try #require(try music.index.playlist(root: tree.root, relativePath: "top.m3u"))
        #expect(top.modified == 1_600_000_000 && top.size == 24 && !top.missing)
        #expect(top.path == tree.root + "/top.m3u")
        #expect(try music.index.playlist(root: tree.root, relativePath: "Air/notes.txt") == nil)
        // A folder holding only a playlist file is a folder of the music folder.
        #expect(try music.index.subfolders(root: tree.root, of: "").map(\.name) == ["Air", "Only Lists"])
        #expect(try music.index.hasFolder(root: tree.root, "Only Lists"))
        #expect(try music.index.files(root: tree.root, under: "").count == 1, "playlist files are not tracks")
    }

    @Test func rescansKeepPlaylistFilesCurrent() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("a.flac", title: "A")
        tree.write("A/one.m3u", "../a.flac\n")
        tree.write("A/two.pls", "[playlist]\nFile1=../a.flac\n")
        try music.scan([tree.root])

        let unchanged = try music.scan([tree.root])
        #expect(unchanged.progress.playlists == 0 && !unchanged.progress.changedIndex)

        tree.write("A/one.m3u", "../a.flac\n../a.flac\n")
        tree.setModified("A/one.m3u", 1_700_000_000)
        tree.remove("A/two.pls")
        tree.write("B/three.m3u8", "x.flac\n")
        let changed = try music.scan([tree.root])
        #expect(changed.progress.playlists == 3, "one changed, one gone, one new")
        #expect(changed.progress.changedIndex)
        #expect(try music.index.indexedPlaylists(root: tree.root) == [
            "A/one.m3u": MusicFileStamp(size: 20, modifiedNanoseconds: 1_700_000_000_000_000_000),
            "B/three.m3u8": try #require(music.index.indexedPlaylists(root: tree.root)["B/three.m3u8"]),
        ])
        #expect(try music.index.playlists(root: tree.root, under: "").map(\.relativePath) == ["A/one.m3u", "B/three.m3u8"])
    }

    @Test func aPartialUpdateAddsAndDropsPlaylistFilesUnderItsPathsOnly() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.write("A/one.m3u", "x.flac\n")
        tree.write("B/two.m3u", "x.flac\n")
        try music.scan([tree.root])
        tree.remove("A/one.m3u")
        tree.remove("B/two.m3u")
        tree.write("A/new.pls", "[playlist]\nFile1=x.flac\n")
        let outcome = try music.scanner([tree.root]).update([MusicPath(root: tree.root, relativePath: "A")])
        #expect(outcome.progress.playlists == 2)
        #expect(try music.index.indexedPlaylists(root: tree.root).keys.sorted() == ["A/new.pls", "B/two.m3u"],
                "B was not among the paths: its row stays until B is looked at")
        try music.scanner([tree.root]).update([MusicPath(root: tree.root, relativePath: "B/two.m3u")])
        #expect(try music.index.indexedPlaylists(root: tree.root).keys.sorted() == ["A/new.pls"])
    }

    @Test func playlistFilesOfAMissingFolderAreHiddenAndComeBackWithIt() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("a.flac", title: "A")
        tree.write("list.m3u", "a.flac\n")
        try music.scan([tree.root])
        try music.index.setMissing(root: tree.root, true, reason: "unplugged")
        #expect(try music.index.playlists(root: tree.root, in: "").isEmpty)
        #expect(try music.index.playlist(root: tree.root, relativePath: "list.m3u")?.missing == true)
        try music.index.setMissing(root: tree.root, false)
        #expect(try music.index.playlists(root: tree.root, in: "").map(\.relativePath) == ["list.m3u"])
        try music.index.removeRoots(notIn: [])
        #expect(try music.index.indexedPlaylists(root: tree.root).isEmpty)
    }

    @Test func aMovedFolderTakesItsPlaylistFilesAlong() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Old/a.flac", title: "A")
        tree.write("Old/list.m3u", "a.flac\n")
        tree.write("Old/Sub/more.pls", "[playlist]\nFile1=../a.flac\n")
        tree.write("single.m3u", "Old/a.flac\n")
        try music.scan([tree.root])
        #expect(try music.index.move(root: tree.root, from: "Old", to: "New") == 3)
        #expect(try music.index.move(root: tree.root, from: "single.m3u", to: "renamed.m3u") == 1)
        #expect(try music.index.indexedPlaylists(root: tree.root).keys.sorted() == [
            "New/Sub/more.pls", "New/list.m3u", "renamed.m3u",
        ])
    }

    @Test func aLinkToAPlaylistFileOutsideTheMusicFolderIsNotRecorded() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        let outside = music.tree("Elsewhere")
        outside.write("secret.m3u", "/etc/passwd\n")
        tree.write("Real/list.m3u", "x.flac\n")
        tree.link("out.m3u", to: outside.path("secret.m3u"))
        tree.link("Linked/in.m3u", to: tree.path("Real/list.m3u"))
        try music.scan([tree.root])
        #expect(try music.index.indexedPlaylists(root: tree.root).keys.sorted() == ["Real/list.m3u"],
                "a link out is not followed; a link to a file already found is not recorded twice")
    }
}

@Suite struct MusicPlaylistBranchTests {
    @Test func theBranchListsPlaylistFilesAsPlaylistItemsAfterTheTracks() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Album/b.flac", title: "B")
        tree.add("Album/a.flac", title: "A")
        tree.write("Album/side.m3u", "a.flac\n")
        tree.write("Album/Another.PLS", "[playlist]\nFile1=b.flac\n")
        tree.setModified("Album/side.m3u", 1_600_000_000)
        try music.scan([tree.root])
        music.store.showMusicFolders([tree.root])

        let listing = try music.store.list(folder: .path("/Music/Album"))
        #expect(listing.items.map(\.name) == ["a.flac", "b.flac", "Another.PLS", "side.m3u"])
        #expect(listing.items.map(\.kind) == [.track, .track, .playlist, .playlist])
        let side = try music.store.item(.path("/Music/Album/side.m3u"))
        #expect(side == Item(
            id: "music:/Album/side.m3u", kind: .playlist, name: "side.m3u", parent: "music:/Album",
            path: "/Music/Album/side.m3u", created: "2020-09-13T12:26:40Z", size: 7, readOnly: true,
            file: tree.root + "/Album/side.m3u"))
        #expect(try music.store.item(.id("music:/Album/side.m3u")) == side)
        #expect(throws: ReelError.self) { try music.store.list(folder: .path("/Music/Album/side.m3u")) }
        #expect(throws: ReelError.self) { try music.store.item(.path("/Music/Album/none.m3u")) }
    }
}
