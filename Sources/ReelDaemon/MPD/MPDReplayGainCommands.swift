// MPD's ReplayGain commands: replay_gain_mode and replay_gain_status.

import ReelCore
import ReelModel

/// `replay_gain_mode MODE` (`off`, `track`, `album`, `auto`; anything else is MPD's
/// "Unrecognized replay gain mode") sets the mixer's ReplayGain mode, as `mixer.setReplayGain`
/// does; `replay_gain_status` answers `replay_gain_mode: MODE`. A change is MPD's `options` idle
/// event (`MPDEventHub`). Preamp, missing preamp and limit are the configuration's and
/// JSON-RPC's: MPD has no command for them.
enum MPDReplayGainCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let mixer = context.core.mixer
        return [
            MPDCommand("replay_gain_mode", .player, 1, 1) { request, reply throws(MPDAck) in
                guard let mode = ReplayGainMode(rawValue: request[0]) else {
                    throw MPDAck(.argument, "Unrecognized replay gain mode")
                }
                mixer.setReplayGain(mode: mode, reply: MPDPlaybackCommands.done(reply))
            },
            .now("replay_gain_status", .read, 0, 0) { _ in
                var response = MPDResponse()
                response.field("replay_gain_mode", mixer.state.replayGain.mode.rawValue)
                return response
            },
        ]
    }
}
