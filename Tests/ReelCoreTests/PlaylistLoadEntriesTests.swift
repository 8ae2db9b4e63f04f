// A stored playlist's indexed files reach the queue as entries made from the index's rows
// (`PlaylistStore.additions(…making:)`): the same entries an add of their tracks makes.
import Foundation
import ReelLibrary
import ReelModel
import Testing

@testable import ReelCore

@Suite struct PlaylistLoadEntriesTests {
    func wait<Value: Sendable>(_ call: (@escaping @Sendable (Result<Value, ReelError>) -> Void) -> Void) throws -> Value {
        let done = Awaited<Result<Value, ReelError>>()
        call { done.put($0) }
        return try #require(done.get(timeout: 20)).get()
    }

    /// What an entry shows, without its id and position.
    static func shown(_ entry: QueueEntry) -> String {
        "\(entry.source) \(String(describing: entry.duration)) \(String(describing: entry.format)) \(entry.missing) "
            + "\(String(describing: entry.tags)) \(entry.durationEstimated)"
    }

    /// Files named again share their entry, a file the index does not have is checked as a file
    /// (and skipped when gone), and each entry is the one `queue.add` of the track makes (the
    /// title a file without tags shows is its name); a music folder that is missing skips its
    /// files, naming why, and leaves the queue as it was.
    @Test func indexedFilesAreQueuedAsAnAddOfTheirTracksQueuesThem() throws {
        let music = try WatchedMusic(startWith: ["a.wav", "Sub/b.wav"])
        let core = music.core
        try FileManager.default.createDirectory(atPath: core.playlists.directory, withIntermediateDirectories: true)
        let lines = ["a.wav", "Sub/b.wav", "a.wav", "missing.wav", "Sub/b.wav"]
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: core.playlists.directory + "/Mine.m3u", atomically: true, encoding: .utf8)
        let outcome = try wait { core.playlists.load("Mine", reply: $0) }
        #expect(outcome.skipped.map(\.position) == [3])
        let loaded = try core.player.listQueue().entries
        #expect(loaded.map(\.source) == [0, 1, 0, 1].map { .file(path: music.root + "/" + lines[$0]) })
        #expect(loaded.first?.tags?.title == "a")

        let tracks = try music.index.tracks(root: music.root, distinctPaths: ["a.wav", "Sub/b.wav"]).map { try #require($0) }
        let cleared = Awaited<QueueSummary>()
        core.player.clearQueue { cleared.put($0) }
        #expect(cleared.get(timeout: 20)?.length == 0)
        _ = try wait { core.player.add([.musicTracks([tracks[0], tracks[1], tracks[0], tracks[1]])], at: nil, afterCurrent: false, reply: $0) }
        let added = try core.player.listQueue().entries
        #expect(loaded.map(Self.shown) == added.map(Self.shown))

        _ = try music.index.setMissing(root: music.root, true)
        let version = core.player.queueChanges.latest.value.version
        let none = try wait { core.playlists.load("Mine", reply: $0) }
        #expect(none.skipped.map(\.position) == [0, 1, 2, 3, 4])
        #expect(none.skipped[0].error.message.contains("not there now"))
        #expect(core.player.queueChanges.latest.value.version == version, "nothing added")
    }

    /// A whole stored playlist loaded again, its file and the library unchanged, takes the
    /// entries made at the last load (kept with the playlist as read); any write to the library
    /// since (here its music folder marked missing, then present) makes them again.
    @Test func entriesMadeAtALoadAreKeptUntilTheLibraryIsWritten() throws {
        let music = try WatchedMusic(startWith: ["a.wav", "Sub/b.wav"])
        let core = music.core
        try FileManager.default.createDirectory(atPath: core.playlists.directory, withIntermediateDirectories: true)
        try "a.wav\nSub/b.wav\na.wav\n".write(toFile: core.playlists.directory + "/Mine.m3u", atomically: true, encoding: .utf8)
        // (A file's stamp tells a change at once: no wait for the clock to move on.)
        core.playlists.queue.sync { core.playlists.files.settle = 0 }
        func kept() -> MadeEntries? { core.playlists.queue.sync { core.playlists.lastRead?.made } }
        func load() throws -> [String] {
            _ = try wait { core.playlists.load("Mine", reply: $0) }
            return try core.player.listQueue().entries.map(Self.shown)
        }
        let first = try load()
        #expect(first.count == 3)
        let made = try #require(kept(), "kept with the playlist")
        #expect(made.entries.count == 2 && made.ofFile == [0, 1])
        #expect(made.writes == core.playlists.store.writesCommitted)
        #expect(try load().suffix(3) == first[...], "the same entries again")
        #expect(kept()?.writes == made.writes, "not made again")

        _ = try music.index.setMissing(root: music.root, true)
        let skipped = try wait { core.playlists.load("Mine", reply: $0) }
        #expect(skipped.skipped.count == 3, "made again after the write: the folder is missing")
        #expect(kept()?.writes == core.playlists.store.writesCommitted)
        _ = try music.index.setMissing(root: music.root, false)
        #expect(try load().suffix(3) == first[...])
    }
}
