// schedules.* — alarms, sleep-time stops and recordings that start by themselves.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the schedules' rules are in `ScheduleController`
/// (`when` is parsed there: its errors are `out_of_range` naming the part that is wrong).
enum ScheduleMethods {
    static func register(into table: inout MethodTable, schedules: ScheduleController) {
        let zone = schedules.zone
        table.register("schedules.list") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .result(["schedules": .array(schedules.schedules.map { $0.json(in: zone) })])
        }
        table.register("schedules.add") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["when", "action", "name", "enabled"])
            let when = try params.requiredString("when")
            let action = try Self.action(params)
            guard let action else { throw RPCError.invalidParams("missing parameter \"action\" for schedules.add") }
            let name = try params.optionalString("name")
            let enabled = try params.optionalBool("enabled") ?? true
            return .replying({ reply in schedules.add(when: when, action: action, name: name, enabled: enabled, reply: reply) }) {
                $0.json(in: zone)
            }
        }
        table.register("schedules.update") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["id", "when", "action", "name", "enabled"])
            let id = try params.requiredInt("id")
            let when = try params.optionalString("when")
            let action = try Self.action(params)
            let name = try params.optionalString("name")
            let enabled = try params.optionalBool("enabled")
            return .replying({ reply in
                schedules.update(id: id, name: name, when: when, enabled: enabled, action: action, reply: reply)
            }) { $0.json(in: zone) }
        }
        table.register("schedules.remove") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["id"])
            let id = try call.params.requiredInt("id")
            return .replying({ reply in schedules.remove(id: id, reply: reply) }) { _ in .object([:]) }
        }
    }

    /// `action`, checked; nil when not given.
    private static func action(_ params: Params) throws(RPCError) -> ScheduleAction? {
        guard let value = params.object["action"], !value.isNull else { return nil }
        do throws(JSONDecodingError) {
            return try ScheduleAction(json: value)
        } catch {
            throw RPCError.invalidParams("action: \(error.message)")
        }
    }
}
