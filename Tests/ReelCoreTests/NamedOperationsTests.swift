// The core's named operations that front ends call instead of reaching into the library: one
// atomic add of many sources, the library's reads, the music catalog and the song query.
// No socket: the front ends only parse and encode around these.
import Foundation
import ReelLibrary
import ReelModel
import Testing

@testable import ReelCore

@Suite struct NamedOperationsTests {
    /// A started core with two playable files and two music tracks in the index (album "One"
    /// by Alpha, one of them titled "Dawn"), and one by Beta.
    final class Fixture {
        let core: ReelCore
        let directory: String
        let a: String, b: String
        let tracks: [Int64]

        init() throws {
            (core, directory) = try makeCore()
            core.start(resume: .paused)
            a = directory + "/a.wav"
            b = directory + "/b.wav"
            try writeWAV(a)
            try writeWAV(b)
            let index = MusicIndex(store: core.library.store)
            func file(_ path: String, _ tags: TrackTags) -> ScannedMusicFile {
                ScannedMusicFile(
                    root: "/music", relativePath: path, stamp: MusicFileStamp(size: 1, modifiedNanoseconds: 1_000_000_000),
                    audio: ScannedAudio(
                        tags: tags, codec: "flac", sampleRate: 44100, channels: 2, duration: 2, hasEmbeddedCover: false))
            }
            tracks = try index.write(files: [
                file("Alpha/One/01 Dawn.flac", TrackTags(title: "Dawn", artist: "Alpha", album: "One", track: 1)),
                file("Alpha/One/02 Noon.flac", TrackTags(title: "Noon", artist: "Alpha", album: "One", track: 2)),
                file("Beta/Two/01 Dusk.flac", TrackTags(title: "Dusk", artist: "Beta", album: "Two", track: 1)),
            ])
        }

        deinit {
            core.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func add(_ additions: [QueueAddition], skippable: Set<Int> = []) throws -> Result<QueueAddOutcome, ReelError> {
            let done = Awaited<Result<QueueAddOutcome, ReelError>>()
            core.player.add(additions, skippable: skippable, at: nil, afterCurrent: false) { done.put($0) }
            return try #require(done.get(timeout: 20))
        }

        func browse<Value: Sendable>(_ body: @escaping @Sendable (MusicCatalog) throws(ReelError) -> Value) throws -> Value {
            let done = Awaited<Result<Value, ReelError>>()
            core.music.browse(body) { done.put($0) }
            return try #require(done.get(timeout: 20)).get()
        }
    }

    // MARK: One add of many sources

    @Test func severalSourcesOfEveryKindAreAddedAsOneChangeOfTheQueue() throws {
        let fixture = try Fixture()
        let player = fixture.core.player
        let before = (published: player.queueChanges.latest.version, summary: player.queueSummary)
        let outcome = try fixture.add([
            .file(fixture.a), .album(name: "One", albumArtist: nil), .musicTrack(fixture.tracks[2]), .file(fixture.b),
        ]).get()
        #expect(outcome.counts == [1, 2, 1, 1])
        #expect(outcome.skipped.isEmpty)
        #expect(outcome.entries.map(\.position) == Array(0..<5))
        let after = player.queueSummary
        #expect(after.length == 5)
        #expect(after.version == before.summary.version + 1, "one add, one queue version")
        #expect(player.queueChanges.latest.version == before.published + 1, "one add, one published change")
        let paths = try player.listQueue().entries.map { entry -> String in
            guard case .file(let path) = entry.source else { return "?" }
            return path
        }
        #expect(paths == [
            fixture.a, "/music/Alpha/One/01 Dawn.flac", "/music/Alpha/One/02 Noon.flac", "/music/Beta/Two/01 Dusk.flac",
            fixture.b,
        ])
    }

    @Test func anAddOfSeveralSourcesAddsNothingWhenOneIsRefused() throws {
        let fixture = try Fixture()
        let player = fixture.core.player
        let before = (published: player.queueChanges.latest.version, summary: player.queueSummary)
        let missing = fixture.directory + "/missing.wav"
        let result = try fixture.add([.file(fixture.a), .file(missing), .file(fixture.b)])
        guard case .failure(let error) = result else {
            Issue.record("the add of a missing file succeeded: \(result)")
            return
        }
        #expect(error.reason == .notFound)
        #expect(error.message.contains(missing), "the error names the source: \(error.message)")
        #expect(player.queueSummary == before.summary)
        #expect(player.queueChanges.latest.version == before.published)
        // An unknown music track and an unknown album are refused the same way.
        #expect((try? fixture.add([.file(fixture.a), .musicTrack(9999)]).get()) == nil)
        #expect((try? fixture.add([.album(name: "Nothing", albumArtist: nil)]).get()) == nil)
        // And an empty list.
        #expect((try? fixture.add([]).get()) == nil)
        #expect(player.queueSummary == before.summary)
    }

    @Test func skippableSourcesThatDoNotPlayAreLeftOutAndNamed() throws {
        let fixture = try Fixture()
        let player = fixture.core.player
        let text = fixture.directory + "/notes.wav"
        try "not audio".write(toFile: text, atomically: true, encoding: .utf8)
        let before = player.queueSummary.version
        let outcome = try fixture.add([.file(fixture.a), .file(text), .file(fixture.b)], skippable: [1]).get()
        #expect(outcome.counts == [1, 0, 1])
        #expect(outcome.skipped.map(\.index) == [1])
        #expect(outcome.entries.count == 2)
        #expect(player.queueSummary.version == before + 1)
        // A source not marked skippable still refuses the whole add.
        #expect((try? fixture.add([.file(fixture.a), .file(text)], skippable: [0]).get()) == nil)
        #expect(player.queueSummary.length == 2)
        // Every source skipped: nothing changes, and the outcome names them all.
        let none = try fixture.add([.file(text), .file(text)], skippable: [0, 1]).get()
        #expect(none.entries.isEmpty && none.skipped.map(\.index) == [0, 1] && none.counts == [0, 0])
        #expect(player.queueSummary.version == before + 1)
    }

    // MARK: The library's reads

    @Test func aRecordingIsFoundByItsFileNameAndCountedAsMPDCountsSongs() throws {
        let fixture = try Fixture()
        let library = fixture.core.library
        let folder = try library.store.createFolder(name: "Talks")
        let recording = try library.store.addRecording(
            parent: .id(folder.id), name: "Standup", format: AudioFormat(codec: "vorbis", sampleRate: 48000, channels: 2))
        #expect(recording.fileExtension == "ogg")

        func found(_ path: String) -> Result<Item, ReelError>? {
            let done = Awaited<Result<Item, ReelError>>()
            library.recordingOrFolder(fileTreePath: path) { done.put($0) }
            return done.get()
        }
        #expect(try found("/Talks/Standup.ogg")?.get().id == recording.id)
        #expect(try found("/Talks/Standup")?.get().id == recording.id)
        #expect(try found("/Talks")?.get().id == folder.id)
        #expect(throws: ReelError.self) { try found("/Talks/Standup.flac")?.get() }
        #expect(throws: ReelError.self) { try found("/Talks.ogg")?.get() }

        let audio = Awaited<Result<(item: Item, path: String), ReelError>>()
        library.audioFile(id: folder.id) { audio.put($0) }
        guard case .failure(let error)? = audio.get() else {
            Issue.record("a folder has no audio file")
            return
        }
        #expect(error.reason == .notARecording)

        let totals = try fixture.browse { catalog throws(ReelError) in try catalog.recordingTotals() }
        #expect(totals.songs == 1 && totals.albums == ["Talks"] && totals.lastCreated == recording.created)
    }

    // MARK: The song query

    /// `(Artist == 'Alpha')` and `(Title contains_ci 'DAWN')`, built as values (no parser).
    static let alphaDawn = MusicQuery(items: [
        .tag(.named(tag: .artist, fallbacks: []), .init("Alpha", position: .full, foldCase: false, negated: false)),
        .tag(.named(tag: .title, fallbacks: []), .init("DAWN", position: .anywhere, foldCase: true, negated: false)),
    ])

    @Test func aQueryNarrowsTheIndexAndDecidesOnEachSong() throws {
        let fixture = try Fixture()
        let query = Self.alphaDawn
        #expect(query.indexConditions == [.equals(.artist, "Alpha"), .containsFolded(.title, "dawn")])
        // The index keeps the candidates the conditions allow; the query decides on each.
        let candidates = try fixture.browse { catalog throws(ReelError) in try catalog.candidates(for: query) }
        #expect(candidates.map(\.relativePath) == ["Alpha/One/01 Dawn.flac"])
        #expect(try fixture.browse { catalog throws(ReelError) in try catalog.candidates(for: .all) }.count == 3)

        let dawn = SongFields(uri: "Alpha/One/01 Dawn.flac", tags: [.artist: "Alpha", .title: "Dawn"])
        let noon = SongFields(uri: "Alpha/One/02 Noon.flac", tags: [.artist: "Alpha", .title: "Noon"])
        #expect(query.matches(dawn) && !query.matches(noon))
        #expect(MusicQuery.all.matches(noon) && MusicQuery.all.isEmpty)
    }

    @Test func aQueryFollowsMPDsRulesForMissingTagsFallbacksNegationAndBase() {
        let song = SongFields(uri: "Alpha/One/01 Dawn.flac", tags: [.artist: "Alpha", .title: "Dawn"])
        func match(_ node: MusicQuery.Node) -> Bool { MusicQuery(items: [node]).matches(song) }
        let exact = { (value: String) in MusicQuery.StringMatch(value, position: .full, foldCase: false, negated: false) }
        // A missing tag is an empty one; AlbumArtist falls back to Artist.
        #expect(match(.tag(.named(tag: .genre, fallbacks: []), exact(""))))
        #expect(match(.tag(.named(tag: .albumArtist, fallbacks: [.artist]), exact("Alpha"))))
        #expect(!match(.tag(.named(tag: .albumArtist, fallbacks: []), exact("Alpha"))))
        #expect(match(.not(.tag(.any, exact("Beta")))))
        #expect(match(.base("Alpha/One")) && match(.base("")) && !match(.base("Alpha/On")))
        #expect(!match(.modifiedSince(0)), "a song with no time is never modified since")
        // Only positive conditions at the top narrow the index; a negated one keeps everything.
        #expect(MusicQuery(items: [.not(.tag(.any, exact("Beta")))]).indexConditions.isEmpty)
        #expect(MusicQuery(items: [.base("Alpha")]).base == "Alpha")
    }
}
