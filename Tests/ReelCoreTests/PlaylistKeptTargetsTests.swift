// A stored playlist listed again takes what its music files named from the last listing while
// nothing was written to the library since (a scan's step, a folder made), and reads the index
// again after that.
import Foundation
import GRDB
import ReelLibrary
import ReelModel
import Testing

@testable import ReelCore

@Suite struct PlaylistKeptTargetsTests {
    func listing(_ music: WatchedMusic, _ name: String) throws -> PlaylistListing {
        let done = Awaited<Result<PlaylistListing, ReelError>>()
        music.core.playlists.get(name) { done.put($0) }
        return try #require(done.get(timeout: 20)).get()
    }

    func kept(_ music: WatchedMusic) -> Int? {
        music.core.playlists.queue.sync { music.core.playlists.lastRead?.musicTargets?.generation }
    }

    /// A core whose music folder holds `files`, with the stored playlist `name` of `text` (kept
    /// from its first read on: no settle time).
    func playlist(_ name: String, _ text: String, of files: [String]) throws -> WatchedMusic {
        let music = try WatchedMusic(startWith: files)
        let playlists = music.core.playlists
        playlists.queue.sync { playlists.files.settle = 0 }
        try FileManager.default.createDirectory(atPath: playlists.directory, withIntermediateDirectories: true)
        try text.write(toFile: playlists.directory + "/\(name).m3u", atomically: true, encoding: .utf8)
        return music
    }

    func durations(_ listing: PlaylistListing) -> [Double?] {
        listing.entries.map { entry in
            if case .music(let track) = entry.target { return track.audio.duration }
            return nil
        }
    }

    @Test func aListingIsKeptUntilAScanAndTheIndexIsReadAgainAfterIt() throws {
        let music = try playlist("Mix", "a.wav\nb.wav\na.wav\nlater.wav\nhttp://radio.example/live\n", of: ["a.wav", "b.wav"])
        let playlists = music.core.playlists

        let first = try listing(music, "Mix")
        #expect(durations(first) == [0.1, 0.1, 0.1, nil, nil])
        #expect(first.entries[3].target == .missing && first.entries[4].target == .url("http://radio.example/live"))
        let generation = try #require(kept(music))
        #expect(generation == playlists.indexGeneration)
        // Listed again with no scan in between: the same listing, from what was kept.
        #expect(try listing(music, "Mix") == first)
        #expect(kept(music) == generation)
        // A window is listed from the index as before, and leaves what was kept alone.
        let window = try #require(try {
            let done = Awaited<Result<PlaylistListing, ReelError>>()
            playlists.get("Mix", start: 1, count: 2) { done.put($0) }
            return try done.get(timeout: 20)?.get()
        }())
        #expect(window.entries == Array(first.entries[1...2]))
        #expect(kept(music) == generation)

        // a.wav gets longer and later.wav comes: the watcher's scan publishes, and the next
        // listing reads the index again.
        try WatchedMusic.wav(music.path("a.wav"), frames: 2400)
        try WatchedMusic.wav(music.path("later.wav"), frames: 1600)
        music.waitUntil("the watcher to index the changes") {
            try music.index.track(root: music.root, relativePath: "later.wav") != nil
                && music.index.track(root: music.root, relativePath: "a.wav")?.audio.duration == 0.3
                && !music.latest.running
        }
        let after = try listing(music, "Mix")
        #expect(durations(after) == [0.3, 0.1, 0.3, 0.2, nil])
        let newer = try #require(kept(music))
        #expect(newer > generation)
    }

    @Test func anyWriteToTheLibraryMakesTheNextListingReadTheIndexAgain() throws {
        let music = try playlist("One", "a.wav\n", of: ["a.wav"])
        let playlists = music.core.playlists
        #expect(durations(try listing(music, "One")) == [0.1])
        let generation = try #require(kept(music))
        // A write of another kind (a folder of recordings made) also counts: what was kept is
        // not taken, and the listing read again is kept at the new count.
        _ = try playlists.store.createFolder(name: "Takes")
        #expect(playlists.indexGeneration > generation)
        #expect(durations(try listing(music, "One")) == [0.1])
        #expect(kept(music) == playlists.indexGeneration)
    }

    @Test func aListingOrLoadWhoseLookupFailedIsNotKept() throws {
        let music = try playlist("One", "a.wav\n", of: ["a.wav"])
        let playlists = music.core.playlists
        // The index's table away behind the library's back (no write of the library counted):
        // the lookups fail, the file is taken as not indexed this time, and nothing is kept.
        let database = try DatabaseQueue(path: playlists.store.databasePath)
        try database.write { try $0.execute(sql: "ALTER TABLE music_files RENAME TO music_files_away") }
        let generation = playlists.indexGeneration
        #expect(try listing(music, "One").entries.map(\.target) == [.missing])
        #expect(kept(music) == nil)
        let loaded = Awaited<Result<PlaylistLoadOutcome, ReelError>>()
        playlists.load("One") { loaded.put($0) }
        _ = try #require(loaded.get(timeout: 20))
        #expect(playlists.queue.sync { playlists.lastRead?.made } == nil)
        // Back again with the library's count unchanged: read again, and found.
        try database.write { try $0.execute(sql: "ALTER TABLE music_files_away RENAME TO music_files") }
        #expect(playlists.indexGeneration == generation)
        #expect(durations(try listing(music, "One")) == [0.1])
        #expect(kept(music) == generation)
    }
}
