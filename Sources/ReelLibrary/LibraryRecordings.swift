// Recordings in the tree: rows for the recorder, batch inserts, imports, and file placement.
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import ReelModel

/// A recording to add with `LibraryStore.insertRecordings(_:)`.
public struct NewRecording: Sendable {
    /// The id of the folder it goes in.
    public var parent: String
    public var name: String
    public var format: AudioFormat
    public var duration: Double?
    public var size: Int64
    /// ISO 8601 UTC; now if nil.
    public var created: String?

    public init(
        parent: String, name: String, format: AudioFormat, duration: Double? = nil, size: Int64 = 0,
        created: String? = nil
    ) {
        self.parent = parent
        self.name = name
        self.format = format
        self.duration = duration
        self.size = size
        self.created = created
    }
}

/// What `importFile`'s probe learns from a file: that it decodes, its duration (nil if the
/// decoder cannot tell) and its format. Supplied by the daemon; throws `unsupported_format` or
/// `corrupt_file` for a file that does not decode.
public typealias AudioProbe = (_ path: String) throws(ReelError) -> (duration: Double?, format: AudioFormat)

extension LibraryStore {
    /// The file extension recordings of a codec get: `wav`, `flac`, `ogg` (Vorbis), `opus`,
    /// `mp3`; another codec name made of letters and digits is its own extension.
    public static func fileExtension(forCodec codec: String) -> String {
        let codec = codec.lowercased()
        switch codec {
        case "vorbis", "ogg": return "ogg"
        case "wav", "flac", "opus", "mp3": return codec
        default:
            let plain = !codec.isEmpty && codec.utf8.count <= 10
                && codec.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) }
            return plain ? codec : "audio"
        }
    }

    /// Where a recording's audio file lives: `<directory>/audio/<id>.<ext>`.
    public func audioPath(for item: Item) throws(ReelError) -> String {
        try reading("find the audio file of \(item.path)") { db in
            let found = try self.resolve(.id(item.id), db)
            guard found.row.kind == .recording, let ext = found.row.fileExt else {
                throw ReelError(.notARecording, "\(found.path) is a folder, not a recording")
            }
            return self.audioPath(id: found.row.id, ext: ext)
        }
    }

    /// Adds the row of a recording about to be written (for the recorder): duration 0, size 0,
    /// marked in progress until `updateRecording(id:…finished: true)`. The caller then writes
    /// the file at `audioPath(for:)`.
    @discardableResult
    public func addRecording(
        parent: ItemReference = .root, name: String, format: AudioFormat, created: String? = nil
    ) throws(ReelError) -> Item {
        try ItemName.validate(name)
        return try writing("add the recording \"\(name)\"") { db in
            let folder = try self.resolve(parent, db)
            guard folder.row.kind == .folder else {
                throw ReelError(
                    .notAFolder, "cannot record into \(folder.path): it is a recording, not a folder")
            }
            try self.requireFreeName(name, in: folder, db)
            let row = ItemRow(
                seq: 0, id: Self.newID(), parent: folder.row.id, kind: .recording, name: name,
                created: created ?? Timestamp.now(), duration: 0, codec: format.codec,
                sampleRate: format.sampleRate, channels: format.channels, size: 0,
                fileExt: Self.fileExtension(forCodec: format.codec))
            try self.insert(row, inProgress: true, db)
            return row.item(path: TreePaths.join(folder.path, name))
        }
    }

    /// Updates a recording's facts; nil leaves a fact as it is. `finished: true` ends its
    /// in-progress state (see `inProgressRecordings()`). `replayGain` keeps its measured gain
    /// and peak in the same transaction (a finished take: one commit, not two). The file
    /// extension never changes.
    @discardableResult
    public func updateRecording(
        id: String, duration: Double? = nil, size: Int64? = nil, format: AudioFormat? = nil,
        finished: Bool? = nil, replayGain: ReplayGainValue? = nil
    ) throws(ReelError) -> Item {
        try writing("update the recording \(id)") { db in
            let target = try self.resolve(.id(id), db)
            guard target.row.kind == .recording else {
                throw ReelError(.notARecording, "\(target.path) is a folder, not a recording")
            }
            try db.execute(
                sql: """
                    UPDATE items SET duration = coalesce(?, duration), size = coalesce(?, size),
                      codec = coalesce(?, codec), sample_rate = coalesce(?, sample_rate),
                      channels = coalesce(?, channels), in_progress = coalesce(?, in_progress),
                      missing = CASE WHEN ? IS NULL THEN missing ELSE 0 END
                    WHERE id = ?
                    """,
                arguments: [
                    duration, size, format?.codec, format?.sampleRate, format?.channels, finished.map { !$0 },
                    size, id,
                ])
            if let replayGain {
                try db.execute(
                    sql: "UPDATE items SET rg_gain = ?, rg_peak = ? WHERE id = ?",
                    arguments: [replayGain.gain, replayGain.peak, id])
            }
            return try self.resolve(.id(id), db).item
        }
    }

    /// Recordings whose rows say they were still being written (the recorder's crash repair).
    public func inProgressRecordings() throws(ReelError) -> [Item] {
        try recordings(where: "in_progress = 1", "list unfinished recordings")
    }

    /// Recordings whose audio file `reconcile()` found gone (kept, with size 0).
    public func missingRecordings() throws(ReelError) -> [Item] {
        try recordings(where: "missing = 1", "list recordings with missing files")
    }

    func recordings(where condition: String, _ action: String) throws(ReelError) -> [Item] {
        try reading(action) { db in
            var paths = TreePaths(db)
            return try Row.fetchAll(
                db, sql: "SELECT \(LibrarySchema.itemColumns) FROM items WHERE kind = 'recording' AND \(condition)"
            ).map { try paths.item(ItemRow($0)) }
        }
    }

    /// Inserts many recordings' rows in one transaction (all or none), with prepared-statement
    /// batching: the way to build a large tree (the benchmark's 100,000 recordings) quickly.
    /// Files are not written; a recording whose file does not exist at the next `reconcile()`
    /// is marked missing.
    @discardableResult
    public func insertRecordings(_ recordings: [NewRecording]) throws(ReelError) -> [Item] {
        for recording in recordings { try ItemName.validate(recording.name) }
        let now = Timestamp.now()
        return try writing("add \(recordings.count) recordings") { db in
            var folderPaths: [String: String] = [:]
            var items: [Item] = []
            items.reserveCapacity(recordings.count)
            for recording in recordings {
                let folderPath: String
                if let known = folderPaths[recording.parent] {
                    folderPath = known
                } else {
                    let folder = try self.resolve(.id(recording.parent), db)
                    guard folder.row.kind == .folder else {
                        throw ReelError(
                            .notAFolder, "cannot add \"\(recording.name)\" to \(folder.path): it is a recording, not a folder")
                    }
                    folderPath = folder.path
                    folderPaths[recording.parent] = folderPath
                }
                let row = ItemRow(
                    seq: 0, id: Self.newID(), parent: recording.parent, kind: .recording, name: recording.name,
                    created: recording.created ?? now, duration: recording.duration, codec: recording.format.codec,
                    sampleRate: recording.format.sampleRate, channels: recording.format.channels,
                    size: recording.size, fileExt: Self.fileExtension(forCodec: recording.format.codec))
                try self.insert(row, parentPath: folderPath, db)
                items.append(row.item(path: TreePaths.join(folderPath, recording.name)))
            }
            return items
        }
    }

    /// Copies the audio file at `path` (absolute) into `folder` as a new recording.
    ///
    /// `probe` (the daemon's decoder check) runs first; then the file is copied to a temporary
    /// name in `audio/` and fsynced; then, in one transaction, the row is inserted and the copy
    /// renamed into place. On any failure nothing is left behind: no row, no file. `name`
    /// defaults to the file's name without its extension and must be free in the folder.
    @discardableResult
    public func importFile(
        path source: String, folder: ItemReference = .root, name: String? = nil, probe: AudioProbe
    ) throws(ReelError) -> Item {
        guard source.hasPrefix("/") else {
            throw ReelError(.notFound, "\"\(source)\" is not an absolute path; give the file's full path")
        }
        guard AudioFiles.regularFileSize(source) != nil else {
            var info = stat()
            if stat(source, &info) == 0 {
                // A directory, FIFO or device: never read it (a FIFO would block, /dev/zero never ends).
                throw ReelError(.unsupportedFormat, "\(source) is not a regular file")
            }
            throw ReelError(.notFound, "no file at \(source)")
        }
        let probed = try probe(source)
        let name = name ?? Self.defaultName(ofFile: source)
        try ItemName.validate(name)
        // Refuse early (before copying a large file) what the transaction would refuse.
        _ = try reading("import \(source)") { db in try self.importDestination(folder, name, db) }

        let id = Self.newID()
        let partial = "\(audioDirectory)/\(Self.partialImportPrefix)\(id)\(Self.partialImportSuffix)"
        let final = audioPath(id: id, ext: Self.fileExtension(forCodec: probed.format.codec))
        try AudioFiles.copyDurably(from: source, to: partial)
        // The copy's name is durable before the row is committed: a power cut after the commit
        // leaves the copy for the next start to put in place (`reconcile`).
        AudioFiles.syncDirectory(audioDirectory)
        do {
            let item = try commitImport(
                file: partial, id: id, folder: folder, name: name, probed: probed, action: "import \(source)")
            logger.info("imported", metadata: ["file": "\(source)", "path": "\(item.path)", "id": "\(id)"])
            return item
        } catch {
            // The row was not committed: take the copy away, under whichever name it has.
            try? AudioFiles.removeIfPresent(partial)
            try? AudioFiles.removeIfPresent(final)
            throw error
        }
    }

    /// The last step of an import, shared by copies and uploads: in one transaction, the
    /// recording's row is inserted and `file` (already in `audio/`, synced) is renamed to its
    /// final name — a failed rename rolls the row back; then the directory is synced.
    private func commitImport(
        file: String, id: String, folder: ItemReference, name: String,
        probed: (duration: Double?, format: AudioFormat), action: String
    ) throws(ReelError) -> Item {
        let ext = Self.fileExtension(forCodec: probed.format.codec)
        let final = audioPath(id: id, ext: ext)
        let size = AudioFiles.regularFileSize(file) ?? 0
        let item = try writing(action) { db in
            let folder = try self.importDestination(folder, name, db)
            let row = ItemRow(
                seq: 0, id: id, parent: folder.row.id, kind: .recording, name: name, created: Timestamp.now(),
                duration: probed.duration, codec: probed.format.codec, sampleRate: probed.format.sampleRate,
                channels: probed.format.channels, size: size, fileExt: ext)
            try self.insert(row, parentPath: folder.path, db)
            try AudioFiles.rename(file, to: final)
            return row.item(path: TreePaths.join(folder.path, name))
        }
        AudioFiles.syncDirectory(audioDirectory)
        return item
    }

    static let partialImportPrefix = ".import-"
    static let partialImportSuffix = ".part"

    /// The id in a path named `.../.import-<id>.part`, nil for any other.
    static func partialImportID(_ path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard name.hasPrefix(partialImportPrefix), name.hasSuffix(partialImportSuffix),
              name.count > partialImportPrefix.count + partialImportSuffix.count
        else { return nil }
        return String(name.dropFirst(partialImportPrefix.count).dropLast(partialImportSuffix.count))
    }

    /// A fresh path in `audio/` for a file the daemon is about to write and then give to
    /// `importOwnedFile` (an upload): same directory, so the import renames it instead of copying,
    /// and named like an import's copy, so a crash mid-upload leaves nothing after the next start
    /// (`reconcile` removes it).
    public func newUploadPath() -> String {
        "\(audioDirectory)/\(Self.partialImportPrefix)\(Self.newID())\(Self.partialImportSuffix)"
    }

    /// Imports a file the daemon wrote itself at a path from `newUploadPath()`, moving it in (no
    /// copy): probed, fsynced, then, in one transaction, the row inserted and the file renamed
    /// to its final name. No media-roots check applies (the file is the daemon's). `displayName`
    /// (the uploaded file's name) replaces the temporary path in error messages. On any failure
    /// the file is removed: nothing is left behind.
    @discardableResult
    public func importOwnedFile(
        path source: String, folder: ItemReference = .root, name: String, displayName: String, probe: AudioProbe
    ) throws(ReelError) -> Item {
        do throws(ReelError) {
            guard source.hasPrefix(audioDirectory + "/" + Self.partialImportPrefix) else {
                throw ReelError(.forbidden, "\(displayName) is not a file the daemon received")
            }
            let probed: (duration: Double?, format: AudioFormat)
            do throws(ReelError) {
                probed = try probe(source)
            } catch {
                throw ReelError(error.reason, error.message.replacing(source, with: displayName))
            }
            try ItemName.validate(name)
            _ = try reading("import \(displayName)") { db in try self.importDestination(folder, name, db) }
            try AudioFiles.syncFile(source)
            AudioFiles.syncDirectory(audioDirectory)
            // The recording takes the upload's id, so a power cut after the commit leaves a copy
            // (`.import-<id>.part`) the next start puts in place.
            let id = Self.partialImportID(source) ?? Self.newID()
            let item = try commitImport(
                file: source, id: id, folder: folder, name: name, probed: probed, action: "import \(displayName)")
            logger.info("imported an upload", metadata: ["file": "\(displayName)", "path": "\(item.path)", "id": "\(id)"])
            return item
        } catch {
            try? AudioFiles.removeIfPresent(source)
            throw error
        }
    }

    /// `Talk.final.flac` → `Talk.final`; a name that is only an extension is kept whole.
    public static func defaultName(ofFile path: String) -> String {
        let base = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = base.lastIndex(of: "."), dot != base.startIndex else { return base }
        return String(base[..<dot])
    }

    private func importDestination(_ folder: ItemReference, _ name: String, _ db: Database) throws -> Resolved {
        let resolved = try resolve(folder, db)
        guard resolved.row.kind == .folder else {
            throw ReelError(.notAFolder, "cannot import into \(resolved.path): it is a recording, not a folder")
        }
        try requireFreeName(name, in: resolved, db)
        return resolved
    }
}
