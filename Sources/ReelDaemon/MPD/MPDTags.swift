// The tags MPD knows, the ones Reel reports, and the set a connection has enabled with `tagtypes`.

import ReelModel

/// The tags Reel reports on songs, by MPD's names (the model's `SongTag`).
typealias MPDTag = SongTag

extension MPDTag {
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
    private var enabled: Set<String> {
        didSet { reported = Self.reported(enabled) }
    }
    /// The tags Reel reports among `enabled`, one bit per `MPDTag` case (a song's tags are
    /// checked without hashing their names).
    private var reported: UInt32

    private init(enabled: Set<String>) {
        self.enabled = enabled
        reported = Self.reported(enabled)
    }

    static let all = MPDTagSet(enabled: Set(MPDTag.mpdNames))
    static let none = MPDTagSet(enabled: [])

    func contains(_ tag: MPDTag) -> Bool { reported & Self.bit(tag) != 0 }

    /// `names` must be MPD's spellings (`MPDTag.mpdName`).
    mutating func enable(_ names: [String]) { enabled.formUnion(names) }
    mutating func disable(_ names: [String]) { enabled.subtract(names) }

    /// The enabled tags in `tagtypes` order.
    var names: [String] { MPDTag.mpdNames.filter(enabled.contains) }

    private static func bit(_ tag: MPDTag) -> UInt32 {
        switch tag {
        case .artist: 1 << 0
        case .album: 1 << 1
        case .albumArtist: 1 << 2
        case .title: 1 << 3
        case .track: 1 << 4
        case .genre: 1 << 5
        case .date: 1 << 6
        case .disc: 1 << 7
        case .name: 1 << 8
        }
    }

    private static func reported(_ enabled: Set<String>) -> UInt32 {
        MPDTag.allCases.reduce(0) { enabled.contains($1.rawValue) ? $0 | bit($1) : $0 }
    }
}
