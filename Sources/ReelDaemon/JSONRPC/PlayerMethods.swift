// player.* — playback commands and status.

import ReelCore
import ReelLibrary
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the player's rules are in `PlayerController`.
enum PlayerMethods {
    static func register(into table: inout MethodTable, player: PlayerController) {
        table.register("player.play") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["file", "item", "path", "position"])
            let position = try params.optionalDouble("position") ?? 0
            let request: PlayRequest
            if let reference = try params.optionalItem() {
                guard !params.has("file") else {
                    throw RPCError.invalidParams("give \"file\" or a recording (\"item\"/\"path\"), not both")
                }
                request = .recording(reference)
            } else {
                guard let file = try params.optionalString("file") else {
                    throw RPCError.invalidParams("player.play needs \"file\" (an absolute path), or \"item\"/\"path\" for a recording")
                }
                guard file.hasPrefix("/") else {
                    throw RPCError.invalidParams("\"file\" must be an absolute path, not \"\(file)\"")
                }
                request = .file(file)
            }
            return .awaiting { reply in player.play(request, position: position, reply: reply) }
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
            try params.rejectUnknown(allowed: ["position", "offset"])
            let position = try params.optionalDouble("position")
            let offset = try params.optionalDouble("offset")
            let target: SeekTarget
            switch (position, offset) {
            case (let position?, nil): target = .absolute(position)
            case (nil, let offset?): target = .relative(offset)
            default:
                throw RPCError.invalidParams("player.seek needs exactly one of \"position\" (seconds) or \"offset\" (seconds, relative)")
            }
            return .awaiting { reply in player.seek(target, reply: reply) }
        }
        table.register("player.status") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .result(player.state.json)
        }
    }
}
