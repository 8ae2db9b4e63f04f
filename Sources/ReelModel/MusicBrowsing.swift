// What the music index answers when browsed as folders and tag values, and the conditions
// that narrow a query of it: the values the core hands front ends (MPD's database).

/// One page of a search of the music index.
public struct MusicSearchPage: Sendable, Equatable {
    public var tracks: [MusicTrack]
    /// Pass it to get the next page; nil on the last page.
    public var nextCursor: String?

    public init(tracks: [MusicTrack], nextCursor: String?) {
        self.tracks = tracks
        self.nextCursor = nextCursor
    }
}

/// A tag column of the index, as browsing by tag names it.
public enum MusicTagColumn: Sendable, Hashable {
    case title, artist, album, genre, date
    /// AlbumArtist, else Artist (MPD's fallback for AlbumArtist).
    case albumArtistOrArtist
}

/// A condition on one tag that narrows a query to candidates; the caller still checks its own
/// (richer) rule on each candidate, so a condition must only ever keep more, never fewer.
public enum MusicTagCondition: Sendable, Hashable {
    /// The tag's exact text (bytes) is `value`; a file without the tag never matches.
    case equals(MusicTagColumn, String)
    /// The tag, lowercased (`String.lowercased()`), contains `value` (already lowercased and
    /// ASCII); a file without the tag never matches. Only `title`, `artist`, `album` and
    /// `albumArtistOrArtist` have folded columns; for the others the condition is ignored.
    case containsFolded(MusicTagColumn, String)
}

/// A folder of a music folder, as the index knows it: the folders that hold indexed files.
public struct MusicSubfolder: Sendable, Equatable {
    public var name: String
    /// The newest modification time (seconds since the epoch) of the files under it: the index
    /// keeps no folder times.
    public var modified: Double

    public init(name: String, modified: Double) {
        self.name = name
        self.modified = modified
    }
}

/// The figures MPD's `stats` prints, counted as MPD counts them.
public struct MusicTagStats: Sendable, Equatable {
    /// Distinct Artist tags (not AlbumArtist).
    public var artists: Int
    /// The distinct Album tags.
    public var albums: [String]
    public var songs: Int
    /// Milliseconds: the sum of the durations the files know.
    public var durationMilliseconds: Int64

    public init(artists: Int, albums: [String], songs: Int, durationMilliseconds: Int64) {
        self.artists = artists
        self.albums = albums
        self.songs = songs
        self.durationMilliseconds = durationMilliseconds
    }
}
