// JSON for schedules (`protocol.md`, v3 "Schedules"), both ways: the daemon's results and
// events, the CLI's reading of them, and the action as the library stores it.

import ReelModel

extension ScheduleAction {
    /// `{"play": {file|item|url|playlist|album, volume?, fadeIn?, stopAfter?}}`,
    /// `{"record": {duration, source?, folderPath?, name?, format?}}` or `{"stop": {fadeOut?}}`.
    public var json: JSONValue {
        switch self {
        case .play(let play):
            var body: JSONObject = [:]
            switch play.target {
            case .url(let url): body["url"] = .string(url)
            case .file(let path): body["file"] = .string(path)
            case .item(let id): body["item"] = .string(id)
            case .playlist(let name): body["playlist"] = .string(name)
            case .album(let album): body["album"] = .string(album)
            }
            if let volume = play.volume { body["volume"] = .int(Int64(volume)) }
            if let fadeIn = play.fadeIn { body["fadeIn"] = .double(fadeIn) }
            if let stopAfter = play.stopAfter { body["stopAfter"] = .double(stopAfter) }
            return ["play": .object(body)]
        case .record(let record):
            var body: JSONObject = ["duration": .double(record.duration)]
            if case .url(let url) = record.source { body["source"] = ["url": .string(url)] }
            if let folderPath = record.folderPath { body["folderPath"] = .string(folderPath) }
            if let name = record.name { body["name"] = .string(name) }
            if let format = record.format { body["format"] = .string(format) }
            return ["record": .object(body)]
        case .stop(let fadeOut):
            var body: JSONObject = [:]
            if let fadeOut { body["fadeOut"] = .double(fadeOut) }
            return ["stop": .object(body)]
        }
    }

    /// The longest fade, stop-after and recording a schedule takes: a day.
    public static let longestSeconds: Double = 86_400

    /// Reads and checks an action; the error names the member that is wrong.
    public init(json: JSONValue) throws(JSONDecodingError) {
        guard let object = json.objectValue, object.count == 1, let (kind, body) = object.members.first else {
            throw JSONDecodingError("action must be an object with one of \"play\", \"record\" or \"stop\"")
        }
        let reader = try ObjectReader(body, as: kind)
        func seconds(_ key: String, zeroAllowed: Bool) throws(JSONDecodingError) -> Double? {
            guard let value = try reader.optionalDouble(key) else { return nil }
            guard value.isFinite, zeroAllowed ? value >= 0 : value > 0, value <= Self.longestSeconds else {
                throw JSONDecodingError("\(kind).\(key) must be \(zeroAllowed ? "0" : "more than 0") to 86400 seconds, not \(value)")
            }
            return value
        }
        func rejectUnknown(_ allowed: Set<String>) throws(JSONDecodingError) {
            if let unknown = reader.object.keys.first(where: { !allowed.contains($0) }) {
                throw JSONDecodingError("\(kind) has no member \"\(unknown)\" (it takes \(allowed.sorted().joined(separator: ", ")))")
            }
        }
        switch kind {
        case "play":
            let targets = ["url", "file", "item", "playlist", "album"]
            try rejectUnknown(Set(targets + ["volume", "fadeIn", "stopAfter"]))
            let given = targets.filter { reader.object.contains($0) }
            guard given.count == 1, let key = given.first else {
                throw JSONDecodingError("play needs exactly one of \"url\", \"file\", \"item\", \"playlist\" or \"album\"")
            }
            let value = try reader.string(key)
            guard !value.isEmpty else { throw JSONDecodingError("play.\(key) is empty") }
            let target: SchedulePlay.Target =
                switch key {
                case "url": .url(value)
                case "file": .file(value)
                case "item": .item(value)
                case "playlist": .playlist(value)
                default: .album(value)
                }
            let volume = try reader.optionalInt("volume")
            if let volume, !(0...100).contains(volume) { throw JSONDecodingError("play.volume must be 0 to 100, not \(volume)") }
            self = .play(
                SchedulePlay(
                    target: target, volume: volume, fadeIn: try seconds("fadeIn", zeroAllowed: true),
                    stopAfter: try seconds("stopAfter", zeroAllowed: false)))
        case "record":
            try rejectUnknown(["duration", "source", "folderPath", "name", "format"])
            guard let duration = try seconds("duration", zeroAllowed: false) else { throw JSONDecodingError("record.duration is missing") }
            var source = ScheduleRecord.Source.capture
            if let value = reader.optional("source") {
                if value.stringValue == "capture" {
                    source = .capture
                } else if let url = value["url"]?.stringValue, value.objectValue?.count == 1, !url.isEmpty {
                    source = .url(url)
                } else {
                    throw JSONDecodingError("record.source must be \"capture\" or {\"url\": \"…\"}")
                }
            }
            let name = try reader.optionalString("name")
            if let name, name.isEmpty || name.contains("/") {
                throw JSONDecodingError("record.name must be a name without \"/\", not \"\(name)\"")
            }
            let folderPath = try reader.optionalString("folderPath")
            if let folderPath, !folderPath.hasPrefix("/") {
                throw JSONDecodingError("record.folderPath must be a folder's path in the tree (/Radio), not \"\(folderPath)\"")
            }
            self = .record(
                ScheduleRecord(duration: duration, source: source, folderPath: folderPath, name: name, format: try reader.optionalString("format")))
        case "stop":
            try rejectUnknown(["fadeOut"])
            self = .stop(fadeOut: try seconds("fadeOut", zeroAllowed: true))
        default:
            throw JSONDecodingError("action \"\(kind)\" is not one of \"play\", \"record\" or \"stop\"")
        }
    }
}

extension Schedule {
    /// `{id, name, when, enabled, action, next, last}`; `next` and `last.at` are local ISO-8601
    /// with the offset in `zone`.
    public func json(in zone: any TimeZoneRules) -> JSONValue {
        [
            "id": .int(Int64(id)), "name": .string(name), "when": .string(when), "enabled": .bool(enabled), "action": action.json,
            "next": next.map { .string(CivilTime.iso8601($0, in: zone)) } ?? .null,
            "last": last.map { run in
                var object: JSONObject = [
                    "at": .string(CivilTime.iso8601(run.at, in: zone)), "result": .string(run.result.rawValue), "message": .string(run.message),
                ]
                if let reason = run.reason { object["reason"] = .string(reason.rawValue) }
                return .object(object)
            } ?? .null,
        ]
    }
}
