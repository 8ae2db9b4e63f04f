// JSON for ReelModel's values, both ways.
//
// The daemon encodes `PlayerState` for `player.*` results and `player.state` events with
// `.json`; the CLI decodes them with `init(json:)`, which throws a `JSONDecodingError` naming
// the malformed field. Shapes are those of `protocol.md`; `PlayerState` adds `underruns` and
// `error` (`null` or `{"reason","message"}`). Decoding ignores members it does not know (a
// pushed `player.state` also carries `subscription`).

import ReelModel

extension AudioFormat {
    /// `{"codec","sampleRate","channels"}`.
    public var json: JSONValue {
        ["codec": .string(codec), "sampleRate": .int(Int64(sampleRate)), "channels": .int(Int64(channels))]
    }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "format")
        self.init(codec: try reader.string("codec"), sampleRate: try reader.int("sampleRate"),
                  channels: try reader.int("channels"))
    }
}

extension PlayerSource {
    /// `{"path"}` for a file, `{"item","path","name"}` for a recording, `{"url","name","title"}`
    /// for a URL (`name` and `title` null until known).
    public var json: JSONValue {
        switch self {
        case .file(let path): ["path": .string(path)]
        case .item(let id, let path, let name): ["item": .string(id), "path": .string(path), "name": .string(name)]
        case .url(let url, let name, let title):
            ["url": .string(url), "name": name.map(JSONValue.string) ?? .null, "title": title.map(JSONValue.string) ?? .null]
        }
    }

    /// A source with `url` is a URL; with `item` a recording (it then needs `name`); else a file.
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "source")
        if reader.object.contains("url") {
            self = .url(try reader.string("url"), name: try reader.optionalString("name"), title: try reader.optionalString("title"))
            return
        }
        let path = try reader.string("path")
        if reader.object.contains("item") {
            self = .item(id: try reader.string("item"), path: path, name: try reader.string("name"))
        } else {
            self = .file(path: path)
        }
    }
}

extension ReelError {
    /// `{"reason","message"}`.
    public var json: JSONValue {
        ["reason": .string(reason.rawValue), "message": .string(message)]
    }

    /// Throws for a reason code this build does not know.
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "error")
        let raw = try reader.string("reason")
        guard let reason = ErrorReason(rawValue: raw) else {
            throw JSONDecodingError("error.reason \"\(raw)\" is not a known reason")
        }
        self.init(reason, try reader.string("message"))
    }
}

extension PlayerState {
    /// `{"state","position","duration","durationEstimated","source","entry","format","output",
    /// "gain","timestamp","underruns","error"}`.
    public var jsonObject: JSONObject {
        [
            "state": .string(state.rawValue),
            "position": .double(position),
            "duration": duration.map(JSONValue.double) ?? .null,
            "durationEstimated": .bool(durationEstimated),
            "source": source?.json ?? .null,
            "entry": entry.map { .int(Int64($0)) } ?? .null,
            "format": format?.json ?? .null,
            "output": output.map { ["sampleRate": .int(Int64($0.sampleRate)), "bits": .int(Int64($0.bits)), "channels": .int(Int64($0.channels))] } ?? .null,
            "gain": gain.map(JSONValue.double) ?? .null,
            "timestamp": .double(timestamp),
            "underruns": .int(Int64(underruns)),
            "error": error?.json ?? .null,
            "live": .bool(live),
            "stream": stream?.json ?? .null,
            "sleepAt": sleepAt.map { .string(CivilTime.iso8601(Int64($0.rounded()), in: SystemTimeZone())) } ?? .null,
        ]
    }

    public var json: JSONValue { .object(jsonObject) }

    /// Appends the members of `jsonObject`, the same bytes in the same order, without the braces
    /// and without building a `JSONValue` tree: `player.status` is what clients poll.
    public func writeJSONMembers(into out: inout [UInt8]) {
        JSONWriter.append(#""state":""#, into: &out)
        out.append(contentsOf: state.rawValue.utf8)  // a fixed word, nothing to escape
        JSONWriter.append(#"","position":"#, into: &out)
        JSONWriter.writeDouble(position, into: &out)
        JSONWriter.append(#","duration":"#, into: &out)
        if let duration { JSONWriter.writeDouble(duration, into: &out) } else { JSONWriter.append("null", into: &out) }
        JSONWriter.append(durationEstimated ? #","durationEstimated":true"# : #","durationEstimated":false"#, into: &out)
        JSONWriter.append(#","source":"#, into: &out)
        switch source {
        case nil:
            JSONWriter.append("null", into: &out)
        case .file(let path)?:
            JSONWriter.append(#"{"path":"#, into: &out)
            JSONWriter.writeString(path, into: &out)
            out.append(0x7D)
        case .item(let id, let path, let name)?:
            JSONWriter.append(#"{"item":"#, into: &out)
            JSONWriter.writeString(id, into: &out)
            JSONWriter.append(#","path":"#, into: &out)
            JSONWriter.writeString(path, into: &out)
            JSONWriter.append(#","name":"#, into: &out)
            JSONWriter.writeString(name, into: &out)
            out.append(0x7D)
        case .url?:
            JSONWriter.write(source!.json, into: &out)
        }
        JSONWriter.append(#","entry":"#, into: &out)
        if let entry { JSONWriter.writeInt(Int64(entry), into: &out) } else { JSONWriter.append("null", into: &out) }
        JSONWriter.append(#","format":"#, into: &out)
        if let format {
            JSONWriter.append(#"{"codec":"#, into: &out)
            JSONWriter.writeString(format.codec, into: &out)
            JSONWriter.append(#","sampleRate":"#, into: &out)
            JSONWriter.writeInt(Int64(format.sampleRate), into: &out)
            JSONWriter.append(#","channels":"#, into: &out)
            JSONWriter.writeInt(Int64(format.channels), into: &out)
            out.append(0x7D)
        } else {
            JSONWriter.append("null", into: &out)
        }
        JSONWriter.append(#","output":"#, into: &out)
        if let output {
            JSONWriter.append(#"{"sampleRate":"#, into: &out)
            JSONWriter.writeInt(Int64(output.sampleRate), into: &out)
            JSONWriter.append(#","bits":"#, into: &out)
            JSONWriter.writeInt(Int64(output.bits), into: &out)
            JSONWriter.append(#","channels":"#, into: &out)
            JSONWriter.writeInt(Int64(output.channels), into: &out)
            out.append(0x7D)
        } else {
            JSONWriter.append("null", into: &out)
        }
        JSONWriter.append(#","gain":"#, into: &out)
        if let gain { JSONWriter.writeDouble(gain, into: &out) } else { JSONWriter.append("null", into: &out) }
        JSONWriter.append(#","timestamp":"#, into: &out)
        JSONWriter.writeDouble(timestamp, into: &out)
        JSONWriter.append(#","underruns":"#, into: &out)
        JSONWriter.writeInt(Int64(underruns), into: &out)
        JSONWriter.append(#","error":"#, into: &out)
        if let error {
            JSONWriter.append(#"{"reason":"#, into: &out)
            JSONWriter.writeString(error.reason.rawValue, into: &out)
            JSONWriter.append(#","message":"#, into: &out)
            JSONWriter.writeString(error.message, into: &out)
            out.append(0x7D)
        } else {
            JSONWriter.append("null", into: &out)
        }
        JSONWriter.append(live ? #","live":true,"stream":"# : #","live":false,"stream":"#, into: &out)
        if let stream { JSONWriter.write(stream.json, into: &out) } else { JSONWriter.append("null", into: &out) }
        JSONWriter.append(#","sleepAt":"#, into: &out)
        if let sleepAt {
            JSONWriter.writeString(CivilTime.iso8601(Int64(sleepAt.rounded()), in: SystemTimeZone()), into: &out)
        } else {
            JSONWriter.append("null", into: &out)
        }
    }

    /// The same text as `json`, written directly (see `writeJSONMembers`).
    public var jsonText: JSONText {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        out.append(0x7B)
        writeJSONMembers(into: &out)
        out.append(0x7D)
        return JSONText(bytes: out)
    }

    /// `underruns`, `entry`, `error`, `durationEstimated`, `output` and `gain` may be absent (0,
    /// nil, false, nil, nil).
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "PlayerState")
        let rawState = try reader.string("state")
        guard let state = PlayerActivity(rawValue: rawState) else {
            throw JSONDecodingError("PlayerState.state must be \"stopped\", \"playing\" or \"paused\", not \"\(rawState)\"")
        }
        self.init(
            state: state,
            position: try reader.double("position"),
            duration: try reader.optionalDouble("duration"),
            source: try reader.optional("source").map { (v) throws(JSONDecodingError) in try PlayerSource(json: v) },
            entry: try reader.optionalInt("entry"),
            format: try reader.optional("format").map { (v) throws(JSONDecodingError) in try AudioFormat(json: v) },
            timestamp: try reader.double("timestamp"),
            underruns: try reader.int("underruns", default: 0),
            error: try reader.optional("error").map { (v) throws(JSONDecodingError) in try ReelError(json: v) },
            durationEstimated: try reader.bool("durationEstimated", default: false),
            output: try reader.optional("output").map { (v) throws(JSONDecodingError) in
                let output = try ObjectReader(v, as: "PlayerState.output")
                return OutputFormat(
                    sampleRate: try output.int("sampleRate"), bits: try output.int("bits"), channels: try output.int("channels"))
            },
            gain: try reader.optionalDouble("gain"))
        if let text = try reader.optionalString("sleepAt") {
            guard let instant = CivilTime.instant(iso8601: text) else {
                throw JSONDecodingError("PlayerState.sleepAt must be ISO-8601 with an offset, not \"\(text)\"")
            }
            sleepAt = Double(instant)
        }
        live = try reader.bool("live", default: false)
        stream = try reader.optional("stream").map { (v) throws(JSONDecodingError) in try StreamStatus(json: v) }
    }
}

extension StreamStatus {
    /// `{"state","bitrate","buffered","reconnects"}`.
    public var json: JSONValue {
        [
            "state": .string(state.rawValue), "bitrate": bitrate.map { .int(Int64($0)) } ?? .null,
            "buffered": .double(buffered), "reconnects": .int(Int64(reconnects)),
        ]
    }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "stream")
        let raw = try reader.string("state")
        guard let state = State(rawValue: raw) else {
            throw JSONDecodingError("stream.state \"\(raw)\" is not a known state")
        }
        self.init(
            state: state, bitrate: try reader.optionalInt("bitrate"), buffered: try reader.double("buffered"),
            reconnects: try reader.int("reconnects", default: 0))
    }
}

extension Item {
    /// `{"id","kind","name","parent","path","created"}`; for a recording or a track also
    /// `"duration"`, `"format"` and `"size"`; `"readOnly": true` in the `/Music` branch; for a
    /// track `"file"` and its `"title"`, `"artist"`, `"album"` (each when known).
    public var jsonObject: JSONObject {
        var object: JSONObject = [
            "id": .string(id), "kind": .string(kind.rawValue), "name": .string(name),
            "parent": parent.map(JSONValue.string) ?? .null, "path": .string(path), "created": .string(created),
        ]
        if kind != .folder {
            object["duration"] = duration.map(JSONValue.double) ?? .null
            object["format"] = format?.json ?? .null
            object["size"] = size.map { .int($0) } ?? .null
        }
        if readOnly { object["readOnly"] = .bool(true) }
        if let file { object["file"] = .string(file) }
        if let tags { tags.add(to: &object) }
        if let marks { object["marks"] = .array(marks.map(\.json)) }
        return object
    }

    public var json: JSONValue { .object(jsonObject) }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "item")
        let rawKind = try reader.string("kind")
        guard let kind = ItemKind(rawValue: rawKind) else {
            throw JSONDecodingError("item.kind \"\(rawKind)\" is not folder, recording or track")
        }
        let format: AudioFormat?
        if let value = reader.optional("format"), !value.isNull {
            format = try AudioFormat(json: value)
        } else {
            format = nil
        }
        let size: Int64?
        if let value = reader.optional("size"), !value.isNull {
            guard let number = value.int64Value else { throw JSONDecodingError("item.size must be a number") }
            size = number
        } else {
            size = nil
        }
        self.init(
            id: try reader.string("id"), kind: kind, name: try reader.string("name"),
            parent: try reader.optionalString("parent"), path: try reader.string("path"),
            created: try reader.string("created"), duration: try reader.optionalDouble("duration"),
            format: format, size: size, readOnly: reader.object["readOnly"]?.boolValue ?? false,
            file: try reader.optionalString("file"), tags: DisplayTags(jsonObject: reader.object),
            marks: try Self.marks(reader, sampleRate: format?.sampleRate ?? 0))
    }

    private static func marks(_ reader: ObjectReader, sampleRate: Int) throws(JSONDecodingError) -> [Mark]? {
        guard let value = reader.optional("marks"), !value.isNull else { return nil }
        guard case .array(let values) = value else { throw JSONDecodingError("item.marks must be an array") }
        var marks: [Mark] = []
        for value in values {
            let mark = try ObjectReader(value, as: "mark")
            let at = try mark.double("at")
            let frame = try mark.optionalInt("frame").map(Int64.init) ?? frameIndex(seconds: at, rate: Double(sampleRate))
            marks.append(Mark(frame: frame, label: try mark.optionalString("label"), sampleRate: sampleRate))
        }
        return marks
    }
}

extension Mark {
    /// `{"at": seconds, "frame": frames from the start, "label": text|null}`.
    public var json: JSONValue {
        .object(["at": .double(seconds), "frame": .int(frame), "label": label.map(JSONValue.string) ?? .null])
    }
}

extension RecorderState {
    /// `{"state","item","elapsed","peak","rms","format","overruns","error","series","disk","threshold"}`.
    public var jsonObject: JSONObject {
        let series: JSONValue = self.series.map { series in
            .object(["takes": .int(Int64(series.takes)), "started": .string(series.started)])
        } ?? .null
        let disk: JSONValue = self.disk.map { disk in
            .object(["freeBytes": .int(disk.freeBytes), "secondsLeft": disk.secondsLeft.map(JSONValue.double) ?? .null])
        } ?? .null
        return [
            "state": .string(state.rawValue),
            "item": item?.json ?? .null,
            "elapsed": .double(elapsed),
            "peak": peak.map(JSONValue.double) ?? .null,
            "rms": rms.map(JSONValue.double) ?? .null,
            "format": format?.json ?? .null,
            "overruns": .int(Int64(overruns)),
            "error": error?.json ?? .null,
            "series": series,
            "disk": disk,
            "threshold": threshold.map(JSONValue.double) ?? .null,
        ]
    }

    public var json: JSONValue { .object(jsonObject) }

    /// `error` may be absent (nil).
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "RecorderState")
        let rawState = try reader.string("state")
        guard let state = RecorderActivity(rawValue: rawState) else {
            throw JSONDecodingError("RecorderState.state must be \"idle\", \"recording\" or \"armed\", not \"\(rawState)\"")
        }
        func nonNull(_ key: String) -> JSONValue? {
            guard let value = reader.optional(key), !value.isNull else { return nil }
            return value
        }
        self.init(
            state: state,
            item: try nonNull("item").map { (v) throws(JSONDecodingError) in try Item(json: v) },
            elapsed: try reader.double("elapsed"),
            peak: try reader.optionalDouble("peak"),
            rms: try reader.optionalDouble("rms"),
            format: try nonNull("format").map { (v) throws(JSONDecodingError) in try AudioFormat(json: v) },
            overruns: try reader.int("overruns", default: 0),
            error: try nonNull("error").map { (v) throws(JSONDecodingError) in try ReelError(json: v) },
            series: try nonNull("series").map { (v) throws(JSONDecodingError) in
                let series = try ObjectReader(v, as: "RecorderState.series")
                return RecorderSeries(takes: try series.int("takes", default: 0), started: try series.string("started"))
            },
            disk: try nonNull("disk").map { (v) throws(JSONDecodingError) in
                let disk = try ObjectReader(v, as: "RecorderState.disk")
                return RecorderDisk(freeBytes: Int64(try disk.int("freeBytes", default: 0)), secondsLeft: try disk.optionalDouble("secondsLeft"))
            },
            threshold: try reader.optionalDouble("threshold"))
    }
}
