// MPD's queue commands: add, delete, move, swap, shuffle, clear, and the queue's listings.

import ReelCore
import ReelModel

/// `add`, `addid`, `clear`, `delete`, `deleteid`, `move`, `moveid`, `swap`, `swapid`,
/// `shuffle`, `prio`, `prioid`, `playlist`, `playlistinfo`, `playlistid`, `playlistfind`,
/// `playlistsearch`, `plchanges`, `plchangesposid`, on the core's queue. Positions and ranges
/// as MPD reads them; songs as `MPDLibraryView` names them.
enum MPDQueueCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let player = context.core.player
        return [
            MPDCommand("add", .add, 1, 2) { request, reply in
                add(context, request) { result in reply(result.map { _ in MPDResponse() }) }
            },
            MPDCommand("addid", .add, 1, 2) { request, reply in
                add(context, request, songOnly: true) { result in
                    reply(result.map { entries in
                        var response = MPDResponse()
                        if let id = entries.first?.id { response.field("Id", id) }
                        return response
                    })
                }
            },
            MPDCommand("clear", .player, 0, 0) { _, reply in
                // As MPD, `clear` answers once playback has stopped.
                player.clearQueue { _ in reply(.success(MPDResponse())) }
            },
            // Both answer once the player has followed (stopped when the paused song went), as
            // MPD does: a `status` right after shows it.
            MPDCommand("delete", .player, 1, 1) { request, reply throws(MPDAck) in
                let (start, end) = try request.range(0)
                let length = player.queueSummary.length
                // As MPD: a start at the end deletes nothing, an end past it is clamped.
                guard start <= length else { throw MPDAck(.argument, "Bad song index") }
                let ids = (start..<min(end ?? length, length)).compactMap { player.entry(at: $0)?.id }
                guard !ids.isEmpty else { return reply(.success(MPDResponse())) }
                try core(player.removeEntries(ids: ids) { _ in reply(.success(MPDResponse())) })
            },
            MPDCommand("deleteid", .player, 1, 1) { request, reply throws(MPDAck) in
                let id = try request.unsigned(0)
                guard player.entry(id: id) != nil else { throw MPDAck(.noExist, "No such song") }
                try core(player.removeEntries(ids: [id]) { _ in reply(.success(MPDResponse())) })
            },
            // Every change answers once it is saved.
            MPDCommand("move", .player, 2, 2) { request, reply throws(MPDAck) in
                let (start, end) = try request.range(0)
                let length = player.queueSummary.length
                let upper = end ?? length
                guard start < length, upper <= length else { throw MPDAck(.argument, "Bad song index") }
                let to = try target(request, 1, count: upper - start, moving: start..<upper, player: player)
                try core(player.moveEntries(range: start..<upper, to: to, saved: saved(reply)))
            },
            MPDCommand("moveid", .player, 2, 2) { request, reply throws(MPDAck) in
                let id = try request.unsigned(0)
                guard let entry = player.entry(id: id) else { throw MPDAck(.noExist, "No such song") }
                let to = try target(request, 1, count: 1, moving: entry.position..<entry.position + 1, player: player)
                try core(player.moveEntry(id: id, to: to, saved: saved(reply)))
            },
            MPDCommand("swap", .player, 2, 2) { request, reply throws(MPDAck) in
                guard let first = player.entry(at: try request.unsigned(0)), let second = player.entry(at: try request.unsigned(1))
                else { throw MPDAck(.argument, "Bad song index") }
                try core(player.swapEntries(id: first.id, with: second.id, saved: saved(reply)))
            },
            MPDCommand("swapid", .player, 2, 2) { request, reply throws(MPDAck) in
                let first = try request.unsigned(0)
                let second = try request.unsigned(1)
                guard player.entry(id: first) != nil, player.entry(id: second) != nil else {
                    throw MPDAck(.noExist, "No such song")
                }
                try core(player.swapEntries(id: first, with: second, saved: saved(reply)))
            },
            MPDCommand("shuffle", .player, 0, 1) { request, reply throws(MPDAck) in
                var range: Range<Int>? = nil
                if request.count == 1 {
                    let (start, end) = try request.range(0)
                    let length = player.queueSummary.length
                    let upper = min(end ?? length, length)
                    guard start <= upper else { throw MPDAck(.argument, "Bad song index") }
                    range = start..<upper
                }
                try core(player.shuffleQueue(range: range, saved: saved(reply)))
            },
            // Unlike MPD, every argument is checked before any priority changes.
            .now("prio", .player, 2, nil) { request throws(MPDAck) in
                let priority = try priority(request)
                let length = player.queueSummary.length
                var ids: [Int] = []
                for index in 1..<request.count {
                    let (start, end) = try request.range(index)
                    guard start <= length else { throw MPDAck(.argument, "Bad song index") }
                    ids += (start..<min(end ?? length, length)).compactMap { player.entry(at: $0)?.id }
                }
                try core(player.setPriority(priority, ids: ids))
                return MPDResponse()
            },
            .now("prioid", .player, 2, nil) { request throws(MPDAck) in
                let priority = try priority(request)
                var ids: [Int] = []
                for index in 1..<request.count {
                    let id = try request.unsigned(index)
                    guard player.entry(id: id) != nil else { throw MPDAck(.noExist, "No such song") }
                    ids.append(id)
                }
                try core(player.setPriority(priority, ids: ids))
                return MPDResponse()
            },
            MPDCommand("playlistfind", .read, 1, nil) { request, reply throws(MPDAck) in
                songs((try? player.listQueue().entries) ?? [], context, request, reply, matching: try filter(request, foldCase: false))
            },
            MPDCommand("playlistsearch", .read, 1, nil) { request, reply throws(MPDAck) in
                songs((try? player.listQueue().entries) ?? [], context, request, reply, matching: try filter(request, foldCase: true))
            },
            MPDCommand("playlist", .read, 0, 0) { _, reply in
                var response = MPDResponse()
                let entries = (try? player.listQueue().entries) ?? []
                for entry in entries {
                    let song = context.view.song(of: entry, item: nil)
                    response.field("\(entry.position):file", song.uri)
                }
                reply(.success(response))
            },
            MPDCommand("playlistinfo", .read, 0, 1) { request, reply throws(MPDAck) in
                var entries = (try? player.listQueue().entries) ?? []
                if request.count == 1 {
                    let (start, end) = try request.range(0)
                    // As MPD: a position or range may start at the queue's end (and list nothing).
                    guard start <= entries.count else { throw MPDAck(.argument, "Bad song index") }
                    entries = Array(entries[min(start, entries.count)..<min(end ?? entries.count, entries.count)])
                }
                songs(entries, context, request, reply)
            },
            MPDCommand("playlistid", .read, 0, 1) { request, reply throws(MPDAck) in
                if request.count == 1 {
                    let id = try request.unsigned(0)
                    guard let entry = player.entry(id: id) else { throw MPDAck(.noExist, "No such song") }
                    songs([entry], context, request, reply)
                } else {
                    songs((try? player.listQueue().entries) ?? [], context, request, reply)
                }
            },
            MPDCommand("plchanges", .read, 1, 2) { request, reply throws(MPDAck) in
                songs(try changes(request, player), context, request, reply)
            },
            .now("plchangesposid", .read, 1, 2) { request throws(MPDAck) in
                var response = MPDResponse()
                for entry in try changes(request, player) {
                    response.field("cpos", entry.position)
                    response.field("Id", entry.id)
                }
                return response
            },
        ]
    }

    /// The entries changed since the client's `playlist` version (the version MPD prints is
    /// the core's `entriesVersion` plus one), optionally within a position range.
    private static func changes(_ request: MPDRequest, _ player: PlayerController) throws(MPDAck) -> [QueueEntry] {
        let version = try request.unsigned(0)
        var entries = player.changedEntries(since: max(version - 1, -1))
        if request.count == 2 {
            let (start, end) = try request.range(1)
            entries = entries.filter { $0.position >= start && $0.position < (end ?? Int.max) }
        }
        return entries
    }

    /// Writes `entries` as songs (those `filter` matches, when given): their recordings and
    /// music files are read on the core's read queue first (one batch).
    static func songs(
        _ entries: [QueueEntry], _ context: MPDContext, _ request: MPDRequest, _ reply: @escaping MPDReply,
        matching filter: MPDFilter? = nil
    ) {
        let tags = request.client.tags
        let view = context.view
        let write: @Sendable ([MPDSong]) -> MPDResponse = { songs in
            var response = MPDResponse()
            for song in songs where filter?.matches(song.fields) ?? true { song.write(into: &response, tags: tags) }
            return response
        }
        guard entries.contains(where: { $0.itemID != nil || view.isMusicFile($0) }) else {
            return reply(.success(write(entries.map { view.song(of: $0, item: nil) })))
        }
        view.songs(of: entries, music: context.core.music) { songs in reply(.success(write(songs))) }
    }

    /// `playlistfind`/`playlistsearch`'s filter: every argument is the filter's (MPD's, which
    /// knows no `sort` or `window` here: such a word is an unknown filter type).
    private static func filter(_ request: MPDRequest, foldCase: Bool) throws(MPDAck) -> MPDFilter {
        let parsed = try MPDFilter.parse(request.arguments, foldCase: foldCase)
        guard parsed.consumed == request.count else { throw MPDAck(.argument, "Unknown filter type") }
        return parsed.filter
    }

    /// `prio`/`prioid`'s first argument: 0 to 255.
    private static func priority(_ request: MPDRequest) throws(MPDAck) -> Int {
        let priority = try request.unsigned(0)
        guard PlayQueue.priorities.contains(priority) else { throw .argument("Number too large", request[0]) }
        return priority
    }

    /// A position argument (`add`, `addid`, `move`, `moveid`) for `count` entries: absolute, or
    /// `+N` (N after the entry following the current one) / `-N` (N before the current one), as
    /// MPD 0.23. A move counts from where the current entry is once `moving` is taken out.
    private static func target(
        _ request: MPDRequest, _ index: Int, count: Int, moving: Range<Int>? = nil, player: PlayerController
    ) throws(MPDAck) -> Int {
        let text = request[index]
        let length = player.queueSummary.length
        if text.hasPrefix("+") || text.hasPrefix("-") {
            guard let current = player.queueSummary.current, var position = player.entry(id: current)?.position else {
                throw MPDAck(.argument, "No current song")
            }
            if let moving, position >= moving.upperBound { position -= moving.count }
            // `offset` carries its sign.
            let offset = try request.int(index)
            let to = text.hasPrefix("+") ? position + 1 + offset : position + offset
            guard to >= 0, to + count <= length else { throw .argument("Number too large", String(text.dropFirst())) }
            return to
        }
        let to = try request.unsigned(index)
        guard to + count <= length else { throw .argument("Number too large", text) }
        return to
    }

    /// `add URI [POS]`: a directory (recursively, in MPD's order), a song, an http(s) URL, or
    /// — over a Unix socket only — an absolute file inside the media roots.
    private static func add(
        _ context: MPDContext, _ request: MPDRequest, songOnly: Bool = false,
        reply: @escaping @Sendable (Result<[QueueEntry], MPDAck>) -> Void
    ) {
        let player = context.core.player
        let position: Int?
        do throws(MPDAck) {
            position = request.count == 2 ? try target(request, 1, count: 0, player: player) : nil
        } catch {
            return reply(.failure(error))
        }
        let finish: PlayerController.AddReply = { result in reply(result.mapError(MPDAck.init)) }
        if PlayerController.isStreamURL(request[0]) {
            // A stream, queued as it is (as MPD: nothing is fetched until it plays).
            return player.add(.url(request[0]), at: position, afterCurrent: false, reply: finish)
        }
        switch context.view.target(of: request[0]) {
        case nil:
            reply(.failure(MPDAck(.noExist, songOnly ? "No such song" : "No such directory")))
        case .unsupported:
            reply(.failure(MPDAck(.argument, "Unsupported URI scheme")))
        case .file(let path):
            guard request.client.isLocal else { return reply(.failure(MPDAck(.permission, "Access denied"))) }
            player.add(.file(path), at: position, afterCurrent: false, reply: finish)
        case .root where !context.view.musicFolders.isEmpty, .music:
            // The music folders (and, for the root, the recordings): a file, or a directory's
            // songs in `listall` order, from the index.
            let target = context.view.target(of: request[0])!
            let view = context.view
            context.core.music.browse({ catalog throws(ReelError) -> [MPDDatabase.Song]? in
                let database = MPDDatabase(view: view, catalog: catalog)
                let entry = try database.entry(target)
                if let song = database.song(of: entry) { return [song] }
                guard !songOnly, case .directory(let directory) = entry else { return nil }
                return try database.songs(under: directory)
            }) { result in
                switch result {
                case .success(let songs?):
                    guard !songs.isEmpty else { return reply(.success([])) }
                    MPDDatabaseCommands.add(songs, to: player, at: position, reply: reply)
                case .success(nil):
                    reply(.failure(MPDAck(.noExist, "No such song")))
                case .failure(let error):
                    guard error.reason == .notFound else { return reply(.failure(MPDAck(error))) }
                    reply(.failure(MPDAck(.noExist, songOnly ? "No such song" : "No such directory")))
                }
            }
        case .root, .folder("/"):
            if songOnly { return reply(.failure(MPDAck(.noExist, "No such song"))) }
            player.add(.recording(.root), at: position, afterCurrent: false, reply: finish)
        case .folder(let path), .treeItem(let path):
            context.core.library.recordingOrFolder(fileTreePath: path) { result in
                switch result {
                case .success(let item):
                    if songOnly, item.kind != .recording { return reply(.failure(MPDAck(.noExist, "No such song"))) }
                    player.add(.recording(.id(item.id)), at: position, afterCurrent: false, reply: finish)
                case .failure:
                    reply(.failure(MPDAck(.noExist, "No such directory")))
                }
            }
        }
    }

    /// The core's "saved" callback as an empty answer.
    static func saved<Value>(_ reply: @escaping MPDReply) -> @Sendable (Value) -> Void {
        { _ in reply(.success(MPDResponse())) }
    }

    /// Runs a core call that throws `ReelError`, as an ACK.
    @discardableResult
    static func core<Value>(_ body: @autoclosure () throws(ReelError) -> Value) throws(MPDAck) -> Value {
        do throws(ReelError) {
            return try body()
        } catch {
            throw MPDAck(error)
        }
    }
}
