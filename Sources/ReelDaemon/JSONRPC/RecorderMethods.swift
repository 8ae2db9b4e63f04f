// recorder.* — recordings into the tree.

import ReelCore
import ReelModel
import ReelProtocol

enum RecorderMethods {
    static func register(into table: inout MethodTable, recorder: RecorderController) {
        table.register("recorder.start") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: [
                "folder", "folderPath", "name", "format", "sampleRate", "channels", "maxDuration", "segmentSeconds", "segmentAlign",
                "keep", "trigger", "preroll", "source",
            ])
            var request = RecordingRequest()
            request.folder = try params.optionalItem(id: "folder", path: "folderPath") ?? .root
            request.name = try params.optionalString("name")
            request.codec = try params.optionalString("format")
            request.sampleRate = try params.optionalInt("sampleRate")
            request.channels = try params.optionalInt("channels")
            request.maxDuration = try params.optionalDouble("maxDuration")
            request.segmentSeconds = try params.optionalDouble("segmentSeconds")
            request.segmentAlign = try params.optionalString("segmentAlign")
            request.preroll = try params.optionalDouble("preroll")
            request.keep = try keepRule(params)
            request.trigger = try trigger(params)
            request.source = try source(params)
            let startRequest = request
            return .later { complete in
                recorder.start(startRequest) { result in complete(result.map(\.json).mapError(RPCError.init)) }
            }
        }
        table.register("recorder.stop") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .later { complete in
                recorder.stop { result in complete(result.map { $0?.json ?? .null }.mapError(RPCError.init)) }
            }
        }
        table.register("recorder.cancel") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .later { complete in
                recorder.cancel { result in complete(result.map(\.json).mapError(RPCError.init)) }
            }
        }
        table.register("recorder.mark") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["label"])
            let label = try call.params.optionalString("label")
            return .replying({ reply in recorder.mark(label: label, reply: reply) }, \.json)
        }
        table.register("recorder.status") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .result(recorder.state.json)
        }
    }

    /// `keep: {count?, days?, minFreeBytes?}`.
    static func keepRule(_ params: Params) throws(RPCError) -> RetentionRule? {
        guard let value = params["keep"] else { return nil }
        guard case .object(let object) = value else { throw .invalidParams("keep must be an object {count?, days?, minFreeBytes?}") }
        let keep = Params(object, method: "recorder.start keep")
        try keep.rejectUnknown(allowed: ["count", "days", "minFreeBytes"])
        let rule = RetentionRule(
            count: try keep.optionalInt("count"), days: try keep.optionalDouble("days"),
            minFreeBytes: try keep.optionalInt("minFreeBytes").map(Int64.init))
        guard rule.count != nil || rule.days != nil || rule.minFreeBytes != nil else {
            throw .invalidParams("keep needs at least one of count, days, minFreeBytes")
        }
        return rule
    }

    /// `trigger: {level, hold?, preroll?, minLength?}`.
    static func trigger(_ params: Params) throws(RPCError) -> TriggerRequest? {
        guard let value = params["trigger"] else { return nil }
        guard case .object(let object) = value else {
            throw .invalidParams("trigger must be an object {level, hold?, preroll?, minLength?}")
        }
        let trigger = Params(object, method: "recorder.start trigger")
        try trigger.rejectUnknown(allowed: ["level", "hold", "preroll", "minLength"])
        var request = TriggerRequest(level: try trigger.requiredDouble("level"))
        if let hold = try trigger.optionalDouble("hold") { request.hold = hold }
        if let preroll = try trigger.optionalDouble("preroll") { request.preroll = preroll }
        if let minLength = try trigger.optionalDouble("minLength") { request.minLength = minLength }
        return request
    }

    /// `source: "capture" | "player" | {url}`.
    static func source(_ params: Params) throws(RPCError) -> RecordingSource {
        guard let value = params["source"] else { return .capture }
        switch value {
        case .string("capture"): return .capture
        case .string("player"): return .player
        case .object(let object):
            let source = Params(object, method: "recorder.start source")
            try source.rejectUnknown(allowed: ["url"])
            return .url(try source.requiredString("url"))
        default:
            throw .invalidParams("source must be \"capture\", \"player\" or {\"url\": …}")
        }
    }
}
