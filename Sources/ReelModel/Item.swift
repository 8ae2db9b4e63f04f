// A node of the library tree: a folder or a recording.

/// What a tree node is.
public enum ItemKind: String, Sendable, Equatable {
    case folder, recording
}

/// A folder or recording (`Item` in `protocol.md`). Recordings carry their audio facts.
public struct Item: Equatable, Sendable {
    /// A lowercase UUID.
    public var id: String
    public var kind: ItemKind
    public var name: String
    /// The parent folder's id; nil only for the root.
    public var parent: String?
    /// `/` for the root, else `/Folder/Name`.
    public var path: String
    /// ISO 8601 UTC, e.g. `2026-11-22T14:03:05Z`.
    public var created: String
    /// Recordings only: seconds, format and file size in bytes.
    public var duration: Double?
    public var format: AudioFormat?
    public var size: Int64?

    public init(
        id: String, kind: ItemKind, name: String, parent: String?, path: String, created: String,
        duration: Double? = nil, format: AudioFormat? = nil, size: Int64? = nil
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
