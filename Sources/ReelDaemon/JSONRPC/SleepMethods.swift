// player.sleep — the sleep timer.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the timer's rules are in `PlayerController+Sleep`.
enum SleepMethods {
    static func register(into table: inout MethodTable, player: PlayerController) {
        table.register("player.sleep") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["after", "fadeOut", "cancel"])
            let encode: @Sendable (Double?) -> JSONValue = { at in
                ["at": at.map { .string(CivilTime.iso8601(Int64($0.rounded()), in: SystemTimeZone())) } ?? .null]
            }
            if try params.optionalBool("cancel") == true {
                guard !params.has("after"), !params.has("fadeOut") else {
                    throw RPCError.invalidParams("player.sleep takes either {\"cancel\": true} or \"after\" (and \"fadeOut\"), not both")
                }
                return .replying({ reply in player.cancelSleep(reply: reply) }, encode)
            }
            guard let after = try params.optionalDouble("after") else {
                throw RPCError.invalidParams("player.sleep needs \"after\" (seconds) or {\"cancel\": true}")
            }
            let fadeOut = try params.optionalDouble("fadeOut") ?? 0
            return .replying({ reply in player.sleep(after: after, fadeOut: fadeOut, reply: reply) }, encode)
        }
    }
}
