// How much of a playlist Reel reads: sizes, entry counts and line lengths.

/// The bounds every playlist reader of this module keeps. Pure value.
public struct PlaylistLimits: Equatable, Sendable {
    /// The most bytes read; a larger body is refused with `.tooLarge` (the fetcher stops
    /// receiving at this count: a 10 GB "playlist" costs at most this much memory).
    public var maximumBytes: Int
    /// The most entries kept; the rest are ignored and reported.
    public var maximumEntries: Int
    /// The longest line (or XSPF text) kept; a longer one is skipped and reported.
    public var maximumLineLength: Int

    public init(maximumBytes: Int, maximumEntries: Int, maximumLineLength: Int) {
        self.maximumBytes = maximumBytes
        self.maximumEntries = maximumEntries
        self.maximumLineLength = maximumLineLength
    }

    /// A station playlist fetched by URL (M3U, PLS, XSPF) and an HLS playlist: 2 MiB, 10,000
    /// entries, 8 KiB lines. Real station lists are a few hundred bytes; a live HLS media
    /// playlist a few KiB; a large VOD one (4 h in 2 s segments, 7,200 segments) about 1 MiB.
    public static let station = PlaylistLimits(maximumBytes: 2 << 20, maximumEntries: 10_000, maximumLineLength: 8192)

    /// A stored playlist (`playlist_dir`, MPD's `playlist_directory`): 64 MiB, 200,000
    /// entries, 8 KiB lines (a path is at most 4 KiB on Linux).
    public static let stored = PlaylistLimits(maximumBytes: 64 << 20, maximumEntries: 200_000, maximumLineLength: 8192)
}

/// `PlaylistLimits.station.maximumBytes`, by name, for the fetcher's cap.
public let maximumStationPlaylistBytes = PlaylistLimits.station.maximumBytes
