// File operations on the audio directory: durable copies, renames, removal, listing.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ReelModel

/// POSIX file operations with errors a person can act on. Stateless; any thread; all calls block.
enum AudioFiles {
    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    static func failure(_ what: String, _ path: String, _ code: Int32 = errno) -> ReelError {
        let reason: ErrorReason =
            switch code {
            case ENOSPC, EDQUOT: .diskFull
            case ENOENT: .notFound
            default: .ioError
            }
        return ReelError(reason, "cannot \(what) \(path): \(errnoText(code))")
    }

    /// `mkdir -p`, durably: the parent of each directory made is fsynced, so a power cut cannot
    /// take away a directory (the data directory, `audio/`) whose files were synced into it.
    static func makeDirectory(_ path: String) throws(ReelError) {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            let parent = built.isEmpty ? "/" : built
            built += "/" + part
            if mkdir(built, 0o755) == 0 {
                syncDirectory(parent)
            } else if errno != EEXIST {
                throw failure("create the directory", built)
            }
        }
        guard isDirectory(path) else {
            throw ReelError(.ioError, "cannot use \(path) as a directory: it exists and is not one")
        }
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The size of a regular file, or nil if there is none at `path`.
    static func regularFileSize(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Copies `source` to the new file `destination` (which must not exist) and fsyncs it.
    /// On failure nothing is left at `destination`.
    static func copyDurably(from source: String, to destination: String) throws(ReelError) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw failure("read", source) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw failure("create", destination) }
        var failed: ReelError?
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        copying: while true {
            let count = read(input, buffer, bufferSize)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                failed = failure("read", source)
                break
            }
            var written = 0
            while written < count {
                let n = write(output, buffer + written, count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    failed = failure("write", destination)
                    break copying
                }
                written += n
            }
        }
        if failed == nil, fsync(output) != 0 { failed = failure("flush", destination) }
        if close(output) != 0, failed == nil { failed = failure("close", destination) }
        if let failed {
            unlink(destination)
            throw failed
        }
    }

    static func rename(_ from: String, to: String) throws(ReelError) {
        guard systemRename(from, to) == 0 else { throw failure("move \(from) to", to) }
    }

    /// Removes a file; a file that is already gone is not an error.
    static func removeIfPresent(_ path: String) throws(ReelError) {
        if unlink(path) != 0 && errno != ENOENT { throw failure("remove", path) }
    }

    /// Makes a file's contents durable.
    static func syncFile(_ path: String) throws(ReelError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure("read", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("sync", path) }
    }

    /// Makes a directory's entries (a rename, a new file) durable.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// The names in a directory (not `.` and `..`), with whether each is a directory.
    static func entries(of path: String) throws(ReelError) -> [(name: String, isDirectory: Bool)] {
        guard let dir = opendir(path) else { throw failure("list", path) }
        defer { closedir(dir) }
        var result: [(name: String, isDirectory: Bool)] = []
        while let entry = readdir(dir) {
            // Read the name where it lies: copying `d_name` (a 256-byte tuple) reads past a
            // short record at the end of readdir's buffer (AddressSanitizer caught it).
            let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name == "." || name == ".." { continue }
            var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) { isDirectory = Self.isDirectory(path + "/" + name) }
            result.append((name, isDirectory))
        }
        return result
    }
}

/// The C library's `rename(2)`, under a name that does not clash with `AudioFiles.rename`.
private func systemRename(_ from: String, _ to: String) -> Int32 {
    rename(from, to)
}
