// Stored playlists on the wire (`playlists.*` in protocol.md).

import ReelModel

extension PlaylistSummary {
    /// `{"name","length","modified"}` (`modified` local ISO-8601 with its offset, as `sleepAt`).
    public var json: JSONValue {
        [
            "name": .string(name), "length": .int(Int64(length)),
            "modified": .string(CivilTime.iso8601(Int64(modified.rounded(.down)), in: SystemTimeZone())),
        ]
    }
}

extension PlaylistEntry {
    /// `{"position","entry","source","duration"}` and `"title"`, `"artist"`, `"album"` (each
    /// when known); `entry` is the line as the file holds it. An entry that names nothing now
    /// has `"missing": true` and `"source": null`.
    public var json: JSONValue {
        var object: JSONObject = ["position": .int(Int64(position)), "entry": .string(uri)]
        switch target {
        case .music(let track):
            object["source"] = PlayerSource.file(path: track.path).json
            object["duration"] = track.audio.duration.map(JSONValue.double) ?? .null
            track.displayTags.add(to: &object)
        case .recording(let item):
            object["source"] = PlayerSource.item(id: item.id, path: item.path, name: item.name).json
            object["duration"] = item.duration.map(JSONValue.double) ?? .null
            object["title"] = .string(item.name)
        case .url(let url):
            object["source"] = PlayerSource.url(url, name: nil, title: nil).json
            object["duration"] = .null
        case .file(let path):
            object["source"] = PlayerSource.file(path: path).json
            object["duration"] = .null
        case .missing:
            object["source"] = .null
            object["duration"] = .null
            object["missing"] = .bool(true)
        }
        return .object(object)
    }
}

extension PlaylistListing {
    /// `{"name","length","entries","brokenLines"}`; `brokenLines` `[{line, reason}]` names the
    /// file's lines that are no entry (kept in the file as they are).
    public var json: JSONValue {
        [
            "name": .string(name), "length": .int(Int64(length)), "entries": .array(entries.map(\.json)),
            "brokenLines": .array(brokenLines.map { ["line": .int(Int64($0.line)), "reason": .string($0.reason)] }),
        ]
    }
}
