// MPD's stored playlist commands, on the core's PlaylistStore.

import ReelCore
import ReelModel

/// `listplaylists`, `listplaylist`, `listplaylistinfo`, `load`, `playlistadd`,
/// `playlistclear`, `playlistdelete`, `playlistmove`, `rename`, `rm`, `save`, `searchaddpl`.
/// The playlists are the core's (`PlaylistStore`, in `playlist_dir`); errors as MPD words them
/// (`No such playlist`, `Playlist already exists`, `Bad playlist name`, `Bad song index`). The
/// `stored_playlist` idle event comes from the store's changes (`MPDEventHub`).
enum MPDPlaylistCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let playlists = context.core.playlists
        let view = context.view
        return [
            MPDCommand("listplaylists", .read, 0, 0) { _, reply in
                playlists.list(withLengths: false) { result in
                    reply(result.map { summaries in
                        var response = MPDResponse()
                        for summary in summaries {
                            response.field("playlist", summary.name)
                            response.field("Last-Modified", isoTime(Int(summary.modified.rounded(.down))))
                        }
                        return response
                    }.mapError(ack))
                }
            },
            MPDCommand("listplaylist", .read, 1, 2) { request, reply throws(MPDAck) in
                let (start, count) = try window(request, 1)
                playlists.get(request[0], start: start, count: count, describe: false) { result in
                    reply(result.map { listing in
                        var response = MPDResponse()
                        for entry in listing.entries { response.field("file", entry.uri) }
                        return response
                    }.mapError(ack))
                }
            },
            MPDCommand("listplaylistinfo", .read, 1, 2) { request, reply throws(MPDAck) in
                let (start, count) = try window(request, 1)
                let tags = request.client.tags
                playlists.get(request[0], start: start, count: count) { result in
                    reply(result.map { listing in
                        var response = MPDResponse()
                        writeSongs(of: listing.entries, view: view, tags: tags, into: &response)
                        return response
                    }.mapError(ack))
                }
            },
            MPDCommand("load", .add, 1, 3) { request, reply throws(MPDAck) in
                if PlayerController.isStreamURL(request[0]) {
                    // A station playlist by URL, not a stored playlist: expanded into the queue.
                    return MPDStreamCommands.loadStations(context, request, reply: reply)
                }
                var (start, end) = (0, Int?.none)
                if request.count >= 2 { (start, end) = try request.range(1) }
                var position: Int?
                if request.count == 3 {
                    let at = try request.unsigned(2)
                    guard at <= context.core.player.queueSummary.length else { throw MPDAck(.argument, "Bad song index") }
                    position = at
                }
                // MPD answers OK only: no entry values are made for the reply.
                playlists.load(request[0], start: start, end: end, at: position, listing: false) { result in
                    reply(result.map { _ in MPDResponse() }.mapError(ack))
                }
            },
            MPDCommand("playlistadd", .player, 2, 3) { request, reply throws(MPDAck) in
                let name = request[0]
                let position = request.count == 3 ? try request.unsigned(2) : nil
                let add: @Sendable ([String]) -> Void = { lines in
                    playlists.add(name, lines: lines, at: position) { result in
                        reply(result.map { _ in MPDResponse() }.mapError(ack))
                    }
                }
                if PlayerController.isStreamURL(request[1]) { return add([request[1]]) }
                songURIs(context, request[1]) { result in
                    switch result {
                    case .success(let uris): add(uris)
                    case .failure(let error): reply(.failure(error))
                    }
                }
            },
            MPDCommand("playlistclear", .player, 1, 1) { request, reply in
                playlists.clear(request[0]) { result in reply(result.map { _ in MPDResponse() }.mapError(ack)) }
            },
            MPDCommand("playlistdelete", .player, 2, 2) { request, reply throws(MPDAck) in
                // MPD 0.24 takes a range; 0.23 one position.
                let (start, end) = try request.range(1)
                let positions = Array(start..<(end ?? start + 1))
                playlists.remove(request[0], positions: positions) { result in
                    reply(result.map { _ in MPDResponse() }.mapError(ack))
                }
            },
            MPDCommand("playlistmove", .player, 3, 3) { request, reply throws(MPDAck) in
                let from = try request.unsigned(1)
                let to = try request.unsigned(2)
                playlists.move(request[0], from: from, to: to) { result in
                    reply(result.map { _ in MPDResponse() }.mapError { error in
                        error.reason == .outOfRange ? MPDAck(.argument, "Bad range") : ack(error)
                    })
                }
            },
            MPDCommand("rename", .player, 2, 2) { request, reply in
                playlists.rename(request[0], to: request[1]) { result in
                    // MPD words this one differently from `save`'s.
                    reply(result.map { _ in MPDResponse() }.mapError { error in
                        error.reason == .nameTaken ? MPDAck(.exist, "Playlist exists already") : ack(error)
                    })
                }
            },
            MPDCommand("rm", .player, 1, 1) { request, reply in
                playlists.delete(request[0]) { result in reply(result.map { _ in MPDResponse() }.mapError(ack)) }
            },
            MPDCommand("save", .player, 1, 2) { request, reply throws(MPDAck) in
                var mode = PlaylistSaveMode.create
                if request.count == 2 {
                    // MPD 0.24: `save NAME create|replace|append`.
                    guard let given = PlaylistSaveMode(rawValue: request[1]) else {
                        throw MPDAck(.argument, "Unrecognized save mode: \(request[1])")
                    }
                    mode = given
                }
                playlists.save(request[0], mode: mode) { result in
                    reply(result.map { _ in MPDResponse() }.mapError(ack))
                }
            },
            MPDCommand("searchaddpl", .player, 2, nil) { request, reply in
                let name = request[0]
                MPDDatabaseCommands.matches(context, Array(request.arguments.dropFirst()), foldCase: true) { result in
                    switch result {
                    case .success(let songs):
                        // As MPD: nothing matched, nothing made.
                        guard !songs.isEmpty else { return reply(.success(MPDResponse())) }
                        playlists.add(name, lines: songs.map(\.song.uri)) { result in
                            reply(result.map { _ in MPDResponse() }.mapError(ack))
                        }
                    case .failure(let error):
                        reply(.failure(error))
                    }
                }
            },
        ]
    }

    /// A core error as MPD's stored playlist commands word it.
    static func ack(_ error: ReelError) -> MPDAck {
        switch error.reason {
        case .notFound: MPDAck(.noExist, "No such playlist")
        case .nameTaken: MPDAck(.exist, "Playlist already exists")
        case .invalidName: MPDAck(.argument, "Bad playlist name")
        case .outOfRange: MPDAck(.argument, "Bad song index")
        default: MPDAck(error)
        }
    }

    /// An optional `START:END` argument as a start and a count (nil: to the end).
    private static func window(_ request: MPDRequest, _ index: Int) throws(MPDAck) -> (start: Int, count: Int?) {
        guard request.count > index else { return (0, nil) }
        let (start, end) = try request.range(index)
        return (start, end.map { $0 - start })
    }

    /// A playlist entry as MPD's `listplaylistinfo` prints it: a song of the database in full,
    /// anything else by its line alone.
    static func song(of entry: PlaylistEntry, view: MPDLibraryView) -> MPDSong {
        switch entry.target {
        case .music(let track): view.song(of: track)
        case .recording(let item): view.song(of: item)
        case .url, .file, .missing: MPDSong(uri: entry.uri)
        }
    }

    /// `listplaylistinfo`'s songs, in order: a music file's lines are written straight from its
    /// track (`MPDLibraryView.write(_:tags:into:)`), and a file that the playlist names many
    /// times is written once and its bytes repeated.
    static func writeSongs(of entries: [PlaylistEntry], view: MPDLibraryView, tags: MPDTagSet, into response: inout MPDResponse) {
        var written = WrittenSongs(entries)
        // About 200 bytes a song (a path, the time, the format, four tags, the length).
        response.reserveCapacity(entries.count * 200)
        for index in entries.indices {
            guard case .music(let track) = entries[index].target else {
                song(of: entries[index], view: view).write(into: &response, tags: tags)
                continue
            }
            // In a listing, one line names one file: the same line and the same id, the same lines.
            if let done = written[track.id], entries[done.entry].uri == entries[index].uri {
                response.repeatLines(done.start..<done.end)
                continue
            }
            let start = response.count
            view.write(track, tags: tags, into: &response)
            written[track.id] = (index, start, response.count)
        }
    }

    /// Where each music file's lines were first written in a reply, by index id, and the entry
    /// that named it: a table over the ids' span when that is not much larger than the entries
    /// (the index numbers its files from 1 up, so a playlist's files mostly lie close
    /// together), else a dictionary.
    struct WrittenSongs {
        typealias Lines = (entry: Int, start: Int, end: Int)
        private var low: Int64 = 0
        /// By id − `low`; `entry` −1 where none was written.
        private var table: [(entry: Int32, start: UInt32, end: UInt32)] = []
        private var dictionary: [Int64: Lines] = [:]

        init(_ entries: [PlaylistEntry]) {
            var (low, high) = (Int64.max, Int64.min)
            for index in entries.indices {
                guard let id = Self.musicID(entries[index].target) else { continue }
                low = min(low, id)
                high = max(high, id)
            }
            let span = high.subtractingReportingOverflow(low)
            guard low <= high, !span.overflow, span.partialValue < Int64(2 * entries.count + 64), entries.count < Int32.max
            else { return }
            self.low = low
            table = Array(repeating: (-1, 0, 0), count: Int(high - low) + 1)
        }

        /// The id of a target's music file, read in its box (the track is not copied out).
        private static func musicID(_ target: borrowing PlaylistEntry.Target) -> Int64? {
            switch target {
            case .music(let track): track.id
            default: nil
            }
        }

        subscript(id: Int64) -> Lines? {
            get {
                guard !table.isEmpty else { return dictionary[id] }
                let lines = table[Int(id - low)]
                return lines.entry < 0 ? nil : (Int(lines.entry), Int(lines.start), Int(lines.end))
            }
            set {
                guard let newValue else { return }
                guard !table.isEmpty else { return dictionary[id] = newValue }
                // A reply past 4 GiB repeats nothing more (it would not fit the table).
                guard newValue.end <= UInt32.max else { return }
                table[Int(id - low)] = (Int32(newValue.entry), UInt32(newValue.start), UInt32(newValue.end))
            }
        }
    }

    /// The URIs of the songs `uri` names in the database (a song, or a directory's songs in
    /// `listall` order), as `playlistadd` adds them.
    private static func songURIs(
        _ context: MPDContext, _ uri: String, reply: @escaping @Sendable (Result<[String], MPDAck>) -> Void
    ) {
        let view = context.view
        guard let target = view.target(of: uri) else { return reply(.failure(MPDAck(.noExist, "No such directory"))) }
        switch target {
        case .file, .unsupported:
            return reply(.failure(MPDAck(.noExist, "No such directory")))
        default:
            break
        }
        context.core.music.browse({ catalog throws(ReelError) -> [String] in
            let database = MPDDatabase(view: view, catalog: catalog)
            let entry = try database.entry(target)
            if let song = database.song(of: entry) { return [song.song.uri] }
            guard case .directory(let directory) = entry else { return [] }
            return try database.songs(under: directory).map(\.song.uri)
        }) { result in
            reply(result.mapError { error in
                error.reason == .notFound ? MPDAck(.noExist, "No such directory") : MPDAck(error)
            })
        }
    }
}
