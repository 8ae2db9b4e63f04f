// The tags MPD knows, the ones Reel reports, and the set a connection has enabled with `tagtypes`.

/// The tags Reel reports on songs (a recording's `Title`, `Album`, `Date`; a music file's tags
/// once music folders are indexed).
enum MPDTag: String, CaseIterable, Sendable {
    case artist = "Artist"
    case album = "Album"
    case albumArtist = "AlbumArtist"
    case title = "Title"
    case track = "Track"
    case genre = "Genre"
    case date = "Date"
    case disc = "Disc"
    /// A stream's station (`icy-name`).
    case name = "Name"

    /// The tag named `name`, case-insensitively, as MPD parses tag names.
    init?(name: String) {
        let lowered = name.lowercased()
        guard let tag = Self.allCases.first(where: { $0.rawValue.lowercased() == lowered }) else { return nil }
        self = tag
    }

    /// Every tag name MPD 0.23 knows, in the order `tagtypes` lists them (`src/tag/Names.cxx`).
    /// `tagtypes` lists them all, as MPD does: a client may enable any, and Reel reports those it has.
    static let mpdNames = [
        "Artist", "ArtistSort", "Album", "AlbumSort", "AlbumArtist", "AlbumArtistSort", "Title", "Track", "Name",
        "Genre", "Date", "OriginalDate", "Composer", "ComposerSort", "Performer", "Conductor", "Work", "Movement",
        "MovementNumber", "Ensemble", "Location", "Grouping", "Disc", "Label", "MUSICBRAINZ_ARTISTID",
        "MUSICBRAINZ_ALBUMID", "MUSICBRAINZ_ALBUMARTISTID", "MUSICBRAINZ_TRACKID", "MUSICBRAINZ_RELEASETRACKID",
        "MUSICBRAINZ_WORKID",
    ]

    /// MPD's spelling of a tag name given in any case, nil when MPD has no such tag.
    static func mpdName(_ name: String) -> String? {
        let lowered = name.lowercased()
        return mpdNames.first { $0.lowercased() == lowered }
    }
}

/// The tags one connection wants in song listings (`tagtypes clear|all|enable|disable`), by
/// MPD's names.
struct MPDTagSet: Sendable, Equatable {
    private var enabled: Set<String>

    static let all = MPDTagSet(enabled: Set(MPDTag.mpdNames))
    static let none = MPDTagSet(enabled: [])

    func contains(_ tag: MPDTag) -> Bool { enabled.contains(tag.rawValue) }

    /// `names` must be MPD's spellings (`MPDTag.mpdName`).
    mutating func enable(_ names: [String]) { enabled.formUnion(names) }
    mutating func disable(_ names: [String]) { enabled.subtract(names) }

    /// The enabled tags in `tagtypes` order.
    var names: [String] { MPDTag.mpdNames.filter(enabled.contains) }
}
