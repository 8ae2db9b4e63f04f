// The library's named operations: what front ends ask of the tree, as model values.

internal import ReelLibrary
import ReelModel

/// Every read and write a front end makes of the folder and recording tree (JSON-RPC's
/// `library.*`, MPD's database, the HTTP page), each a named call that answers with model
/// values; the store itself stays inside the core. Reads reply on the read queue, writes on the
/// write queue after their changes have reached `updates` (see `read`/`write`).
extension LibraryController {
    /// `library.search`'s page size when none is given, and the largest allowed.
    public static let defaultSearchLimit = LibraryStore.defaultSearchLimit
    public static let maximumSearchLimit = LibraryStore.maximumSearchLimit

    /// The name an imported file gets when none is given: `Talk.final.flac` → `Talk.final`.
    public static func defaultName(ofFile path: String) -> String {
        LibraryStore.defaultName(ofFile: path)
    }

    // MARK: Reads

    /// A folder and its items (`not_found`; a recording is listed as itself with no items).
    public func list(folder: ItemReference, reply: @escaping Reply<FolderListing>) {
        read({ store throws(ReelError) in try store.list(folder: folder) }, reply: reply)
    }

    /// One item by id or tree path (`not_found`); a recording with its marks.
    public func item(_ reference: ItemReference, reply: @escaping Reply<Item>) {
        read({ store throws(ReelError) in try store.itemWithMarks(reference) }, reply: reply)
    }

    /// Folders and recordings (and, with music folders, tracks) whose name holds `query`, a page
    /// at a time (see `LibraryStore.search`).
    public func search(
        query: String, limit: Int, cursor: String?, reply: @escaping Reply<(items: [Item], nextCursor: String?)>
    ) {
        read({ store throws(ReelError) in try store.search(query: query, limit: limit, cursor: cursor) }, reply: reply)
    }

    /// A recording and the path of its audio file, by id: what the HTTP front end serves. A
    /// folder is `not_a_recording`. The path comes from the library, never from the caller.
    public func audioFile(id: String, reply: @escaping Reply<(item: Item, path: String)>) {
        read({ store throws(ReelError) in
            let item = try store.item(id: id)
            return (item, try store.audioPath(for: item))
        }, reply: reply)
    }

    /// The folder or recording at a tree path of the recordings (never the `/Music` branch when
    /// music folders are indexed), or the recording whose path plus its file's extension
    /// (`Item.fileExtension`) `path` is: how a file name such as `/Talks/Standup.flac` finds the
    /// recording `/Talks/Standup`. `not_found` otherwise.
    public func recordingOrFolder(fileTreePath path: String, reply: @escaping Reply<Item>) {
        read({ store throws(ReelError) in try Self.recordingOrFolder(fileTreePath: path, in: store) }, reply: reply)
    }

    /// `recordingOrFolder(fileTreePath:)` on the caller's thread (for reads already on a core queue).
    static func recordingOrFolder(fileTreePath path: String, in store: LibraryStore) throws(ReelError) -> Item {
        guard MusicBranch.subPath(ofTreePath: path) == nil || store.musicBranch == nil else {
            throw ReelError(.notFound, "no item at \(path)")
        }
        do {
            return try store.item(path: path)
        } catch let error where error.reason == .notFound {
            guard let dot = path.lastIndex(of: "."), let slash = path.lastIndex(of: "/"), dot > slash else { throw error }
            let ext = path[path.index(after: dot)...]
            let item = try store.item(path: String(path[..<dot]))
            guard item.kind == .recording, item.fileExtension == ext else { throw error }
            return item
        }
    }

    /// The recordings (not the music folders' branch), in number, length and albums, as MPD's
    /// `stats` counts them: one walk of the tree.
    public func recordingTotals(reply: @escaping Reply<RecordingTotals>) {
        read({ store throws(ReelError) in try Self.recordingTotals(in: store) }, reply: reply)
    }

    static func recordingTotals(in store: LibraryStore) throws(ReelError) -> RecordingTotals {
        var totals = RecordingTotals()
        var folders: [ItemReference] = [.root]
        while let folder = folders.popLast() {
            let listing = try store.list(folder: folder)
            for item in listing.items {
                switch item.kind {
                case .folder where item.readOnly, .track, .playlist:
                    break  // the music folders' branch: counted from the index
                case .folder:
                    folders.append(.id(item.id))
                case .recording:
                    totals.songs += 1
                    totals.playtime += Int((item.duration ?? 0).rounded())
                    totals.lastCreated = max(totals.lastCreated, item.created)
                    if !listing.folder.isRoot { totals.albums.insert(listing.folder.name) }
                }
            }
        }
        return totals
    }

    // MARK: Writes

    public func createFolder(parent: ItemReference, name: String, reply: @escaping Reply<Item>) {
        write({ store throws(ReelError) in try store.createFolder(parent: parent, name: name) }, reply: reply)
    }

    public func rename(_ reference: ItemReference, to name: String, reply: @escaping Reply<Item>) {
        write({ store throws(ReelError) in try store.rename(reference, to: name) }, reply: reply)
    }

    public func move(_ reference: ItemReference, to destination: ItemReference, reply: @escaping Reply<Item>) {
        write({ store throws(ReelError) in try store.move(reference, to: destination) }, reply: reply)
    }

    /// Deletes an item (a folder with everything in it); replies with how many items went.
    public func delete(_ reference: ItemReference, reply: @escaping Reply<Int>) {
        write({ store throws(ReelError) in try store.delete(reference) }, reply: reply)
    }
}

/// The recordings counted as MPD's `stats` counts songs.
public struct RecordingTotals: Sendable, Equatable {
    public var songs = 0
    /// The distinct `Album` values: the names of the folders that hold recordings.
    public var albums: Set<String> = []
    /// Whole seconds, each recording's rounded as MPD sums them.
    public var playtime = 0
    /// The newest recording's `created` time (ISO 8601 UTC), "" when there is none.
    public var lastCreated = ""

    public init() {}
}
