// Fades over seconds after the volume: an alarm's fade-in, a fade-out before a stop.

import Dispatch
import ReelAudio
import ReelModel

extension PlayerController {
    /// Starts a fade of the sound after the volume (`FadeRamp`) from the next frame written:
    /// from gain `from` to `to` (0…1) over `seconds`. The volume stays as the user set it.
    public func fade(from: Double, to: Double, seconds: Double) {
        engine.send(.fade(FadeRamp.Request(from: from, to: to, seconds: seconds)))
    }

    /// Fades out over `seconds`, then stops and puts the level back to full for the next play;
    /// the reply comes after the stop. With 0 seconds, stops at once. Does not stop when something
    /// else was started meanwhile (`entry` changed), but the level is put back all the same;
    /// when `cancelled()` says so at the end, neither stops nor touches the level (whoever
    /// cancelled put it back).
    public func fadeOutAndStop(seconds: Double, cancelled: @escaping @Sendable () -> Bool = { false }, reply: @escaping Reply) {
        guard seconds > 0, state.state == .playing else {
            stop(reply: reply)
            return
        }
        let entry = state.entry
        fade(from: 1, to: 0, seconds: seconds)
        work.asyncAfter(deadline: .now() + seconds) { [self] in
            if cancelled() {
                reply(.success(state))
                return
            }
            guard state.entry == entry else {
                fade(from: 1, to: 1, seconds: 0)
                reply(.success(state))
                return
            }
            stop { [self] result in
                fade(from: 1, to: 1, seconds: 0)
                reply(result)
            }
        }
    }
}
