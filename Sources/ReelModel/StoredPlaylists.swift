// Stored playlists as clients see them (`playlists.*` in protocol.md, MPD's stored playlists).

/// One stored playlist in `playlists.list` (MPD's `listplaylists`).
public struct PlaylistSummary: Sendable, Equatable {
    public var name: String
    /// Its entries (broken lines and comments not counted).
    public var length: Int
    /// When its file was last changed, in seconds since 1970 (UTC).
    public var modified: Double

    public init(name: String, length: Int, modified: Double) {
        self.name = name
        self.length = length
        self.modified = modified
    }
}

/// One entry of a stored playlist, with what it names now.
public struct PlaylistEntry: Sendable, Equatable {
    /// What it names now. A track or a recording is boxed: an entry stays small, and the
    /// entries of a file that a playlist names many times share one box.
    public enum Target: Sendable, Equatable {
        /// A file of a music folder the index has (present).
        indirect case music(MusicTrack)
        /// A recording of the library tree.
        indirect case recording(Item)
        /// An http(s) URL.
        case url(String)
        /// A file outside the music folders, by absolute path (it is there now).
        case file(String)
        /// Nothing: the file or recording is gone (or the line names nothing Reel plays). The
        /// entry stays in the file; loading skips it.
        case missing
    }

    /// From 0, counting entries only.
    public var position: Int
    /// The line as the file holds it (`Artist/Album/01.flac`, `Recordings/A/Take.flac`, a URL).
    public var uri: String
    public var target: Target

    public init(position: Int, uri: String, target: Target) {
        self.position = position
        self.uri = uri
        self.target = target
    }

    public var missing: Bool { target == .missing }
}

/// A window of a stored playlist (`playlists.get`): its length, and the entries asked for.
/// Entries with the same line name the same target (each distinct file is looked up once).
public struct PlaylistListing: Sendable, Equatable {
    public var name: String
    public var length: Int
    public var entries: [PlaylistEntry]
    /// The file's broken lines (1-based line number, why): kept in the file, never entries.
    public var brokenLines: [PlaylistBrokenLine]

    public init(name: String, length: Int, entries: [PlaylistEntry], brokenLines: [PlaylistBrokenLine] = []) {
        self.name = name
        self.length = length
        self.entries = entries
        self.brokenLines = brokenLines
    }
}

/// A line of a playlist file that is no entry (not UTF-8, a NUL, too long), kept as it was.
public struct PlaylistBrokenLine: Sendable, Equatable {
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }
}

/// How `playlists.save` treats a playlist of that name (MPD 0.24's `save NAME MODE`).
public enum PlaylistSaveMode: String, Sendable, Equatable, CaseIterable {
    /// Refused (`name_taken`) when it exists.
    case create
    /// Its entries become the queue's.
    case replace
    /// The queue's entries go after its own.
    case append
}

/// What `playlists.load` did: the entries added to the queue, and the playlist's entries
/// skipped (their position in the playlist, their line, why).
public struct PlaylistLoadOutcome: Sendable {
    public var entries: [QueueEntry]
    public var skipped: [(position: Int, uri: String, error: ReelError)]

    public init(entries: [QueueEntry], skipped: [(position: Int, uri: String, error: ReelError)]) {
        self.entries = entries
        self.skipped = skipped
    }
}
