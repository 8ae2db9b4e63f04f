// The library tree on SQLite: opening the store, reading items, and changing the tree.
import Foundation
import GRDB
import Logging
import ReelModel
import ReelRuntime
import Synchronization

/// The persisted tree of folders and recordings (`library.sqlite` under the data directory) and
/// the audio files of the recordings (`audio/<id>.<ext>` beside it).
///
/// Ownership and threads: the daemon owns one store per data directory and shares it; every
/// method may be called from any thread. Reads run concurrently on GRDB's reader connections
/// (WAL snapshots); writes are serialized on GRDB's writer connection, each call in one
/// transaction that either commits whole or leaves nothing. Every method blocks its caller for
/// the database access (and, for `importFile` and `delete`, file I/O): call from a thread that
/// may block, not from an event loop. Errors are `ReelError`s whose message names the item,
/// path or file; database failures (read-only, locked, corrupt) are `io_error`, full disks
/// `disk_full`, never a crash.
///
/// Observers (`observe(_:)`) learn of every committed change; see `ChangeHub`.
public final class LibraryStore: Sendable {
    /// The root folder's id, the same in every library.
    public static let rootID = LibrarySchema.rootID
    public static let defaultSearchLimit = 50
    public static let maximumSearchLimit = 500

    /// The data directory given at `init`.
    public let directory: String
    /// `<directory>/library.sqlite`.
    public let databasePath: String
    /// `<directory>/audio`: recordings' files, named `<id>.<ext>`.
    public let audioDirectory: String
    /// `<directory>/lost+found`: where `reconcile()` moves audio files that have no recording.
    public let lostAndFoundDirectory: String

    let pool: DatabasePool
    let logger: Logger
    let hub: ChangeHub
    /// The `/Music` branch (`showMusicFolders`); nil without music folders.
    let branch = Locked<MusicBranch?>(nil)
    private let commits = Atomic<Int>(0)

    /// How many write transactions have committed since the store was opened: counted once
    /// each has committed, so a value read before a read began is at most the count of the
    /// writes that read sees. What is read with the same count before and after was read from
    /// the same data (a playlist's entries made from the index, kept while it stays).
    public var writesCommitted: Int { commits.load(ordering: .acquiring) }

    /// Opens the library in `directory`, creating the directory, the database (migrated to the
    /// current schema), the root folder and `audio/` as needed.
    ///
    /// - Parameters:
    ///   - logger: conventionally labelled `reel.library`.
    ///   - busyTimeout: how long a write waits for another program's lock before `io_error`.
    public init(
        directory: String, logger: Logger = Logger(label: "reel.library"), busyTimeout: Double = 5
    ) throws(ReelError) {
        self.directory = directory
        self.databasePath = directory + "/library.sqlite"
        self.audioDirectory = directory + "/audio"
        self.lostAndFoundDirectory = directory + "/lost+found"
        self.logger = logger
        self.hub = ChangeHub(logger: logger)

        try Self.makeDirectory(directory)
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = "reel.library"
        configuration.prepareDatabase { db in
            // The writer's change log (a temporary table) stays in memory: a trigger row per
            // changed item costs less there, which matters for batch inserts.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // The write-ahead log is cut back to 4 MiB after each checkpoint: a first scan of a
            // large music folder grows it to several MiB, which would otherwise stay on disk.
            try db.execute(sql: "PRAGMA journal_size_limit = 4194304")
        }
        let databasePath = databasePath
        do {
            pool = try DatabasePool(path: databasePath, configuration: configuration)
            // GRDB puts a pool's writer in WAL mode with `synchronous = NORMAL`: a commit is then
            // durable only at the next checkpoint, and a power cut takes away changes that were
            // already answered. FULL syncs the write-ahead log at every commit.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        } catch {
            throw Self.failure(error, "open the library database", databasePath: databasePath, directory: directory)
        }
        let migrator = LibrarySchema.migrator()
        do {
            try pool.writeWithoutTransaction { db in
                if try migrator.hasBeenSuperseded(db) {
                    throw ReelError(
                        .ioError,
                        "the library database \(databasePath) was written by a newer version of Reel; upgrade Reel")
                }
            }
            try migrator.migrate(pool)
            try pool.writeWithoutTransaction { db in
                // The root folder always exists, even if something removed it behind our back.
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO items (id, parent, kind, name, name_fold, created)
                        VALUES (?, NULL, 'folder', '', '', ?)
                        """,
                    arguments: [LibrarySchema.rootID, Timestamp.now()])
                try db.execute(sql: LibrarySchema.changeLogSQL)
            }
        } catch {
            throw Self.failure(error, "prepare the library database", databasePath: databasePath, directory: directory)
        }
        pool.add(transactionObserver: hub, extent: .databaseLifetime)
        try Self.makeDirectory(audioDirectory)
        logger.debug("library opened", metadata: ["database": "\(databasePath)"])
    }

    /// A data directory that cannot be made is an `io_error` (or `disk_full`), whatever the cause.
    private static func makeDirectory(_ path: String) throws(ReelError) {
        do {
            try AudioFiles.makeDirectory(path)
        } catch {
            throw error.reason == .diskFull ? error : ReelError(.ioError, error.message)
        }
    }

    /// At a clean shutdown: every committed change copied into the database file and the
    /// write-ahead log emptied, so the data directory holds one complete file. Errors are logged
    /// (the log is replayed at the next open anyway). Call when no more writes will come.
    public func checkpoint() {
        do {
            _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        } catch {
            logger.warning("could not checkpoint the library database", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Observing changes

    /// Calls `handler` once per committed transaction that changed the tree, with that
    /// transaction's changes, in commit order, for every transaction committed after this call
    /// returns, until `removeObserver`. Handlers run one at a time on the store's delivery queue.
    public func observe(_ handler: @escaping @Sendable ([LibraryChange]) -> Void) -> ObservationToken {
        hub.add(handler)
    }

    /// Stops calls to the observer (a call already running finishes).
    public func removeObserver(_ token: ObservationToken) {
        hub.remove(token)
    }

    /// Runs `work` on the queue that delivers changes to observers, after every batch committed
    /// so far: a read done there sees the tree as the delivered changes left it, and every later
    /// change is delivered after it.
    public func afterDeliveredChanges(_ work: @escaping @Sendable () -> Void) {
        hub.afterDelivered(work)
    }

    /// Returns once every change committed before this call has been handed to observers.
    /// Do not call it from an observer.
    public func waitUntilChangesDelivered() {
        hub.waitUntilDelivered()
    }

    // MARK: Reading

    public func item(id: String) throws(ReelError) -> Item {
        try item(.id(id))
    }

    /// The item at a tree path (`/Meetings/Standup`; `/` is the root). `not_found` names the path.
    public func item(path: String) throws(ReelError) -> Item {
        try item(.path(path))
    }

    public func item(_ reference: ItemReference) throws(ReelError) -> Item {
        if let item = try branchItem(reference) { return item }
        return try reading("read \(reference)") { db in try self.resolve(reference, db).item }
    }

    /// A folder and its children: folders first, then by name (case-insensitively, then by byte
    /// order, so the order is total and stable).
    public func list(folder: ItemReference = .root) throws(ReelError) -> (folder: Item, items: [Item]) {
        if let listing = try branchListing(folder) { return listing }
        let listing: (folder: Item, items: [Item]) = try reading("list \(folder)") { db in
            let folder = try self.resolve(folder, db)
            guard folder.row.kind == .folder else {
                throw ReelError(.notAFolder, "cannot list \(folder.path): it is a recording, not a folder")
            }
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(LibrarySchema.itemColumns) FROM items
                    WHERE parent = ? ORDER BY kind, name_fold, name
                    """)
            let rows = try Row.fetchCursor(statement, arguments: [folder.row.id])
            var items: [Item] = []
            while let row = try rows.next() {
                let child = ItemRow(row)
                items.append(child.item(path: TreePaths.join(folder.path, child.name)))
            }
            return (folder.item, items)
        }
        return listing.folder.isRoot ? (listing.folder, withBranch(rootItems: listing.items)) : listing
    }

    // MARK: Changing the tree

    /// Creates an empty folder named `name` in the folder `parent`.
    @discardableResult
    public func createFolder(parent: ItemReference = .root, name: String) throws(ReelError) -> Item {
        try ItemName.validate(name)
        return try writing("create the folder \"\(name)\"") { db in
            let parent = try self.resolve(parent, db)
            guard parent.row.kind == .folder else {
                throw ReelError(
                    .notAFolder, "cannot create \"\(name)\" in \(parent.path): it is a recording, not a folder")
            }
            try self.requireFreeName(name, in: parent, db)
            let row = ItemRow(
                seq: 0, id: Self.newID(), parent: parent.row.id, kind: .folder, name: name, created: Timestamp.now())
            try self.insert(row, db)
            return row.item(path: TreePaths.join(parent.path, name))
        }
    }

    /// Creates several folders in `parent` in one transaction (all or none).
    @discardableResult
    public func createFolders(parent: ItemReference = .root, names: [String]) throws(ReelError) -> [Item] {
        for name in names { try ItemName.validate(name) }
        return try writing("create \(names.count) folders") { db in
            let parent = try self.resolve(parent, db)
            guard parent.row.kind == .folder else {
                throw ReelError(.notAFolder, "cannot create folders in \(parent.path): it is a recording, not a folder")
            }
            let created = Timestamp.now()
            return try names.map { name in
                let row = ItemRow(
                    seq: 0, id: Self.newID(), parent: parent.row.id, kind: .folder, name: name, created: created)
                try self.insert(row, parentPath: parent.path, db)
                return row.item(path: TreePaths.join(parent.path, name))
            }
        }
    }

    /// Renames an item in place. Renaming to its current name changes nothing.
    @discardableResult
    public func rename(_ reference: ItemReference, to name: String) throws(ReelError) -> Item {
        try ItemName.validate(name)
        return try writing("rename \(reference)") { db in
            let target = try self.resolve(reference, db)
            guard !target.row.isRoot else { throw ReelError(.root, "the root folder cannot be renamed") }
            if target.row.name == name { return target.item }
            let parent = try self.resolve(.id(target.row.parent!), db)
            try self.requireFreeName(name, in: parent, db)
            try db.execute(
                sql: "UPDATE items SET name = ?, name_fold = ? WHERE id = ?",
                arguments: [name, LibrarySchema.fold(name), target.row.id])
            var item = target.item
            item.name = name
            item.path = TreePaths.join(parent.path, name)
            return item
        }
    }

    /// Moves an item (a folder with everything in it) into the folder `destination`, keeping
    /// its name. Moving it where it already is changes nothing.
    @discardableResult
    public func move(_ reference: ItemReference, to destination: ItemReference) throws(ReelError) -> Item {
        try writing("move \(reference)") { db in
            let target = try self.resolve(reference, db)
            guard !target.row.isRoot else { throw ReelError(.root, "the root folder cannot be moved") }
            let folder = try self.resolve(destination, db)
            guard folder.row.kind == .folder else {
                throw ReelError(
                    .notAFolder, "cannot move \(target.path) into \(folder.path): it is a recording, not a folder")
            }
            if folder.row.id == target.row.parent { return target.item }
            // Names cannot contain "/", so path prefixes are exact ancestry.
            if target.row.kind == .folder, folder.path == target.path || folder.path.hasPrefix(target.path + "/") {
                throw ReelError(
                    .cycle,
                    "cannot move \(target.path) into \(folder.path): a folder cannot go inside itself or one of its subfolders")
            }
            try self.requireFreeName(target.row.name, in: folder, db)
            try db.execute(
                sql: "UPDATE items SET parent = ? WHERE id = ?", arguments: [folder.row.id, target.row.id])
            var item = target.item
            item.parent = folder.row.id
            item.path = TreePaths.join(folder.path, target.row.name)
            return item
        }
    }

    /// Deletes an item; a folder goes with everything in it. The rows go in one transaction;
    /// the recordings' audio files are removed after it commits (a file that cannot be removed
    /// is logged, and `reconcile()` moves it out at the next start).
    ///
    /// - Returns: how many items were deleted.
    @discardableResult
    public func delete(_ reference: ItemReference) throws(ReelError) -> Int {
        let (path, count, files) = try writing("delete \(reference)") { db in
            let target = try self.resolve(reference, db)
            guard !target.row.isRoot else { throw ReelError(.root, "the root folder cannot be deleted") }
            let subtree = """
                WITH RECURSIVE subtree(id) AS (
                  VALUES (?) UNION ALL SELECT items.id FROM items JOIN subtree ON items.parent = subtree.id)
                """
            let rows = try Row.fetchAll(
                db,
                sql: "\(subtree) SELECT items.id, items.file_ext FROM items JOIN subtree USING (id)",
                arguments: [target.row.id])
            try db.execute(
                sql: "\(subtree) DELETE FROM items WHERE id IN (SELECT id FROM subtree)", arguments: [target.row.id])
            let files = rows.compactMap { row -> String? in
                guard let ext: String = row[1] else { return nil }
                return self.audioPath(id: row[0], ext: ext)
            }
            return (target.path, rows.count, files)
        }
        for file in files {
            do {
                try AudioFiles.removeIfPresent(file)
            } catch {
                logger.warning(
                    "cannot remove a deleted recording's audio file; it will be moved out at the next start",
                    metadata: ["file": "\(file)", "error": "\(error.message)"])
            }
        }
        // The removals are durable before the answer: a power cut after it does not bring the
        // files back (into lost+found at the next start).
        if !files.isEmpty { AudioFiles.syncDirectory(audioDirectory) }
        logger.info("deleted", metadata: ["path": "\(path)", "items": "\(count)"])
        return count
    }

    // MARK: Internals shared by the store's files

    /// An item resolved inside one database access, with its path.
    struct Resolved {
        var row: ItemRow
        var path: String
        var item: Item { row.item(path: path) }
    }

    func resolve(_ reference: ItemReference, _ db: Database) throws -> Resolved {
        try refuseMusicBranch(reference)
        switch reference {
        case .id(let id):
            guard let row = try fetchRow(id: id, db) else {
                throw ReelError(.notFound, "no item with id \(id); it may have been deleted")
            }
            var paths = TreePaths(db)
            return Resolved(row: row, path: try paths.path(of: row))
        case .path(let path):
            let names = try ItemName.components(ofPath: path)
            guard var row = try fetchRow(id: LibrarySchema.rootID, db) else {
                throw ReelError(.ioError, "the library database \(databasePath) has no root folder; restart reeld")
            }
            var walked = "/"
            let statement = try db.cachedStatement(
                sql: "SELECT \(LibrarySchema.itemColumns) FROM items WHERE parent = ? AND name = ?")
            for name in names {
                guard row.kind == .folder else {
                    throw ReelError(.notFound, "no item at \(path): \(walked) is a recording, not a folder")
                }
                guard let child = try Row.fetchOne(statement, arguments: [row.id, name]).map({ ItemRow($0) }) else {
                    throw ReelError(.notFound, "no item at \(path)")
                }
                row = child
                walked = TreePaths.join(walked, name)
            }
            return Resolved(row: row, path: walked)
        }
    }

    func fetchRow(id: String, _ db: Database) throws -> ItemRow? {
        let statement = try db.cachedStatement(sql: "SELECT \(LibrarySchema.itemColumns) FROM items WHERE id = ?")
        return try Row.fetchOne(statement, arguments: [id]).map { ItemRow($0) }
    }

    func requireFreeName(_ name: String, in folder: Resolved, _ db: Database) throws {
        try refuseBranchName(name, parentID: folder.row.id)
        let statement = try db.cachedStatement(sql: "SELECT 1 FROM items WHERE parent = ? AND name = ?")
        if try Bool.fetchOne(statement, arguments: [folder.row.id, name]) != nil {
            throw ReelError(
                .nameTaken, "there is already an item at \(TreePaths.join(folder.path, name)); choose another name")
        }
    }

    /// Inserts a row (its `seq` is assigned by SQLite). A sibling with the same name is `name_taken`.
    func insert(_ row: ItemRow, inProgress: Bool = false, parentPath: String? = nil, _ db: Database) throws {
        if let parent = row.parent { try refuseBranchName(row.name, parentID: parent) }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO items (id, parent, kind, name, name_fold, created, duration, codec, sample_rate,
                                   channels, size, file_ext, in_progress)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        do {
            try statement.execute(arguments: [
                row.id, row.parent, row.kind.rawValue, row.name, LibrarySchema.fold(row.name), row.created,
                row.duration, row.codec, row.sampleRate, row.channels, row.size, row.fileExt, inProgress,
            ])
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            let place = parentPath.map { TreePaths.join($0, row.name) } ?? "\"\(row.name)\""
            throw ReelError(.nameTaken, "there is already an item at \(place); choose another name")
        }
    }

    /// A new lowercase UUID, version 7: 48 bits of Unix milliseconds, then random bits. Ids made
    /// in time order keep the id index's inserts local (a batch of 100,000 inserts is several
    /// times faster than with random ids).
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        var timeSpec = timespec()
        clock_gettime(CLOCK_REALTIME, &timeSpec)
        let millis = UInt64(timeSpec.tv_sec) * 1000 + UInt64(timeSpec.tv_nsec / 1_000_000)
        let high = (millis << 16) | 0x7000 | (generator.next() & 0x0fff)
        let low = (generator.next() & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, word) in [high, low].enumerated() {
            for nibble in (0..<16).reversed() {
                let position = index * 16 + (15 - nibble)
                if position == 8 || position == 12 || position == 16 || position == 20 { text.append(UInt8(ascii: "-")) }
                text.append(digits[Int((word >> (UInt64(nibble) * 4)) & 0xf)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    func audioPath(id: String, ext: String) -> String { "\(audioDirectory)/\(id).\(ext)" }

    /// Runs `body` on a reader connection (a consistent snapshot).
    func reading<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws(ReelError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw failure(error, action())
        }
    }

    /// Runs `body` in one write transaction: all of it commits, or none of it.
    func writing<T>(_ action: @autoclosure () -> String, _ body: (Database) throws -> T) throws(ReelError) -> T {
        do {
            let result = try pool.write { db in
                // Entries already delivered (see ChangeHub); keeps the temporary log short.
                try db.execute(sql: "DELETE FROM temp.item_changes")
                return try body(db)
            }
            commits.add(1, ordering: .releasing)
            return result
        } catch {
            // (Rolled back, or maybe committed: counted either way.)
            commits.add(1, ordering: .releasing)
            throw failure(error, action())
        }
    }

    func failure(_ error: any Error, _ action: String) -> ReelError {
        Self.failure(error, action, databasePath: databasePath, directory: directory)
    }

    static func failure(_ error: any Error, _ action: String, databasePath: String, directory: String) -> ReelError {
        if let error = error as? ReelError { return error }
        guard let error = error as? DatabaseError else {
            return ReelError(.ioError, "cannot \(action): \(error)")
        }
        let detail = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_FULL:
            return ReelError(.diskFull, "cannot \(action): the disk holding \(databasePath) is full; free some space")
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
            return ReelError(
                .ioError,
                "cannot \(action): the library database \(databasePath) cannot be written (\(detail)); "
                    + "check that \(directory) and its files are writable by reeld")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return ReelError(
                .ioError,
                "cannot \(action): the library database \(databasePath) is locked by another program; "
                    + "close it and try again")
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return ReelError(
                .ioError, "cannot \(action): the library database \(databasePath) is damaged (\(detail))")
        default:
            return ReelError(.ioError, "cannot \(action): \(detail) (library database \(databasePath))")
        }
    }
}
