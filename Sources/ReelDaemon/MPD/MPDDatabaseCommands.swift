// MPD's database commands over the music folders and the recordings tree: lsinfo, listall,
// listallinfo, find, search, findadd, searchadd, update, rescan.

import ReelAudio
import ReelCore
import ReelModel
import ReelRuntime

/// The music folders and the recordings tree as MPD's database (see `MPDLibraryView`,
/// `MPDDatabase`). Every read runs on the core's read queue (`MusicController.browse`), never
/// on the event loop; listings keep MPD's order (a directory's songs, then its subdirectories,
/// each followed by its own contents when recursive).
enum MPDDatabaseCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let updateJobs = UpdateJobs()
        return [
            MPDCommand("lsinfo", .read, 0, 1) { request, reply in
                walk(context, request, recursive: false, songInfo: true, reply)
            },
            MPDCommand("listall", .read, 0, 1) { request, reply in
                walk(context, request, recursive: true, songInfo: false, reply)
            },
            MPDCommand("listallinfo", .read, 0, 1) { request, reply in
                walk(context, request, recursive: true, songInfo: true, reply)
            },
            MPDCommand("find", .read, 1, nil) { request, reply in search(context, request, foldCase: false, reply) },
            MPDCommand("search", .read, 1, nil) { request, reply in search(context, request, foldCase: true, reply) },
            MPDCommand("findadd", .add, 1, nil) { request, reply in searchAdd(context, request, foldCase: false, reply) },
            MPDCommand("searchadd", .add, 1, nil) { request, reply in searchAdd(context, request, foldCase: true, reply) },
            MPDCommand("update", .player, 0, 1) { request, reply in update(context, request, updateJobs, reply) },
            MPDCommand("rescan", .player, 0, 1) { request, reply in update(context, request, updateJobs, reply) },
        ]
    }

    /// Update job numbers, as MPD counts them (from 1), when there is no music folder to scan.
    private final class UpdateJobs: Sendable {
        private let last = Locked(0)
        func next() -> Int { last.withLock { $0 += 1; return $0 } }
    }

    /// `update`/`rescan [URI]`: a scan of the music folders (all of them: the scan skips
    /// unchanged files, so a path adds nothing but a check that it is well formed), answered
    /// with the scan's number; the idle events `update` (start and end) and `database` (a scan
    /// that changed something) come from the scan's progress (`MPDEventHub`). Without music
    /// folders the job ends as it starts: the recordings tree never needs a scan.
    private static func update(_ context: MPDContext, _ request: MPDRequest, _ jobs: UpdateJobs, _ reply: @escaping MPDReply) {
        if request.count == 1 {
            let uri = request[0]
            let parts = uri.split(separator: "/", omittingEmptySubsequences: false)
            if !uri.isEmpty, uri != "/", parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) || uri.hasPrefix("/") {
                return reply(.failure(MPDAck(.argument, "Malformed path")))
            }
        }
        guard !context.view.musicFolders.isEmpty else {
            let job = jobs.next()
            context.hub.post(.update)
            var response = MPDResponse()
            response.field("updating_db", job)
            return reply(.success(response))
        }
        context.core.music.rescan { result in
            reply(result.map { progress in
                var response = MPDResponse()
                response.field("updating_db", progress.scan)
                return response
            }.mapError(MPDAck.init))
        }
    }

    /// `lsinfo` / `listall` / `listallinfo` of the URI in `request` (the root when none).
    private static func walk(
        _ context: MPDContext, _ request: MPDRequest, recursive: Bool, songInfo: Bool, _ reply: @escaping MPDReply
    ) {
        let uri = request.count == 1 ? request[0] : ""
        let view = context.view
        let tags = request.client.tags
        guard let target = view.target(of: uri) else { return reply(.failure(MPDAck(.noExist, "No such directory"))) }
        if case .file = target, !request.client.isLocal {
            // As MPD: an absolute path names a local file, which only a local client may read.
            return reply(.failure(MPDAck(.permission, "Access denied")))
        }
        context.core.music.browse({ catalog throws(ReelError) -> MPDResponse in
            let database = MPDDatabase(view: view, catalog: catalog)
            let entry = try database.entry(target)
            var response = MPDResponse()
            if let song = database.song(of: entry) {
                if songInfo { song.song.write(into: &response, tags: tags) } else { response.field("file", song.song.uri) }
            } else if case .directory(let directory) = entry {
                // listall and listallinfo name the directory itself first; lsinfo does not.
                try database.write(
                    directory, recursive: recursive, songInfo: songInfo, tags: tags, into: &response,
                    header: recursive)
            }
            return response
        }) { result in
            let result = result.mapError { error in
                error.reason == .notFound ? MPDAck(.noExist, "No such directory") : MPDAck(error)
            }
            // As MPD 0.23: `lsinfo` of the root also lists the stored playlists, last.
            guard case .success(let listing) = result, case .root = target, songInfo, !recursive else {
                return reply(result)
            }
            context.core.playlists.list(withLengths: false) { playlists in
                var response = listing
                for playlist in (try? playlists.get()) ?? [] {
                    response.field("playlist", playlist.name)
                    response.field("Last-Modified", isoTime(Int(playlist.modified.rounded(.down))))
                }
                reply(.success(response))
            }
        }
    }

    /// The songs that match `find`/`search`'s filter, in `listall` order, with `window` and
    /// `sort` applied. Where the filter has conditions on tags, the music index narrows the
    /// candidates in SQL first.
    static func matches(
        _ context: MPDContext, _ arguments: [String], foldCase: Bool,
        reply: @escaping @Sendable (Result<[MPDDatabase.Song], MPDAck>) -> Void
    ) {
        let filter: MPDFilter
        let options: SearchOptions
        do throws(MPDAck) {
            let parsed = try MPDFilter.parse(arguments, foldCase: foldCase)
            filter = parsed.filter
            options = try SearchOptions(Array(arguments.dropFirst(parsed.consumed)))
        } catch {
            return reply(.failure(error))
        }
        songs(context, filter: filter) { result in reply(result.map(options.apply)) }
    }

    /// The songs `filter` matches, in `listall` order (from its `base`, if it has one).
    static func songs(
        _ context: MPDContext, filter: MPDFilter, reply: @escaping @Sendable (Result<[MPDDatabase.Song], MPDAck>) -> Void
    ) {
        let view = context.view
        var start = MPDLibraryView.Target.root
        if let base = filter.base {
            guard let target = view.target(of: base) else { return reply(.failure(MPDAck(.noExist, "No such directory"))) }
            start = target
        }
        let target = start
        context.core.music.browse({ catalog throws(ReelError) -> [MPDDatabase.Song] in
            let database = MPDDatabase(view: view, catalog: catalog)
            let entry = try database.entry(target)
            let candidates: [MPDDatabase.Song]
            switch entry {
            case .directory(let directory):
                let query: MusicQuery
                if case .root = directory { query = filter } else { query = .all }
                candidates = try database.songs(under: directory, query: query, sorted: false)
            default:
                candidates = database.song(of: entry).map { [$0] } ?? []
            }
            let matching = filter.isEmpty ? candidates : candidates.filter { filter.matches($0.song.fields) }
            return MPDDatabase.sortedForListing(matching)
        }) { result in
            reply(result.mapError { error in
                error.reason == .notFound ? MPDAck(.noExist, "No such directory") : MPDAck(error)
            })
        }
    }

    private static func search(_ context: MPDContext, _ request: MPDRequest, foldCase: Bool, _ reply: @escaping MPDReply) {
        let tags = request.client.tags
        // MPD 0.23 prints sorted results from copies that lost their audio format: no `Format`.
        let arguments = request.arguments
        let count = arguments.count
        let sorted = (count >= 3 && arguments[count - 2] == "sort")
            || (count >= 5 && arguments[count - 4] == "sort" && arguments[count - 2] == "window")
        matches(context, request.arguments, foldCase: foldCase) { result in
            reply(result.map { songs in
                var response = MPDResponse()
                for var song in songs {
                    if sorted { song.song.format = nil }
                    song.song.write(into: &response, tags: tags)
                }
                return response
            })
        }
    }

    private static func searchAdd(_ context: MPDContext, _ request: MPDRequest, foldCase: Bool, _ reply: @escaping MPDReply) {
        let player = context.core.player
        matches(context, request.arguments, foldCase: foldCase) { result in
            switch result {
            case .success(let songs):
                add(songs, to: player, at: nil) { added in reply(added.map { _ in MPDResponse() }) }
            case .failure(let error):
                reply(.failure(error))
            }
        }
    }

    /// Adds songs in order, at `position` (nil appends), as one change of the queue (one
    /// version, one `playlist` event): each run of music files as tracks of the index, each
    /// run of recordings as recordings.
    static func add(
        _ songs: [MPDDatabase.Song], to player: PlayerController, at position: Int?,
        reply: @escaping @Sendable (Result<[QueueEntry], MPDAck>) -> Void
    ) {
        var runs: [QueueAddition] = []
        var tracks: [MusicTrack] = []
        var recordings: [ItemReference] = []
        func flush() {
            if !tracks.isEmpty { runs.append(.musicTracks(tracks)); tracks = [] }
            if !recordings.isEmpty { runs.append(.recordings(recordings)); recordings = [] }
        }
        for song in songs {
            switch song.source {
            case .music(let track):
                if !recordings.isEmpty { flush() }
                tracks.append(track)
            case .recording(let item):
                if !tracks.isEmpty { flush() }
                recordings.append(.id(item.id))
            }
        }
        flush()
        // Nothing matched: nothing to add, and no change (MPD answers OK).
        guard !runs.isEmpty else { return reply(.success([])) }
        player.add(runs, at: position, afterCurrent: false) { result in reply(result.mapError(MPDAck.init)) }
    }

    /// `sort TAG` (`-TAG` descending) and `window START:END` after a filter.
    struct SearchOptions: Sendable {
        var sort: (tag: MPDTag?, descending: Bool)?
        var window: (start: Int, end: Int?)?

        init(_ arguments: [String]) throws(MPDAck) {
            var index = 0
            while index < arguments.count {
                guard index + 1 < arguments.count else { throw MPDAck(.argument, "Incorrect number of filter arguments") }
                let value = arguments[index + 1]
                switch arguments[index] {
                case "sort":
                    let descending = value.hasPrefix("-")
                    let name = descending ? String(value.dropFirst()) : value
                    if name == "Last-Modified" {
                        sort = (nil, descending)
                    } else if let tag = MPDTag(name: name) {
                        sort = (tag, descending)
                    } else if MPDTag.mpdName(name) != nil {
                        sort = nil
                    } else {
                        throw MPDAck(.argument, "Unknown sort tag")
                    }
                case "window":
                    let request = MPDRequest(
                        name: "window", arguments: [value], client: MPDClient(permission: [], isLocal: false),
                        table: MPDCommandTable([]))
                    window = try request.range(0)
                default:
                    throw MPDAck(.argument, "Unknown filter type")
                }
                index += 2
            }
        }

        func apply(_ items: [MPDDatabase.Song]) -> [MPDDatabase.Song] {
            var items = items
            if let sort {
                let keyed = items.map { item -> (MPDDatabase.Song, String) in
                    guard let tag = sort.tag else { return (item, item.song.lastModified ?? "") }
                    return (item, item.song.tags.first { $0.0 == tag }?.1 ?? "")
                }
                items = keyed.enumerated().sorted { a, b in
                    if a.element.1 != b.element.1 { return (a.element.1 < b.element.1) != sort.descending }
                    return a.offset < b.offset
                }.map(\.element.0)
            }
            if let window {
                let start = min(window.start, items.count)
                items = Array(items[start..<min(window.end ?? items.count, items.count)])
            }
            return items
        }
    }
}
