// The tags Reel reports over MPD, and the set a connection has enabled with `tagtypes`.

/// The tag names Reel knows, in the order `tagtypes` lists them (MPD's order for these).
enum MPDTag: String, CaseIterable, Sendable {
    case artist = "Artist"
    case album = "Album"
    case albumArtist = "AlbumArtist"
    case title = "Title"
    case track = "Track"
    case genre = "Genre"
    case date = "Date"
    case disc = "Disc"

    /// The tag named `name`, case-insensitively, as MPD parses tag names.
    init?(name: String) {
        let lowered = name.lowercased()
        guard let tag = Self.allCases.first(where: { $0.rawValue.lowercased() == lowered }) else { return nil }
        self = tag
    }
}

/// The tags one connection wants in song listings (`tagtypes clear|all|enable|disable`).
struct MPDTagSet: Sendable, Equatable {
    private var enabled: Set<MPDTag>

    static let all = MPDTagSet(enabled: Set(MPDTag.allCases))
    static let none = MPDTagSet(enabled: [])

    func contains(_ tag: MPDTag) -> Bool { enabled.contains(tag) }

    mutating func enable(_ tags: [MPDTag]) { enabled.formUnion(tags) }
    mutating func disable(_ tags: [MPDTag]) { enabled.subtract(tags) }

    /// The enabled tags in `tagtypes` order.
    var names: [String] { MPDTag.allCases.filter(enabled.contains).map(\.rawValue) }
}
