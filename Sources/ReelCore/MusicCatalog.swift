// The music index and the recordings tree as a front end reads them: named reads, model values.

internal import ReelLibrary
import ReelModel

/// The reads a front end that shows the music folders and the recordings as one database
/// makes (MPD's `lsinfo`, `listallinfo`, `find`, `list`, `add`), each answering with model
/// values (`Item`, `MusicTrack`, `MusicSubfolder`, `MusicPlaylistFile`); the store and the index stay in the core.
///
/// A catalog is handed to a `MusicController.browse` body, which runs on the core's read queue:
/// a large listing (`listallinfo` of 100,000 files) is read and encoded there, in one job,
/// never on a front end's event loop. Every call blocks for its query (a consistent snapshot).
public struct MusicCatalog: Sendable {
    let index: MusicIndex
    var store: LibraryStore { index.store }

    init(index: MusicIndex) {
        self.index = index
    }

    // MARK: The music folders

    /// The file at `relativePath` of the music folder `root`, if the index has it (present or
    /// missing).
    public func track(root: String, relativePath: String) throws(ReelError) -> MusicTrack? {
        try index.track(root: root, relativePath: relativePath)
    }

    /// The files present at these paths of `root`, by path.
    public func tracks(root: String, relativePaths: [String]) throws(ReelError) -> [String: MusicTrack] {
        try index.tracks(root: root, relativePaths: relativePaths)
    }

    /// Whether `folder` of `root` holds a file present (at any depth).
    public func hasFolder(root: String, _ folder: String) throws(ReelError) -> Bool {
        try index.hasFolder(root: root, folder)
    }

    /// The files present directly in `folder` ("" for the top) of `root`.
    public func files(root: String, in folder: String) throws(ReelError) -> [MusicTrack] {
        try index.files(root: root, in: folder)
    }

    /// The files present anywhere under `folder` ("" for all) of `root`.
    public func files(root: String, under folder: String) throws(ReelError) -> [MusicTrack] {
        try index.files(root: root, under: folder)
    }

    /// The folders directly in `folder` of `root` that hold files present.
    public func subfolders(root: String, of folder: String) throws(ReelError) -> [MusicSubfolder] {
        try index.subfolders(root: root, of: folder)
    }

    /// The playlist files (`.m3u`, `.m3u8`, `.pls`) present directly in `folder` ("" for the
    /// top) of `root`, by path.
    public func playlists(root: String, in folder: String) throws(ReelError) -> [MusicPlaylistFile] {
        try index.playlists(root: root, in: folder)
    }

    /// The playlist files present anywhere under `folder` ("" for all) of `root`, by path.
    public func playlists(root: String, under folder: String) throws(ReelError) -> [MusicPlaylistFile] {
        try index.playlists(root: root, under: folder)
    }

    /// The files present that `query` may match: those its conditions on tags keep
    /// (`MusicQuery.indexConditions`), narrowed in SQL; all files present when it has none.
    /// The caller checks `query.matches` on each, with the fields it shows.
    public func candidates(for query: MusicQuery) throws(ReelError) -> [MusicTrack] {
        try index.tracks(matching: query.indexConditions)
    }

    /// The distinct values of one tag among the files present ("" for the files that lack it).
    public func distinctValues(of column: MusicTagColumn) throws(ReelError) -> [String] {
        try index.distinctValues(of: column)
    }

    /// The distinct combinations of several tags among the files present.
    public func distinctValues(of columns: [MusicTagColumn]) throws(ReelError) -> [[String]] {
        try index.distinctValues(of: columns)
    }

    /// Songs, their length, distinct Artist and Album tags, as MPD's `stats` counts them.
    public func tagStats() throws(ReelError) -> MusicTagStats {
        try index.tagStats()
    }

    // MARK: The recordings tree

    /// The root folder of the tree.
    public func rootFolder() throws(ReelError) -> Item {
        try store.item(.root)
    }

    /// A folder's items (the root's include the read-only `/Music` branch, which a caller
    /// showing the music folders by themselves skips: `readOnly`).
    public func items(inFolder id: String) throws(ReelError) -> [Item] {
        try store.list(folder: .id(id)).items
    }

    /// One item by id (`not_found`).
    public func item(id: String) throws(ReelError) -> Item {
        try store.item(id: id)
    }

    /// The folder or recording a file-like tree path names (see
    /// `LibraryController.recordingOrFolder(fileTreePath:)`).
    public func recordingOrFolder(fileTreePath path: String) throws(ReelError) -> Item {
        try LibraryController.recordingOrFolder(fileTreePath: path, in: store)
    }

    /// The recordings counted as MPD's `stats` counts them.
    public func recordingTotals() throws(ReelError) -> RecordingTotals {
        try LibraryController.recordingTotals(in: store)
    }
}
