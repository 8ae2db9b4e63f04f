// The library as MPD's database: the music folders and the recordings tree, with URIs and song fields.

import ReelModel

/// How the library looks to an MPD client. The recordings tree is the top-level directory
/// `Recordings` (`mpd_recordings_dir`); the folder `/Meetings/2025` is the directory
/// `Recordings/Meetings/2025`, and the recording `Standup` in it (a FLAC) the file
/// `Recordings/Meetings/2025/Standup.flac`. The music folders sit beside it (see
/// `MPDLibraryView+Music`): one music folder is the root itself, as MPD's `music_directory`;
/// several are one top-level directory each. A file played by absolute path is shown by that
/// path, unless it lies in a music folder (then by its URI there).
struct MPDLibraryView: Sendable {
    let recordingsDirectory: String
    /// The music folders (`music_dirs`) and the directory each is in the view: "" for a single
    /// music folder (its contents are the root).
    let musicFolders: [MusicFolder]

    init(recordingsDirectory: String, musicRoots: [String] = []) {
        self.recordingsDirectory = recordingsDirectory
        musicFolders = Self.musicFolders(musicRoots, besides: recordingsDirectory)
    }

    /// What an MPD URI names.
    enum Target: Equatable {
        /// `""` or `/`: the database's root (which holds `Recordings`).
        case root
        /// A folder of the tree, by tree path (`/` for `Recordings` itself).
        case folder(String)
        /// A path under `Recordings` that is a folder or a recording with its extension; the
        /// store tells which (`item(forTreePath:)`).
        case treeItem(String)
        /// An absolute file (`/…` or `file:///…`).
        case file(String)
        /// A URL with a scheme Reel does not play (`http://…`).
        case unsupported(String)
        /// A path in a music folder (`root` as configured): `path` is relative to it ("" for
        /// the folder itself), a file or a folder; the index tells which.
        case music(root: String, path: String)
    }

    /// Reads a client's URI. Nil when it is not in the database (nothing outside `Recordings`).
    func target(of uri: String) -> Target? {
        if uri.hasPrefix("file://") { return .file(String(uri.dropFirst("file://".count))) }
        if uri == "/" { return .root }
        if uri.hasPrefix("/") { return .file(uri) }
        if let scheme = uri.firstRange(of: "://"), !uri[..<scheme.lowerBound].contains("/") {
            return .unsupported(String(uri[..<scheme.lowerBound]))
        }
        if uri.isEmpty { return .root }
        // MPD's URIs have no leading, trailing or doubled `/`, and no `.` or `..` parts.
        let trimmed = uri.split(separator: "/", omittingEmptySubsequences: false)
        if trimmed.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) { return nil }
        guard trimmed[0] == recordingsDirectory else { return musicTarget(trimmed) }
        guard trimmed.count > 1 else { return .folder("/") }
        return .treeItem("/" + trimmed.dropFirst().joined(separator: "/"))
    }

    /// `Recordings/A/B` for the folder `/A/B` (`Recordings` for the root).
    func directoryURI(ofFolder path: String) -> String {
        path == "/" ? recordingsDirectory : recordingsDirectory + path
    }

    /// `Recordings/A/Name.flac` for the recording `/A/Name`.
    func fileURI(ofRecording path: String, codec: String?) -> String {
        recordingsDirectory + path + "." + Self.fileExtension(codec)
    }

    /// The extension a recording's file has in the MPD view.
    static func fileExtension(_ codec: String?) -> String { Item.fileExtension(codec: codec) }

    /// A recording as an MPD song: `Title` its name, `Album` its folder's name, `Date` its day;
    /// a recording still being recorded (no duration yet) has no `Time`.
    func song(of item: Item) -> MPDSong {
        var tags: [(MPDTag, String)] = [(.title, item.name)]
        let parentName = item.path.split(separator: "/").dropLast().last.map(String.init)
        if let parentName { tags.append((.album, parentName)) }
        tags.append((.date, String(item.created.prefix(10))))
        return MPDSong(
            uri: fileURI(ofRecording: item.path, codec: item.format?.codec), lastModified: item.created,
            format: item.format, tags: tags, duration: item.duration)
    }

    /// A queue entry as an MPD song; `item` is its recording when it is one (read from the store),
    /// `track` its music file when it is one (read from the index). A file of a music folder
    /// shows by its URI there, with its tags when the index has it.
    func song(of entry: QueueEntry, item: Item?, track: MusicTrack? = nil) -> MPDSong {
        var song: MPDSong
        switch entry.source {
        case .item(_, let path, _):
            if let item {
                song = self.song(of: item)
            } else {
                song = MPDSong(uri: fileURI(ofRecording: path, codec: entry.format?.codec))
            }
        case .url(let url, let name, let title):
            // As MPD prints a stream: its URL as given, the title on air, the station.
            song = MPDSong(uri: url)
            if let title, !title.isEmpty { song.tags.append((.title, title)) }
            // Tags a client set (`addtagid`), until the stream's own replace them.
            if let artist = entry.tags?.artist { song.tags.append((.artist, artist)) }
            if let album = entry.tags?.album { song.tags.append((.album, album)) }
            if let name, !name.isEmpty { song.tags.append((.name, name)) }
        case .file(let path):
            if let track {
                song = self.song(of: track)
            } else if let location = musicLocation(ofFile: path) {
                song = MPDSong(uri: musicURI(root: location.root, path: location.path))
            } else {
                song = MPDSong(uri: path)
            }
        }
        // A stream has no `Format` or `Time` in MPD's listings.
        let isStream: Bool
        if case .url = entry.source { isStream = true } else { isStream = false }
        if let format = entry.format, !isStream { song.format = format }
        if let duration = entry.duration { song.duration = duration }
        song.position = entry.position
        song.id = entry.id
        song.priority = entry.priority
        return song
    }
}

/// MPD's order in a directory (it collates, ignoring case): `a` before `b`.
func mpdCollates(_ a: String, before b: String) -> Bool {
    let (foldedA, foldedB) = (a.lowercased(), b.lowercased())
    return foldedA != foldedB ? foldedA < foldedB : a < b
}

/// A name with its case folded once, for sorting many in `mpdCollates` order.
struct MPDCollationKey: Comparable {
    let folded: String
    let name: Substring

    init(_ name: Substring) {
        self.name = name
        folded = name.lowercased()
    }

    static func < (a: Self, b: Self) -> Bool {
        a.folded != b.folded ? a.folded < b.folded : a.name < b.name
    }
}

extension Array {
    /// Sorted by `key`'s collation (`mpdCollates`), each key computed once.
    func sortedByCollation(_ key: (Element) -> Substring) -> [Element] {
        map { (MPDCollationKey(key($0)), $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}

/// One song as MPD prints it, in MPD's order: `file`, `Last-Modified`, `Format`, the tags,
/// `Time` (whole seconds), `duration`, `Pos`, `Id`, and `Prio` when it is not 0.
struct MPDSong {
    var uri: String
    var lastModified: String?
    /// `lastModified` in seconds since 1970 when known already (a music file's mtime), so a
    /// filter need not parse the text.
    var modifiedSeconds: Int64?
    var format: AudioFormat?
    var tags: [(MPDTag, String)] = []
    var duration: Double?
    var position: Int?
    var id: Int?
    /// A queue entry's priority.
    var priority = 0

    func write(into response: inout MPDResponse, tags wanted: MPDTagSet) {
        response.field("file", uri)
        if let lastModified { response.field("Last-Modified", lastModified) }
        if let format { response.field("Format", Self.formatText(format)) }
        for (tag, value) in tags where wanted.contains(tag) {
            response.field(tag.rawValue, value)
        }
        if let duration { Self.writeLength(duration, into: &response) }
        if let position { response.field("Pos", position) }
        if let id { response.field("Id", id) }
        if priority != 0 { response.field("Prio", priority) }
    }

    /// What a filter sees of this song.
    var fields: MPDSongFields {
        var values: [MPDTag: String] = [:]
        for (tag, value) in tags { values[tag] = value }
        return MPDSongFields(
            uri: uri, tags: values, lastModified: modifiedSeconds ?? lastModified.flatMap(epochSeconds).map(Int64.init))
    }

    /// `Time` (whole seconds) and `duration` (three decimals).
    static func writeLength(_ duration: Double, into response: inout MPDResponse) {
        response.field("Time", MPDResponse.wholeSeconds(duration))
        response.field("duration", seconds: duration)
    }

    /// MPD's audio format text, `44100:16:2`: MP3 and Vorbis decode to floating point (`f`);
    /// MPD's Opus decoder gives 16-bit samples.
    static func formatText(_ format: AudioFormat) -> String {
        "\(format.sampleRate)\(sampleBits(codec: format.codec))\(format.channels)"
    }

    /// The middle of `formatText` with its colons: `:f:` or `:16:`.
    static func sampleBits(codec: String) -> String {
        switch codec {
        case "mp3", "vorbis": ":f:"
        default: ":16:"
        }
    }
}
