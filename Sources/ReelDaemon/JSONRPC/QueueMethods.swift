// queue.* — the play queue: list, add, remove, move, clear, options.

import ReelCore
import ReelModel
import ReelProtocol

/// Decodes parameters and encodes results; the queue's rules are in `PlayerController`.
enum QueueMethods {
    static func register(into table: inout MethodTable, player: PlayerController, music: MusicController) {
        table.register("queue.list") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["start", "count"])
            let start = try params.optionalInt("start") ?? 0
            let count = try params.optionalInt("count")
            let listing = try withRPCErrors { () throws(ReelError) in try player.listQueue(start: start, count: count) }
            var object = listing.summary.jsonObject
            object["entries"] = .array(listing.entries.map(\.json))
            return .result(.object(object))
        }
        table.register("queue.add") { call throws(RPCError) in
            let params = call.params
            let additions: [QueueAddition]
            if let sources = params["sources"] {
                try params.rejectUnknown(allowed: ["sources", "position", "next"])
                let (additions, skippable) = try params.sources(sources)
                let position = try params.optionalInt("position")
                let next = try params.optionalBool("next") ?? false
                if next && position != nil {
                    throw RPCError.invalidParams("give \"position\" or \"next\", not both")
                }
                return .replying({ reply in
                    player.add(additions, skippable: skippable, at: position, afterCurrent: next, reply: reply)
                }) { outcome in
                    [
                        "entries": .array(outcome.entries.map(\.json)),
                        "counts": .array(outcome.counts.map { .int(Int64($0)) }),
                        "skipped": .array(outcome.skipped.map { skipped -> JSONValue in
                            [
                                "index": .int(Int64(skipped.index)), "message": .string(skipped.error.message),
                                "reason": .string(skipped.error.reason.rawValue),
                            ]
                        }),
                    ]
                }
            } else {
                try params.rejectUnknown(allowed: Params.sourceNames.union(["position", "next"]))
                additions = [try params.source()]
            }
            let position = try params.optionalInt("position")
            let next = try params.optionalBool("next") ?? false
            if next && position != nil {
                throw RPCError.invalidParams("give \"position\" or \"next\", not both")
            }
            return .replying({ reply in player.add(additions, at: position, afterCurrent: next, reply: reply) }) { entries in
                ["entries": .array(entries.map(\.json))]
            }
        }
        table.register("queue.remove") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["id", "ids"])
            let ids: [Int]
            switch (try params.optionalInt("id"), params["ids"]) {
            case (let id?, nil):
                ids = [id]
            case (nil, let list?):
                guard let array = list.arrayValue, !array.isEmpty else {
                    throw RPCError.invalidParams("\"ids\" must be a non-empty array of entry ids")
                }
                ids = try array.map { (value) throws(RPCError) -> Int in
                    guard let id = value.intValue else { throw RPCError.invalidParams("\"ids\" must hold integers") }
                    return id
                }
            default:
                throw RPCError.invalidParams("queue.remove needs \"id\" or \"ids\" (not both)")
            }
            // Answered once the player has followed the removal (stopped, or the next entry
            // started), so the client's next player.status shows it, and the removal is saved.
            return .later { complete in
                do throws(ReelError) {
                    try player.removeEntries(ids: ids) { summary in complete(.success(summaryResult(summary))) }
                } catch {
                    complete(.failure(RPCError(error)))
                }
            }
        }
        table.register("queue.move") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["id", "position"])
            let id = try params.requiredInt("id")
            let position = try params.requiredInt("position")
            return .later { complete in
                do throws(ReelError) {
                    try player.moveEntry(id: id, to: position) { summary in complete(.success(summaryResult(summary))) }
                } catch {
                    complete(.failure(RPCError(error)))
                }
            }
        }
        table.register("queue.clear") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .later { complete in player.clearQueue { summary in complete(.success(summaryResult(summary))) } }
        }
        table.register("queue.setOptions") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["repeat", "random", "single", "consume"])
            let single = try params["single"].map { (value) throws(RPCError) -> SingleMode in
                guard let mode = SingleMode(json: value) else {
                    throw RPCError.invalidParams("single must be true, false or \"oneshot\"")
                }
                return mode
            }
            let repeats = try params.optionalBool("repeat")
            let random = try params.optionalBool("random")
            let consume = try params.optionalBool("consume")
            return .later { complete in
                player.setQueueOptions(repeats: repeats, random: random, single: single, consume: consume) { options in
                    complete(.success(options.json))
                }
            }
        }
    }

    /// `{version, length, current, next}`: what remove, move and clear answer.
    static func summaryResult(_ summary: QueueSummary) -> JSONValue {
        var object = summary.jsonObject
        object["options"] = nil
        return .object(object)
    }
}

extension Params {
    /// The parameters that name what `queue.add` adds (one source).
    static let sourceNames: Set<String> = ["file", "item", "path", "url", "track", "album", "albumArtist"]

    /// One source of `queue.add`: `file`, `item`/`path`, `url` (http or https), `track` (a music
    /// track's id), or `album` (with `albumArtist`).
    func source() throws(RPCError) -> QueueAddition {
        guard has("track") || has("album") || has("albumArtist") else { return try playable() }
        guard !has("file"), !has("item"), !has("path"), !has("url") else {
            throw RPCError.invalidParams("give \"file\", a recording (\"item\"/\"path\"), \"url\", \"track\" or \"album\": one of them")
        }
        let track = try optionalInt("track")
        let album = try optionalString("album")
        let albumArtist = try optionalString("albumArtist")
        if albumArtist != nil && album == nil {
            throw RPCError.invalidParams("\"albumArtist\" goes with \"album\"")
        }
        if let track, album == nil { return .musicTrack(Int64(track)) }
        guard track == nil, let album else {
            throw RPCError.invalidParams("give \"track\" (a music track's id) or \"album\" (its name), not both")
        }
        return .album(name: album, albumArtist: albumArtist)
    }

    /// `sources`: a non-empty array of source objects (each as `source()` reads it, and
    /// `skippable`), added as one change; and the indices of those marked `skippable`.
    func sources(_ value: JSONValue) throws(RPCError) -> (additions: [QueueAddition], skippable: Set<Int>) {
        guard let array = value.arrayValue, !array.isEmpty else {
            throw RPCError.invalidParams("\"sources\" must be a non-empty array of sources")
        }
        var additions: [QueueAddition] = []
        var skippable: Set<Int> = []
        additions.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            guard let object = element.objectValue else {
                throw RPCError.invalidParams("\"sources\"[\(index)] must be an object (\"file\", \"item\", \"path\", \"url\", \"track\" or \"album\")")
            }
            let source = Params(object, method: method)
            do throws(RPCError) {
                try source.rejectUnknown(allowed: Self.sourceNames.union(["skippable"]))
                additions.append(try source.source())
                if try source.optionalBool("skippable") == true { skippable.insert(index) }
            } catch {
                throw RPCError.invalidParams("\"sources\"[\(index)]: \(error.message)")
            }
        }
        return (additions, skippable)
    }

    /// `file` (an absolute path) or an item (`item` id or `path` in the tree).
    func playable() throws(RPCError) -> QueueAddition {
        if let url = try optionalString("url") {
            guard !has("file"), !has("item"), !has("path") else {
                throw RPCError.invalidParams("give \"url\", \"file\" or a recording (\"item\"/\"path\"), only one")
            }
            // A station playlist by its name is expanded to its streams.
            return .urlOrPlaylist(url)
        }
        if let reference = try optionalItem() {
            guard !has("file") else {
                throw RPCError.invalidParams("give \"file\" or a recording (\"item\"/\"path\"), not both")
            }
            return .recording(reference)
        }
        guard let file = try optionalString("file") else {
            throw RPCError.invalidParams("\(method) needs \"file\" (an absolute path), or \"item\"/\"path\" for a recording or folder")
        }
        guard file.hasPrefix("/") else {
            throw RPCError.invalidParams("\"file\" must be an absolute path, not \"\(file)\"")
        }
        return .file(file)
    }
}
