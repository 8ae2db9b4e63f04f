// The playlist directory on disk: NAME.m3u files, read whole, written atomically.

import ReelModel
import ReelStreamFormats

#if canImport(Glibc)
import Glibc
#endif

/// The files of `playlist_dir`: one `NAME.m3u` per stored playlist, in MPD's format
/// (`StoredPlaylist`). Every write replaces a file whole and atomically: the new bytes go to a
/// temporary file beside it (`.NAME.m3u.tmp`, never listed: names cannot start with `.`), which
/// is fsynced, renamed over the old one, and the directory fsynced — a power cut at any point
/// leaves the old file or the new one, never a torn one (`PlaylistFilesTests`). Not thread-safe:
/// `PlaylistStore` calls it from its one queue.
struct PlaylistFiles {
    let directory: String

    /// The steps of an atomic write, for a test that stops a write after one of them (as a
    /// power cut or a kill would).
    enum WriteStep: Int, CaseIterable {
        case createdTemporary, wroteTemporary, syncedTemporary, renamed, syncedDirectory
    }

    /// How long after its last change a file's stamp starts to tell (`Stamp.settle`; a test
    /// sets 0 to compare stamps at once).
    var settle = Stamp.settle

    /// Called after each step of a write; a test throws from it to stop the write there.
    var afterStep: (WriteStep) throws(ReelError) -> Void = { _ in }

    static let suffix = ".m3u"

    /// Checks a playlist's name: not empty, no `/`, no line break or NUL, not starting with `.`
    /// (hidden files and the temporary files are never playlists), at most 255 bytes with `.m3u`.
    static func check(name: String) throws(ReelError) {
        guard !name.isEmpty else { throw ReelError(.invalidName, "a playlist's name cannot be empty") }
        if name.contains("/") { throw ReelError(.invalidName, "a playlist's name cannot contain \"/\": \(name)") }
        if name.hasPrefix(".") { throw ReelError(.invalidName, "a playlist's name cannot start with \".\": \(name)") }
        if name.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\0" }) {
            throw ReelError(.invalidName, "a playlist's name cannot contain a line break or NUL")
        }
        guard name.utf8.count + suffix.utf8.count <= 255 else {
            throw ReelError(.invalidName, "a playlist's name is too long (at most \(255 - suffix.utf8.count) bytes)")
        }
    }

    func path(of name: String) -> String { directory + "/" + name + Self.suffix }
    private func temporaryPath(of name: String) -> String { directory + "/." + name + Self.suffix + ".tmp" }

    /// The playlists' names and files' modification times, by name (files `*.m3u` only).
    func list() throws(ReelError) -> [(name: String, modified: Double)] {
        guard let dir = opendir(directory) else {
            if errno == ENOENT { return [] }
            throw ReelError(.ioError, "cannot read the playlist directory \(directory): \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        var found: [(name: String, modified: Double)] = []
        while let entry = readdir(dir) {
            let fileName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard fileName.hasSuffix(Self.suffix), !fileName.hasPrefix(".") else { continue }
            let name = String(fileName.dropLast(Self.suffix.count))
            guard !name.isEmpty, let modified = modificationTime(directory + "/" + fileName) else { continue }
            found.append((name, modified))
        }
        return found.sorted { $0.name < $1.name }
    }

    func exists(_ name: String) -> Bool { access(path(of: name), F_OK) == 0 }

    func modificationTime(_ path: String) -> Double? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    /// What tells whether a playlist's file changed since it was read: which file it is (a write
    /// renames a new one over it), its size, and its modification and change times.
    struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
            changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        }

        /// A file changed this recently may change again within its clock's step without its
        /// times showing it (a file system's clock moves in steps of a few ms): its stamp tells
        /// nothing yet.
        static let settle: Int64 = 2_000_000_000
    }

    /// The playlist `name`; `not_found` when there is none.
    func read(_ name: String) throws(ReelError) -> StoredPlaylist {
        // Without a stamp to compare, the file is always read.
        try read(name, unlessStamped: nil).playlist!
    }

    /// The playlist `name` (`not_found` when there is none), or nil when its file's stamp is
    /// `known` (not changed since the read that gave it); and the file's stamp, nil when the
    /// file changed too recently to tell (`Stamp.settle`).
    func read(_ name: String, unlessStamped known: Stamp?) throws(ReelError) -> (playlist: StoredPlaylist?, stamp: Stamp?) {
        let (bytes, stamp) = try bytes(of: name, unlessStamped: known)
        guard let bytes else { return (nil, stamp) }
        do {
            return (try StoredPlaylist(reading: bytes), stamp)
        } catch {
            throw ReelError(.outOfRange, "the playlist \(name) is too large: \(error.message)")
        }
    }

    /// The entries of the playlist `name` (to load or list it: `StoredPlaylistEntries`), as
    /// `read(_:unlessStamped:)`.
    func entries(of name: String, unlessStamped known: Stamp?) throws(ReelError) -> (entries: StoredPlaylistEntries?, stamp: Stamp?) {
        let (bytes, stamp) = try bytes(of: name, unlessStamped: known)
        guard let bytes else { return (nil, stamp) }
        do {
            return (try StoredPlaylistEntries(reading: bytes), stamp)
        } catch {
            throw ReelError(.outOfRange, "the playlist \(name) is too large: \(error.message)")
        }
    }

    /// The bytes of the playlist `name`'s file (at most the limit and one byte more, so that the
    /// parser refuses a larger one), as `read(_:unlessStamped:)`.
    private func bytes(of name: String, unlessStamped known: Stamp?) throws(ReelError) -> (bytes: [UInt8]?, stamp: Stamp?) {
        let path = path(of: name)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw ReelError(.notFound, "no playlist named \(name)") }
            throw ReelError(.ioError, "cannot read the playlist \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        var stamp: Stamp?
        // The file's size and one byte more (a file grown since is read on below).
        var expected = 65536
        if fstat(fd, &info) == 0 {
            let found = Stamp(info)
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let nanoseconds = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
            if nanoseconds - max(found.modified, found.changed) >= settle {
                if found == known { return (nil, found) }
                stamp = found
            }
            expected = min(Int(info.st_size), PlaylistLimits.stored.maximumBytes) + 1
        }
        // Read straight into the array (no copy from a chunk, no zeroing first).
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: expected) { buffer, initialized in
            while initialized < buffer.count {
                let count = Glibc.read(fd, buffer.baseAddress! + initialized, buffer.count - initialized)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if count == 0 { return }
                initialized += count
            }
        }
        if failure != 0 {
            throw ReelError(.ioError, "cannot read the playlist \(path): \(String(cString: strerror(failure)))")
        }
        guard bytes.count == expected, bytes.count <= PlaylistLimits.stored.maximumBytes else { return (bytes, stamp) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReelError(.ioError, "cannot read the playlist \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            if bytes.count > PlaylistLimits.stored.maximumBytes { break }
        }
        return (bytes, stamp)
    }

    /// Replaces (or creates) the playlist `name` with `playlist`, atomically (see the type).
    func write(_ name: String, _ playlist: StoredPlaylist) throws(ReelError) {
        let bytes: [UInt8]
        do {
            bytes = try playlist.encoded()
        } catch {
            throw ReelError(.invalidName, "cannot store the playlist \(name): \(error.message)")
        }
        try makeDirectory()
        let temporary = temporaryPath(of: name)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ioError("create", temporary) }
        var closed = false
        defer { if !closed { close(fd) } }
        /// An I/O error leaves the old file, and the temporary goes. (A test's stop in
        /// `afterStep` leaves the temporary, as a kill would.)
        func failed(_ what: String) -> ReelError {
            let error = ioError(what, temporary)
            unlink(temporary)
            return error
        }
        try afterStep(.createdTemporary)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { raw in Glibc.write(fd, raw.baseAddress! + written, raw.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failed("write")
            }
            written += count
        }
        try afterStep(.wroteTemporary)
        guard fsync(fd) == 0 else { throw failed("sync") }
        try afterStep(.syncedTemporary)
        closed = true
        guard close(fd) == 0 else { throw failed("close") }
        guard Glibc.rename(temporary, path(of: name)) == 0 else { throw failed("rename") }
        try afterStep(.renamed)
        try syncDirectory()
        try afterStep(.syncedDirectory)
    }

    /// Removes the playlist `name`; `not_found` when there is none.
    func remove(_ name: String) throws(ReelError) {
        guard unlink(path(of: name)) == 0 else {
            if errno == ENOENT { throw ReelError(.notFound, "no playlist named \(name)") }
            throw ioError("remove", path(of: name))
        }
        try syncDirectory()
    }

    /// Renames the playlist `name` to `newName`: `not_found` when there is none, `name_taken`
    /// when `newName` exists.
    func rename(_ name: String, to newName: String) throws(ReelError) {
        guard exists(name) else { throw ReelError(.notFound, "no playlist named \(name)") }
        guard !exists(newName) else { throw ReelError(.nameTaken, "a playlist named \(newName) exists already") }
        guard Glibc.rename(path(of: name), path(of: newName)) == 0 else { throw ioError("rename", path(of: name)) }
        try syncDirectory()
    }

    /// Removes temporary files a write stopped by a crash left behind.
    func removeLeftovers() {
        guard let dir = opendir(directory) else { return }
        var leftovers: [String] = []
        while let entry = readdir(dir) {
            let fileName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if fileName.hasPrefix("."), fileName.hasSuffix(Self.suffix + ".tmp") { leftovers.append(fileName) }
        }
        closedir(dir)
        for fileName in leftovers { unlink(directory + "/" + fileName) }
    }

    /// Makes the directory (and its parents) if it is missing, each synced into its parent.
    private func makeDirectory() throws(ReelError) {
        var info = stat()
        if stat(directory, &info) == 0 { return }
        var path = ""
        for part in directory.split(separator: "/") {
            let parent = path.isEmpty ? "/" : path
            path += "/" + part
            if mkdir(path, 0o755) == 0 {
                syncPath(directory.hasPrefix("/") ? parent : ".")
            } else if errno != EEXIST {
                throw ioError("create the directory", path)
            }
        }
    }

    private func syncDirectory() throws(ReelError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw ioError("sync", directory) }
    }

    private func syncPath(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private func ioError(_ what: String, _ path: String) -> ReelError {
        let code = errno
        let reason: ErrorReason = code == ENOSPC || code == EDQUOT ? .diskFull : .ioError
        return ReelError(reason, "cannot \(what) \(path): \(String(cString: strerror(code)))")
    }
}
