// MPD's playback, volume and option commands, on the core's player and mixer.

import ReelCore
import ReelModel

/// `play`, `playid`, `pause`, `stop`, `clearerror`, `next`, `previous`, `seek`, `seekid`,
/// `seekcur`, `setvol`, `volume`, `getvol`, `repeat`, `random`, `single`, `consume`,
/// `crossfade` (0 only), with MPD's
/// behaviour where it differs from Reel's JSON-RPC: `pause`, `next` and `previous` while
/// stopped do nothing (`next` and `previous` answer `Not playing`), `play` while paused resumes,
/// `setvol` and `volume` unmute.
enum MPDPlaybackCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let player = context.core.player
        let mixer = context.core.mixer
        return [
            MPDCommand("play", .player, 0, 1) { request, reply throws(MPDAck) in
                guard request.count == 1 else { return player.play(reply: done(reply)) }
                let position = try request.int(0)
                if position < 0 { return player.play(reply: done(reply)) }
                guard let id = player.entry(at: position)?.id else { throw MPDAck(.argument, "Bad song index") }
                player.play(entry: id, reply: done(reply))
            },
            MPDCommand("playid", .player, 0, 1) { request, reply throws(MPDAck) in
                guard request.count == 1 else { return player.play(reply: done(reply)) }
                let id = try request.int(0)
                if id < 0 { return player.play(reply: done(reply)) }
                guard player.entry(id: id)?.position != nil else { throw MPDAck(.noExist, "No such song") }
                player.play(entry: id, reply: done(reply))
            },
            MPDCommand("pause", .player, 0, 1) { request, reply throws(MPDAck) in
                let pause = request.count == 1 ? try request.bool(0) : nil
                guard player.state.state != .stopped else { return reply(.success(MPDResponse())) }
                switch pause {
                case nil: player.toggle(reply: done(reply))
                case true?: player.pause(reply: done(reply))
                case false?: player.resume(reply: done(reply))
                }
            },
            MPDCommand("stop", .player, 0, 0) { _, reply in player.stop(reply: done(reply)) },
            // As MPD: clears the player's error (`play`, `seek` and the rest clear it too, in
            // the core); no idle event (see `MPDEventHub`).
            MPDCommand("clearerror", .player, 0, 0) { _, reply in player.clearError(reply: done(reply)) },
            MPDCommand("next", .player, 0, 0) { _, reply in
                guard player.state.state != .stopped else { return reply(.failure(MPDAck(.playerSync, "Not playing"))) }
                player.next(reply: done(reply))
            },
            MPDCommand("previous", .player, 0, 0) { _, reply in
                guard player.state.state != .stopped else { return reply(.failure(MPDAck(.playerSync, "Not playing"))) }
                player.previous(reply: done(reply))
            },
            MPDCommand("seek", .player, 2, 2) { request, reply throws(MPDAck) in
                let position = try request.unsigned(0)
                let time = try request.seconds(1)
                guard let id = player.entry(at: position)?.id else { throw MPDAck(.argument, "Bad song index") }
                seek(player, entry: id, to: time, reply: reply)
            },
            MPDCommand("seekid", .player, 2, 2) { request, reply throws(MPDAck) in
                let id = try request.unsigned(0)
                let time = try request.seconds(1)
                guard player.entry(id: id)?.position != nil else { throw MPDAck(.noExist, "No such song") }
                seek(player, entry: id, to: time, reply: reply)
            },
            MPDCommand("seekcur", .player, 1, 1) { request, reply throws(MPDAck) in
                let text = request[0]
                let relative = text.hasPrefix("+") || text.hasPrefix("-")
                let value = try request.seconds(0, signed: relative)
                guard player.state.state != .stopped else { throw MPDAck(.playerSync, "Not playing") }
                player.seek(relative ? .relative(value) : .absolute(value), reply: done(reply))
            },
            MPDCommand("setvol", .player, 1, 1) { request, reply throws(MPDAck) in
                let volume = try request.unsigned(0)
                guard volume <= 100 else { throw .argument("Number too large", request[0]) }
                guard mixer.state.kind != .none else { throw MPDAck(.system, "No mixer") }
                unmuted(mixer) { mixer.setVolume(volume, reply: done(reply)) }
            },
            MPDCommand("volume", .player, 1, 1) { request, reply throws(MPDAck) in
                let offset = try request.int(0, in: -100...100)
                guard mixer.state.kind != .none else { throw MPDAck(.system, "No mixer") }
                unmuted(mixer) { mixer.setVolume(offset: offset, reply: done(reply)) }
            },
            .now("getvol", .read, 0, 0) { _ in
                var response = MPDResponse()
                if let volume = mpdVolume(mixer.state) { response.field("volume", volume) }
                return response
            },
            // Reel does not crossfade (yet): 0 is what it does; as MPD, setting it is an
            // `options` event. `status` never shows `xfade` (MPD leaves it out at 0).
            .now("crossfade", .player, 1, 1) { request throws(MPDAck) in
                guard try request.unsigned(0) == 0 else {
                    throw MPDAck(.argument, "crossfading is not supported: only 0 (no crossfade) is accepted")
                }
                context.hub.post(.options)
                return MPDResponse()
            },
            option("repeat") { request, saved throws(MPDAck) in player.setQueueOptions(repeats: try request.bool(0), saved: saved) },
            option("random") { request, saved throws(MPDAck) in player.setQueueOptions(random: try request.bool(0), saved: saved) },
            option("consume") { request, saved throws(MPDAck) in player.setQueueOptions(consume: try request.bool(0), saved: saved) },
            option("single") { request, saved throws(MPDAck) in
                let mode: SingleMode
                switch request[0] {
                case "0": mode = .off
                case "1": mode = .on
                case "oneshot": mode = .oneshot
                default: throw MPDAck(.argument, "Unrecognized single mode, expected 0, 1, or oneshot")
                }
                player.setQueueOptions(single: mode, saved: saved)
            },
        ]
    }

    /// Runs `then` once the mixer is unmuted (at once when it is not muted): MPD has no mute,
    /// and a volume set from MPD is meant to be heard.
    private static func unmuted(_ mixer: MixerController, then: @escaping @Sendable () -> Void) {
        guard mixer.state.muted else { return then() }
        mixer.setMuted(false) { _ in then() }
    }

    /// The volume MPD shows: 0 while muted, nil without a mixer.
    static func mpdVolume(_ state: MixerState) -> Int? {
        guard state.kind != .none, let volume = state.volume else { return nil }
        return state.muted ? 0 : volume
    }

    /// MPD's `seek`/`seekid`: the same entry (playing or paused) seeks in place; another entry
    /// is loaded at `time`, paused when the player was paused, else playing.
    private static func seek(_ player: PlayerController, entry id: Int, to time: Double, reply: @escaping MPDReply) {
        let state = player.state
        if state.state != .stopped, state.entry == id {
            player.seek(.absolute(time), reply: done(reply))
        } else {
            player.load(entry: id, position: time, playing: state.state != .paused, reply: done(reply))
        }
    }

    /// A queue option command: `NAME 0|1` (or `oneshot` for single), answered once saved.
    private static func option(
        _ name: String,
        _ set: @escaping @Sendable (MPDRequest, @escaping PlayerController.Saved<QueueOptions>) throws(MPDAck) -> Void
    ) -> MPDCommand {
        MPDCommand(name, .player, 1, 1) { request, reply throws(MPDAck) in
            try set(request) { _ in reply(.success(MPDResponse())) }
        }
    }

    /// A core reply (player, mixer) as an MPD reply: no body, or the error as an ACK.
    static func done<Value>(_ reply: @escaping MPDReply) -> @Sendable (Result<Value, ReelError>) -> Void {
        { result in reply(result.map { _ in MPDResponse() }.mapError(MPDAck.init)) }
    }
}

