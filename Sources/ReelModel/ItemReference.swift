// How callers address an item: by id or by tree path.

/// An item given as `"item": "<uuid>"` or `"path": "/Folder/Name"` (`protocol.md`). The store
/// resolves it inside the same transaction as the change it is used for.
public enum ItemReference: Hashable, Sendable, CustomStringConvertible {
    case id(String)
    case path(String)

    /// The root folder's id (the library's schema gives it this fixed value).
    public static let rootID = "00000000-0000-0000-0000-000000000000"

    /// The root folder.
    public static var root: ItemReference { .id(rootID) }

    public var description: String {
        switch self {
        case .id(let id): "item \(id)"
        case .path(let path): path
        }
    }
}
