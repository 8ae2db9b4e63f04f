import Foundation
@testable import ReelAudio
@testable import ReelCore
import ReelModel
import Testing

/// The time spent playing (MPD's `stats` `playtime`), as a value.
@Suite struct PlayTimeTests {
    let second: UInt64 = 1_000_000_000

    @Test func onlyTheStretchesPlayingCount() {
        var counter = PlayTimeCounter()
        #expect(counter.seconds(at: 5 * second) == 0)
        counter.update(playing: false, at: 1 * second)
        #expect(counter.seconds(at: 5 * second) == 0, "stopped or paused counts nothing")
        counter.update(playing: true, at: 10 * second)
        #expect(counter.seconds(at: 12 * second) == 2, "the stretch running now counts")
        counter.update(playing: true, at: 11 * second)
        #expect(counter.seconds(at: 12 * second) == 2, "playing again while playing does not restart it")
        counter.update(playing: false, at: 13 * second)
        #expect(counter.seconds(at: 100 * second) == 3, "a pause ends the stretch")
        counter.update(playing: true, at: 200 * second)
        counter.update(playing: false, at: 201 * second)
        #expect(counter.seconds(at: 300 * second) == 4)
        // A clock reading older than the stretch's start (never on a monotonic clock) adds nothing.
        counter.update(playing: true, at: 400 * second)
        #expect(counter.seconds(at: 399 * second) == 4)
    }
}

/// The player counting the time playing, on a device that plays at the speed of the music.
extension QueuePlaybackTests {
    @Test func thePlayerCountsTheTimePlayingNotTheTimeUp() throws {
        let (core, directory) = try makeCore(output: RealTimeClock())
        defer { core.shutdown() }
        let player = core.player
        try writeWAV(directory + "/long.wav", frames: 8000 * 120)
        let entry = try add(core, .file(directory + "/long.wav")).get()[0]
        _ = try run { player.load(entry: entry.id, position: 0, playing: false, reply: $0) }.get()
        usleep(200_000)
        #expect(player.secondsPlayed == 0, "loaded paused, nothing played")

        let before = Date()
        _ = try run { player.resume(reply: $0) }.get()
        #expect(waitUntil { player.secondsPlayed >= 0.3 }, "the time playing grows while playing")
        _ = try run { player.pause(reply: $0) }.get()
        let wall = Date().timeIntervalSince(before)
        let played = player.secondsPlayed
        #expect(played >= 0.3 && played <= wall, "\(played) s played in \(wall) s")
        usleep(200_000)
        #expect(player.secondsPlayed == played, "paused, it stands still")
        _ = try run { player.stop(reply: $0) }.get()
        #expect(player.secondsPlayed == played, "stopped, it stands still")
    }
}
