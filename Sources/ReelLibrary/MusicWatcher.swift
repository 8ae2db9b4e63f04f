// Following the music folders on disk while reeld runs: Linux inotify on every folder, changes
// gathered until the tree is quiet, then handed over in one batch.
import Foundation
import Glibc
import Logging
import ReelRuntime

/// A file or folder renamed or moved inside the music folders, as inotify paired it.
public struct MusicMove: Hashable, Sendable {
    public var from: MusicPath
    public var to: MusicPath

    public init(from: MusicPath, to: MusicPath) {
        self.from = from
        self.to = to
    }
}

/// What changed in the music folders while the tree was busy, to apply in one go.
///
/// Apply `moves` first, in order (`MusicIndex.move`: ids and tags kept), then bring `changed`
/// up to date (`MusicScanner.update`: files read, added or removed as the disk says), leaving
/// `writing` alone. A move's destination is among `changed` too: whatever the index did not
/// have there (a folder moved in from a hidden one, a file renamed from `.part`) is read then,
/// and a moved file that changed on the way is read again; nothing else is.
public struct MusicWatchBatch: Sendable, Equatable {
    public var moves: [MusicMove] = []
    /// Files and folders to bring up to date (none under another).
    public var changed: [MusicPath] = []
    /// Files created and not closed yet: read after their close, in a later batch.
    public var writing: Set<MusicPath> = []
    /// Music folders that were gone and are back (and watched again): their files are present
    /// again; each is among `changed` as a whole.
    public var returned: [String] = []
    /// inotify's queue overflowed: events were lost, every music folder must be scanned.
    public var rescan = false

    public init(
        moves: [MusicMove] = [], changed: [MusicPath] = [], writing: Set<MusicPath> = [], returned: [String] = [],
        rescan: Bool = false
    ) {
        self.moves = moves
        self.changed = changed
        self.writing = writing
        self.returned = returned
        self.rescan = rescan
    }
}

/// Watches the music folders with inotify and reports what changed.
///
/// - Every folder under each music folder has a watch (not hidden ones, which the walker skips,
///   nor folders reached through a link). A folder created or moved in is watched at once,
///   with the folders already inside it (`cp -r`, `mv` of an album), and listed as changed.
/// - Events gather until the tree has been quiet for `timing.quiet` or `timing.cap` has passed
///   since the first, then go to the handler as one `MusicWatchBatch`. A file created is not
///   read until its writer closes it (`IN_CLOSE_WRITE`). `IN_MOVED_FROM`/`IN_MOVED_TO` are
///   paired by cookie into a move; one without the other is a removal or an addition. Names
///   that are hidden or not audio (by extension) are ignored, except folders.
/// - A music folder that goes away (deleted, moved, its disk unmounted: `IN_DELETE_SELF`,
///   `IN_MOVE_SELF`, `IN_UNMOUNT`, `IN_IGNORED` of its own watch) is reported gone, with what
///   was pending for it dropped (its files are to be marked missing, not removed). While one
///   is gone, the watcher watches the deepest folder of its path that exists for a folder
///   created or moved in, and `/proc/self/mountinfo` for a change of the mount table (a disk
///   mounted); at each, it asks `isPresent`, and once it is, watches it again and reports it
///   back in the next batch (`returned`).
/// - `IN_Q_OVERFLOW` (events lost) asks for a full rescan. `ENOSPC` from `inotify_add_watch`
///   (the limit `fs.inotify.max_user_watches`) is logged once, clearly; folders not watched
///   then show their changes at the next rescan. Nothing here crashes on a failed call.
///
/// Threads: one of its own, `reel.music.watch`, blocking in `poll` with no timeout while
/// nothing is pending (an idle daemon stays asleep), and with the time left to the batch's
/// deadline while something is. The handler and `isPresent` are called on that thread, one
/// call at a time; the handler must only hand the work on (to the scan queue). `start` and
/// `stop` may be called from any thread, once each.
public final class MusicWatcher: @unchecked Sendable {
    /// When a batch goes out.
    public struct Timing: Sendable {
        /// Quiet time after the last event.
        public var quiet: Duration
        /// Longest wait after the first event of a batch, however busy the tree is.
        public var cap: Duration

        public init(quiet: Duration = .milliseconds(300), cap: Duration = .milliseconds(1200)) {
            self.quiet = quiet
            self.cap = cap
        }
    }

    /// What the watcher reports.
    public enum Report: Sendable, Equatable {
        case changes(MusicWatchBatch)
        /// A music folder went away: mark its files missing. When it is back, it comes in a
        /// batch's `returned`, once the tree is quiet (a folder being copied back is read whole).
        case folderGone(String)
    }

    public let roots: [String]
    public let timing: Timing
    private let extensions: Set<String>
    private let isPresent: @Sendable (String) -> Bool
    private let handler: @Sendable (Report) -> Void
    private let logger: Logger
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let wakeEnds = Locked<(read: Int32, write: Int32)>((-1, -1))
    private let threadIDs = Locked<Int32?>(nil)

    // The watcher thread's own state.
    private var inotify: Int32 = -1
    private var mountTable: Int32 = -1
    /// Watched folders, by watch descriptor, and back.
    private var folders: [Int32: MusicPath] = [:]
    private var watchesByPath: [MusicPath: Int32] = [:]
    /// Music folders gone, by the watch of the folder that stands in for them.
    private var anchors: [String: Int32] = [:]
    private var anchoredRoots: [Int32: Set<String>] = [:]
    /// The path each stand-in watch is on.
    private var anchorPaths: [Int32: String] = [:]
    private var warnedNoSpace = false
    private var pending = Pending()

    private struct Pending {
        var moves: [MusicMove] = []
        var changed: Set<MusicPath> = []
        var writing: Set<MusicPath> = []
        var movedFrom: [UInt32: (path: MusicPath, isFolder: Bool)] = [:]
        var returned: [String] = []
        var rescan = false
        var first: ContinuousClock.Instant?
        var last: ContinuousClock.Instant?

        var isDue: Bool { !moves.isEmpty || !changed.isEmpty || !movedFrom.isEmpty || !returned.isEmpty || rescan }
    }

    static let folderMask = UInt32(
        IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF
            | IN_UNMOUNT | IN_ONLYDIR)
    static let anchorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_ONLYDIR)

    /// - Parameters:
    ///   - roots: the music folders (absolute, as configured).
    ///   - isPresent: whether a music folder is there (by the scan's rule: a readable folder,
    ///     not empty while the index has files of it).
    ///   - handler: gets the reports, on the watcher's thread.
    public init(
        roots: [String], extensions: Set<String>, timing: Timing = Timing(),
        logger: Logger, isPresent: @escaping @Sendable (String) -> Bool,
        handler: @escaping @Sendable (Report) -> Void
    ) {
        var seen: Set<String> = []
        self.roots = roots.map(MusicScanner.normalized).filter { seen.insert($0).inserted }
        self.extensions = Set(extensions.map { $0.lowercased() })
        self.timing = timing
        self.logger = logger
        self.isPresent = isPresent
        self.handler = handler
    }

    /// Starts the thread and returns once every present music folder is watched (so a scan
    /// started afterwards misses no change: what changes during it comes in a later batch).
    /// Returns false, having logged why, if inotify cannot be used.
    @discardableResult
    public func start() -> Bool {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else {
            let code = errno
            logger.warning(
                "cannot watch the music folders for changes; they are kept current by rescans only",
                metadata: [
                    "error": "\(MusicFolderWalker.errorText(code))",
                    "hint": "\(code == EMFILE ? "raise the sysctl fs.inotify.max_user_instances" : "")",
                ])
            return false
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            logger.warning("cannot watch the music folders: no pipe", metadata: ["error": "\(MusicFolderWalker.errorText())"])
            return false
        }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        inotify = descriptor
        wakeEnds.withLock { $0 = (ends[0], ends[1]) }
        let thread = Thread { [self] in
            OSThread.nameThisThread("reel.music.watch")
            threadIDs.withLock { $0 = Self.currentThreadID() }
            setUp()
            started.signal()
            run()
            tearDown()
            finished.signal()
        }
        thread.name = "reel.music.watch"
        thread.start()
        started.wait()
        return true
    }

    /// Stops the thread and waits for it to end (what is pending is dropped: the next start's
    /// scan finds it). No effect if it was not started.
    public func stop() {
        let write = wakeEnds.withLock { ends -> Int32 in
            let write = ends.write
            ends.write = -1
            return write
        }
        guard write >= 0 else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(write, &byte, 1)
        finished.wait()
        close(write)
    }

    /// The watcher thread's Linux thread id (for measuring its CPU time), once started.
    public var threadID: Int32? { threadIDs.withLock { $0 } }

    // MARK: The thread

    private func setUp() {
        for root in roots {
            if isPresent(root) {
                watchTree(MusicPath(root: root, relativePath: ""))
            } else {
                anchor(root)
            }
        }
        updateMountTable()
    }

    private func tearDown() {
        close(inotify)
        inotify = -1
        if mountTable >= 0 { close(mountTable) }
        mountTable = -1
        let read = wakeEnds.withLock { ends -> Int32 in
            let read = ends.read
            ends.read = -1
            return read
        }
        close(read)
    }

    private func run() {
        let wake = wakeEnds.withLock { $0.read }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var descriptors = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
                // Only POLLPRI: mountinfo is always readable; POLLPRI (with POLLERR) says the
                // mount table changed since the last poll.
                pollfd(fd: mountTable, events: Int16(POLLPRI), revents: 0),
            ]
            let count = mountTable >= 0 ? 3 : 2
            let result = poll(&descriptors, nfds_t(count), timeout())
            if result < 0 {
                if errno == EINTR { continue }
                logger.error("the music folders' watcher stopped", metadata: ["error": "\(MusicFolderWalker.errorText())"])
                return
            }
            if descriptors[1].revents != 0 { return }
            if descriptors[0].revents != 0 { readEvents(&buffer) }
            if count == 3, descriptors[2].revents != 0 { checkAnchors() }
            if pending.isDue, let first = pending.first, let last = pending.last {
                let now = ContinuousClock.now
                if now >= last + timing.quiet || now >= first + timing.cap { flush() }
            }
        }
    }

    /// Milliseconds until the batch is due; -1 (no timeout) when nothing is pending.
    private func timeout() -> Int32 {
        guard pending.isDue, let first = pending.first, let last = pending.last else { return -1 }
        let due = min(last + timing.quiet, first + timing.cap)
        let left = due - ContinuousClock.now
        if left <= .zero { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(min(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000, 60_000))
    }

    private func readEvents(_ buffer: inout [UInt8]) {
        while true {
            let length = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            if length <= 0 { return }
            var offset = 0
            while offset + 16 <= length {
                let (wd, mask, cookie, nameLength) = buffer.withUnsafeBytes { bytes in
                    (
                        bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self),
                        Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + 16)..<min(offset + 16 + nameLength, length)]
                let name = nameBytes.firstIndex(of: 0).map { nameBytes[..<$0] } ?? nameBytes[...]
                handle(wd: wd, mask: mask, cookie: cookie, name: String(validating: name, as: UTF8.self))
                offset += 16 + nameLength
            }
        }
    }

    private func note() {
        let now = ContinuousClock.now
        if pending.first == nil { pending.first = now }
        pending.last = now
    }

    private func handle(wd: Int32, mask: UInt32, cookie: UInt32, name: String?) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            logger.warning("inotify's queue overflowed; the music folders will be scanned again")
            pending.rescan = true
            note()
            return
        }
        if let roots = anchoredRoots[wd] {
            if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
                // The stand-in folder went: find another.
                anchoredRoots[wd] = nil
                anchorPaths[wd] = nil
                for root in roots { anchors[root] = nil }
                for root in roots { anchor(root) }
                checkAnchors()
            } else if let name, let path = anchorPaths[wd] {
                // Only a name on the way to a gone music folder matters.
                let created = path == "/" ? "/" + name : path + "/" + name
                if roots.contains(where: { $0 == path || $0 == created || $0.hasPrefix(created + "/") }) {
                    checkAnchors()
                }
            }
        }
        guard let folder = folders[wd] else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            forget(wd)
            if folder.relativePath.isEmpty { rootGone(folder.root, "its watch ended") }
            return
        }
        if folder.relativePath.isEmpty, mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) != 0 {
            rootGone(folder.root, mask & UInt32(IN_UNMOUNT) != 0 ? "its disk was unmounted" : "it was deleted or moved")
            return
        }
        if mask & UInt32(IN_UNMOUNT) != 0 {
            // A disk mounted inside a music folder went: what is there now is the folder below.
            pending.changed.insert(folder)
            note()
            return
        }
        guard let name, !name.isEmpty else { return }
        // Hidden names are not music (the walker skips them): a move to one is a removal, a
        // move from one an addition, by leaving the other half unpaired.
        if name.utf8.first == UInt8(ascii: ".") { return }
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        if !isFolder, !isAudio(name) { return }
        let path = folder.appending(name)
        if mask & UInt32(IN_CREATE) != 0 {
            if isFolder {
                watchTree(path)
                pending.changed.insert(path)
                note()
            } else {
                var info = stat()
                if lstat(path.absolute, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 {
                    pending.writing.insert(path)  // read when its writer closes it
                } else {
                    pending.changed.insert(path)  // a link: nothing will be written to it
                    note()
                }
            }
        }
        if mask & UInt32(IN_CLOSE_WRITE) != 0 {
            pending.writing.remove(path)
            pending.changed.insert(path)
            note()
        }
        if mask & UInt32(IN_DELETE) != 0 {
            pending.writing = pending.writing.filter { !path.contains($0) }
            pending.changed.insert(path)
            if isFolder { unwatchTree(path) }
            note()
        }
        if mask & UInt32(IN_MOVED_FROM) != 0 {
            pending.movedFrom[cookie] = (path, isFolder)
            note()
        }
        if mask & UInt32(IN_MOVED_TO) != 0 {
            pending.changed.insert(path)
            note()
            if let from = pending.movedFrom.removeValue(forKey: cookie) {
                pending.moves.append(MusicMove(from: from.path, to: path))
                let writing = pending.writing.filter { from.path.contains($0) }
                for file in writing {
                    pending.writing.remove(file)
                    pending.writing.insert(MusicPath.rebase(file, from: from.path, to: path))
                }
                if isFolder {
                    if watchesByPath[from.path] != nil { rebaseWatches(from: from.path, to: path) } else { watchTree(path) }
                }
            } else if isFolder {
                watchTree(path)
            }
        }
    }

    /// Hands the batch over.
    private func flush() {
        for (_, from) in pending.movedFrom {
            // Moved out of the music folders (or to a hidden name): gone.
            pending.changed.insert(from.path)
            pending.writing = pending.writing.filter { !from.path.contains($0) }
            if from.isFolder { unwatchTree(from.path) }
        }
        let batch = MusicWatchBatch(
            moves: pending.moves, changed: MusicPath.outermost(Array(pending.changed)), writing: pending.writing,
            returned: pending.returned, rescan: pending.rescan)
        if batch.rescan {
            // Events were lost: folders made meanwhile may not be watched.
            for root in roots where anchors[root] == nil { watchTree(MusicPath(root: root, relativePath: "")) }
        }
        let writing = pending.writing
        pending = Pending()
        pending.writing = writing
        handler(.changes(batch))
    }

    // MARK: Watches

    /// Watches a folder and every folder under it (not hidden ones, not through links).
    private func watchTree(_ top: MusicPath) {
        var stack = [top]
        while let folder = stack.popLast() {
            guard addWatch(folder) else { continue }
            guard let directory = opendir(folder.absolute) else { continue }
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: &entry.pointee.d_name) { bytes in
                    String(validating: bytes[..<(bytes.firstIndex(of: 0) ?? bytes.count)], as: UTF8.self)
                }
                guard let name, name.utf8.first != UInt8(ascii: ".") else { continue }
                var type = entry.pointee.d_type
                if type == UInt8(DT_UNKNOWN) {
                    var info = stat()
                    guard lstat(folder.appending(name).absolute, &info) == 0 else { continue }
                    type = info.st_mode & S_IFMT == S_IFDIR ? UInt8(DT_DIR) : 0
                }
                if type == UInt8(DT_DIR) { stack.append(folder.appending(name)) }
            }
        }
    }

    private func addWatch(_ folder: MusicPath) -> Bool {
        // A music folder may itself be a link; folders under it are watched as found, not
        // through links.
        let follow = folder.relativePath.isEmpty ? 0 : UInt32(IN_DONT_FOLLOW)
        let wd = inotify_add_watch(inotify, folder.absolute, Self.folderMask | follow)
        guard wd >= 0 else {
            if errno == ENOSPC { warnNoSpace(folder) }
            return false
        }
        if let old = watchesByPath[folder], old != wd { forget(old) }
        if let other = folders[wd], other != folder { watchesByPath[other] = nil }
        folders[wd] = folder
        watchesByPath[folder] = wd
        return true
    }

    private func warnNoSpace(_ folder: MusicPath) {
        guard !warnedNoSpace else { return }
        warnedNoSpace = true
        let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_watches", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        logger.warning(
            "too many folders to watch: the limit of inotify watches is reached; changes in the folders not watched show at the next rescan (library.rescan, or a restart). Raise the limit with: sysctl fs.inotify.max_user_watches=524288",
            metadata: ["limit": "\(limit)", "watched": "\(folders.count)", "first_not_watched": "\(folder.absolute)"])
    }

    private func forget(_ wd: Int32) {
        if let folder = folders.removeValue(forKey: wd), watchesByPath[folder] == wd { watchesByPath[folder] = nil }
    }

    /// Stops watching a folder and those under it (gone, or moved away).
    private func unwatchTree(_ top: MusicPath) {
        for (path, wd) in watchesByPath where top.contains(path) {
            _ = inotify_rm_watch(inotify, wd)
            forget(wd)
        }
    }

    /// A watched folder moved inside the music folders: its watches (which follow the folder)
    /// now stand for the new paths.
    private func rebaseWatches(from: MusicPath, to: MusicPath) {
        let moved = watchesByPath.filter { from.contains($0.key) }
        for (path, _) in moved { watchesByPath[path] = nil }
        for (path, wd) in moved {
            let new = MusicPath.rebase(path, from: from, to: to)
            folders[wd] = new
            watchesByPath[new] = wd
        }
    }

    // MARK: Music folders gone and back

    private func rootGone(_ root: String, _ reason: String) {
        guard anchors[root] == nil else { return }
        let top = MusicPath(root: root, relativePath: "")
        unwatchTree(top)
        pending.moves.removeAll { $0.from.root == root || $0.to.root == root }
        pending.changed = pending.changed.filter { $0.root != root }
        pending.writing = pending.writing.filter { $0.root != root }
        pending.movedFrom = pending.movedFrom.filter { $0.value.path.root != root }
        pending.returned.removeAll { $0 == root }
        if !pending.isDue {
            pending.first = nil
            pending.last = nil
        }
        logger.warning(
            "a music folder went away; its files are kept, marked missing, until it comes back",
            metadata: ["folder": "\(root)", "reason": "\(reason)"])
        handler(.folderGone(root))
        anchor(root)
        updateMountTable()
        // It may be back already (a folder deleted and made again at once).
        checkAnchors()
    }

    /// Watches the deepest folder of a gone music folder's path that exists (the music folder
    /// itself when it is there but empty or unreadable) for a folder or file created in it.
    /// Added to any watch the folder has (`IN_MASK_ADD`), so a folder that is also watched as
    /// part of another music folder keeps its events.
    private func anchor(_ root: String) {
        var path = root
        while true {
            let wd = inotify_add_watch(inotify, path, Self.anchorMask | UInt32(IN_MASK_ADD))
            if wd >= 0 {
                if let old = anchors[root], old != wd { release(old, root) }
                anchors[root] = wd
                anchoredRoots[wd, default: []].insert(root)
                anchorPaths[wd] = path
                return
            }
            if errno == ENOSPC { warnNoSpace(MusicPath(root: root, relativePath: "")) }
            guard path != "/", let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return }
            path = slash == path.utf8.startIndex ? "/" : String(path[..<slash])
        }
    }

    /// A stand-in watch no longer needed for `root`.
    private func release(_ wd: Int32, _ root: String) {
        anchoredRoots[wd]?.remove(root)
        guard anchoredRoots[wd]?.isEmpty == true else { return }
        anchoredRoots[wd] = nil
        anchorPaths[wd] = nil
        if folders[wd] == nil { _ = inotify_rm_watch(inotify, wd) }
    }

    /// For each music folder gone: back now? Then watch it again and report it. If not, its
    /// stand-in moves to the deepest folder of its path there is now.
    ///
    /// The stand-in is watched *before* the second look: a folder or file made between a look
    /// and the watch (a music folder made again with its contents at once, `mkdir -p` and a copy)
    /// made no event on a watch that was not there yet, so only a look after the watch is sure
    /// to see it.
    private func checkAnchors() {
        for root in anchors.keys {
            if !isPresent(root) {
                anchor(root)
                guard isPresent(root) else { continue }
            }
            guard let wd = anchors[root] else { continue }
            release(wd, root)
            anchors[root] = nil
            watchTree(MusicPath(root: root, relativePath: ""))
            logger.notice("a music folder is back", metadata: ["folder": "\(root)"])
            pending.returned.append(root)
            pending.changed.insert(MusicPath(root: root, relativePath: ""))
            note()
        }
        updateMountTable()
    }

    /// Watches the mount table while a music folder is gone, not otherwise.
    private func updateMountTable() {
        if anchors.isEmpty {
            if mountTable >= 0 { close(mountTable) }
            mountTable = -1
        } else if mountTable < 0 {
            mountTable = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)
            if mountTable >= 0 {
                // The first poll reports a change; take it now.
                var descriptor = pollfd(fd: mountTable, events: Int16(POLLPRI), revents: 0)
                _ = poll(&descriptor, 1, 0)
            }
        }
    }

    private func isAudio(_ name: String) -> Bool {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let ext = name.utf8[name.utf8.index(after: dot)...]
        guard ext.count <= 5, !ext.isEmpty else { return false }
        return extensions.contains(String(decoding: ext, as: UTF8.self).lowercased())
    }

    /// The calling thread's Linux thread id, from `/proc/thread-self` (`PID/task/TID`).
    static func currentThreadID() -> Int32? {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &buffer, 63)
        guard length > 0 else { return nil }
        let text = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.split(separator: "/").last.flatMap { Int32($0) }
    }
}
