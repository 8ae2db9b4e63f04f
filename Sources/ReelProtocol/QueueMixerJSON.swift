// The queue's and the mixer's values as JSON (`QueueEntry`, options, `queue.changed`, `MixerState`), and back.

import ReelModel

extension QueueOptions {
    /// `{"repeat","random","single","consume"}`; `single` is `true`, `false` or `"oneshot"`.
    public var json: JSONValue {
        let singleJSON: JSONValue
        switch single {
        case .off: singleJSON = .bool(false)
        case .on: singleJSON = .bool(true)
        case .oneshot: singleJSON = .string("oneshot")
        }
        return ["repeat": .bool(repeats), "random": .bool(random), "single": singleJSON, "consume": .bool(consume)]
    }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "options")
        guard let single = SingleMode(json: reader.object["single"] ?? .bool(false)) else {
            throw JSONDecodingError("options.single must be true, false or \"oneshot\"")
        }
        self.init(
            repeats: try reader.bool("repeat"), random: try reader.bool("random"), single: single,
            consume: try reader.bool("consume"))
    }
}

extension SingleMode {
    /// `true`, `false` or `"oneshot"` (as MPD's `single` takes them); nil for anything else.
    public init?(json: JSONValue) {
        switch json {
        case .bool(let on): self = on ? .on : .off
        case .string("oneshot"): self = .oneshot
        default: return nil
        }
    }
}

extension QueueEntry {
    /// `{"id","position","source","duration","format"}`, `"durationEstimated": true` while the
    /// duration is an estimate, `"missing": true` for an entry whose file is gone, and `"title"`,
    /// `"artist"`, `"album"` (each when known) for a music folder file.
    public var json: JSONValue {
        var object: JSONObject = [
            "id": .int(Int64(id)), "position": .int(Int64(position)), "source": source.json,
            "duration": duration.map(JSONValue.double) ?? .null, "format": format?.json ?? .null,
        ]
        if durationEstimated { object["durationEstimated"] = .bool(true) }
        if missing { object["missing"] = .bool(true) }
        if let tags { tags.add(to: &object) }
        return .object(object)
    }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "QueueEntry")
        self.init(
            id: try reader.int("id"), position: try reader.int("position"),
            source: try PlayerSource(json: reader.object["source"] ?? .null),
            duration: try reader.optionalDouble("duration"),
            format: try reader.optional("format").map { (v) throws(JSONDecodingError) in try AudioFormat(json: v) },
            missing: reader.object["missing"]?.boolValue ?? false, tags: DisplayTags(jsonObject: reader.object),
            durationEstimated: reader.object["durationEstimated"]?.boolValue ?? false)
    }
}

extension DisplayTags {
    /// Sets `title`, `artist` and `album` in `object`, each only when known.
    public func add(to object: inout JSONObject) {
        if let title { object["title"] = .string(title) }
        if let artist { object["artist"] = .string(artist) }
        if let album { object["album"] = .string(album) }
    }

    /// The tags among an object's members; nil when it has none.
    public init?(jsonObject object: JSONObject) {
        let tags = DisplayTags(
            title: object["title"]?.stringValue, artist: object["artist"]?.stringValue,
            album: object["album"]?.stringValue)
        guard let tags = tags.nonEmpty else { return nil }
        self = tags
    }
}

extension QueueSummary {
    /// `{"version","length","current","next","options"}` (`queue.changed`).
    public var jsonObject: JSONObject {
        [
            "version": .int(Int64(version)), "length": .int(Int64(length)),
            "current": current.map { .int(Int64($0)) } ?? .null, "next": next.map { .int(Int64($0)) } ?? .null,
            "options": options.json,
        ]
    }

    public var json: JSONValue { .object(jsonObject) }

    /// `entriesVersion` is not on the wire: it is taken to be `version` (every change counts as
    /// a change of the entries).
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "queue")
        let version = try reader.int("version")
        self.init(
            version: version, entriesVersion: version, length: try reader.int("length"),
            current: try reader.optionalInt("current"), next: try reader.optionalInt("next"),
            options: try QueueOptions(json: reader.object["options"] ?? .null))
    }
}

extension ReplayGainSettings {
    /// `{"mode","preamp","missingPreamp","limit"}` (`MixerState.replayGain`).
    public var json: JSONValue {
        [
            "mode": .string(mode.rawValue), "preamp": .double(preamp), "missingPreamp": .double(missingPreamp),
            "limit": .bool(limit),
        ]
    }

    /// Every member may be absent (its default).
    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "ReplayGain")
        var settings = ReplayGainSettings()
        if let raw = try reader.optionalString("mode") {
            guard let mode = ReplayGainMode(rawValue: raw) else {
                throw JSONDecodingError("replayGain.mode must be off, track, album or auto, not \"\(raw)\"")
            }
            settings.mode = mode
        }
        settings.preamp = try reader.optionalDouble("preamp") ?? 0
        settings.missingPreamp = try reader.optionalDouble("missingPreamp") ?? 0
        settings.limit = try reader.bool("limit", default: true)
        self = settings
    }
}

extension MixerState {
    /// `{"volume","muted","kind","control","replayGain"}` (`mixer.state`).
    public var jsonObject: JSONObject {
        [
            "volume": volume.map { .int(Int64($0)) } ?? .null, "muted": .bool(muted), "kind": .string(kind.rawValue),
            "control": control.map(JSONValue.string) ?? .null, "replayGain": replayGain.json,
        ]
    }

    public var json: JSONValue { .object(jsonObject) }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "MixerState")
        let raw = try reader.string("kind")
        guard let kind = MixerKind(rawValue: raw) else {
            throw JSONDecodingError("MixerState.kind must be software, hardware or none, not \"\(raw)\"")
        }
        self.init(
            volume: try reader.optionalInt("volume"), muted: try reader.bool("muted"), kind: kind,
            control: try reader.optionalString("control"),
            replayGain: try reader.optional("replayGain").map { (v) throws(JSONDecodingError) in try ReplayGainSettings(json: v) }
                ?? ReplayGainSettings())
    }
}
