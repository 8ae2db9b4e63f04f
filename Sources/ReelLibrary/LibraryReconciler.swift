// The start-up check that audio files and recording rows agree.
import GRDB
import Logging
import ReelModel

/// What `LibraryStore.reconcile()` found and did. Every entry was also logged.
public struct ReconcileReport: Equatable, Sendable {
    /// Files in `audio/` that belong to no recording, moved to `lost+found/` (their names there).
    public var strayFiles: [String] = []
    /// Copies left by interrupted imports (`audio/.import-*.part`), removed: the source file
    /// they were copied from was never taken in; and copies of takes getting their chapters
    /// (`audio/.chapters-*.part`), removed: the take's own file is whole.
    public var partialImports: [String] = []
    /// Recordings whose audio file is gone: kept in the tree, marked missing, size 0.
    public var missingRecordings: [Item] = []
    /// Recordings marked missing at an earlier start whose file is back (size read again).
    public var restoredRecordings: [Item] = []
    /// Recordings with marks whose listed size was not their file's (a crash between a chapter
    /// rewrite's rename and the row's update), by tree path: the size was read again.
    public var resizedRecordings: [String] = []

    public init() {}

    /// Nothing was out of place.
    public var isClean: Bool {
        strayFiles.isEmpty && partialImports.isEmpty && missingRecordings.isEmpty && restoredRecordings.isEmpty
            && resizedRecordings.isEmpty
    }
}

extension LibraryStore {
    /// Makes `audio/` and the recording rows agree; meant for the daemon's start, before the
    /// recorder and the socket. Nothing is destroyed that a person might want back:
    /// - a file with no recording (a delete interrupted after its commit, an import interrupted
    ///   before its commit, or a file put there by hand) is moved to `lost+found/`, where the
    ///   owner can look at it and remove it;
    /// - a recording whose file is gone keeps its row (name, place, duration), marked missing with
    ///   size 0, so the tree still shows it and it can be deleted; if its file comes back, a later
    ///   reconcile restores it.
    /// Each finding is logged (warning) with the file or path; the report lists them all.
    /// `keeping` names files of `audio/` left as they are: a chapters journal whose redo failed
    /// (it is the only copy of the new header; `FLACCommentsInPlace`).
    public func reconcile(keeping: Set<String> = []) throws(ReelError) -> ReconcileReport {
        var report = ReconcileReport()
        let entries = try AudioFiles.entries(of: audioDirectory)
        // The file names (`<id>.<ext>`) of recordings that had their file at the last check, and
        // those (few) of recordings that were missing then, with their ids.
        let (expectedFiles, missingBefore) = try reading("read the recordings") { db in
            var expected = Set<String>()
            let files = try String.fetchCursor(
                db, sql: "SELECT id || '.' || file_ext FROM items WHERE kind = 'recording' AND missing = 0")
            while let file = try files.next() { expected.insert(file) }
            var missing: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id || '.' || file_ext, id FROM items WHERE missing = 1") {
                missing[row[0]] = row[1]
            }
            return (expected, missing)
        }

        var unseen = expectedFiles
        // A recording's expected file by its id: an import cut short after its commit left the
        // copy under its temporary name (`.import-<id>.part`), to be put in place.
        var unseenByID: [String: String] = [:]
        for file in unseen { unseenByID[String(file.prefix { $0 != "." })] = file }
        var back: [(id: String, file: String)] = []
        var finishedImports: [String] = []
        for entry in entries {
            if !entry.isDirectory {
                if unseen.remove(entry.name) != nil { continue }
                if let id = missingBefore[entry.name] {
                    back.append((id, entry.name))
                    continue
                }
            }
            let path = "\(audioDirectory)/\(entry.name)"
            if entry.isDirectory {
                logger.warning("a directory in the audio directory is not Reel's; left alone", metadata: ["path": "\(path)"])
                continue
            }
            if keeping.contains(entry.name) { continue }
            if entry.name.hasPrefix(Self.chaptersCopyPrefix), entry.name.hasSuffix(Self.partialImportSuffix) {
                // A recording's copy getting its chapters, cut short before it replaced the
                // file (which is whole): the copy goes.
                try? AudioFiles.removeIfPresent(path)
                report.partialImports.append(entry.name)
                logger.warning("removed an unfinished copy writing a recording's chapters", metadata: ["file": "\(path)"])
                continue
            }
            if entry.name.hasPrefix(Self.partialImportPrefix), entry.name.hasSuffix(Self.partialImportSuffix) {
                if let id = Self.partialImportID(entry.name), let final = unseenByID[id], unseen.contains(final) {
                    // Its row was committed (the import was answered, or about to be) but a power
                    // cut took the rename: finish it.
                    do {
                        try AudioFiles.rename(path, to: "\(audioDirectory)/\(final)")
                        unseen.remove(final)
                        finishedImports.append(final)
                        logger.notice(
                            "finished an import cut short after its commit", metadata: ["file": "\(audioDirectory)/\(final)"])
                    } catch {
                        logger.error("cannot finish an interrupted import", metadata: ["file": "\(path)", "error": "\(error.message)"])
                    }
                    continue
                }
                do {
                    try AudioFiles.removeIfPresent(path)
                    report.partialImports.append(entry.name)
                    logger.warning("removed the copy of an interrupted import", metadata: ["file": "\(path)"])
                } catch {
                    logger.error("cannot remove the copy of an interrupted import", metadata: ["file": "\(path)", "error": "\(error.message)"])
                }
                continue
            }
            do {
                let moved = try moveToLostAndFound(entry.name)
                report.strayFiles.append(moved)
                logger.warning(
                    "an audio file belongs to no recording; moved to lost+found",
                    metadata: ["file": "\(path)", "to": "\(lostAndFoundDirectory)/\(moved)"])
            } catch {
                logger.error(
                    "an audio file belongs to no recording and cannot be moved to lost+found; left in place",
                    metadata: ["file": "\(path)", "error": "\(error.message)"])
            }
        }

        // What was moved, removed or put in place stays so after a power cut.
        if !report.strayFiles.isEmpty { AudioFiles.syncDirectory(lostAndFoundDirectory) }
        if !report.strayFiles.isEmpty || !report.partialImports.isEmpty || !finishedImports.isEmpty {
            AudioFiles.syncDirectory(audioDirectory)
        }
        report.resizedRecordings = try resizeRewrittenRecordings()
        let gone = unseen.map { String($0.prefix { $0 != "." }) }
        guard !gone.isEmpty || !back.isEmpty else { return report }
        let (missing, restored) = try writing("mark recordings whose file is missing") { db in
            let markMissing = try db.cachedStatement(sql: "UPDATE items SET missing = 1, size = 0 WHERE id = ?")
            for id in gone { try markMissing.execute(arguments: [id]) }
            let restore = try db.cachedStatement(sql: "UPDATE items SET missing = 0, size = ? WHERE id = ?")
            for recording in back {
                let size = AudioFiles.regularFileSize("\(self.audioDirectory)/\(recording.file)") ?? 0
                try restore.execute(arguments: [size, recording.id])
            }
            var paths = TreePaths(db)
            return (
                try gone.compactMap { try self.fetchRow(id: $0, db) }.map { try paths.item($0) },
                try back.compactMap { try self.fetchRow(id: $0.id, db) }.map { try paths.item($0) }
            )
        }
        for item in missing {
            logger.warning(
                "a recording's audio file is missing; kept in the tree as missing",
                metadata: ["path": "\(item.path)", "id": "\(item.id)"])
        }
        for item in restored {
            logger.notice("a missing recording's audio file is back", metadata: ["path": "\(item.path)", "id": "\(item.id)"])
        }
        report.missingRecordings = missing.sorted { $0.path < $1.path }
        report.restoredRecordings = restored.sorted { $0.path < $1.path }
        report.strayFiles.sort()
        report.partialImports.sort()
        return report
    }

    /// The recordings whose files get chapters rewritten (those with marks, finished): a size
    /// that is not the file's (the rewrite's rename reached the disk, the row's update did not)
    /// is read again. Returns their paths.
    private func resizeRewrittenRecordings() throws(ReelError) -> [String] {
        let listed = try reading("read the sizes of recordings with marks") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, id || '.' || file_ext, size FROM items
                    WHERE kind = 'recording' AND missing = 0 AND in_progress = 0
                      AND EXISTS (SELECT 1 FROM marks WHERE marks.item = items.id)
                    """
            ).map { (id: $0[0] as String, file: $0[1] as String, size: $0[2] as Int64?) }
        }
        let changed = listed.compactMap { recording -> (id: String, size: Int64)? in
            guard let size = AudioFiles.regularFileSize("\(audioDirectory)/\(recording.file)"), size != recording.size else { return nil }
            return (recording.id, size)
        }
        guard !changed.isEmpty else { return [] }
        let paths = try writing("bring the sizes of rewritten recordings up to date") { db in
            var paths = TreePaths(db)
            return try changed.compactMap { recording -> String? in
                try db.execute(sql: "UPDATE items SET size = ? WHERE id = ?", arguments: [recording.size, recording.id])
                return try self.fetchRow(id: recording.id, db).map { try paths.item($0).path }
            }
        }
        for path in paths {
            logger.notice("a recording's size was not its file's (its chapters were being written); read again", metadata: ["path": "\(path)"])
        }
        return paths.sorted()
    }

    /// Moves `audio/<name>` to `lost+found/`, under a free name; returns that name.
    private func moveToLostAndFound(_ name: String) throws(ReelError) -> String {
        try AudioFiles.makeDirectory(lostAndFoundDirectory)
        var candidate = name
        var attempt = 1
        while AudioFiles.regularFileSize("\(lostAndFoundDirectory)/\(candidate)") != nil
            || AudioFiles.isDirectory("\(lostAndFoundDirectory)/\(candidate)")
        {
            attempt += 1
            candidate = "\(name).\(attempt)"
        }
        try AudioFiles.rename("\(audioDirectory)/\(name)", to: "\(lostAndFoundDirectory)/\(candidate)")
        return candidate
    }
}
