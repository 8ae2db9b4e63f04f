// Turns each committed transaction's change log into `LibraryChange`s and hands them to observers.
import Dispatch
import GRDB
import Logging
import ReelModel
import ReelRuntime

/// The library's change delivery, built on GRDB's `TransactionObserver` plus SQL triggers.
///
/// Why this design: triggers on `items` (see `LibrarySchema.changeLogSQL`) log every row change
/// made through the store's writer connection, whatever code made it (a store method, a batch
/// insert, raw SQL in a test, a foreign-key action), with the old values of deleted rows. The log
/// is a temporary table, so a rolled-back transaction leaves no trace in it. After each commit,
/// GRDB calls `databaseDidCommit` on the writer's queue, which serializes transactions: reading
/// the log entries newer than the last one read there gives each committed transaction's changes
/// exactly once and in commit order, and the rows are read in that committed state, so the items
/// carry their paths.
///
/// Threads: `databaseDidCommit` runs on the writer's queue (inside GRDB) and owns `lastSeq`.
/// Handlers run on one serial delivery queue (`reel.library.changes`), one call per committed
/// transaction, in commit order; a handler may call the store (reads, and writes whose changes
/// come in a later call) but should return quickly, as every later batch waits for it.
final class ChangeHub: TransactionObserver, @unchecked Sendable {
    typealias Handler = @Sendable ([LibraryChange]) -> Void

    private struct Registry {
        var nextID: UInt64 = 1
        var handlers: [UInt64: Handler] = [:]
    }

    private let registry = Locked(Registry())
    private let delivery = DispatchQueue(label: "reel.library.changes")
    private let logger: Logger
    /// The last change-log entry read. Touched only on the writer's queue.
    private var lastSeq: Int64 = 0

    init(logger: Logger) {
        self.logger = logger
    }

    func add(_ handler: @escaping Handler) -> ObservationToken {
        registry.withLock { registry in
            let id = registry.nextID
            registry.nextID += 1
            registry.handlers[id] = handler
            return ObservationToken(id: id)
        }
    }

    func remove(_ token: ObservationToken) {
        _ = registry.withLock { $0.handlers.removeValue(forKey: token.id) }
    }

    /// Returns once every batch committed before this call has been handed to its observers.
    /// Must not be called from a handler.
    func waitUntilDelivered() {
        delivery.sync {}
    }

    /// Runs `work` on the delivery queue after the batches committed before this call.
    func afterDelivered(_ work: @escaping @Sendable () -> Void) {
        delivery.async(execute: work)
    }

    // MARK: TransactionObserver (writer's queue)

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }

    func databaseDidChange(with event: DatabaseEvent) {}

    func databaseDidRollback(_ db: Database) {}

    func databaseDidCommit(_ db: Database) {
        // Observers registered when the transaction committed get it, unless removed before delivery.
        let handlers = registry.withLock { $0.handlers }.sorted { $0.key < $1.key }
        let changes: [LibraryChange]
        do {
            guard let newest = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM temp.item_changes"),
                newest > lastSeq
            else { return }
            let since = lastSeq
            lastSeq = newest
            if handlers.isEmpty { return }
            changes = try Self.changes(since: since, db)
        } catch {
            logger.error(
                "cannot read the library's change log; observers miss this transaction's changes",
                metadata: ["error": "\(error)"])
            return
        }
        guard !changes.isEmpty else { return }
        delivery.async { [self] in
            for (id, handler) in handlers where registry.withLock({ $0.handlers[id] != nil }) {
                handler(changes)
            }
        }
    }

    // MARK: Building the changes

    /// The net change of one item over one transaction.
    private struct NetChange {
        var firstSeq: Int64
        var inserted: Bool
        /// The parent and name before the transaction's first update or delete of the item.
        var before: (parent: String?, name: String)?
        /// The row as it was deleted (the last deletion if several).
        var deleted: ItemRow?
        /// The row after the commit, if it still exists.
        var current: ItemRow?
    }

    static func changes(since: Int64, _ db: Database) throws -> [LibraryChange] {
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT c.seq, c.op, c.id, c.old_parent, c.old_name, c.kind, c.created, c.duration,
                       c.codec, c.sample_rate, c.channels, c.size, \(LibrarySchema.itemColumns("i"))
                FROM temp.item_changes c LEFT JOIN main.items i ON i.id = c.id
                WHERE c.seq > ? ORDER BY c.seq
                """,
            arguments: [since])
        var net: [String: NetChange] = [:]
        var order: [String] = []
        while let row = try rows.next() {
            let seq: Int64 = row[0]
            let op: String = row[1]
            let id: String = row[2]
            if net[id] == nil {
                order.append(id)
                net[id] = NetChange(firstSeq: seq, inserted: op == "i")
            }
            if op != "i", net[id]!.before == nil {
                net[id]!.before = (row[3], row[4] ?? "")
            }
            if op == "d" {
                net[id]!.deleted = ItemRow(
                    seq: 0, id: id, parent: row[3], kind: ItemKind(rawValue: row[5] ?? "") ?? .recording,
                    name: row[4] ?? "", created: row[6] ?? "", duration: row[7], codec: row[8],
                    sampleRate: row[9], channels: row[10], size: row[11])
            }
            if net[id]!.current == nil, row[12] as Int64? != nil {
                net[id]!.current = ItemRow(row, offset: 12)
            }
        }

        // Deleted folders still name the paths of what was inside them.
        var deleted: [String: ItemRow] = [:]
        for change in net.values { if let row = change.deleted { deleted[row.id] = row } }
        let deletedRows = deleted
        var paths = TreePaths(lookup: { id in
            let statement = try db.cachedStatement(sql: "SELECT parent, name FROM items WHERE id = ?")
            if let row = try Row.fetchOne(statement, arguments: [id]) { return (row[0], row[1]) }
            if let gone = deletedRows[id] { return (gone.parent, gone.name) }
            return nil
        })
        var folders: [String: Item] = [:]
        func folder(_ id: String?) throws -> Item? {
            guard let id else { return nil }
            if let known = folders[id] { return known }
            let statement = try db.cachedStatement(
                sql: "SELECT \(LibrarySchema.itemColumns) FROM items WHERE id = ?")
            guard let row = try Row.fetchOne(statement, arguments: [id]).map({ ItemRow($0) }) ?? deletedRows[id]
            else { return nil }
            let item = try paths.item(row)
            folders[id] = item
            return item
        }

        var result: [LibraryChange] = []
        result.reserveCapacity(order.count)
        for id in order {
            let change = net[id]!
            if let current = change.current {
                let item = try paths.item(current)
                let parent = try folder(current.parent)
                if change.inserted {
                    result.append(LibraryChange(kind: .added, item: item, parent: parent))
                } else if let before = change.before, before.parent != current.parent {
                    let oldParentPath = try before.parent.flatMap { try paths.path(ofFolder: $0) } ?? "/…"
                    result.append(
                        LibraryChange(
                            kind: .moved, item: item, parent: parent, oldParent: try folder(before.parent),
                            oldPath: TreePaths.join(oldParentPath, before.name)))
                } else if let before = change.before, before.name != current.name {
                    let parentPath = parent?.path ?? "/"
                    result.append(
                        LibraryChange(
                            kind: .renamed, item: item, parent: parent,
                            oldPath: TreePaths.join(parentPath, before.name)))
                } else {
                    result.append(LibraryChange(kind: .updated, item: item, parent: parent))
                }
            } else if !change.inserted, let gone = change.deleted {
                result.append(
                    LibraryChange(kind: .removed, item: try paths.item(gone), parent: try folder(gone.parent)))
            }
        }
        return result
    }
}
