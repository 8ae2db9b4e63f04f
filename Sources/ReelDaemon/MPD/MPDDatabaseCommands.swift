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

    /// A folder's songs, then each subfolder (and, when recursive, its contents).
    private static func list(
        _ store: LibraryStore, folder: Item, _ view: MPDLibraryView, _ recursive: Bool, _ songInfo: Bool,
        _ tags: MPDTagSet, _ response: inout MPDResponse
    ) throws(ReelError) {
        let items = try store.list(folder: .id(folder.id)).items
        // MPD's order: songs by file name, then directories by name, both byte by byte (the
        // tree's own listing folds case).
        let songs = items.filter { $0.kind == .recording }.map { view.song(of: $0) }.sorted { $0.uri < $1.uri }
        for song in songs {
            if songInfo { song.write(into: &response, tags: tags) } else { response.field("file", song.uri) }
        }
        for item in items.filter({ $0.kind == .folder }).sorted(by: { $0.name < $1.name }) {
            response.field("directory", view.directoryURI(ofFolder: item.path))
            if songInfo { response.field("Last-Modified", item.created) }
            if recursive { try list(store, folder: item, view, recursive, songInfo, tags, &response) }
        }
    }
}
