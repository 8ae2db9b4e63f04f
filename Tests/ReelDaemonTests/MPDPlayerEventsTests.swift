// Which player changes give MPD clients the `player` idle event: every one but a cleared error.
import ReelModel
import Testing

@testable import ReelDaemon

@Suite struct MPDPlayerEventsTests {
    let failure = ReelError(.deviceUnavailable, "every output is turned off; turn one on to play")

    func paused(at position: Double, error: ReelError?, timestamp: Double = 10) -> PlayerState {
        PlayerState(
            state: .paused, position: position, duration: 60, source: .file(path: "/m/a.flac"), entry: 1,
            timestamp: timestamp, error: error)
    }

    /// MPD's `clearerror` posts no event; Reel's clears the error with a publish, which must not
    /// become one.
    @Test func aClearedErrorAloneIsNoPlayerEvent() {
        #expect(MPDEventHub.onlyTheErrorWent(from: paused(at: 3, error: failure), to: paused(at: 3, error: nil, timestamp: 12)))
    }

    @Test func anythingElseWithItIsAPlayerEvent() {
        let failed = paused(at: 3, error: failure)
        // A seek that cleared the error.
        #expect(!MPDEventHub.onlyTheErrorWent(from: failed, to: paused(at: 5, error: nil)))
        // A play that cleared it.
        var playing = paused(at: 3, error: nil)
        playing.state = .playing
        #expect(!MPDEventHub.onlyTheErrorWent(from: failed, to: playing))
        // An error that comes, or changes, or stays.
        #expect(!MPDEventHub.onlyTheErrorWent(from: paused(at: 3, error: nil), to: failed))
        #expect(!MPDEventHub.onlyTheErrorWent(from: failed, to: paused(at: 3, error: ReelError(.ioError, "x"))))
        #expect(!MPDEventHub.onlyTheErrorWent(from: failed, to: failed))
        // Another entry.
        var other = paused(at: 3, error: nil)
        other.entry = 2
        #expect(!MPDEventHub.onlyTheErrorWent(from: failed, to: other))
    }

    /// MPD's `replay_gain_mode` is an `options` event only; Reel's republishes the player's state
    /// (its `gain`), which must not become a `player` event while nothing plays.
    @Test func aReplayGainOrTimestampAloneIsNoPlayerEventWhileNotPlaying() {
        var gained = paused(at: 3, error: nil, timestamp: 12)
        gained.gain = -6.5
        #expect(MPDEventHub.nothingPlayerShowsChanged(from: paused(at: 3, error: nil), to: gained))
        #expect(!MPDEventHub.nothingPlayerShowsChanged(from: paused(at: 3, error: nil), to: paused(at: 4, error: nil)))
        var playing = gained
        playing.state = .playing
        #expect(!MPDEventHub.nothingPlayerShowsChanged(from: playing, to: playing))
    }
}
