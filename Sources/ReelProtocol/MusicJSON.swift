// The music folders' values as JSON (`music.*`, `scan.progress`).

import ReelModel

extension MusicTrack {
    /// `{"id","path","title","name","artist","album","albumArtist","track","disc","date","genre",
    /// "duration","format","hasCover","missing"}`: `title` and the tags are the file's own (null
    /// when it has none); `name` is what Reel shows, the title or else the file's name.
    public var jsonObject: JSONObject {
        let tags = audio.tags
        return [
            "id": .int(id), "path": .string(path), "title": JSONValue(tags.title), "name": .string(displayTitle),
            "artist": JSONValue(tags.artist), "album": JSONValue(tags.album), "albumArtist": JSONValue(tags.albumArtist),
            "track": JSONValue(tags.track), "disc": JSONValue(tags.disc), "date": JSONValue(tags.date),
            "genre": JSONValue(tags.genre), "duration": JSONValue(audio.duration),
            "format": AudioFormat(codec: audio.codec, sampleRate: audio.sampleRate, channels: audio.channels).json,
            "hasCover": .bool(audio.hasEmbeddedCover), "missing": .bool(missing),
        ]
    }

    public var json: JSONValue { .object(jsonObject) }
}

extension MusicAlbum {
    /// `{"name","albumArtist","date","tracks","duration","hasCover"}`.
    public var json: JSONValue {
        [
            "name": .string(name), "albumArtist": JSONValue(albumArtist), "date": JSONValue(date),
            "tracks": .int(Int64(trackCount)), "duration": .double(duration), "hasCover": .bool(hasCover),
        ]
    }
}

extension MusicArtist {
    /// `{"name","albums","tracks"}`.
    public var json: JSONValue {
        ["name": .string(name), "albums": .int(Int64(albumCount)), "tracks": .int(Int64(trackCount))]
    }
}

extension MusicScanProgress {
    /// `{"scan","running","seen","indexed","unchanged","failed","removed","moved","missing",
    /// "restored","missingFolders"}` (`scan.progress`, `library.rescan`).
    public var jsonObject: JSONObject {
        [
            "scan": .int(Int64(scan)), "running": .bool(running), "seen": .int(Int64(seen)), "indexed": .int(Int64(indexed)),
            "unchanged": .int(Int64(unchanged)), "failed": .int(Int64(failed)), "removed": .int(Int64(removed)),
            "moved": .int(Int64(moved)), "missing": .int(Int64(missing)), "restored": .int(Int64(restored)),
            "missingFolders": .array(missingFolders.map(JSONValue.string)),
        ]
    }

    public var json: JSONValue { .object(jsonObject) }

    public init(json: JSONValue) throws(JSONDecodingError) {
        let reader = try ObjectReader(json, as: "scan progress")
        self.init(
            running: try reader.bool("running"), seen: try reader.int("seen"), indexed: try reader.int("indexed"),
            unchanged: try reader.int("unchanged"), failed: try reader.int("failed"), removed: try reader.int("removed"),
            moved: try reader.int("moved", default: 0), missing: try reader.int("missing", default: 0),
            restored: try reader.int("restored", default: 0))
        scan = try reader.int("scan")
        if let folders = reader.optional("missingFolders") {
            guard let elements = folders.arrayValue, case let names = elements.compactMap(\.stringValue),
                  names.count == elements.count
            else { throw reader.wrongType("missingFolders", "an array of strings") }
            missingFolders = names
        }
    }
}
