// Tree paths (`/Meetings/Standup`) computed from parent links, memoized for one database access.
import GRDB
import ReelModel

/// Computes folder paths by walking parent links upward, remembering every folder it passes.
///
/// Lives for one database access (a read, a write, or the building of one batch of changes) on
/// that access's thread, so its memo never outlives the snapshot it was computed from.
struct TreePaths {
    /// A folder's name and parent, found in the database or (for changes) in deleted rows.
    typealias Lookup = (_ id: String) throws -> (parent: String?, name: String)?

    private var memo: [String: String] = [LibrarySchema.rootID: "/"]
    private let lookup: Lookup

    /// Paths from the database as `db` sees it.
    init(_ db: Database) {
        self.init(lookup: { id in
            let statement = try db.cachedStatement(sql: "SELECT parent, name FROM items WHERE id = ?")
            guard let row = try Row.fetchOne(statement, arguments: [id]) else { return nil }
            return (row[0], row[1])
        })
    }

    init(lookup: @escaping Lookup) {
        self.lookup = lookup
    }

    static func join(_ parentPath: String, _ name: String) -> String {
        parentPath == "/" ? "/" + name : parentPath + "/" + name
    }

    /// The path of the folder `id`; nil if it (or a folder above it) does not exist.
    mutating func path(ofFolder id: String) throws -> String? {
        if let known = memo[id] { return known }
        var chain: [(id: String, name: String)] = []
        var current = id
        while memo[current] == nil {
            guard let link = try lookup(current), let parent = link.parent else { return nil }
            chain.append((current, link.name))
            current = parent
            // A parent loop cannot be written through the store; stop rather than spin.
            if chain.count > 100_000 { return nil }
        }
        var path = memo[current]!
        for link in chain.reversed() {
            path = Self.join(path, link.name)
            memo[link.id] = path
        }
        return path
    }

    /// The path of a row: its parent's path joined with its name (`/` for the root).
    mutating func path(of row: ItemRow) throws -> String {
        guard let parent = row.parent else { return "/" }
        let parentPath = try path(ofFolder: parent) ?? "/…"
        return Self.join(parentPath, row.name)
    }

    mutating func item(_ row: ItemRow) throws -> Item {
        row.item(path: try path(of: row))
    }
}
