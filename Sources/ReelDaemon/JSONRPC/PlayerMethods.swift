// player.* — playback commands and status.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the player's rules are in `PlayerController`.
enum PlayerMethods {
    static func register(into table: inout MethodTable, player: PlayerController) {
        table.register("player.play") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["file", "item", "path", "url", "entry", "position"])
            let position = try params.optionalDouble("position") ?? 0
            if let entry = try params.optionalInt("entry") {
                guard !params.has("file"), !params.has("url"), try params.optionalItem() == nil else {
                    throw RPCError.invalidParams("give \"entry\", \"file\" or a recording (\"item\"/\"path\"), only one")
                }
                return .awaiting { reply in player.play(entry: entry, position: position, reply: reply) }
            }
            guard params.has("file") || params.has("item") || params.has("path") || params.has("url") else {
                guard !params.has("position") else {
                    throw RPCError.invalidParams("\"position\" needs \"entry\", \"file\" or a recording to start")
                }
                return .awaiting { reply in player.play(reply: reply) }
            }
            let request: PlayRequest
            switch try params.playable() {
            case .file(let path): request = .file(path)
            case .recording(let reference): request = .recording(reference)
            case .url(let url), .urlOrPlaylist(let url), .stationPlaylist(let url): request = .url(url)
            case .recordings, .musicTracks, .musicTrack, .album: throw RPCError.invalidParams("give one file or one recording")
            }
            return .awaiting { reply in player.play(request, position: position, reply: reply) }
        }
        table.register("player.next") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .awaiting { reply in player.next(reply: reply) }
        }
        table.register("player.previous") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .awaiting { reply in player.previous(reply: reply) }
        }
        table.register("player.pause") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .awaiting { reply in player.pause(reply: reply) }
        }
        table.register("player.resume") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .awaiting { reply in player.resume(reply: reply) }
        }
        table.register("player.toggle") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .awaiting { reply in player.toggle(reply: reply) }
        }
        table.register("player.stop") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .awaiting { reply in player.stop(reply: reply) }
        }
        table.register("player.seek") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["position", "offset", "mark"])
            let position = try params.optionalDouble("position")
            let offset = try params.optionalDouble("offset")
            let mark = try params.optionalInt("mark")
            let target: SeekTarget
            switch (position, offset, mark) {
            case (let position?, nil, nil): target = .absolute(position)
            case (nil, let offset?, nil): target = .relative(offset)
            case (nil, nil, let mark?): return .awaiting { reply in player.seek(toMark: mark, reply: reply) }
            default:
                throw RPCError.invalidParams(
                    "player.seek needs exactly one of \"position\" (seconds), \"offset\" (seconds, relative) or \"mark\" (a mark's index)")
            }
            return .awaiting { reply in player.seek(target, reply: reply) }
        }
        table.register("player.mark") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["label"])
            let label = try call.params.optionalString("label")
            return .replying({ reply in player.mark(label: label, reply: reply) }, \.json)
        }
        table.register("player.clearError") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .awaiting { reply in player.clearError(reply: reply) }
        }
        table.register("player.status") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .text(player.state.jsonText)
        }
    }
}
