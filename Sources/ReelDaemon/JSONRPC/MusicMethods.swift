// music.* and library.rescan — the music folders, browsed by tag.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the index and the scan are `MusicController`'s.
enum MusicMethods {
    static func register(into table: inout MethodTable, music: MusicController) {
        table.register("music.artists") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .replying({ reply in music.artists(reply: reply) }) { ["artists": .array($0.map(\.json))] }
        }
        table.register("music.albums") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["artist"])
            let artist = try params.optionalString("artist")
            return .replying({ reply in music.albums(artist: artist, reply: reply) }) { ["albums": .array($0.map(\.json))] }
        }
        table.register("music.tracks") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["album", "albumArtist"])
            let album = try params.requiredString("album")
            let albumArtist = try params.optionalString("albumArtist")
            return .replying({ reply in music.tracks(album: album, albumArtist: albumArtist, reply: reply) }) {
                ["tracks": .array($0.map(\.json))]
            }
        }
        table.register("music.search") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["text", "limit", "cursor"])
            let text = try params.requiredString("text")
            let limit = try params.optionalInt("limit") ?? 50
            let cursor = try params.optionalString("cursor")
            return .replying({ reply in music.search(text: text, limit: limit, cursor: cursor, reply: reply) }) { page in
                ["tracks": .array(page.tracks.map(\.json)), "cursor": JSONValue(page.nextCursor)]
            }
        }
        table.register("music.failures") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .replying({ reply in music.failures(reply: reply) }) { failures in
                ["failures": .array(failures.map { ["path": .string($0.path), "reason": .string($0.reason)] })]
            }
        }
        table.register("library.rescan") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .replying({ reply in music.rescan(reply: reply) }) { $0.json }
        }
    }
}
