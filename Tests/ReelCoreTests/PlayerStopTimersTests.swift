import Foundation
import Logging
@testable import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import ReelProtocol
import Testing

/// The sleep timer and a scheduled play's `stopAfter` across a restart: what a restart does with
/// them on a given wall clock (pure), how they are saved, and on a core restarted for real.
@Suite struct PlayerStopTimersTests {
    let now = 1_800_000_000.0

    @Test func aSleepTimerStillAheadIsArmedForWhatRemainsWithItsFadeOutCutToIt() {
        let ahead = PlayerStopTimers.restored(sleep: SavedSleep(at: now + 600, fadeOut: 30), stop: nil, current: 0, now: now)
        #expect(ahead.sleep?.after == 600 && ahead.sleep?.fadeOut == 30)
        #expect(!ahead.stopped)
        let inTheFade = PlayerStopTimers.restored(sleep: SavedSleep(at: now + 10, fadeOut: 30), stop: nil, current: 0, now: now)
        #expect(inTheFade.sleep?.after == 10 && inTheFade.sleep?.fadeOut == 10, "the fade ends at the same wall time")
        #expect(!inTheFade.stopped)
    }

    @Test func aSleepTimerThatFellDueWhileDownLeavesThePlayerStopped() {
        for at in [now - 3600, now - 0.001, now] {
            let restored = PlayerStopTimers.restored(sleep: SavedSleep(at: at, fadeOut: 30), stop: nil, current: 0, now: now)
            #expect(restored.stopped, "sleep at \(at - now) s")
            #expect(restored.sleep == nil)
        }
    }

    @Test func aStopAfterStillAheadIsArmedAndOneThatFellDueStopsOnlyItsOwnEntries() {
        let stop = SavedStop(at: now + 90, positions: [0, 1, 2])
        let ahead = PlayerStopTimers.restored(sleep: nil, stop: stop, current: 1, now: now)
        #expect(ahead.stopAfter == 90 && !ahead.stopped && ahead.sleep == nil)
        let due = SavedStop(at: now - 90, positions: [0, 1, 2])
        #expect(PlayerStopTimers.restored(sleep: nil, stop: due, current: 2, now: now).stopped)
        #expect(!PlayerStopTimers.restored(sleep: nil, stop: due, current: 3, now: now).stopped, "a user's own entry plays on")
        #expect(!PlayerStopTimers.restored(sleep: nil, stop: due, current: nil, now: now).stopped)
        #expect(PlayerStopTimers.restored(sleep: nil, stop: due, current: 0, now: now).stopAfter == nil)
    }

    @Test func noTimersChangeNothing() {
        let restored = PlayerStopTimers.restored(sleep: nil, stop: nil, current: 0, now: now)
        #expect(restored.sleep == nil && restored.stopAfter == nil && !restored.stopped)
    }

    @Test func theTimersAreSavedWithThePlayerAndDamagedOnesAreDropped() throws {
        var state = SavedPlayerState(current: 2, position: 12.5, state: .playing)
        state.sleep = SavedSleep(at: now + 1800, fadeOut: 30)
        state.stop = SavedStop(at: now + 3600, positions: [2, 3])
        let read = try SavedPlayerState(json: state.json)
        #expect(read == state)
        var none = SavedPlayerState(current: 0, position: 0, state: .paused)
        none.sleep = nil
        #expect(try SavedPlayerState(json: none.json) == none)
        // A file of a reeld before timers were saved, and damaged timers: the rest is read.
        var object = try #require(state.json.objectValue)
        object["sleep"] = ["at": "soon", "fadeOut": 3]
        object["stopAfter"] = ["at": .double(now)]
        let damaged = try SavedPlayerState(json: .object(object))
        #expect(damaged.sleep == nil && damaged.stop == nil)
        #expect(damaged.current == 2 && damaged.position == 12.5 && damaged.state == .playing)
    }
}

/// The same on a core restarted for real, on a device that plays at the speed of the music.
extension QueuePlaybackTests {
    func makeTimedCore(at directory: String) throws -> ReelCore {
        try ReelCore(
            dataDirectory: directory + "/data", output: RealTimeClock(), timing: PCMTiming(),
            input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
            mediaRoots: [], logger: Logger(label: "test"))
    }

    func wallNow() -> Double { Date().timeIntervalSince1970 }

    @Test func aSleepTimerSurvivesARestartAndStopsAtItsWallTime() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeWAV(directory + "/long.wav", frames: 8000 * 120)
        let at: Double
        do {
            let core = try makeTimedCore(at: directory)
            core.start(resume: .no)
            _ = try run { core.player.play(.file(directory + "/long.wav"), reply: $0) }.get()
            let set = Awaited<Result<Double?, ReelError>>()
            core.player.sleep(after: 6, fadeOut: 2) { set.put($0) }
            at = try #require(try set.get()?.get())
            core.shutdown()
        }
        let core = try makeTimedCore(at: directory)
        defer { core.shutdown() }
        core.start(resume: .playing)
        #expect(core.player.state.sleepAt == at, "the same wall time")
        #expect(waitUntil(timeout: 10) { core.player.state.state == .playing })
        #expect(waitUntil(timeout: 30) { core.player.state.state == .stopped })
        let stoppedAt = wallNow()
        #expect(stoppedAt >= at - 0.5, "stopped \(at - stoppedAt) s before its time")
        #expect(waitUntil { core.player.state.sleepAt == nil })
    }

    @Test func aSleepTimerThatFellDueWhileDownLeavesThePlayerStoppedAtItsEntry() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeWAV(directory + "/long.wav", frames: 8000 * 120)
        let at: Double
        let entry: Int?
        do {
            let core = try makeTimedCore(at: directory)
            core.start(resume: .no)
            entry = try run { core.player.play(.file(directory + "/long.wav"), reply: $0) }.get().entry
            let set = Awaited<Result<Double?, ReelError>>()
            core.player.sleep(after: 1, fadeOut: 0) { set.put($0) }
            at = try #require(try set.get()?.get())
            core.shutdown()
        }
        #expect(entry != nil)
        while wallNow() <= at + 0.2 { usleep(100_000) }
        let core = try makeTimedCore(at: directory)
        defer { core.shutdown() }
        core.start(resume: .playing)
        usleep(500_000)
        #expect(core.player.state.state == .stopped, "not resumed")
        #expect(core.player.state.sleepAt == nil)
        let listing = try core.player.listQueue()
        #expect(listing.entries.map { entryPath($0) } == [directory + "/long.wav"], "the queue stays")
        #expect(listing.summary.current == listing.entries.first?.id)
    }

    @Test func aScheduledStopAfterSurvivesARestartAndSparesWhatTheUserChose() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeWAV(directory + "/a.wav", frames: 8000 * 120)
        try writeWAV(directory + "/b.wav", frames: 8000 * 120)
        do {
            let core = try makeTimedCore(at: directory)
            core.start(resume: .no)
            _ = try run { core.player.play(.file(directory + "/a.wav"), reply: $0) }.get()
            core.player.stopPlaying(after: 4)
            core.shutdown()
        }
        var core = try makeTimedCore(at: directory)
        core.start(resume: .playing)
        #expect(waitUntil(timeout: 10) { core.player.state.state == .playing })
        #expect(waitUntil(timeout: 30) { core.player.state.state == .stopped }, "the alarm's stop came after the restart")
        core.shutdown()

        // A stop whose entries the user replaced: what the user plays is not stopped.
        core = try makeTimedCore(at: directory)
        defer { core.shutdown() }
        core.start(resume: .no)
        _ = try run { core.player.play(.file(directory + "/a.wav"), reply: $0) }.get()
        core.player.stopPlaying(after: 2)
        _ = try run { core.player.play(.file(directory + "/b.wav"), reply: $0) }.get()
        usleep(3_500_000)
        #expect(core.player.state.state == .playing)
    }

    @Test func aScheduledAlbumPlaysItsTracksInOrderAndStopAfterStopsItsNextTrackToo() throws {
        let (core, directory) = try makeCore(output: RealTimeClock())
        defer { core.shutdown() }
        core.start(resume: .no)
        try FileManager.default.createDirectory(atPath: directory + "/Alpha/One", withIntermediateDirectories: true)
        try writeWAV(directory + "/Alpha/One/01 Dawn.wav", frames: 8000 * 2)
        try writeWAV(directory + "/Alpha/One/02 Noon.wav", frames: 8000 * 60)
        let index = MusicIndex(store: core.library.store)
        func file(_ path: String, _ tags: TrackTags) -> ScannedMusicFile {
            ScannedMusicFile(
                root: directory, relativePath: path, stamp: MusicFileStamp(size: 1, modifiedNanoseconds: 1_000_000_000),
                audio: ScannedAudio(tags: tags, codec: "wav", sampleRate: 8000, channels: 1, duration: 2, hasEmbeddedCover: false))
        }
        _ = try index.write(files: [
            file("Alpha/One/02 Noon.wav", TrackTags(title: "Noon", artist: "Alpha", album: "One", track: 2)),
            file("Alpha/One/01 Dawn.wav", TrackTags(title: "Dawn", artist: "Alpha", album: "One", track: 1)),
        ])
        let added = Awaited<Result<Schedule, ReelError>>()
        core.schedules.add(
            when: ScheduleCoreTests.localWhen(Int64(wallNow()) + 2),
            action: .play(SchedulePlay(target: .album("One"), stopAfter: 5)), name: "album", enabled: true
        ) { added.put($0) }
        _ = try #require(added.get()).get()
        #expect(waitUntil(timeout: 20) { core.schedules.schedules.first?.last != nil })
        let last = try #require(core.schedules.schedules.first?.last)
        #expect(last.result == .ok, "\(last.message)")
        #expect(last.message == "played the album \"One\"; stops after 5 s")
        let listing = try core.player.listQueue()
        #expect(listing.entries.map { entryPath($0) } == [directory + "/Alpha/One/01 Dawn.wav", directory + "/Alpha/One/02 Noon.wav"])
        #expect(waitUntil(timeout: 10) { core.player.state.entry == listing.entries[1].id }, "on to the second track")
        #expect(waitUntil(timeout: 20) { core.player.state.state == .stopped }, "stopAfter stops the album's second track")
        #expect(core.player.state.entry == listing.entries[1].id)
    }

    @Test func aScheduledPlaylistPlaysItsEntriesInOrderLeavingOutOnesThatAreGone() throws {
        let (core, directory) = try makeCore(output: RealTimeClock())
        defer { core.shutdown() }
        core.start(resume: .no)
        try writeWAV(directory + "/a.wav", frames: 8000 * 30)
        try writeWAV(directory + "/b.wav", frames: 8000 * 30)
        let saved = Awaited<Result<PlaylistSummary, ReelError>>()
        core.playlists.add("Morning", lines: [directory + "/a.wav", directory + "/gone.wav", directory + "/b.wav"]) { saved.put($0) }
        _ = try #require(saved.get()).get()
        let added = Awaited<Result<Schedule, ReelError>>()
        core.schedules.add(
            when: ScheduleCoreTests.localWhen(Int64(wallNow()) + 2),
            action: .play(SchedulePlay(target: .playlist("Morning"))), name: "playlist", enabled: true
        ) { added.put($0) }
        _ = try #require(added.get()).get()
        #expect(waitUntil(timeout: 20) { core.schedules.schedules.first?.last != nil })
        let last = try #require(core.schedules.schedules.first?.last)
        #expect(last.result == .ok, "\(last.message)")
        #expect(last.message == "played the playlist \"Morning\"")
        let listing = try core.player.listQueue()
        #expect(listing.entries.map { entryPath($0) } == [directory + "/a.wav", directory + "/b.wav"])
        #expect(core.player.state.entry == listing.entries.first?.id)
        #expect(core.player.state.state == .playing)
        // The entry that is gone stays in the playlist.
        let kept = Awaited<Result<PlaylistListing, ReelError>>()
        core.playlists.get("Morning") { kept.put($0) }
        #expect(try #require(kept.get()).get().entries.count == 3)
    }

    @Test func aScheduledPlaylistAnUnknownAlbumOrAStationThatDoesNotAnswerIsAFailureThatSaysWhy() throws {
        let (core, _) = try makeCore()
        defer { core.shutdown() }
        core.start(resume: .no)
        let now = Int64(wallNow())
        let actions: [(String, ScheduleAction)] = [
            ("playlist", .play(SchedulePlay(target: .playlist("Morning")))), ("album", .play(SchedulePlay(target: .album("Nothing")))),
            ("station", .record(ScheduleRecord(duration: 10, source: .url("http://127.0.0.1:9/live.mp3")))),
        ]
        for (name, action) in actions {
            let added = Awaited<Result<Schedule, ReelError>>()
            core.schedules.add(when: ScheduleCoreTests.localWhen(now + 2), action: action, name: name, enabled: true) { added.put($0) }
            _ = try #require(added.get()).get()
        }
        #expect(waitUntil(timeout: 20) { core.schedules.schedules.allSatisfy { $0.last != nil } })
        let byName = Dictionary(uniqueKeysWithValues: core.schedules.schedules.map { ($0.name, $0.last) })
        #expect(byName["playlist"]??.result == .failed)
        #expect(byName["playlist"]??.reason == .notFound, "\(String(describing: byName["playlist"]))")
        #expect(byName["playlist"]??.message.contains("Morning") == true, "\(String(describing: byName["playlist"]))")
        #expect(byName["album"]??.result == .failed)
        #expect(byName["album"]??.message.contains("no album \"Nothing\"") == true, "\(String(describing: byName["album"]))")
        // Recorded as `recorder.start {source: {url}}`: the recorder's own answer (nothing answers there).
        #expect(byName["station"]??.result == .failed)
        #expect(byName["station"]??.reason == .unreachable, "\(String(describing: byName["station"]))")
        #expect(core.player.state.state == .stopped)
    }
}
