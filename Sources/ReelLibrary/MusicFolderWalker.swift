// Finding the audio files of the music folders on disk (opendir/readdir, one stat per audio file).
import Foundation
import ReelModel

/// Lists the audio files and the playlist files under the music folders that are present, with
/// their stamps.
///
/// The rules:
/// - A file is an audio file by its extension (`MusicScanner.extensions`, any letter case), a
///   playlist file by its own (`MusicPlaylistFile.suffixes`: `.m3u`, `.m3u8`, `.pls`). Links
///   to playlist files are followed by the same rule as links to audio files.
/// - Names that begin with "." are skipped, files and folders: hidden folders (`.Trash-1000`,
///   `.git`) and macOS's `._name.mp3` companions on USB disks are not music.
/// - A symbolic link is followed only if its real path (`realpath`) lies inside a music folder
///   (the real path of one of the walked roots). Links are taken after every real folder was
///   walked, and a linked folder already walked (same device and inode) is not walked again,
///   nor is a linked file indexed if the walk already found it: each file is indexed once,
///   at its real path when that path is in a music folder. A loop of links ends there too
///   (`realpath` fails with ELOOP on a cycle of links; a link to an ancestor is a folder
///   already walked).
/// - A folder that cannot be read is a failure, and its files are reported as not walked
///   (`unreadable`), so the scan keeps their index rows rather than dropping them.
///
/// A walk may also cover only some paths of the folders (`walk(_:only:)`: what a file watcher
/// saw change): each path is walked as above if it is a folder, taken if it is an audio file,
/// followed if it is a link, and skipped if any of its components is hidden. A link met in
/// such a walk is followed only where the whole walk would follow it: its real path must lie
/// inside a music folder but where a walk of real folders does not reach (under a hidden
/// folder); otherwise the file is indexed at its real path, not twice.
///
/// Runs on the calling thread (the scan's); `isCancelled` is polled every few hundred entries.
struct MusicFolderWalker {
    struct Found: Sendable {
        var relativePath: String
        var stamp: MusicFileStamp
    }

    /// What a walk found under one root.
    struct RootResult: Sendable {
        var files: [Found] = []
        /// The playlist files (`.m3u`, `.m3u8`, `.pls`).
        var playlists: [Found] = []
        var failures: [MusicFileFailure] = []
        /// Relative paths of folders not read (their files are not known), "" for the root.
        var unreadable: [String] = []
    }

    private struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    let extensions: Set<String>
    let isCancelled: () -> Bool

    private var visitedFolders: Set<FileID> = []
    private var foundFiles: Set<FileID> = []
    private var links: [(root: Int, relativePath: String)] = []
    private var roots: [String] = []
    private var realRoots: [String] = []
    private var results: [RootResult] = []
    private var entries = 0
    /// Walking only some paths (`walk(_:only:)`).
    private var partial = false
    /// The walk was cancelled: it may have missed files.
    private(set) var wasCancelled = false

    init(extensions: Set<String>, isCancelled: @escaping () -> Bool) {
        self.extensions = extensions
        self.isCancelled = isCancelled
    }

    /// Walks `roots` (present music folders, absolute paths); one result per root, in order.
    /// With `only` (one list per root), walks just those relative paths of each root ("" is
    /// the whole root; a path that is not there is simply not found).
    mutating func walk(_ roots: [String], only: [[String]]? = nil) -> [RootResult] {
        self.roots = roots
        realRoots = roots.map { Self.realPath($0) ?? $0 }
        results = Array(repeating: RootResult(), count: roots.count)
        partial = only != nil
        for index in roots.indices {
            if let only {
                for path in only[index] { walkPath(root: index, relativePath: path) }
            } else {
                walkFolder(root: index, relativePath: "")
            }
        }
        // Links last, in the order found; a linked folder may add more.
        var next = 0
        while next < links.count, !isCancelled() {
            let link = links[next]
            next += 1
            follow(root: link.root, relativePath: link.relativePath)
        }
        wasCancelled = isCancelled()
        return results
    }

    /// Walks one folder and everything under it (an explicit stack, no recursion).
    private mutating func walkFolder(root: Int, relativePath: String) {
        var stack = [relativePath]
        while let folder = stack.popLast() {
            if isCancelled() { return }
            let absolute = absolutePath(root, folder)
            var info = stat()
            guard stat(absolute, &info) == 0 else {
                fail(root, folder, folder: true, "cannot read the folder: \(Self.errorText())")
                continue
            }
            guard visitedFolders.insert(FileID(info)).inserted else { continue }
            guard let directory = opendir(absolute) else {
                fail(root, folder, folder: true, "cannot read the folder: \(Self.errorText())")
                continue
            }
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                entries += 1
                if entries % 512 == 0, isCancelled() { return }
                let type = entry.pointee.d_type
                guard let name = Self.name(of: entry) else {
                    if type == UInt8(DT_DIR) || isAudio(Self.rawName(of: entry)) {
                        let shown = Self.rawName(of: entry)
                        fail(root, join(folder, shown), folder: type == UInt8(DT_DIR),
                             "the name is not valid UTF-8; rename it to read it")
                    }
                    continue
                }
                if name.utf8.first == UInt8(ascii: ".") { continue }
                let child = join(folder, name)
                var kind = type
                if kind == UInt8(DT_UNKNOWN) {
                    var linkInfo = stat()
                    guard lstat(absolutePath(root, child), &linkInfo) == 0 else { continue }
                    kind = Self.direntType(mode: linkInfo.st_mode)
                }
                switch kind {
                case UInt8(DT_DIR):
                    stack.append(child)
                case UInt8(DT_REG):
                    if isAudio(name) {
                        addFile(root: root, relativePath: child)
                    } else if MusicPlaylistFile.isPlaylistName(name) {
                        addFile(root: root, relativePath: child, playlist: true)
                    }
                case UInt8(DT_LNK):
                    links.append((root, child))
                default:
                    break
                }
            }
        }
    }

    /// One path of a partial walk: a folder, an audio file or a link; hidden paths are skipped.
    private mutating func walkPath(root: Int, relativePath: String) {
        if relativePath.isEmpty {
            walkFolder(root: root, relativePath: "")
            return
        }
        guard !Self.isHidden(relativePath) else { return }
        var info = stat()
        guard lstat(absolutePath(root, relativePath), &info) == 0 else {
            // Not there (removed, or moved away): nothing is found, so the index drops it.
            if errno != ENOENT && errno != ENOTDIR {
                fail(root, relativePath, folder: true, "cannot read it: \(Self.errorText())")
            }
            return
        }
        switch Self.direntType(mode: info.st_mode) {
        case UInt8(DT_DIR):
            walkFolder(root: root, relativePath: relativePath)
        case UInt8(DT_REG):
            let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
            if isAudio(name) {
                addFile(root: root, relativePath: relativePath, info: info)
            } else if MusicPlaylistFile.isPlaylistName(name) {
                addFile(root: root, relativePath: relativePath, info: info, playlist: true)
            }
        case UInt8(DT_LNK):
            links.append((root, relativePath))
        default:
            break
        }
    }

    /// Whether any component of a relative path begins with ".".
    static func isHidden(_ relativePath: String) -> Bool {
        relativePath.utf8.first == UInt8(ascii: ".") || relativePath.contains("/.")
    }

    /// A symbolic link: followed if its real path is inside a music folder (and, in a partial
    /// walk, where a walk of real folders does not reach).
    private mutating func follow(root: Int, relativePath: String) {
        let absolute = absolutePath(root, relativePath)
        guard let real = Self.realPath(absolute), isInsideMusicFolder(real) else { return }
        if partial, isReachedByRealWalk(real) { return }
        var info = stat()
        guard stat(absolute, &info) == 0 else { return }
        switch Self.direntType(mode: info.st_mode) {
        case UInt8(DT_DIR):
            walkFolder(root: root, relativePath: relativePath)
        case UInt8(DT_REG):
            let name = relativePath.split(separator: "/").last.map(String.init) ?? relativePath
            let playlist = !isAudio(name) && MusicPlaylistFile.isPlaylistName(name)
            if isAudio(name) || playlist, !foundFiles.contains(FileID(info)) {
                addFile(root: root, relativePath: relativePath, info: info, playlist: playlist)
            }
        default:
            break
        }
    }

    private mutating func addFile(root: Int, relativePath: String, info known: stat? = nil, playlist: Bool = false) {
        var info = stat()
        if let known {
            info = known
        } else if stat(absolutePath(root, relativePath), &info) != 0 {
            // Gone since readdir listed it: it is simply not there.
            if errno != ENOENT { fail(root, relativePath, folder: false, "cannot read the file: \(Self.errorText())") }
            return
        }
        foundFiles.insert(FileID(info))
        let nanoseconds = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let found = Found(relativePath: relativePath, stamp: MusicFileStamp(size: Int64(info.st_size), modifiedNanoseconds: nanoseconds))
        if playlist { results[root].playlists.append(found) } else { results[root].files.append(found) }
    }

    private mutating func fail(_ root: Int, _ relativePath: String, folder: Bool, _ reason: String) {
        if folder { results[root].unreadable.append(relativePath) }
        results[root].failures.append(
            MusicFileFailure(
                root: roots[root], relativePath: relativePath, stamp: MusicFileStamp(size: 0, modifiedNanoseconds: 0),
                reason: reason))
    }

    private func isInsideMusicFolder(_ real: String) -> Bool {
        realRoots.contains { root in
            real == root || root == "/" || real.hasPrefix(root.hasSuffix("/") ? root : root + "/")
        }
    }

    /// A real path inside a music folder that a walk of its real folders reaches (no hidden
    /// component below the music folder).
    private func isReachedByRealWalk(_ real: String) -> Bool {
        for root in realRoots {
            let prefix = root.hasSuffix("/") ? root : root + "/"
            if real == root { return true }
            if real.hasPrefix(prefix) { return !Self.isHidden(String(real.dropFirst(prefix.count))) }
        }
        return false
    }

    func isAudio(_ name: String) -> Bool {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let ext = name.utf8[name.utf8.index(after: dot)...]
        guard ext.count <= 5, !ext.isEmpty else { return false }
        return extensions.contains(String(decoding: ext, as: UTF8.self).lowercased())
    }

    private func absolutePath(_ root: Int, _ relativePath: String) -> String {
        relativePath.isEmpty ? roots[root] : MusicIndex.join(roots[root], relativePath)
    }

    private func join(_ folder: String, _ name: String) -> String {
        folder.isEmpty ? name : folder + "/" + name
    }

    // MARK: C helpers

    private static func name(of entry: UnsafeMutablePointer<dirent>) -> String? {
        withUnsafeBytes(of: &entry.pointee.d_name) { bytes in
            let length = bytes.firstIndex(of: 0) ?? bytes.count
            return String(validating: bytes[..<length], as: UTF8.self)
        }
    }

    /// The name with invalid UTF-8 repaired (U+FFFD), for messages only.
    private static func rawName(of entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: &entry.pointee.d_name) { bytes in
            let length = bytes.firstIndex(of: 0) ?? bytes.count
            return String(decoding: bytes[..<length], as: UTF8.self)
        }
    }

    private static func direntType(mode: mode_t) -> UInt8 {
        switch mode & S_IFMT {
        case S_IFDIR: UInt8(DT_DIR)
        case S_IFREG: UInt8(DT_REG)
        case S_IFLNK: UInt8(DT_LNK)
        default: UInt8(DT_UNKNOWN)
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func errorText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
