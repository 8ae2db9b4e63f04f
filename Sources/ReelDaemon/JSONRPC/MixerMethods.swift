// mixer.* — the volume and ReplayGain.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the mixer's rules are in `MixerController`.
enum MixerMethods {
    static func register(into table: inout MethodTable, mixer: MixerController) {
        table.register("mixer.status") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .result(mixer.state.json)
        }
        table.register("mixer.setVolume") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["volume", "offset"])
            let volume = try params.optionalInt("volume")
            let offset = try params.optionalInt("offset")
            guard (volume == nil) != (offset == nil) else {
                throw RPCError.invalidParams("mixer.setVolume needs exactly one of \"volume\" (0–100) or \"offset\"")
            }
            if let volume, !(0...100).contains(volume) {
                throw RPCError.invalidParams("volume must be from 0 to 100, not \(volume)")
            }
            return .replying({ reply in mixer.setVolume(volume, offset: offset, reply: reply) }) { $0.json }
        }
        table.register("mixer.setMuted") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["muted"])
            guard let muted = try params.optionalBool("muted") else {
                throw RPCError.invalidParams("mixer.setMuted needs \"muted\" (true or false)")
            }
            return .replying({ reply in mixer.setMuted(muted, reply: reply) }) { $0.json }
        }
        table.register("mixer.setReplayGain") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["mode", "preamp", "missingPreamp", "limit"])
            let raw = try params.optionalString("mode")
            let mode = raw.flatMap(ReplayGainMode.init(rawValue:))
            if let raw, mode == nil {
                throw RPCError.invalidParams("mode must be \"off\", \"track\", \"album\" or \"auto\", not \"\(raw)\"")
            }
            let preamp = try params.optionalDouble("preamp")
            let missingPreamp = try params.optionalDouble("missingPreamp")
            let limit = try params.optionalBool("limit")
            guard mode != nil || preamp != nil || missingPreamp != nil || limit != nil else {
                throw RPCError.invalidParams("mixer.setReplayGain needs one or more of \"mode\", \"preamp\", \"missingPreamp\", \"limit\"")
            }
            return .replying({ reply in
                mixer.setReplayGain(mode: mode, preamp: preamp, missingPreamp: missingPreamp, limit: limit, reply: reply)
            }) { $0.json }
        }
    }
}
