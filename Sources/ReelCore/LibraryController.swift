// The library's control side: reads and writes off the caller's thread, watches, and one update per commit.

import Dispatch
import Logging
import ReelAudio
internal import ReelLibrary
import ReelModel
import ReelRuntime

/// A folder's contents, as `library.list` and the folder stream give them.
public typealias FolderListing = (folder: Item, items: [Item])

/// What a watch starts with: the value read, and how many updates had been published when it was
/// read (an update with that sequence number or later is newer than the value).
public struct Watched<Value: Sendable>: Sendable {
    public let value: Value
    public let sequence: UInt64
}

/// One committed transaction as the front ends see it: its changes, and the new state of every
/// watched folder and item that it touched — computed once, whatever the number of subscribers.
public struct LibraryUpdate: Sendable {
    public enum FolderState: Sendable {
        case contents(folder: Item, items: [Item])
        /// The folder is gone: as last known, or only its id.
        case deleted(Item?)
    }

    public enum ItemState: Sendable {
        case changed(Item)
        case deleted(Item?)
    }

    public let changes: [LibraryChange]
    /// Watched folders whose contents (or own path) changed, by id.
    public let folders: [String: FolderState]
    /// Watched items that changed, by id.
    public let items: [String: ItemState]
}

/// Owns the library store and its rules. Reads (`read`) run on a queue of their own,
/// never on the caller's thread, so a search over a large tree stalls no front end; writes
/// (which may delete many files or copy a large import) run one at a time on the write queue.
/// Committed changes reach the player (which follows the recording it plays), the recorder
/// (which follows the one it makes) and `updates`, in commit order, on the store's delivery
/// queue; what a watched folder or item looks like after the change is read there, once.
public final class LibraryController: @unchecked Sendable {
    public typealias Reply<Value> = @Sendable (Result<Value, ReelError>) -> Void

    let store: LibraryStore
    private let player: PlayerController
    private let recorder: RecorderController
    private let mediaRoots: MediaRoots
    private let logger: Logger
    private let writes = DispatchQueue(label: "reel.library.write")
    /// One read at a time, in order: reads take the store's reader connection, never the event
    /// loop, and never wait for a write (WAL). Serial so that the number of connections (and
    /// descriptors) the reads hold stays fixed.
    private let reads = DispatchQueue(label: "reel.library.read")
    /// Every committed transaction, with the watched folders and items it changed.
    public let updates = EventFeed<LibraryUpdate>()
    private var token: ObservationToken?

    /// Folders and items some front end watches, with how many watch each and the path last seen.
    private struct Watches {
        var folders: [String: (count: Int, path: String)] = [:]
        var items: [String: (count: Int, path: String)] = [:]
    }
    private let watches = Locked(Watches())
    /// What the watched folders and items of the `/Music` branch were when last read after a
    /// scan (`musicIndexChanged`, on the delivery queue): an unchanged one is not pushed again.
    private let branchSeen = Locked(BranchSeen())
    private struct BranchSeen {
        var folders: [String: FolderListing] = [:]
        var items: [String: Item] = [:]
    }

    init(store: LibraryStore, player: PlayerController, recorder: RecorderController, mediaRoots: MediaRoots, logger: Logger) {
        self.store = store
        self.player = player
        self.recorder = recorder
        self.mediaRoots = mediaRoots
        self.logger = logger
        token = store.observe { [weak self] changes in self?.deliver(changes) }
    }

    // MARK: Reads and writes

    /// Runs a read of the store off the caller's thread; `reply` is called on the read queue.
    /// Front ends call the named operations (`LibraryController+Operations`) instead.
    func read<Value: Sendable>(
        _ work: @escaping @Sendable (LibraryStore) throws(ReelError) -> Value, reply: @escaping Reply<Value>
    ) {
        reads.async { [store] in
            do throws(ReelError) {
                reply(.success(try work(store)))
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// Runs a write on the library's queue; `reply` is called there, after the write's changes
    /// have been published to `updates`, so a front end that takes them before the reply's hop
    /// pushes a change before the reply that made it.
    func write<Value: Sendable>(
        _ work: @escaping @Sendable (LibraryStore) throws(ReelError) -> Value, reply: @escaping Reply<Value>
    ) {
        writes.async { [store] in
            do throws(ReelError) {
                let result = try work(store)
                store.waitUntilChangesDelivered()
                reply(.success(result))
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// Copies the audio file at `path` (absolute, inside the media roots) into `folder`.
    public func importFile(path: String, folder: ItemReference, name: String?, reply: @escaping Reply<Item>) {
        do throws(ReelError) {
            try mediaRoots.check(path)
        } catch {
            reply(.failure(error))
            return
        }
        write({ store throws(ReelError) in
            try store.importFile(path: path, folder: folder, name: name, probe: LibraryController.probe)
        }, reply: reply)
    }

    /// Where a front end writes a file it received (an HTTP upload) before `importUpload`: a
    /// fresh path in the data directory that a crash leaves to the next start's repair.
    public func newUploadPath() -> String {
        store.newUploadPath()
    }

    /// Imports a file the daemon received and wrote at `newUploadPath()`, moving it in (no
    /// copy). The media roots do not apply: the file is the daemon's, not a path a client named.
    /// The file must decode, as for `importFile`; on any failure it is removed. `displayName` is
    /// the name the client gave the file, for messages. `reply` runs on the write queue.
    public func importUpload(
        path: String, folder: ItemReference, name: String, displayName: String, reply: @escaping Reply<Item>
    ) {
        write({ store throws(ReelError) in
            try store.importOwnedFile(
                path: path, folder: folder, name: name, displayName: displayName, probe: LibraryController.probe)
        }, reply: reply)
    }

    // MARK: Watches

    /// Starts watching a folder: `reply` gets its contents now, and from then on each
    /// `LibraryUpdate` that changes it carries its new contents (or its deletion). Give the
    /// folder's id to `unwatchFolder` when done. The first read runs on the delivery queue, in
    /// order with the updates: nothing committed after it is missed.
    public func watchFolder(_ reference: ItemReference, reply: @escaping Reply<Watched<FolderListing>>) {
        store.afterDeliveredChanges { [self] in
            do throws(ReelError) {
                let listing = try store.list(folder: reference)
                guard listing.folder.kind == .folder else {
                    throw ReelError(.notAFolder, "\(listing.folder.path) is a recording, not a folder")
                }
                watches.withLock { watches in
                    let count = watches.folders[listing.folder.id]?.count ?? 0
                    watches.folders[listing.folder.id] = (count + 1, listing.folder.path)
                }
                if listing.folder.readOnly { branchSeen.withLock { $0.folders[listing.folder.id] = listing } }
                reply(.success(Watched(value: listing, sequence: updates.published)))
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// Starts watching one item, as `watchFolder` does a folder.
    public func watchItem(_ reference: ItemReference, reply: @escaping Reply<Watched<Item>>) {
        store.afterDeliveredChanges { [self] in
            do throws(ReelError) {
                let item = try store.item(reference)
                watches.withLock { watches in
                    let count = watches.items[item.id]?.count ?? 0
                    watches.items[item.id] = (count + 1, item.path)
                }
                if item.readOnly { branchSeen.withLock { $0.items[item.id] = item } }
                reply(.success(Watched(value: item, sequence: updates.published)))
            } catch {
                reply(.failure(error))
            }
        }
    }

    public func unwatchFolder(_ id: String) {
        watches.withLock { watches in
            guard let watch = watches.folders[id] else { return }
            watches.folders[id] = watch.count > 1 ? (watch.count - 1, watch.path) : nil
        }
    }

    public func unwatchItem(_ id: String) {
        watches.withLock { watches in
            guard let watch = watches.items[id] else { return }
            watches.items[id] = watch.count > 1 ? (watch.count - 1, watch.path) : nil
        }
    }

    // MARK: Delivery

    /// Called on the store's delivery queue, once per committed transaction.
    private func deliver(_ changes: [LibraryChange]) {
        player.libraryChanged(changes)
        recorder.libraryChanged(changes)
        let watched = watches.current
        let pathsMayHaveMoved = changes.contains { $0.kind == .renamed || $0.kind == .moved }
        var folders: [String: LibraryUpdate.FolderState] = [:]
        for (id, watch) in watched.folders {
            if let removed = changes.first(where: { $0.kind == .removed && $0.item.id == id }) {
                folders[id] = .deleted(removed.item)
            } else if changes.contains(where: { $0.item.id == id || $0.parent?.id == id || $0.oldParent?.id == id }) {
                if let listing = try? store.list(folder: .id(id)) {
                    folders[id] = .contents(folder: listing.folder, items: listing.items)
                } else {
                    folders[id] = .deleted(nil)
                }
            } else if pathsMayHaveMoved, let folder = try? store.item(id: id), folder.path != watch.path,
                let listing = try? store.list(folder: .id(id))
            {
                // A folder above it was renamed or moved: its path changed.
                folders[id] = .contents(folder: listing.folder, items: listing.items)
            }
        }
        var items: [String: LibraryUpdate.ItemState] = [:]
        for (id, watch) in watched.items {
            if let removed = changes.first(where: { $0.kind == .removed && $0.item.id == id }) {
                items[id] = .deleted(removed.item)
            } else if let change = changes.last(where: { $0.item.id == id }) {
                items[id] = .changed(change.item)
            } else if pathsMayHaveMoved, let item = try? store.item(id: id), item.path != watch.path {
                items[id] = .changed(item)
            }
        }
        if !folders.isEmpty || !items.isEmpty {
            watches.withLock { watches in
                for (id, state) in folders {
                    if case .contents(let folder, _) = state, let watch = watches.folders[id] {
                        watches.folders[id] = (watch.count, folder.path)
                    }
                }
                for (id, state) in items {
                    if case .changed(let item) = state, let watch = watches.items[id] {
                        watches.items[id] = (watch.count, item.path)
                    }
                }
            }
        }
        updates.publish(LibraryUpdate(changes: changes, folders: folders, items: items))
    }

    // MARK: The music folders' branch

    /// Follows the music index: each time a scan (or a batch of changes seen on disk) ends, the
    /// watched folders and items of the `/Music` branch are read again and published as one
    /// update without tree changes, so their streams follow the disk. Called once, at start.
    func followMusic(_ progress: StateFeed<MusicScanProgress>) {
        let last = Locked(0)
        let consumer = Locked<StateFeed<MusicScanProgress>.Consumer?>(nil)
        consumer.withLock { slot in
            slot = progress.addConsumer { [weak self] in
                guard let self else { return }
                store.afterDeliveredChanges { [weak self] in
                    guard let self, let registered = consumer.withLock({ $0 }) else { return }
                    let (value, _) = progress.take(for: registered)
                    let ended = !value.running && last.withLock { seen in
                        defer { seen = max(seen, value.scan) }
                        return value.scan > seen
                    }
                    if ended { self.musicIndexChanged() }
                }
            }
        }
    }

    /// On the delivery queue: the watched branch folders and items, read again; those that
    /// changed since last read here go out as one update. Gone (`not_found`) ends their
    /// streams; any other error (a busy disk) leaves them as they were until the next scan.
    private func musicIndexChanged() {
        let watched = watches.current
        var seen = branchSeen.current
        var folders: [String: LibraryUpdate.FolderState] = [:]
        for id in watched.folders.keys where MusicBranch.contains(.id(id)) {
            do {
                let listing = try store.list(folder: .id(id))
                guard seen.folders[id].map({ $0.folder != listing.folder || $0.items != listing.items }) ?? true else { continue }
                seen.folders[id] = listing
                folders[id] = .contents(folder: listing.folder, items: listing.items)
            } catch where error.reason == .notFound {
                seen.folders[id] = nil
                folders[id] = .deleted(nil)
            } catch {
                logger.warning("could not read a watched music folder again", metadata: ["id": "\(id)", "error": "\(error.message)"])
            }
        }
        var items: [String: LibraryUpdate.ItemState] = [:]
        for id in watched.items.keys where MusicBranch.contains(.id(id)) {
            do {
                let item = try store.item(.id(id))
                guard seen.items[id] != item else { continue }
                seen.items[id] = item
                items[id] = .changed(item)
            } catch where error.reason == .notFound {
                seen.items[id] = nil
                items[id] = .deleted(nil)
            } catch {
                logger.warning("could not read a watched music file again", metadata: ["id": "\(id)", "error": "\(error.message)"])
            }
        }
        // Forget what no one watches any more.
        seen.folders = seen.folders.filter { watched.folders[$0.key] != nil }
        seen.items = seen.items.filter { watched.items[$0.key] != nil }
        branchSeen.withLock { $0 = seen }
        guard !folders.isEmpty || !items.isEmpty else { return }
        updates.publish(LibraryUpdate(changes: [], folders: folders, items: items))
    }

    /// What the store learns of an imported file: it must open and its first frames must decode
    /// (as for playing it); its duration and format.
    static func probe(_ path: String) throws(ReelError) -> (duration: Double?, format: AudioFormat) {
        // The exact length now, also for an MP3 without a Xing/Info tag: the store keeps it.
        let reader = try AudioFileOpener.open(path: path, mp3Length: .atOpen)
        let frames = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: frames * reader.pcmFormat.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        _ = try reader.read(into: buffer, frames: frames)
        return (reader.duration, reader.format)
    }
}
