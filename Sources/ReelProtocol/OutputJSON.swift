// Outputs as JSON (`outputs.list`, `outputs.changed`), and back.

import ReelModel

extension OutputState {
    /// `{"id","name","kind","enabled","status","device","path","format","error"}`: `device` for
    /// the ALSA output, `path` and `format` (`rate:bits:channels`) for a pipe, null otherwise.
    public var jsonObject: JSONObject {
        var device: JSONValue = .null
        var path: JSONValue = .null
        var format: JSONValue = .null
        switch kind {
        case .alsa(let name):
            device = .string(name)
        case .pipe(let fifo, let pipeFormat):
            path = .string(fifo)
            format = .string(pipeFormat.description)
        }
        return [
            "id": .int(Int64(id)), "name": .string(name), "kind": .string(kind.name), "enabled": .bool(enabled),
            "status": .string(status.rawValue), "device": device, "path": path, "format": format,
            "error": error?.json ?? .null,
        ]
    }

    public var json: JSONValue { .object(jsonObject) }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "output")
        let kind: OutputKind
        switch try reader.string("kind") {
        case "alsa":
            kind = .alsa(device: try reader.optionalString("device") ?? "")
        case "snapcast":
            let text = try reader.string("format")
            let format: OutputFormat
            do throws(OutputFormatError) {
                format = try OutputFormat(parsing: text)
            } catch {
                throw JSONDecodingError("output.format: \(error.message)")
            }
            kind = .pipe(path: try reader.string("path"), format: format)
        case let other:
            throw JSONDecodingError("output.kind must be alsa or snapcast, not \"\(other)\"")
        }
        let raw = try reader.string("status")
        guard let status = OutputStatus(rawValue: raw) else {
            throw JSONDecodingError("output.status \"\(raw)\" is not a known status")
        }
        var error: ReelError?
        if let value = reader.object["error"], value != .null { error = try ReelError(json: value) }
        self.init(
            id: try reader.int("id"), name: try reader.string("name"), kind: kind, enabled: try reader.bool("enabled"),
            status: status, error: error)
    }
}

/// `{"outputs":[…]}`: the result of `outputs.list`, `outputs.enable`, `outputs.disable` and the
/// `outputs.changed` notification.
public func outputsJSONObject(_ outputs: [OutputState]) -> JSONObject {
    ["outputs": .array(outputs.map(\.json))]
}

/// The outputs of an `{"outputs":[…]}` object.
public func decodeOutputs(_ json: JSONValue) throws(JSONDecodingError) -> [OutputState] {
    guard case .array(let elements)? = json["outputs"] else {
        throw JSONDecodingError("expected {\"outputs\": [...]}")
    }
    var outputs: [OutputState] = []
    for element in elements { outputs.append(try OutputState(json: element)) }
    return outputs
}
