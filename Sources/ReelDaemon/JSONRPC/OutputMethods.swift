// outputs.* — which outputs play: the ALSA device and pipe outputs.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the rules are in `OutputsController`.
enum OutputMethods {
    static func register(into table: inout MethodTable, outputs: OutputsController) {
        table.register("outputs.list") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .result(.object(outputsJSONObject(outputs.list)))
        }
        for (method, action) in [
            ("outputs.enable", outputs.enable), ("outputs.disable", outputs.disable), ("outputs.toggle", outputs.toggle),
        ] as [(String, @Sendable (Int, @escaping OutputsController.Reply) -> Void)] {
            table.register(method) { call throws(RPCError) in
                let params = call.params
                try params.rejectUnknown(allowed: ["id"])
                guard let id = try params.optionalInt("id") else {
                    throw RPCError.invalidParams("\(method) needs \"id\", the output's number (outputs.list)")
                }
                return .replying({ reply in action(id, reply) }) { .object(outputsJSONObject($0)) }
            }
        }
    }
}
