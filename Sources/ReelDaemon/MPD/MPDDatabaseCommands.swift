// MPD's database commands over the recordings tree: lsinfo, listall, listallinfo, update.

import ReelAudio
import ReelCore
import ReelLibrary
import ReelModel

/// The recordings tree as MPD's database (see `MPDLibraryView`). Every read runs on the store's
/// read queue, never on the event loop; listings keep MPD's order (a directory's songs, then
/// its subdirectories, each followed by its own contents when recursive).
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
            .now("update", .player, 0, 1) { request throws(MPDAck) in
                // The tree never needs a scan (every change goes through reeld): the job ends
                // as it starts, and idle clients see `update` as MPD's would.
                let job = updateJobs.next()
                context.hub.post(.update)
                var response = MPDResponse()
                response.field("updating_db", job)
                return response
            },
        ]
    }

    /// Update job numbers, as MPD counts them (from 1).
    private final class UpdateJobs: Sendable {
        private let last = Locked(0)
        func next() -> Int { last.withLock { $0 += 1; return $0 } }
    }

    /// `lsinfo` / `listall` / `listallinfo` of the URI in `request` (the root when none).
    private static func walk(
        _ context: MPDContext, _ request: MPDRequest, recursive: Bool, songInfo: Bool, _ reply: @escaping MPDReply
    ) {
        let uri = request.count == 1 ? request[0] : ""
        let view = context.view
        let tags = request.client.tags
        let name = request.name
        guard let target = view.target(of: uri) else { return reply(.failure(MPDAck(.noExist, "No such directory"))) }
        if case .file = target, !request.client.isLocal {
            // As MPD: an absolute path names a local file, which only a local client may read.
            return reply(.failure(MPDAck(.permission, "Access denied")))
        }
        context.core.library.read({ store throws(ReelError) -> MPDResponse in
            var response = MPDResponse()
            switch target {
            case .root:
                let root = try store.item(.root)
                response.field("directory", view.recordingsDirectory)
                if songInfo || name == "lsinfo" { response.field("Last-Modified", root.created) }
                if recursive { try list(store, folder: root, view, recursive, songInfo, tags, &response) }
            case .folder(let path), .treeItem(let path):
                let item = try view.item(forTreePath: path, in: store)
                if item.kind == .recording {
                    if songInfo { view.song(of: item).write(into: &response, tags: tags) } else {
                        response.field("file", view.song(of: item).uri)
                    }
                } else {
                    // listall and listallinfo name the directory itself first; lsinfo does not.
                    if recursive {
                        response.field("directory", view.directoryURI(ofFolder: item.path))
                        if songInfo { response.field("Last-Modified", item.created) }
                    }
                    try list(store, folder: item, view, recursive, songInfo, tags, &response)
                }
            case .file, .unsupported:
                throw ReelError(.notFound, "No such directory")
            }
            return response
        }) { result in
            reply(result.mapError { error in
                error.reason == .notFound ? MPDAck(.noExist, "No such directory") : MPDAck(error)
            })
        }
    }

    /// The recordings that match `find`/`search`'s filter, in `listall` order, with `window`
    /// and `sort` applied.
    private static func matches(
        _ context: MPDContext, _ request: MPDRequest, foldCase: Bool,
        reply: @escaping @Sendable (Result<[Item], MPDAck>) -> Void
    ) {
        let filter: MPDFilter
        let options: SearchOptions
        do throws(MPDAck) {
            let parsed = try MPDFilter.parse(request.arguments, foldCase: foldCase)
            filter = parsed.filter
            options = try SearchOptions(Array(request.arguments.dropFirst(parsed.consumed)))
        } catch {
            return reply(.failure(error))
        }
        let view = context.view
        let start: MPDLibraryView.Target
        if let base = filter.base {
            guard let target = view.target(of: base), target != .root else {
                return reply(.failure(MPDAck(.noExist, "No such directory")))
            }
            start = target
        } else {
            start = .root
        }
        context.core.library.read({ store throws(ReelError) -> [Item] in
            var found: [Item] = []
            switch start {
            case .folder(let path), .treeItem(let path):
                let item = try view.item(forTreePath: path, in: store)
                if item.kind == .recording {
                    if filter.matches(view.song(of: item).fields) { found.append(item) }
                } else {
                    try collect(store, folder: item, view, filter, &found)
                }
            default:
                try collect(store, folder: try store.item(.root), view, filter, &found)
            }
            return found
        }) { result in
            switch result {
            case .success(let items): reply(.success(options.apply(to: items, view: view)))
            case .failure(let error):
                reply(.failure(error.reason == .notFound ? MPDAck(.noExist, "No such directory") : MPDAck(error)))
            }
        }
    }

    private static func search(_ context: MPDContext, _ request: MPDRequest, foldCase: Bool, _ reply: @escaping MPDReply) {
        let tags = request.client.tags
        let view = context.view
        matches(context, request, foldCase: foldCase) { result in
            reply(result.map { items in
                var response = MPDResponse()
                for item in items { view.song(of: item).write(into: &response, tags: tags) }
                return response
            })
        }
    }

    private static func searchAdd(_ context: MPDContext, _ request: MPDRequest, foldCase: Bool, _ reply: @escaping MPDReply) {
        let player = context.core.player
        matches(context, request, foldCase: foldCase) { result in
            switch result {
            case .success(let items):
                guard !items.isEmpty else { return reply(.success(MPDResponse())) }
                player.add(.recordings(items.map { .id($0.id) }), at: nil, afterCurrent: false) { added in
                    reply(added.map { _ in MPDResponse() }.mapError(MPDAck.init))
                }
            case .failure(let error):
                reply(.failure(error))
            }
        }
    }

    /// Every recording under `folder` that `filter` matches, in `listall` order.
    private static func collect(
        _ store: LibraryStore, folder: Item, _ view: MPDLibraryView, _ filter: MPDFilter, _ found: inout [Item]
    ) throws(ReelError) {
        // The recordings: the music folders' branch is not part of `Recordings`.
        let items = try store.list(folder: .id(folder.id)).items.filter { !$0.readOnly }
        let recordings = items.filter { $0.kind == .recording }.map { ($0, view.song(of: $0)) }
            .sorted { mpdCollates($0.1.uri, before: $1.1.uri) }
        for (item, song) in recordings where filter.matches(song.fields) { found.append(item) }
        for child in items.filter({ $0.kind == .folder }).sorted(by: { mpdCollates($0.name, before: $1.name) }) {
            try collect(store, folder: child, view, filter, &found)
        }
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

        func apply(to items: [Item], view: MPDLibraryView) -> [Item] {
            var items = items
            if let sort {
                let keyed = items.map { item -> (Item, String) in
                    guard let tag = sort.tag else { return (item, item.created) }
                    return (item, view.song(of: item).tags.first { $0.0 == tag }?.1 ?? "")
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

    /// A folder's songs, then each subfolder (and, when recursive, its contents).
    private static func list(
        _ store: LibraryStore, folder: Item, _ view: MPDLibraryView, _ recursive: Bool, _ songInfo: Bool,
        _ tags: MPDTagSet, _ response: inout MPDResponse
    ) throws(ReelError) {
        // The recordings: the music folders' branch is not part of `Recordings`.
        let items = try store.list(folder: .id(folder.id)).items.filter { !$0.readOnly }
        // MPD's order: songs by file name, then directories by name, case folded.
        let songs = items.filter { $0.kind == .recording }.map { view.song(of: $0) }.sorted { mpdCollates($0.uri, before: $1.uri) }
        for song in songs {
            if songInfo { song.write(into: &response, tags: tags) } else { response.field("file", song.uri) }
        }
        for item in items.filter({ $0.kind == .folder }).sorted(by: { mpdCollates($0.name, before: $1.name) }) {
            response.field("directory", view.directoryURI(ofFolder: item.path))
            if songInfo { response.field("Last-Modified", item.created) }
            if recursive { try list(store, folder: item, view, recursive, songInfo, tags, &response) }
        }
    }
}
