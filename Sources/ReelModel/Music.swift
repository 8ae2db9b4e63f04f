// Music folders: files indexed where they lie, with their tags, browsed by artist and album.

/// What a tag reader finds in one audio file. Every field is optional: a file reports only the
/// tags it has (the MPD view shows only those; Reel's own views may show the file name where
/// `title` is missing).
public struct TrackTags: Equatable, Hashable, Sendable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    /// The track number on its disc (`3` of "3/12").
    public var track: Int?
    /// The disc number (`1` of "1/2").
    public var disc: Int?
    /// As tagged: usually a year ("1997"), sometimes a full date ("1997-03-12").
    public var date: String?
    public var genre: String?

    public init(
        title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
        track: Int? = nil, disc: Int? = nil, date: String? = nil, genre: String? = nil
    ) {
        self.title = title
        self.artist = artist
        self.album = album
        self.albumArtist = albumArtist
        self.track = track
        self.disc = disc
        self.date = date
        self.genre = genre
    }

    /// The artist an album is grouped under: AlbumArtist, else Artist.
    public var albumGroupArtist: String? { albumArtist ?? artist }
}

/// One audio file as the tag reader saw it: its tags, its stream, and whether it carries a
/// picture (embedded cover art).
public struct ScannedAudio: Equatable, Sendable {
    public var tags: TrackTags
    /// `flac`, `mp3`, `vorbis`, `opus`, `wav`, … (as `AudioFormat.codec`).
    public var codec: String
    public var sampleRate: Int
    public var channels: Int
    /// Seconds; nil when the file does not say.
    public var duration: Double?
    public var hasEmbeddedCover: Bool
    /// Its ReplayGain tags (`REPLAYGAIN_*`, Opus `R128_*`), empty when it has none.
    public var replayGain: ReplayGainInfo

    public init(
        tags: TrackTags, codec: String, sampleRate: Int, channels: Int, duration: Double?, hasEmbeddedCover: Bool,
        replayGain: ReplayGainInfo = .none
    ) {
        self.replayGain = replayGain
        self.tags = tags
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.duration = duration
        self.hasEmbeddedCover = hasEmbeddedCover
    }
}

/// A file of a music folder in the index.
public struct MusicTrack: Equatable, Sendable {
    /// Stable while the file is known (across a rename or move that the index sees).
    public var id: Int64
    /// The music folder (`music_dirs` entry) it lies in.
    public var root: String
    /// Its path under `root`, `/`-separated, without a leading `/`.
    public var relativePath: String
    public var size: Int64
    /// Modification time, seconds since the epoch (with nanoseconds).
    public var modified: Double
    public var audio: ScannedAudio
    /// Its music folder is not there now (a USB disk unplugged): kept, not playable.
    public var missing: Bool

    public init(
        id: Int64, root: String, relativePath: String, size: Int64, modified: Double, audio: ScannedAudio,
        missing: Bool = false
    ) {
        self.id = id
        self.root = root
        self.relativePath = relativePath
        self.size = size
        self.modified = modified
        self.audio = audio
        self.missing = missing
    }

    /// The file's absolute path.
    public var path: String { Self.path(root: root, relativePath: relativePath) }

    /// The absolute path of the file at `relativePath` of the music folder `root`: `root`, a
    /// `/` unless it ends with one, and `relativePath`. Made in one string of its size (no
    /// string grown twice: a playlist's `load` makes one per file). Any thread.
    public static func path(root: String, relativePath: String) -> String {
        let slash = !root.hasSuffix("/")
        var root = root
        var relativePath = relativePath
        let count = root.utf8.count + (slash ? 1 : 0) + relativePath.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var end = 0
            func copy(_ bytes: UnsafeBufferPointer<UInt8>) {
                guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
                (buffer.baseAddress! + end).initialize(from: source, count: bytes.count)
                end += bytes.count
            }
            root.withUTF8(copy)
            if slash {
                buffer[end] = UInt8(ascii: "/")
                end += 1
            }
            relativePath.withUTF8(copy)
            return end
        }
    }

    /// The title, else the file's name without its extension (Reel's own views; the MPD view
    /// shows only tags a file has).
    public var displayTitle: String { Self.displayTitle(title: audio.tags.title, relativePath: relativePath) }

    /// `title` unless it is nil or empty, else the name of the file at `relativePath` without
    /// its extension (`displayTitle` of a track with this title and path).
    public static func displayTitle(title: String?, relativePath: String) -> String {
        if let title, !title.isEmpty { return title }
        let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return name }
        return String(name[..<dot])
    }

    /// What a queue entry or a tree item of this file shows: its title (else its file name),
    /// artist and album.
    public var displayTags: DisplayTags {
        DisplayTags(title: displayTitle, artist: audio.tags.artist, album: audio.tags.album)
    }
}

/// A file the scan could not read, and why (listed, never fatal to the scan).
public struct MusicScanFailure: Equatable, Sendable {
    public var path: String
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// How a scan of the music folders is going. A scan is a full one (at start, `library.rescan`)
/// or a small one: what the file watcher saw change, applied in one go (then `seen` counts the
/// files looked at, not the whole collection).
public struct MusicScanProgress: Equatable, Sendable {
    /// Which scan this is: 1 for the first since reeld started, then one more for each.
    public var scan: Int = 0
    public var running: Bool
    /// Audio files found so far.
    public var seen: Int
    /// Of those, read (tags) in this scan: new or changed files.
    public var indexed: Int
    /// Of those, unchanged since the last scan (size and mtime): not read again.
    public var unchanged: Int
    /// Files that could not be read.
    public var failed: Int
    /// Files no longer on disk, dropped from the index.
    public var removed: Int
    /// Files renamed or moved (alone or with their folder), keeping their ids and tags.
    public var moved: Int
    /// Files marked missing: their music folder went away (a disk unplugged).
    public var missing: Int
    /// Files of a music folder that came back, present again.
    public var restored: Int
    /// The music folders found missing (not there, not a readable folder, or empty while the
    /// index has files of them): their files are kept, hidden until they come back.
    public var missingFolders: [String]
    /// Playlist files (`.m3u`, `.m3u8`, `.pls`) found, changed or gone in this scan.
    public var playlists: Int

    public init(
        scan: Int = 0, running: Bool = false, seen: Int = 0, indexed: Int = 0, unchanged: Int = 0, failed: Int = 0,
        removed: Int = 0, moved: Int = 0, missing: Int = 0, restored: Int = 0, missingFolders: [String] = [],
        playlists: Int = 0
    ) {
        self.playlists = playlists
        self.missingFolders = missingFolders
        self.scan = scan
        self.running = running
        self.seen = seen
        self.indexed = indexed
        self.unchanged = unchanged
        self.failed = failed
        self.removed = removed
        self.moved = moved
        self.missing = missing
        self.restored = restored
    }

    /// Whether the scan changed what the index shows: files read, removed, moved, marked
    /// missing or present again, playlist files found, changed or gone (what MPD's `database`
    /// idle event stands for).
    public var changedIndex: Bool {
        indexed > 0 || removed > 0 || moved > 0 || missing > 0 || restored > 0 || playlists > 0
    }
}

/// An album as the music index lists it: the tracks sharing an Album tag and the artist they
/// are grouped under (AlbumArtist, else Artist).
public struct MusicAlbum: Equatable, Hashable, Sendable {
    public var name: String
    /// AlbumArtist, else Artist; nil when its tracks have neither.
    public var albumArtist: String?
    /// The earliest Date of its tracks, as tagged ("1997", "1997-03-12"); nil if none has one.
    public var date: String?
    public var trackCount: Int
    /// Seconds: the sum of the durations its tracks know.
    public var duration: Double
    /// Whether any of its tracks carries embedded cover art.
    public var hasCover: Bool

    public init(name: String, albumArtist: String?, date: String?, trackCount: Int, duration: Double, hasCover: Bool) {
        self.name = name
        self.albumArtist = albumArtist
        self.date = date
        self.trackCount = trackCount
        self.duration = duration
        self.hasCover = hasCover
    }
}

/// An artist as the music index lists it: AlbumArtist, else Artist, of its tracks.
public struct MusicArtist: Equatable, Hashable, Sendable {
    public var name: String
    /// Distinct Album tags among its tracks (tracks without one count in no album).
    public var albumCount: Int
    public var trackCount: Int

    public init(name: String, albumCount: Int, trackCount: Int) {
        self.name = name
        self.albumCount = albumCount
        self.trackCount = trackCount
    }
}

/// The music index in figures (MPD's `stats`): files present, not those of a missing folder.
public struct MusicStats: Equatable, Sendable {
    /// Artists as the index lists them: distinct AlbumArtist, else Artist.
    public var artists: Int
    /// Distinct Album tags.
    public var albums: Int
    public var songs: Int
    /// Seconds: the sum of the durations the files know.
    public var totalDuration: Double

    public init(artists: Int, albums: Int, songs: Int, totalDuration: Double) {
        self.artists = artists
        self.albums = albums
        self.songs = songs
        self.totalDuration = totalDuration
    }
}
