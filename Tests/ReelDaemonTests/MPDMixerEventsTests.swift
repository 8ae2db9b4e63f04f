import ReelModel
import Testing

@testable import ReelDaemon

/// What a mixer change means to an MPD client: the volume is `mixer`, ReplayGain (MPD's
/// `replay_gain_mode`) is `options`.
@Suite struct MPDMixerEventsTests {
    static let state = MixerState(volume: 50, muted: false, kind: .software)

    @Test func volumeIsMixerAndReplayGainIsOptions() {
        var louder = Self.state
        louder.volume = 60
        #expect(MPDEventHub.events(from: Self.state, to: louder) == .mixer)
        var album = Self.state
        album.replayGain.mode = .album
        #expect(MPDEventHub.events(from: Self.state, to: album) == .options)
        var both = album
        both.muted = true
        #expect(MPDEventHub.events(from: Self.state, to: both) == [.mixer, .options])
        #expect(MPDEventHub.events(from: Self.state, to: Self.state).isEmpty)
    }
}
