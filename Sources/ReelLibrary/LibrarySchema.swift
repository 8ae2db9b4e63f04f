// The library's SQLite schema, its migrations, and how a row becomes an `Item`.
import Foundation
import GRDB
import ReelModel

/// The schema of `library.sqlite`, one migration per version ("v1" is the first; "v2" adds the
/// trigram index of names, `namesIndexSQL`; "v3" the music folders' index, `musicSQL`; "v4"
/// ReplayGain, `replayGainSQL` in `LibrarySchema+ReplayGain`).
///
/// `items` holds the whole tree. `seq` is an ever-increasing row number (AUTOINCREMENT, so never
/// reused) that orders search results and keys search cursors: a rename or a move keeps it.
/// `name_fold` is the name under the store's case rule (`LibrarySchema.fold`), written by the
/// store with every name; it orders listings and is what search matches against.
enum LibrarySchema {
    /// The root folder's id: fixed, so every database has the same well-known root.
    static let rootID = ItemReference.rootID

    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE items (
                      seq INTEGER PRIMARY KEY AUTOINCREMENT,
                      id TEXT NOT NULL UNIQUE,
                      parent TEXT REFERENCES items(id),
                      kind TEXT NOT NULL CHECK (kind IN ('folder', 'recording')),
                      name TEXT NOT NULL,
                      name_fold TEXT NOT NULL,
                      created TEXT NOT NULL,
                      duration REAL,
                      codec TEXT,
                      sample_rate INTEGER,
                      channels INTEGER,
                      size INTEGER,
                      file_ext TEXT,
                      in_progress INTEGER NOT NULL DEFAULT 0,
                      missing INTEGER NOT NULL DEFAULT 0,
                      CHECK ((parent IS NULL) = (id = '\(rootID)')),
                      CHECK (kind = 'folder' OR file_ext IS NOT NULL),
                      UNIQUE (parent, name)
                    );
                    -- library.list finds a folder's children through the UNIQUE (parent, name) index.
                    -- library.search: a narrow copy of (seq, name_fold) scanned in seq order.
                    CREATE INDEX items_search ON items (seq, name_fold);
                    -- Crash repair and reconcile look for these few rows.
                    CREATE INDEX items_in_progress ON items (id) WHERE in_progress = 1;
                    CREATE INDEX items_missing ON items (id) WHERE missing = 1;
                    """)
            try db.execute(
                sql: "INSERT INTO items (id, parent, kind, name, name_fold, created) VALUES (?, NULL, 'folder', '', '', ?)",
                arguments: [rootID, Timestamp.now()])
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: namesIndexSQL)
            // Existing names (a library from before v2); the root has no name to index.
            try db.execute(sql: "INSERT INTO items_fts (rowid, name_fold) SELECT seq, name_fold FROM items WHERE name_fold <> ''")
        }
        migrator.registerMigration("v3") { db in
            try db.execute(sql: musicSQL)
        }
        migrator.registerMigration("v4") { db in
            try db.execute(sql: replayGainSQL)
        }
        migrator.registerMigration("schedules") { db in try db.execute(sql: schedulesSQL) }
        migrator.registerMigration("marks") { db in try db.execute(sql: marksSQL) }
        migrator.registerMigration("music_playlists") { db in try db.execute(sql: musicPlaylistsSQL) }
        return migrator
    }

    /// v2: the trigram index that finds search candidates without reading every name.
    ///
    /// `items_fts` is an FTS5 table whose rowid is `items.seq` and whose one column is
    /// `name_fold`, cut by the `trigram` tokenizer into every run of three code points. A
    /// quoted phrase of three or more code points then matches exactly the names that contain
    /// it as a substring (consecutive trigrams at consecutive positions), which is the search
    /// rule; `LibraryStore.search` still checks each candidate with `instr`.
    ///
    /// - `case_sensitive 1`: the column is already folded by the store (`fold`, Swift's
    ///   `lowercased()`), and so is the query. FTS5's own folding (SQLite's Unicode tables) is
    ///   not the same rule, and we want the index to hold the store's text byte for byte.
    /// - External content (`content='items'`): the text is stored once, in `items`; the index
    ///   holds only the trigrams. A contentless table would need the same delete-with-old-values
    ///   triggers and could not be checked against `items` ('integrity-check'), and an own-content
    ///   table would keep a second copy of every name. The price of external content: a delete
    ///   must give the values that were indexed, so the triggers below are the only writers
    ///   and always pass `OLD.name_fold`, the text they indexed.
    /// - `columnsize=0`: no per-row token counts; they serve ranking, which search does not use.
    /// - The root (empty name) is never indexed: it is never a result, and an empty text has no
    ///   trigrams anyway. Triggers skip any empty name on both sides so deletes stay balanced.
    ///
    /// The triggers run on every connection that writes `items` (the store's writer, other
    /// programs); that needs SQLite with FTS5 and `trusted_schema` on (the default), since
    /// FTS5 is a virtual table not marked innocuous. `UPDATE OF` fires only when the statement
    /// sets `seq` or `name_fold`: moves and recording updates leave the index alone, and a
    /// rename that only changes letter case (same `name_fold`) is skipped by the `WHEN`.
    static let namesIndexSQL = """
        CREATE VIRTUAL TABLE items_fts USING fts5(
          name_fold, content='items', content_rowid='seq', tokenize='trigram case_sensitive 1', columnsize=0);
        CREATE TRIGGER items_fts_inserted AFTER INSERT ON items WHEN NEW.name_fold <> '' BEGIN
          INSERT INTO items_fts (rowid, name_fold) VALUES (NEW.seq, NEW.name_fold);
        END;
        CREATE TRIGGER items_fts_deleted AFTER DELETE ON items WHEN OLD.name_fold <> '' BEGIN
          INSERT INTO items_fts (items_fts, rowid, name_fold) VALUES ('delete', OLD.seq, OLD.name_fold);
        END;
        CREATE TRIGGER items_fts_updated AFTER UPDATE OF seq, name_fold ON items
        WHEN OLD.seq IS NOT NEW.seq OR OLD.name_fold IS NOT NEW.name_fold BEGIN
          INSERT INTO items_fts (items_fts, rowid, name_fold) SELECT 'delete', OLD.seq, OLD.name_fold WHERE OLD.name_fold <> '';
          INSERT INTO items_fts (rowid, name_fold) SELECT NEW.seq, NEW.name_fold WHERE NEW.name_fold <> '';
        END;
        """

    /// v3: the music folders' index (`MusicIndex`), its failures, and its trigram index.
    ///
    /// `music_files` has one row per audio file of a music folder, keyed by the folder as
    /// configured (`root`) and the `/`-separated path under it. `id` is AUTOINCREMENT so an id is
    /// never handed to another file after its own is removed: a client holding an id either
    /// finds that file or nothing. `mtime_ns` is the modification time in nanoseconds, compared
    /// exactly with the disk's to decide whether a file changed (a REAL would round it).
    ///
    /// Tags are stored as read ("" is stored as NULL). The columns the store derives, written
    /// with every row by `MusicIndex` (never by SQL defaults, so they follow `fold`):
    /// - `group_artist`: AlbumArtist, else Artist: the artist an album is listed under;
    /// - `title_fold`: the title, else the file's name without its extension, folded;
    /// - `artist_fold`, `album_fold`, `group_fold`: `artist`, `album`, `group_artist` folded
    ///   ('' when absent): they order listings case-insensitively and are what search matches.
    ///
    /// `music_albums` is the browsing table, kept by triggers on `music_files` (so every writer
    /// keeps it right): one row per group of present files sharing an Album tag (`album_key`,
    /// '' for none) and an AlbumArtist-else-Artist (`artist_key`, '' for none), with the count of
    /// files, their duration in milliseconds (integers, so adding and taking away stays exact),
    /// how many carry a cover, and the earliest date. Listing 2,000 albums or 500 artists then
    /// reads 2,000 rows instead of grouping 20,000 files (which took 6–14 ms there). A file of a
    /// missing folder (`missing = 1`) counts in no group. The triggers: an insert adds its file
    /// to its group (created as needed); a delete takes it away (the group goes at 0 files; the
    /// date is looked up again if it was the file's); an update of a column the table uses does
    /// both. `music_album_order` serves the album list, `music_album_artist` the artist list and
    /// an artist's albums.
    ///
    /// `music_album_tracks` finds a group's files (an album's tracks; a date to look up again).
    ///
    /// `music_fts` is the trigram index of search (see `namesIndexSQL` for why external content,
    /// `case_sensitive 1` and `columnsize=0`), over the three folded columns search matches; a
    /// quoted phrase matches a row if any one column contains it. Its triggers fire only when a
    /// folded column changes, so a rescan that rewrites a file's stamp leaves it alone.
    ///
    /// `music_search` is a narrow copy of what search reads, in id order, for texts too short
    /// for trigrams: scanning it instead of the table's wide rows halves the worst case (no
    /// match among 20,000 files: p99 2.8 ms instead of 6.6 ms in SQLite alone).
    ///
    /// `music_failures` lists files (and folders) the scan could not read, with the size and
    /// mtime they had then: an unchanged failed file is not read again at the next scan.
    static let musicSQL = """
        CREATE TABLE music_files (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          root TEXT NOT NULL,
          path TEXT NOT NULL,
          size INTEGER NOT NULL,
          mtime_ns INTEGER NOT NULL,
          codec TEXT NOT NULL,
          sample_rate INTEGER NOT NULL,
          channels INTEGER NOT NULL,
          duration REAL,
          title TEXT,
          artist TEXT,
          album TEXT,
          album_artist TEXT,
          track INTEGER,
          disc INTEGER,
          date TEXT,
          genre TEXT,
          has_cover INTEGER NOT NULL DEFAULT 0,
          missing INTEGER NOT NULL DEFAULT 0,
          group_artist TEXT,
          title_fold TEXT NOT NULL,
          artist_fold TEXT NOT NULL,
          album_fold TEXT NOT NULL,
          group_fold TEXT NOT NULL,
          UNIQUE (root, path)
        );
        CREATE INDEX music_album_tracks ON music_files (album_fold, album, group_fold, group_artist);
        CREATE TABLE music_albums (
          album_key TEXT NOT NULL,
          artist_key TEXT NOT NULL,
          album TEXT,
          group_artist TEXT,
          album_fold TEXT NOT NULL,
          group_fold TEXT NOT NULL,
          tracks INTEGER NOT NULL,
          duration_ms INTEGER NOT NULL,
          covers INTEGER NOT NULL,
          date TEXT,
          PRIMARY KEY (album_key, artist_key)
        );
        CREATE INDEX music_album_order ON music_albums (album_fold, album, group_fold, group_artist)
          WHERE album IS NOT NULL;
        CREATE INDEX music_album_artist ON music_albums (group_fold, group_artist, album_fold, album);
        CREATE TRIGGER music_albums_inserted AFTER INSERT ON music_files WHEN NEW.missing = 0 BEGIN
          \(musicAlbumAdd(when: "true"))
        END;
        CREATE TRIGGER music_albums_deleted AFTER DELETE ON music_files WHEN OLD.missing = 0 BEGIN
          \(musicAlbumTake(when: "true"))
        END;
        CREATE TRIGGER music_albums_updated
        AFTER UPDATE OF missing, album, group_artist, album_fold, group_fold, duration, has_cover, date ON music_files
        WHEN OLD.missing IS NOT NEW.missing OR OLD.album IS NOT NEW.album OR OLD.group_artist IS NOT NEW.group_artist
          OR OLD.album_fold IS NOT NEW.album_fold OR OLD.group_fold IS NOT NEW.group_fold
          OR OLD.duration IS NOT NEW.duration OR OLD.has_cover IS NOT NEW.has_cover OR OLD.date IS NOT NEW.date BEGIN
          \(musicAlbumTake(when: "OLD.missing = 0"))
          \(musicAlbumAdd(when: "NEW.missing = 0"))
        END;
        CREATE INDEX music_missing ON music_files (root) WHERE missing = 1;
        CREATE INDEX music_search ON music_files (id, missing, title_fold, artist_fold, album_fold);
        CREATE TABLE music_failures (
          root TEXT NOT NULL,
          path TEXT NOT NULL,
          size INTEGER NOT NULL,
          mtime_ns INTEGER NOT NULL,
          reason TEXT NOT NULL,
          PRIMARY KEY (root, path)
        ) WITHOUT ROWID;
        CREATE VIRTUAL TABLE music_fts USING fts5(
          title_fold, artist_fold, album_fold, content='music_files', content_rowid='id',
          tokenize='trigram case_sensitive 1', columnsize=0);
        CREATE TRIGGER music_fts_inserted AFTER INSERT ON music_files BEGIN
          INSERT INTO music_fts (rowid, title_fold, artist_fold, album_fold)
          VALUES (NEW.id, NEW.title_fold, NEW.artist_fold, NEW.album_fold);
        END;
        CREATE TRIGGER music_fts_deleted AFTER DELETE ON music_files BEGIN
          INSERT INTO music_fts (music_fts, rowid, title_fold, artist_fold, album_fold)
          VALUES ('delete', OLD.id, OLD.title_fold, OLD.artist_fold, OLD.album_fold);
        END;
        CREATE TRIGGER music_fts_updated AFTER UPDATE OF id, title_fold, artist_fold, album_fold ON music_files
        WHEN OLD.id IS NOT NEW.id OR OLD.title_fold IS NOT NEW.title_fold
          OR OLD.artist_fold IS NOT NEW.artist_fold OR OLD.album_fold IS NOT NEW.album_fold BEGIN
          INSERT INTO music_fts (music_fts, rowid, title_fold, artist_fold, album_fold)
          VALUES ('delete', OLD.id, OLD.title_fold, OLD.artist_fold, OLD.album_fold);
          INSERT INTO music_fts (rowid, title_fold, artist_fold, album_fold)
          VALUES (NEW.id, NEW.title_fold, NEW.artist_fold, NEW.album_fold);
        END;
        """

    /// A present file (`NEW`) into its `music_albums` group, if `condition` holds. The WHERE
    /// also keeps SQLite's parser from reading `ON CONFLICT` as a join constraint.
    static func musicAlbumAdd(when condition: String) -> String {
        """
        INSERT INTO music_albums (album_key, artist_key, album, group_artist, album_fold, group_fold, tracks,
                                  duration_ms, covers, date)
        SELECT coalesce(NEW.album, ''), coalesce(NEW.group_artist, ''), NEW.album, NEW.group_artist, NEW.album_fold,
               NEW.group_fold, 1, CAST(round(coalesce(NEW.duration, 0) * 1000) AS INTEGER), NEW.has_cover, NEW.date
        WHERE \(condition)
        ON CONFLICT (album_key, artist_key) DO UPDATE SET
          tracks = tracks + 1, duration_ms = duration_ms + excluded.duration_ms, covers = covers + excluded.covers,
          date = coalesce(min(date, excluded.date), date, excluded.date);
        """
    }

    /// A file that was present (`OLD`) out of its `music_albums` group, if `condition` holds;
    /// the group goes when empty. If the group's date was this file's, it is looked up again
    /// among the group's files (`music_album_tracks` finds them).
    static func musicAlbumTake(when condition: String) -> String {
        """
        UPDATE music_albums SET
          tracks = tracks - 1, duration_ms = duration_ms - CAST(round(coalesce(OLD.duration, 0) * 1000) AS INTEGER),
          covers = covers - OLD.has_cover,
          date = CASE WHEN OLD.date IS NULL OR date IS NOT OLD.date THEN date ELSE (
            SELECT min(f.date) FROM music_files f
            WHERE f.album_fold = OLD.album_fold AND f.album IS OLD.album AND f.group_fold = OLD.group_fold
              AND f.group_artist IS OLD.group_artist AND f.missing = 0) END
        WHERE \(condition) AND album_key = coalesce(OLD.album, '') AND artist_key = coalesce(OLD.group_artist, '');
        DELETE FROM music_albums
        WHERE \(condition) AND album_key = coalesce(OLD.album, '') AND artist_key = coalesce(OLD.group_artist, '')
          AND tracks <= 0;
        """
    }

    /// The case rule of the library: Unicode lowercase mapping (Swift's `lowercased()`), applied
    /// to names when stored and to search queries. Listing order and search both use it, so
    /// "abc", "ABC" and "Abc" sort together and a search for "abc" finds all three.
    static func fold(_ name: String) -> String { name.lowercased() }

    /// Columns read into an `ItemRow`, in its order.
    static let itemColumns =
        "seq, id, parent, kind, name, created, duration, codec, sample_rate, channels, size, file_ext"

    /// `itemColumns` qualified with a table alias, for joins.
    static func itemColumns(_ alias: String) -> String {
        itemColumns.split(separator: ",").map { "\(alias).\($0.trimmingCharacters(in: .whitespaces))" }
            .joined(separator: ", ")
    }

    /// The temporary (per-connection) change log the writer connection keeps: one row per
    /// insert, update or delete of `items`, filled by triggers, in statement order. Temporary
    /// objects live in the writer connection only and roll back with the transaction.
    static let changeLogSQL = """
        CREATE TEMP TABLE IF NOT EXISTS item_changes (
          seq INTEGER PRIMARY KEY AUTOINCREMENT,
          op TEXT NOT NULL,
          id TEXT NOT NULL,
          old_parent TEXT,
          old_name TEXT,
          kind TEXT,
          created TEXT,
          duration REAL,
          codec TEXT,
          sample_rate INTEGER,
          channels INTEGER,
          size INTEGER
        );
        CREATE TEMP TRIGGER IF NOT EXISTS item_inserted AFTER INSERT ON main.items BEGIN
          INSERT INTO item_changes (op, id) VALUES ('i', NEW.id);
        END;
        CREATE TEMP TRIGGER IF NOT EXISTS item_updated AFTER UPDATE ON main.items BEGIN
          INSERT INTO item_changes (op, id, old_parent, old_name) VALUES ('u', NEW.id, OLD.parent, OLD.name);
        END;
        CREATE TEMP TRIGGER IF NOT EXISTS item_deleted AFTER DELETE ON main.items BEGIN
          INSERT INTO item_changes (op, id, old_parent, old_name, kind, created, duration, codec, sample_rate, channels, size)
          VALUES ('d', OLD.id, OLD.parent, OLD.name, OLD.kind, OLD.created, OLD.duration, OLD.codec,
                  OLD.sample_rate, OLD.channels, OLD.size);
        END;
        """
}

/// One `items` row as read by `LibrarySchema.itemColumns`; becomes an `Item` once its path is known.
struct ItemRow: Sendable {
    var seq: Int64
    var id: String
    var parent: String?
    var kind: ItemKind
    var name: String
    var created: String
    var duration: Double?
    var codec: String?
    var sampleRate: Int?
    var channels: Int?
    var size: Int64?
    var fileExt: String?

    /// Reads the columns of `itemColumns` starting at `offset`.
    init(_ row: Row, offset: Int = 0) {
        seq = row[offset]
        id = row[offset + 1]
        parent = row[offset + 2]
        kind = ItemKind(rawValue: row[offset + 3]) ?? .recording
        name = row[offset + 4]
        created = row[offset + 5]
        duration = row[offset + 6]
        codec = row[offset + 7]
        sampleRate = row[offset + 8]
        channels = row[offset + 9]
        size = row[offset + 10]
        fileExt = row[offset + 11]
    }

    init(
        seq: Int64, id: String, parent: String?, kind: ItemKind, name: String, created: String,
        duration: Double? = nil, codec: String? = nil, sampleRate: Int? = nil, channels: Int? = nil,
        size: Int64? = nil, fileExt: String? = nil
    ) {
        self.seq = seq
        self.id = id
        self.parent = parent
        self.kind = kind
        self.name = name
        self.created = created
        self.duration = duration
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.size = size
        self.fileExt = fileExt
    }

    var isRoot: Bool { parent == nil }

    func item(path: String) -> Item {
        var format: AudioFormat?
        if kind == .recording, let codec {
            format = AudioFormat(codec: codec, sampleRate: sampleRate ?? 0, channels: channels ?? 0)
        }
        return Item(
            id: id, kind: kind, name: name, parent: parent, path: path, created: created,
            duration: kind == .recording ? duration : nil, format: format,
            size: kind == .recording ? (size ?? 0) : nil)
    }
}
