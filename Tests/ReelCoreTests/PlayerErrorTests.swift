import Foundation
@testable import ReelAudio
@testable import ReelCore
import ReelModel
import Testing

/// The player's error (why playback last paused or stopped on its own, or why an entry was
/// skipped): it stays in the state until a command clears it, as MPD's does (`clearerror`, a
/// play, a seek). Uses `QueuePlaybackTests`' helpers; an error is made by turning every output
/// off while paused and resuming (nothing is playing when the output goes, so nothing races).
extension QueuePlaybackTests {
    func switchOutput(_ core: ReelCore, _ id: Int, on: Bool) -> Result<[OutputState], ReelError> {
        let done = Awaited<Result<[OutputState], ReelError>>()
        if on { core.outputs.enable(id) { done.put($0) } } else { core.outputs.disable(id) { done.put($0) } }
        return done.get() ?? .failure(ReelError(.ioError, "no reply"))
    }

    /// A core paused on a file, with every output off and the error of the resume that failed.
    func pausedWithAnError() throws -> (ReelCore, PlayerState) {
        let (core, directory) = try makeCore()
        let path = try files(directory, count: 1)[0]
        let entry = try add(core, .file(path)).get()[0]
        _ = try run { core.player.load(entry: entry.id, position: 0, playing: false, reply: $0) }.get()
        _ = try switchOutput(core, 0, on: false).get()
        guard case .failure(let failure) = run({ core.player.resume(reply: $0) }) else {
            Issue.record("resumed with every output off")
            return (core, core.player.state)
        }
        let state = core.player.state
        #expect(state.state == .paused)
        #expect(state.error == failure, "the state carries the failure: \(state)")
        return (core, state)
    }

    @Test func clearErrorTakesTheErrorAwayAndPublishesOnce() throws {
        let (core, failed) = try pausedWithAnError()
        defer { core.shutdown() }
        #expect(failed.error != nil)
        #expect(core.player.changes.latest.value.error == failed.error, "the stream shows the error")
        let before = core.player.changes.latest.version

        let cleared = try run { core.player.clearError(reply: $0) }.get()
        #expect(cleared.error == nil)
        #expect(cleared.state == .paused && cleared.entry == failed.entry, "nothing else changes: \(cleared)")
        #expect(core.player.state.error == nil)
        #expect(core.player.changes.latest.value == cleared, "the reply is the state published")
        #expect(core.player.changes.latest.version == before + 1, "published once")

        // With no error, nothing to publish; it still succeeds.
        let again = try run { core.player.clearError(reply: $0) }.get()
        #expect(again.error == nil)
        #expect(core.player.changes.latest.version == before + 1)
    }

    @Test func aSeekClearsTheErrorAsMPDsDoes() throws {
        let (core, failed) = try pausedWithAnError()
        defer { core.shutdown() }
        #expect(failed.error != nil)
        let sought = try run { core.player.seek(.absolute(0.02), reply: $0) }.get()
        #expect(sought.error == nil && sought.state == .paused)
        #expect(core.player.changes.latest.value.error == nil)
    }

    @Test func theErrorStaysUntilCleared() throws {
        let (core, failed) = try pausedWithAnError()
        defer { core.shutdown() }
        // The cause goes (the output is back): the error is still what happened.
        _ = try switchOutput(core, 0, on: true).get()
        #expect(core.player.state.error == failed.error)
        _ = core.player.setQueueOptions(repeats: true)
        #expect(core.player.state.error == failed.error)
        // Playing again clears it.
        let resumed = try run { core.player.resume(reply: $0) }.get()
        #expect(resumed.error == nil)
    }

    /// An entry skipped because its file is gone: its error is the player's until cleared.
    @Test func clearErrorTakesASkippedEntrysErrorAway() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        let paths = try files(directory, count: 3)
        for path in paths { _ = try add(core, .file(path)).get() }
        let ids = try core.player.listQueue().entries.map(\.id)
        _ = try run { core.player.load(entry: ids[0], position: 0, playing: false, reply: $0) }.get()
        try FileManager.default.removeItem(atPath: paths[1])
        let next = try run { core.player.next(reply: $0) }.get()
        #expect(next.entry == ids[2], "the missing entry is skipped")
        let skipped = try #require(core.player.state.error, "the skipped entry's error is shown")
        #expect(skipped.message.contains("t2.wav"), "\(skipped)")
        let cleared = try run { core.player.clearError(reply: $0) }.get()
        #expect(cleared.error == nil)
        #expect(core.player.state.error == nil)
        #expect(core.player.changes.latest.value.error == nil)
    }
}

/// A command either fails and changes nothing, or succeeds: turning the last output off while
/// playing succeeds (as MPD's `disableoutput`), and the player pauses with the reason.
extension QueuePlaybackTests {
    @Test func turningTheLastOutputOffWhilePlayingSucceedsAndPausesThePlayerWithTheError() throws {
        // A device that plays at the speed of the music: the file is still playing when the
        // output goes.
        let (core, directory) = try makeCore(output: RealTimeClock())
        defer { core.shutdown() }
        try writeWAV(directory + "/long.wav", frames: 8000 * 120)
        let entry = try add(core, .file(directory + "/long.wav")).get()[0]
        let playing = try run { core.player.play(entry: entry.id, reply: $0) }.get()
        #expect(playing.state == .playing && playing.error == nil)

        let switched = try switchOutput(core, 0, on: false).get()
        #expect(switched.map(\.enabled) == [false])
        #expect(core.outputs.list.map(\.enabled) == [false])
        let paused = core.player.state
        #expect(paused.state == .paused, "\(paused)")
        let error = try #require(paused.error, "the player says why it paused")
        #expect(error.reason == .deviceUnavailable)
        #expect(error.message == "every output is turned off; turn one on to play")

        // Turning it off again: nothing to do, and it succeeds.
        #expect(try switchOutput(core, 0, on: false).get().map(\.enabled) == [false])
        // Back on: the error stays until a play (or clearError) clears it; resume plays.
        _ = try switchOutput(core, 0, on: true).get()
        #expect(core.player.state.error == error)
        let resumed = try run { core.player.resume(reply: $0) }.get()
        #expect(resumed.state == .playing && resumed.error == nil)
    }

    @Test func anUnknownOutputIsNotFoundAndNamesTheValidOnes() throws {
        let (core, _) = try makeCore()
        defer { core.shutdown() }
        #expect(switchOutput(core, 3, on: false) == .failure(ReelError(.notFound, "there is no output 3; the only output is 0")))
        #expect(core.outputs.list.map(\.enabled) == [true])
    }
}
