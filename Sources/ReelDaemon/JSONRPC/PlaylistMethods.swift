// playlists.* — the stored playlists: list, get, save the queue, load, edit, rename, delete.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the playlists' rules are in `PlaylistStore`.
enum PlaylistMethods {
    static func register(into table: inout MethodTable, playlists: PlaylistStore) {
        table.register("playlists.list") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .replying({ reply in playlists.list(reply: reply) }) { ["playlists": .array($0.map(\.json))] }
        }
        table.register("playlists.get") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["name", "start", "count"])
            let name = try params.requiredString("name")
            let start = try params.optionalInt("start") ?? 0
            let count = try params.optionalInt("count")
            return .replying({ reply in playlists.get(name, start: start, count: count, reply: reply) }) { $0.json }
        }
        table.register("playlists.save") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["name", "mode"])
            let name = try params.requiredString("name")
            var mode = PlaylistSaveMode.create
            if let given = try params.optionalString("mode") {
                guard let parsed = PlaylistSaveMode(rawValue: given) else {
                    throw RPCError.invalidParams("\"mode\" must be create, replace or append, not \"\(given)\"")
                }
                mode = parsed
            }
            let chosen = mode
            return .replying({ reply in playlists.save(name, mode: chosen, reply: reply) }) { $0.json }
        }
        table.register("playlists.load") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["name", "position"])
            let name = try params.requiredString("name")
            let position = try params.optionalInt("position")
            return .replying({ reply in playlists.load(name, at: position, reply: reply) }) { outcome in
                [
                    "entries": .array(outcome.entries.map(\.json)),
                    "skipped": .array(outcome.skipped.map { skipped -> JSONValue in
                        [
                            "position": .int(Int64(skipped.position)), "entry": .string(skipped.uri),
                            "reason": .string(skipped.error.reason.rawValue), "message": .string(skipped.error.message),
                        ]
                    }),
                ]
            }
        }
        table.register("playlists.add") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: Params.sourceNames.union(["name", "position"]))
            let name = try params.requiredString("name")
            let addition = try params.source()
            let position = try params.optionalInt("position")
            return .replying({ reply in playlists.add(name, addition, at: position, reply: reply) }) { $0.json }
        }
        table.register("playlists.remove") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["name", "positions"])
            let name = try params.requiredString("name")
            guard let array = params["positions"]?.arrayValue, !array.isEmpty else {
                throw RPCError.invalidParams("\"positions\" must be a non-empty array of entry positions")
            }
            var positions: [Int] = []
            for value in array {
                guard let position = value.intValue else {
                    throw RPCError.invalidParams("\"positions\" must hold whole numbers, not \(value)")
                }
                positions.append(Int(position))
            }
            let given = positions
            return .replying({ reply in playlists.remove(name, positions: given, reply: reply) }) { $0.json }
        }
        table.register("playlists.move") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["name", "from", "to"])
            let name = try params.requiredString("name")
            let from = try params.requiredInt("from")
            let to = try params.requiredInt("to")
            return .replying({ reply in playlists.move(name, from: from, to: to, reply: reply) }) { $0.json }
        }
        table.register("playlists.rename") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["name", "to"])
            let name = try params.requiredString("name")
            let to = try params.requiredString("to")
            return .replying({ reply in playlists.rename(name, to: to, reply: reply) }) { $0.json }
        }
        table.register("playlists.delete") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["name"])
            let name = try call.params.requiredString("name")
            return .replying({ reply in playlists.delete(name, reply: reply) }) { _ in .object([:]) }
        }
    }
}
