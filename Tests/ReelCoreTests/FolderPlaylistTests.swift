// Playlist files inside a music folder: their entries resolved against their own folder (pure),
// and listed and loaded by the core, where nothing outside the music folders is ever played.
import Foundation
import ReelLibrary
import ReelModel
import Testing

@testable import ReelCore

@Suite struct FolderPlaylistEntriesTests {
    let one = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: ["/m"])

    func resolve(_ entry: String, in playlist: String = "A/B/list.m3u", paths: PlaylistPaths? = nil) -> FolderPlaylistEntries.Resolved {
        FolderPlaylistEntries(paths: paths ?? one, root: paths?.musicFolders.last?.root ?? "/m", playlistPath: playlist).resolve(entry)
    }

    @Test func aRelativeEntryIsAPathFromThePlaylistsFolder() {
        #expect(resolve("01 Dawn.flac") == .init(uri: "A/B/01 Dawn.flac", location: .music(root: "/m", path: "A/B/01 Dawn.flac")))
        #expect(resolve("./Sub//x.flac") == .init(uri: "A/B/Sub/x.flac", location: .music(root: "/m", path: "A/B/Sub/x.flac")))
        #expect(resolve("../C/x.flac") == .init(uri: "A/C/x.flac", location: .music(root: "/m", path: "A/C/x.flac")))
        #expect(resolve("x.flac", in: "top.m3u") == .init(uri: "x.flac", location: .music(root: "/m", path: "x.flac")))
        // Relative to the playlist's folder, not to the music folder (as MPD).
        #expect(resolve("A/B/x.flac").uri == "A/B/A/B/x.flac")
    }

    @Test func anEntryThatClimbsOutOfTheMusicFolderNamesNothing() {
        let out = resolve("../../../etc/passwd")
        #expect(out.uri == "etc/passwd", "shown as MPD shows it, the climbing part dropped")
        guard case .invalid(let why) = out.location else { Issue.record("\(out.location)"); return }
        #expect(why.contains("climbs out of the music folder"))
        guard case .invalid = resolve("../..").location else { Issue.record("the music folder itself"); return }
    }

    @Test func absolutePathsAndURLs() {
        #expect(resolve("/m/A/x.flac") == .init(uri: "A/x.flac", location: .music(root: "/m", path: "A/x.flac")))
        #expect(resolve("file:///m/A/../C/x.flac") == .init(uri: "C/x.flac", location: .music(root: "/m", path: "C/x.flac")))
        #expect(resolve("/m/../etc/passwd") == .init(uri: "/etc/passwd", location: .file("/etc/passwd")))
        #expect(resolve("http://radio.example/s") == .init(uri: "http://radio.example/s", location: .url("http://radio.example/s")))
        #expect(resolve("HTTPS://radio.example/s").location == .url("HTTPS://radio.example/s"))
        guard case .invalid = resolve("ftp://files.example/x.flac").location else { Issue.record("ftp is not played"); return }
    }

    @Test func withSeveralMusicFoldersURIsCarryTheFoldersDirectory() {
        let two = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: ["/a/Music", "/b/Other"])
        let entries = FolderPlaylistEntries(paths: two, root: "/b/Other", playlistPath: "X/list.m3u")
        #expect(entries.resolve("y.flac") == .init(uri: "Other/X/y.flac", location: .music(root: "/b/Other", path: "X/y.flac")))
        #expect(entries.resolve("/a/Music/z.flac") == .init(uri: "Music/z.flac", location: .music(root: "/a/Music", path: "z.flac")))
        guard case .invalid = entries.resolve("../../a.flac").location else { Issue.record("climbs out of its folder"); return }
    }
}

@Suite struct FolderPlaylistTests {
    func wait<Value: Sendable>(_ call: (@escaping @Sendable (Result<Value, ReelError>) -> Void) -> Void) throws -> Result<Value, ReelError> {
        let done = Awaited<Result<Value, ReelError>>()
        call { done.put($0) }
        return try #require(done.get(timeout: 20))
    }

    /// A music folder with `a.wav`, `Sub/b.wav`, a file outside it linked in, and
    /// `Sub/list.m3u` naming them in every way.
    func makeMusic() throws -> WatchedMusic {
        let directory = NSTemporaryDirectory() + "reel-folder-playlists-\(UUID().uuidString)"
        let root = directory + "/Music"
        try WatchedMusic.wav(root + "/a.wav")
        try WatchedMusic.wav(root + "/Sub/b.wav")
        try WatchedMusic.wav(directory + "/outside.wav")
        try FileManager.default.createSymbolicLink(atPath: root + "/Sub/out.wav", withDestinationPath: directory + "/outside.wav")
        let lines = [
            "#EXTM3U", "b.wav", "../a.wav", "../../../etc/passwd", "missing.wav", "http://radio.example/x",
            "/etc/passwd", directory + "/outside.wav", "out.wav", "ftp://files.example/y.wav", "b.wav",
        ]
        try (lines.joined(separator: "\n") + "\n").write(toFile: root + "/Sub/list.m3u", atomically: true, encoding: .utf8)
        return try WatchedMusic(existing: directory)
    }

    @Test func theIndexHasThePlaylistFileAndTheCoreListsItsEntries() throws {
        let music = try makeMusic()
        #expect(try music.index.indexedPlaylists(root: music.root).keys.sorted() == ["Sub/list.m3u"])
        let listing = try wait { music.core.playlists.get("Sub/list.m3u", reply: $0) }.get()
        #expect(listing.length == 10)
        #expect(listing.entries.map(\.uri) == [
            "Sub/b.wav", "a.wav", "etc/passwd", "Sub/missing.wav", "http://radio.example/x", "/etc/passwd",
            music.directory + "/outside.wav", "Sub/out.wav", "ftp://files.example/y.wav", "Sub/b.wav",
        ])
        #expect(listing.entries.map(\.missing) == [false, false, true, true, false, true, true, true, true, false])
        guard case .music(let b) = listing.entries[0].target else { Issue.record("b.wav is a music file"); return }
        #expect(b.relativePath == "Sub/b.wav")
        let window = try wait { music.core.playlists.get("Sub/list.m3u", start: 1, count: 2, reply: $0) }.get()
        #expect(window.entries.map(\.uri) == ["a.wav", "etc/passwd"] && window.entries.map(\.position) == [1, 2])
    }

    @Test func aLoadAddsWhatIsInsideTheMusicFolderAndSkipsAndReportsTheRest() throws {
        let music = try makeMusic()
        let outcome = try wait { music.core.playlists.load("Sub/list.m3u", reply: $0) }.get()
        let queue = try music.core.player.listQueue().entries.map(\.source)
        #expect(queue == [
            .file(path: music.root + "/Sub/b.wav"), .file(path: music.root + "/a.wav"),
            .url("http://radio.example/x", name: nil, title: nil), .file(path: music.root + "/Sub/b.wav"),
        ])
        #expect(outcome.entries.count == 4)
        #expect(outcome.skipped.map(\.position) == [2, 3, 5, 6, 7, 8])
        #expect(outcome.skipped[0].error.message.contains("climbs out of the music folder"))
        #expect(outcome.skipped[2].error.message.contains("outside the music folders"))
        #expect(outcome.skipped[4].error.message.contains("Sub/out.wav"), "a link out is not in the index: skipped")

        // A range, at a position.
        _ = try wait { music.core.playlists.load("Sub/list.m3u", start: 1, end: 2, at: 0, reply: $0) }.get()
        #expect(try music.core.player.listQueue().entries.first?.source == .file(path: music.root + "/a.wav"))
    }

    @Test func aNameThatIsNoPlaylistFileOfTheMusicFolderIsNotFound() throws {
        let music = try makeMusic()
        try "x\n".write(toFile: music.root + "/Sub/notes.txt", atomically: true, encoding: .utf8)
        for name in ["Sub/none.m3u", "Sub/notes.txt", "../Music/Sub/list.m3u", "Sub/b.wav"] {
            let result = try wait { music.core.playlists.load(name, reply: $0) }
            guard case .failure(let error) = result else { Issue.record("\(name) loaded"); continue }
            #expect(error.reason == .notFound, "\(name)")
        }
        #expect(try music.core.player.listQueue().entries.isEmpty)
    }

    @Test func aPlaylistFileWrittenWhileReeldRunsIsFollowed() throws {
        let music = try makeMusic()
        try "[playlist]\nFile1=a.wav\n".write(toFile: music.root + "/new.pls", atomically: false, encoding: .utf8)
        music.waitUntil("a playlist file added") { try music.index.indexedPlaylists(root: music.root)["new.pls"] != nil }
        try FileManager.default.moveItem(atPath: music.root + "/new.pls", toPath: music.root + "/Sub/moved.pls")
        music.waitUntil("a playlist file moved") {
            try music.index.indexedPlaylists(root: music.root).keys.sorted() == ["Sub/list.m3u", "Sub/moved.pls"]
        }
        try FileManager.default.removeItem(atPath: music.root + "/Sub/list.m3u")
        music.waitUntil("a playlist file removed") {
            try music.index.indexedPlaylists(root: music.root).keys.sorted() == ["Sub/moved.pls"]
        }
        let listing = try wait { music.core.playlists.get("Sub/moved.pls", reply: $0) }.get()
        #expect(listing.entries.map(\.uri) == ["Sub/a.wav"] && listing.entries[0].missing)
    }
}
