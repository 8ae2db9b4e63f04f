import Foundation
@testable import ReelAudio
@testable import ReelCore
import ReelModel
import Testing

/// The sleep timer and a scheduled alarm on a device that plays at the speed of the music.
extension QueuePlaybackTests {
    func sleep(_ player: PlayerController, after: Double, fadeOut: Double) -> Result<Double?, ReelError> {
        let done = Awaited<Result<Double?, ReelError>>()
        player.sleep(after: after, fadeOut: fadeOut) { done.put($0) }
        return done.get() ?? .failure(ReelError(.ioError, "no reply"))
    }

    @Test func theSleepTimerFadesOutStopsAndLeavesTheVolumeForTheNextPlay() throws {
        let (core, directory) = try makeCore(output: RealTimeClock())
        defer { core.shutdown() }
        core.start(resume: .no)
        let player = core.player
        try writeWAV(directory + "/long.wav", frames: 8000 * 120)
        _ = try run { player.play(.file(directory + "/long.wav"), reply: $0) }.get()
        let volume = Awaited<Result<MixerState, ReelError>>()
        core.mixer.setVolume(40) { volume.put($0) }
        _ = try #require(volume.get()).get()
        let at = try #require(try sleep(player, after: 3, fadeOut: 2).get())
        #expect(abs(at - (Date().timeIntervalSince1970 + 3)) < 1)
        #expect(player.state.sleepAt == at)
        #expect(player.state.state == .playing)
        #expect(waitUntil(timeout: 20) { player.state.state == .stopped && player.state.sleepAt == nil })
        #expect(core.mixer.state.volume == 40)
        _ = try run { player.play(.file(directory + "/long.wav"), reply: $0) }.get()
        #expect(player.state.state == .playing)
        #expect(waitUntil { player.engine.snapshot.activity == .playing })
    }

    @Test func aCancelledSleepTimerStopsNothing() throws {
        let (core, directory) = try makeCore(output: RealTimeClock())
        defer { core.shutdown() }
        let player = core.player
        try writeWAV(directory + "/long.wav", frames: 8000 * 120)
        _ = try run { player.play(.file(directory + "/long.wav"), reply: $0) }.get()
        _ = try sleep(player, after: 1.5, fadeOut: 1).get()
        usleep(800_000)  // the fade-out has begun
        let cancelled = Awaited<Result<Double?, ReelError>>()
        player.cancelSleep { cancelled.put($0) }
        #expect(try cancelled.get()?.get() == .some(nil))
        #expect(player.state.sleepAt == nil)
        usleep(1_500_000)
        #expect(player.state.state == .playing)
    }

    @Test func aBadSleepTimerIsAClearError() throws {
        let (core, _) = try makeCore()
        defer { core.shutdown() }
        #expect(throws: ReelError(.outOfRange, "after must be more than 0 and at most 86400 seconds, not -1.0")) {
            try sleep(core.player, after: -1, fadeOut: 0).get()
        }
        #expect(throws: ReelError(.outOfRange, "fadeOut must be from 0 to after (10.0 s), not 20.0")) {
            try sleep(core.player, after: 10, fadeOut: 20).get()
        }
        #expect(core.player.state.sleepAt == nil)
    }

    @Test func aScheduledAlarmPlaysAFileAtItsVolumeFadingInAndAStopFadesOut() throws {
        let (core, directory) = try makeCore(output: RealTimeClock())
        defer { core.shutdown() }
        core.start(resume: .no)
        try writeWAV(directory + "/alarm.wav", frames: 8000 * 120)
        let due = Int64(Date().timeIntervalSince1970) + 2
        let added = Awaited<Result<Schedule, ReelError>>()
        core.schedules.add(
            when: ScheduleCoreTests.localWhen(due),
            action: .play(SchedulePlay(target: .file(directory + "/alarm.wav"), volume: 30, fadeIn: 10, stopAfter: 3600)),
            name: "alarm", enabled: true
        ) { added.put($0) }
        _ = try #require(added.get()).get()
        #expect(waitUntil(timeout: 20) { core.schedules.schedules.first?.last != nil })
        let last = try #require(core.schedules.schedules.first?.last)
        #expect(last.result == .ok, "\(last.message)")
        #expect(last.message.contains("fading in over 10 s"))
        #expect(core.player.state.state == .playing)
        #expect(core.mixer.state.volume == 30)
        let stop = Awaited<Result<Schedule, ReelError>>()
        core.schedules.add(
            when: ScheduleCoreTests.localWhen(Int64(Date().timeIntervalSince1970) + 2), action: .stop(fadeOut: 1), name: nil, enabled: true
        ) { stop.put($0) }
        let stopID = try #require(stop.get()).get().id
        #expect(waitUntil(timeout: 20) { core.schedules.schedules.first { $0.id == stopID }?.last != nil })
        #expect(core.schedules.schedules.first { $0.id == stopID }?.last?.message == "stopped after a fade-out of 1 s")
        #expect(core.player.state.state == .stopped)
        #expect(core.mixer.state.volume == 30)
    }
}
