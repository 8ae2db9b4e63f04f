// recorder.* — recordings into the tree.

import ReelCore
import ReelModel
import ReelProtocol

enum RecorderMethods {
    static func register(into table: inout MethodTable, recorder: RecorderController) {
        table.register("recorder.start") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["folder", "folderPath", "name", "format", "sampleRate", "channels", "maxDuration"])
            var request = RecordingRequest()
            request.folder = try params.optionalItem(id: "folder", path: "folderPath") ?? .root
            request.name = try params.optionalString("name")
            request.codec = try params.optionalString("format")
            request.sampleRate = try params.optionalInt("sampleRate")
            request.channels = try params.optionalInt("channels")
            request.maxDuration = try params.optionalDouble("maxDuration")
            let startRequest = request
            return .later { complete in
                recorder.start(startRequest) { result in complete(result.map(\.json).mapError(RPCError.init)) }
            }
        }
        table.register("recorder.stop") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .later { complete in
                recorder.stop { result in complete(result.map(\.json).mapError(RPCError.init)) }
            }
        }
        table.register("recorder.cancel") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .later { complete in
                recorder.cancel { result in complete(result.map(\.json).mapError(RPCError.init)) }
            }
        }
        table.register("recorder.status") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .result(recorder.state.json)
        }
    }
}
