// MPD's `list` and `count`: the database's tag values, grouped, with MPD's fallbacks.

import ReelCore
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// `list TAG [FILTER] [group TAG]…` and `count [FILTER] [group TAG]` over the music folders and
/// the recordings, as MPD 0.23 answers them (`src/command/DatabaseCommands.cxx`,
/// `src/db/UniqueTags.cxx`, `src/db/Count.cxx`):
/// - a song lacking the tag counts under its fallback (AlbumArtist → Artist, ArtistSort →
///   Artist, AlbumSort → Album, AlbumArtistSort → AlbumArtist → Artist, TitleSort → Title), else
///   under an empty value, which is listed (`Album: `);
/// - values are in byte order; the last `group` is the outermost level;
/// - `list Album ARTIST` (one argument, not an expression) is the old form of `list Album
///   Artist ARTIST`;
/// - `count` sums durations in milliseconds and prints whole seconds (rounded down).
///
/// `list` without a filter, of Album, AlbumArtist, Artist, Genre, Date or Title (grouped by
/// those too), reads the distinct values from the index (SQLite's DISTINCT); with a filter the
/// index narrows the candidates first (`MPDFilter.indexConditions`). Reads run on the core's
/// read queue.
enum MPDTagCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        [
            MPDCommand("list", .read, 1, nil) { request, reply in list(context, request, reply) },
            MPDCommand("count", .read, 1, nil) { request, reply in count(context, request, reply) },
        ]
    }

    /// MPD's fallbacks when a song lacks a tag (`src/tag/Fallback.hxx`).
    static let fallbacks: [String: [String]] = [
        "AlbumArtist": ["Artist"], "AlbumArtistSort": ["AlbumArtist", "Artist"], "ArtistSort": ["Artist"],
        "AlbumSort": ["Album"], "TitleSort": ["Title"],
    ]

    /// The values a song has for the tag `name` (MPD's spelling), with fallbacks; [""] if none.
    static func values(of song: MPDSong, _ name: String) -> [String] {
        for candidate in [name] + (fallbacks[name] ?? []) {
            let found = song.tags.filter { $0.0.rawValue == candidate && !$0.1.isEmpty }.map(\.1)
            if !found.isEmpty { return found }
        }
        return [""]
    }

    /// A level of `list`'s answer: values and, under each, the next group's.
    final class Level {
        var children: [String: Level] = [:]

        func insert(_ song: MPDSong, _ names: ArraySlice<String>) {
            guard let name = names.first else { return }
            for value in MPDTagCommands.values(of: song, name) {
                let child = children[value] ?? Level()
                children[value] = child
                child.insert(song, names.dropFirst())
            }
        }

        /// One combination of values, outermost first.
        func insert(_ values: ArraySlice<String>) {
            guard let value = values.first else { return }
            let child = children[value] ?? Level()
            children[value] = child
            child.insert(values.dropFirst())
        }

        func write(_ names: ArraySlice<String>, into response: inout MPDResponse) {
            guard let name = names.first else { return }
            for key in children.keys.sorted(by: bytesBefore) {
                response.field(name, key)
                children[key]!.write(names.dropFirst(), into: &response)
            }
        }
    }

    /// Byte order of the UTF-8 text (MPD's `std::map<std::string>`).
    static func bytesBefore(_ a: String, _ b: String) -> Bool {
        var (a, b) = (a, b)
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = Swift.min(x.count, y.count)
                if common > 0, let p = x.baseAddress, let q = y.baseAddress {
                    let order = memcmp(p, q, common)
                    if order != 0 { return order < 0 }
                }
                return x.count < y.count
            }
        }
    }

    private static func list(_ context: MPDContext, _ request: MPDRequest, _ reply: @escaping MPDReply) {
        var arguments = request.arguments
        let tagName = arguments.removeFirst()
        let lowered = tagName.lowercased()
        if lowered == "file" || lowered == "filename" {
            return listFiles(context, Array(arguments), reply)
        }
        guard let name = MPDTag.mpdName(tagName) else {
            return reply(.failure(MPDAck(.argument, "Unknown tag type: \(tagName)")))
        }
        var filter: MPDFilter?
        var groups: [String] = []
        do throws(MPDAck) {
            if arguments.count == 1, !arguments[0].hasPrefix("(") {
                guard name == "Album" else { throw MPDAck(.argument, "should be \"Album\" for 3 arguments") }
                filter = try MPDFilter.parse(["Artist", arguments[0]], foldCase: false).filter
                arguments = []
            }
            while arguments.count >= 2, arguments[arguments.count - 2] == "group" {
                let group = arguments[arguments.count - 1]
                guard let groupName = MPDTag.mpdName(group) else { throw MPDAck(.argument, "Unknown tag type: \(group)") }
                if groupName == name || groups.contains(groupName) { throw MPDAck(.argument, "Conflicting group") }
                groups.append(groupName)
                arguments.removeLast(2)
            }
            if !arguments.isEmpty {
                let parsed = try MPDFilter.parse(arguments, foldCase: false)
                guard parsed.consumed == arguments.count else { throw MPDAck(.argument, "Unknown filter type") }
                filter = parsed.filter
            }
        } catch {
            return reply(.failure(error))
        }
        let order = ArraySlice(groups + [name])
        let keys = order.compactMap(indexKey)
        if filter == nil, groups.isEmpty ? column(name) != nil : keys.count == order.count {
            // Without a filter: the same answer until the database changes (`MPDListCache`).
            let key = order.joined(separator: "\u{0}")
            if let kept = context.listCache.answer(key) { return reply(.success(kept)) }
            let generation = context.listCache.generation
            let cache = context.listCache
            let keep: MPDReply = { result in
                if case .success(let response) = result { cache.keep(response, for: key, computedAt: generation) }
                reply(result)
            }
            if groups.isEmpty, let column = column(name) { return distinct(context, name: name, column: column, keep) }
            return distinctGroups(context, names: Array(order), keys: keys, keep)
        }
        MPDDatabaseCommands.songs(context, filter: filter ?? .all) { result in
            reply(result.map { songs in
                let top = Level()
                for song in songs { top.insert(song.song, order) }
                var response = MPDResponse()
                top.write(order, into: &response)
                return response
            })
        }
    }

    /// The index column of a tag `list` can read with DISTINCT.
    private static func column(_ name: String) -> MusicTagColumn? {
        switch name {
        case "Album": .album
        case "AlbumArtist": .albumArtistOrArtist
        case "Artist": .artist
        case "Genre": .genre
        case "Date": .date
        case "Title": .title
        default: nil
        }
    }

    /// What the index gives for a tag of `list … group …`: a column (the sort tags fall back to
    /// theirs, as nothing is tagged with one), or always "" for a tag Reel never reports
    /// (`MUSICBRAINZ_ALBUMID`, `Composer`, … as M.A.L.P. groups by); nil for Track and Disc,
    /// which the index keeps as numbers.
    enum IndexKey: Sendable {
        case column(MusicTagColumn)
        case empty
    }

    private static func indexKey(_ name: String) -> IndexKey? {
        switch name {
        case "AlbumSort": return .column(.album)
        case "AlbumArtistSort": return .column(.albumArtistOrArtist)
        case "ArtistSort": return .column(.artist)
        case "TitleSort": return .column(.title)
        case "Track", "Disc": return nil
        default:
            if let column = column(name) { return .column(column) }
            return MPDTag(name: name) == nil ? .empty : nil
        }
    }

    /// `list TAG` alone: the index's distinct values and the recordings' own.
    private static func distinct(_ context: MPDContext, name: String, column: MusicTagColumn, _ reply: @escaping MPDReply) {
        let view = context.view
        context.core.music.browse({ catalog throws(ReelError) -> [String] in
            var values = Set<String>()
            if !view.musicFolders.isEmpty { values.formUnion(try catalog.distinctValues(of: column)) }
            let database = MPDDatabase(view: view, catalog: catalog)
            for song in try database.songs(under: .recordings(try catalog.rootFolder())) {
                values.formUnion(Self.values(of: song.song, name))
            }
            return values.sorted(by: bytesBefore)
        }) { result in
            reply(result.map { values in
                var response = MPDResponse()
                for value in values { response.field(name, value) }
                return response
            }.mapError(MPDAck.init))
        }
    }

    /// `list TAG group TAG…` without a filter, of tags the index has: its distinct combinations
    /// and the recordings'.
    private static func distinctGroups(
        _ context: MPDContext, names: [String], keys: [IndexKey], _ reply: @escaping MPDReply
    ) {
        let view = context.view
        let columns = keys.compactMap { key -> MusicTagColumn? in
            if case .column(let column) = key { return column }
            return nil
        }
        context.core.music.browse({ catalog throws(ReelError) -> MPDResponse in
            let top = Level()
            if !view.musicFolders.isEmpty {
                let rows = columns.isEmpty ? (try catalog.tagStats().songs > 0 ? [[]] : []) : try catalog.distinctValues(of: columns)
                for row in rows {
                    // The tags Reel never reports are "" on every file.
                    var values: [String] = []
                    var next = row.makeIterator()
                    for key in keys {
                        if case .column = key { values.append(next.next() ?? "") } else { values.append("") }
                    }
                    top.insert(values[...])
                }
            }
            let database = MPDDatabase(view: view, catalog: catalog)
            for song in try database.songs(under: .recordings(try catalog.rootFolder())) {
                top.insert(song.song, names[...])
            }
            var response = MPDResponse()
            top.write(names[...], into: &response)
            return response
        }) { result in reply(result.mapError(MPDAck.init)) }
    }

    /// `list file [FILTER]`: the URIs of the songs the filter matches.
    private static func listFiles(_ context: MPDContext, _ arguments: [String], _ reply: @escaping MPDReply) {
        let filter: MPDFilter
        do throws(MPDAck) {
            filter = try MPDFilter.parse(arguments, foldCase: false, allowEmpty: true).filter
        } catch {
            return reply(.failure(error))
        }
        MPDDatabaseCommands.songs(context, filter: filter) { result in
            reply(result.map { songs in
                var response = MPDResponse()
                for song in songs { response.field("file", song.song.uri) }
                return response
            })
        }
    }

    private static func count(_ context: MPDContext, _ request: MPDRequest, _ reply: @escaping MPDReply) {
        var arguments = request.arguments
        var group: String?
        let filter: MPDFilter
        do throws(MPDAck) {
            if arguments.count >= 2, arguments[arguments.count - 2] == "group" {
                let name = arguments[arguments.count - 1]
                guard let groupName = MPDTag.mpdName(name) else { throw MPDAck(.argument, "Unknown tag type: \(name)") }
                group = groupName
                arguments.removeLast(2)
            }
            filter = arguments.isEmpty ? .all : try MPDFilter.parse(arguments, foldCase: false).filter
        } catch {
            return reply(.failure(error))
        }
        let grouping = group
        MPDDatabaseCommands.songs(context, filter: filter) { result in
            reply(result.map { songs in
                var response = MPDResponse()
                func write(_ count: Int, _ milliseconds: Int) {
                    response.field("songs", count)
                    response.field("playtime", milliseconds / 1000)
                }
                guard let group = grouping else {
                    write(songs.count, songs.reduce(0) { $0 + milliseconds($1.song.duration) })
                    return response
                }
                var totals: [String: (count: Int, milliseconds: Int)] = [:]
                for song in songs {
                    for value in values(of: song.song, group) {
                        totals[value, default: (0, 0)].count += 1
                        totals[value, default: (0, 0)].milliseconds += milliseconds(song.song.duration)
                    }
                }
                for key in totals.keys.sorted(by: bytesBefore) {
                    response.field(group, key)
                    write(totals[key]!.count, totals[key]!.milliseconds)
                }
                return response
            })
        }
    }

    private static func milliseconds(_ seconds: Double?) -> Int {
        MPDResponse.wholeMilliseconds(seconds ?? 0)
    }
}
