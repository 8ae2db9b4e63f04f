// What observers of the library are told after each committed transaction.

/// One item's change in one committed transaction (`library.changed` in `protocol.md`).
///
/// An item appears at most once per batch, with its net change over the transaction: added then
/// renamed is `added` (with the final name); added then removed is not reported at all; moved and
/// renamed is `moved` (with `oldPath`); any other update (duration, size, format) is `updated`.
public struct LibraryChange: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case added, removed, renamed, moved, updated
    }

    public var kind: Kind
    /// The item after the change; for `removed`, as it was when deleted (with its path then).
    public var item: Item
    /// The parent folder after the change; for `removed`, the former parent. Nil for the root.
    public var parent: Item?
    /// For `moved`: the folder it came from.
    public var oldParent: Item?
    /// For `renamed` and `moved`: the path before the change.
    public var oldPath: String?

    public init(kind: Kind, item: Item, parent: Item?, oldParent: Item? = nil, oldPath: String? = nil) {
        self.kind = kind
        self.item = item
        self.parent = parent
        self.oldParent = oldParent
        self.oldPath = oldPath
    }
}
