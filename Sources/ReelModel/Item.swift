// A node of the library tree: a folder or a recording.

/// What a tree node is: a folder, a recording of the library, a track (an audio file of a
/// music folder, in the read-only `/Music` branch), or a playlist (a `.m3u`, `.m3u8` or `.pls`
/// file of a music folder in that branch: adding or playing it adds its entries).
public enum ItemKind: String, Sendable, Equatable {
    case folder, recording, track, playlist
}

/// A folder, recording or track (`Item` in `protocol.md`). Recordings and tracks carry their
/// audio facts.
public struct Item: Equatable, Sendable {
    /// A lowercase UUID; in the `/Music` branch `music:/Sub/Path` (a folder) or `track:N`.
    public var id: String
    public var kind: ItemKind
    public var name: String
    /// The parent folder's id; nil only for the root.
    public var parent: String?
    /// `/` for the root, else `/Folder/Name`.
    public var path: String
    /// ISO 8601 UTC, e.g. `2026-11-22T14:03:05Z`.
    public var created: String
    /// Recordings and tracks only: seconds, format and file size in bytes.
    public var duration: Double?
    public var format: AudioFormat?
    public var size: Int64?
    /// In the `/Music` branch: reeld never renames, moves or deletes it (`read_only`).
    public var readOnly: Bool
    /// Tracks (and playlists): the file's absolute path; tracks: their tags.
    public var file: String?
    public var tags: DisplayTags?
    /// Recordings only, when read one at a time (`library.get`): its marks, by frame; nil in
    /// listings (not read there).
    public var marks: [Mark]?

    public init(
        id: String, kind: ItemKind, name: String, parent: String?, path: String, created: String,
        duration: Double? = nil, format: AudioFormat? = nil, size: Int64? = nil, readOnly: Bool = false,
        file: String? = nil, tags: DisplayTags? = nil, marks: [Mark]? = nil
    ) {
        self.id = id
        self.kind = kind
        self.name = name
        self.parent = parent
        self.path = path
        self.created = created
        self.duration = duration
        self.format = format
        self.size = size
        self.readOnly = readOnly
        self.file = file
        self.tags = tags
        self.marks = marks
    }

    public var isRoot: Bool { parent == nil }
}

/// The rules for item names.
public enum ItemName {
    /// 1–255 bytes of UTF-8, no `/`, no NUL, not `.` or `..`.
    public static func validate(_ name: String) throws(ReelError) {
        let bytes = name.utf8.count
        guard bytes >= 1 else { throw ReelError(.invalidName, "a name cannot be empty") }
        guard bytes <= 255 else {
            throw ReelError(.invalidName, "\"\(name.prefix(40))…\" is \(bytes) bytes long; a name is at most 255 bytes")
        }
        guard !name.contains("/") else { throw ReelError(.invalidName, "\"\(name)\" contains \"/\", which separates path parts") }
        guard !name.utf8.contains(0) else { throw ReelError(.invalidName, "a name cannot contain a NUL character") }
        guard name != ".", name != ".." else { throw ReelError(.invalidName, "\"\(name)\" is not allowed as a name") }
    }

    /// Splits a tree path (`/Meetings/Standup`) into its names; `/` is the root (no names).
    public static func components(ofPath path: String) throws(ReelError) -> [String] {
        guard path.hasPrefix("/") else {
            throw ReelError(.invalidName, "\"\(path)\" is not a tree path; tree paths start with \"/\"")
        }
        let names = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        for name in names { try validate(name) }
        return names
    }
}

extension Item {
    /// The extension a recording's file is shown with by name (MPD's `Recordings/A/Name.flac`):
    /// its codec's, `ogg` for Vorbis, `wav` when the format is not known.
    public var fileExtension: String { Self.fileExtension(codec: format?.codec) }

    public static func fileExtension(codec: String?) -> String {
        switch codec {
        case "vorbis": "ogg"
        case let codec?: codec
        case nil: "wav"
        }
    }
}
