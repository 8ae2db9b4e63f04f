// Bringing the music index up to date with the music folders on disk.
import Foundation
import Logging
import ReelModel
import ReelRuntime
import Synchronization

/// How a scan ended.
public struct MusicScanOutcome: Equatable, Sendable {
    /// The final counts (`running` false).
    public var progress: MusicScanProgress
    /// Music folders found missing (not there, not a folder, unreadable, or empty while the
    /// index has files of them): their files were marked missing, not removed.
    public var missingRoots: [String]
    /// The scan was cancelled: what was read is written, nothing was removed.
    public var cancelled: Bool
}

/// Walks the music folders and brings `MusicIndex` up to date with them.
///
/// One scan (`scan`), for each configured folder (`roots`, absolute paths):
/// 1. The index forgets folders no longer configured.
/// 2. A folder that is not there (a USB disk unplugged), is not a readable folder, or is
///    empty while the index has files of it (an unmounted mount point looks like that) is
///    *missing*: its files are marked missing, kept with their ids, and come back when it
///    returns. A folder present again has its files unmarked.
/// 3. The present folders are walked (`MusicFolderWalker`: extensions, hidden names, symbolic
///    links). A file whose size and mtime equal the index's is unchanged and not read again; so
///    is a file that failed before with the same size and mtime (it is still listed as failed).
/// 4. New and changed files are read with `reader` on `readerCount` threads and written in
///    batches of `batchSize` files per transaction on the store's writer. A file the reader
///    cannot read is listed in the failures with the reader's message; the scan goes on.
/// 5. Files gone from a present folder leave the index, except under a folder that could not
///    be read this time. A new file with the size, mtime and read audio (tags, stream, cover)
///    of a file gone in the same scan is taken as that file moved: it keeps the id.
///
/// `update` does the same for only some paths of the folders (what `MusicWatcher` saw change),
/// without marking folders missing or forgetting any.
///
/// Progress goes to the `progress` handler: after the walk, after each batch written, and at
/// the end. `seen` = `indexed` + `unchanged` + `failed` once the scan ends; a folder that cannot
/// be read, or a name that is not UTF-8, counts as one seen and failed. `cancel()` stops a running scan soon (between files): what was read is written,
/// nothing is removed.
///
/// Threads: `scan` blocks its caller until the scan ends (run it on a thread that may block,
/// e.g. the library's work queue, never an event loop); one scan at a time per scanner (a
/// second call meanwhile is `busy`). The reader runs on `readerCount` threads of the scan's
/// own, named `reel.music.read`; the progress handler is called on those threads or the
/// caller's, one call at a time, with counts that never go back.
public final class MusicScanner: Sendable {
    /// Reads one audio file's tags and stream (the tag reader, injected).
    public typealias Reader = @Sendable (_ path: String) throws(ReelError) -> ScannedAudio

    /// Reader threads: twice the cores, at least 2 and at most 8. Reading a file's tags is
    /// short CPU work between waits for the disk (open, the header, often a seek to the end);
    /// with twice as many threads as cores, both cores keep busy while others wait on a cold
    /// disk, and with a warm cache the extra threads cost only their stacks. On this project's
    /// 2-core machines that is 4.
    public static var defaultReaderCount: Int {
        min(8, max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))
    }

    public let index: MusicIndex
    /// The music folders as configured (absolute; a trailing `/` dropped; duplicates once).
    public let roots: [String]
    public let readerCount: Int
    public let batchSize: Int
    /// The suffixes of the files looked at (lowercase, compared case-insensitively): the codec
    /// registry's, given by the core. A file the reader refuses is a failure, with its reason.
    public let extensions: Set<String>
    private let reader: Reader
    private let logger: Logger
    private let cancelled = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    public init(
        index: MusicIndex, roots: [String], extensions: Set<String>, reader: @escaping Reader,
        readerCount: Int = MusicScanner.defaultReaderCount, batchSize: Int = 500
    ) {
        self.index = index
        var seen: Set<String> = []
        self.roots = roots.map(Self.normalized).filter { seen.insert($0).inserted }
        self.reader = reader
        self.readerCount = max(1, readerCount)
        self.batchSize = max(1, batchSize)
        self.extensions = Set(extensions.map { $0.lowercased() })
        self.logger = index.store.logger
    }

    /// Stops the running scan soon; no effect if none runs.
    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
    }

    /// Scans every music folder; see the type's description. Throws `busy` if a scan is
    /// running, and the store's errors if the index cannot be read or written (the scan stops).
    @discardableResult
    public func scan(progress: @escaping @Sendable (MusicScanProgress) -> Void = { _ in }) throws(ReelError)
        -> MusicScanOutcome
    {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            throw ReelError(.busy, "the music folders are already being scanned; wait for that scan to end")
        }
        defer { running.store(false, ordering: .releasing) }
        cancelled.store(false, ordering: .relaxed)
        let run = ScanRun(progress: progress)
        let started = ContinuousClock.now
        run.emit()

        try index.removeRoots(notIn: roots)

        // Which folders are there.
        var present: [String] = []
        var missing: [String] = []
        for root in roots {
            if let reason = try absence(of: root) {
                missing.append(root)
                let marked = try index.setMissing(root: root, true, reason: reason)
                run.count {
                    $0.missing += marked
                    $0.missingFolders.append(root)
                }
                logger.warning(
                    "a music folder is missing; its files are kept, marked missing",
                    metadata: ["folder": "\(root)", "reason": "\(reason)", "files": "\(marked)"])
            } else {
                present.append(root)
                let restored = try index.setMissing(root: root, false)
                run.count { $0.restored += restored }
            }
        }

        let wasCancelled = try reconcile(present, only: nil, skipping: [], run)
        let final = run.finish()
        progress(final)
        logger.info(
            "music folders scanned",
            metadata: [
                "seen": "\(final.seen)", "indexed": "\(final.indexed)", "unchanged": "\(final.unchanged)",
                "failed": "\(final.failed)", "removed": "\(final.removed)", "missing_folders": "\(missing.count)",
                "cancelled": "\(wasCancelled)", "seconds": "\((ContinuousClock.now - started).seconds)",
            ])
        return MusicScanOutcome(progress: final, missingRoots: missing, cancelled: wasCancelled)
    }

    /// Brings only some paths of the music folders up to date (what a file watcher saw change),
    /// by the same rules as `scan`: each path, a file or a folder ("" for a whole music folder),
    /// is walked; new and changed files under it are read, unchanged ones are not, and indexed
    /// files under it that are no longer on disk leave the index (one that turns up elsewhere
    /// among the paths with the same stamp and audio keeps its id). Paths of a music folder
    /// that is missing now, or of none, are left alone; a path under another one is covered by
    /// it. Files in `skipping` (still being written) are neither read nor removed.
    ///
    /// Throws `busy` if a scan is running. Threads: as `scan`.
    @discardableResult
    public func update(
        _ paths: [MusicPath], skipping: Set<MusicPath> = [],
        progress: @escaping @Sendable (MusicScanProgress) -> Void = { _ in }
    ) throws(ReelError) -> MusicScanOutcome {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            throw ReelError(.busy, "the music folders are already being scanned; wait for that scan to end")
        }
        defer { running.store(false, ordering: .releasing) }
        cancelled.store(false, ordering: .relaxed)
        let run = ScanRun(progress: progress)
        var byRoot: [String: [String]] = [:]
        for path in MusicPath.outermost(paths) where roots.contains(path.root) {
            byRoot[path.root, default: []].append(path.relativePath)
        }
        var present: [String] = []
        var missing: [String] = []
        for root in roots where byRoot[root] != nil {
            // The watcher saw what emptied a folder: empty is not missing here.
            if try absence(of: root, emptyIsMissing: false) == nil { present.append(root) } else { missing.append(root) }
        }
        var wasCancelled = false
        if !present.isEmpty {
            wasCancelled = try reconcile(present, only: present.map { byRoot[$0]! }, skipping: skipping, run)
        }
        let final = run.finish()
        progress(final)
        return MusicScanOutcome(progress: final, missingRoots: missing, cancelled: wasCancelled)
    }

    /// Walks the present folders (`only`: just these paths of each), reads what is new or
    /// changed, writes it and removes what is gone; returns whether the scan was cancelled.
    private func reconcile(
        _ present: [String], only: [[String]]?, skipping: Set<MusicPath>, _ run: ScanRun
    ) throws(ReelError) -> Bool {
        // What is on disk, against what the index has.
        var walker = MusicFolderWalker(extensions: extensions, isCancelled: { [self] in isCancelled })
        let walked = walker.walk(present, only: only)
        var jobs: [Job] = []
        var vanished: [MusicFileStamp: [Int64]] = [:]
        var forgottenFailures: [(root: String, paths: [String])] = []
        var walkFailures: [MusicFileFailure] = []
        var playlistChanges: [(root: String, found: [ScannedPlaylistFile], gone: [String])] = []
        for (number, (root, result)) in zip(present, walked).enumerated() {
            var indexed: [String: MusicIndexedFile] = [:]
            var failed: [String: MusicFileStamp] = [:]
            if let only {
                for path in only[number] {
                    indexed.merge(try index.indexedFiles(root: root, under: path)) { first, _ in first }
                    failed.merge(try index.failedFiles(root: root, under: path)) { first, _ in first }
                }
            } else {
                indexed = try index.indexedFiles(root: root)
                failed = try index.failedFiles(root: root)
            }
            var onDisk: Set<String> = []
            onDisk.reserveCapacity(result.files.count)
            var seen = 0, unchanged = 0, stillFailed = 0
            for file in result.files {
                onDisk.insert(file.relativePath)
                if !skipping.isEmpty, skipping.contains(MusicPath(root: root, relativePath: file.relativePath)) {
                    continue
                }
                seen += 1
                let known = indexed[file.relativePath]
                if let known, known.stamp == file.stamp {
                    unchanged += 1
                } else if failed[file.relativePath] == file.stamp {
                    stillFailed += 1
                } else {
                    jobs.append(Job(root: root, relativePath: file.relativePath, stamp: file.stamp, known: known?.id))
                }
            }
            walkFailures += result.failures
            run.count { $0.seen += seen + result.failures.count; $0.unchanged += unchanged; $0.failed += stillFailed + result.failures.count }
            let keptUnder = result.unreadable.map { $0.isEmpty ? "" : $0 + "/" }
            func kept(_ path: String) -> Bool {
                keptUnder.contains { $0.isEmpty || path.hasPrefix($0) || $0 == path + "/" }
                    || (!skipping.isEmpty && skipping.contains(MusicPath(root: root, relativePath: path)))
            }
            // Playlist files: only their stamps are kept, so they are written here, not read.
            var indexedPlaylists: [String: MusicFileStamp] = [:]
            for path in only?[number] ?? [""] {
                indexedPlaylists.merge(try index.indexedPlaylists(root: root, under: path)) { first, _ in first }
            }
            let playlistsOnDisk = Set(result.playlists.map(\.relativePath))
            let changedPlaylists = result.playlists
                .filter { indexedPlaylists[$0.relativePath] != $0.stamp }
                .map { ScannedPlaylistFile(relativePath: $0.relativePath, stamp: $0.stamp) }
            let gonePlaylists = walker.wasCancelled
                ? [] : indexedPlaylists.keys.filter { !playlistsOnDisk.contains($0) && !kept($0) }
            if !changedPlaylists.isEmpty || !gonePlaylists.isEmpty {
                playlistChanges.append((root, changedPlaylists, gonePlaylists))
            }
            if !walker.wasCancelled {
                for (path, file) in indexed where !onDisk.contains(path) && !kept(path) {
                    vanished[file.stamp, default: []].append(file.id)
                }
                let reported = Set(result.failures.map(\.relativePath))
                let forget = failed.keys.filter { !onDisk.contains($0) && !reported.contains($0) && !kept($0) }
                if !forget.isEmpty { forgottenFailures.append((root, forget)) }
            }
        }
        // A new file that may be a vanished one moved: read it, then compare.
        for index in jobs.indices where jobs[index].known == nil && vanished[jobs[index].stamp] != nil {
            jobs[index].mayHaveMoved = true
        }
        run.vanished = vanished
        if !walkFailures.isEmpty { try index.write(files: [], failures: walkFailures) }
        for change in playlistChanges {
            let changed = try index.writePlaylists(root: change.root, found: change.found, gone: change.gone)
            run.count { $0.playlists += changed }
        }
        run.emit()

        // Read what is new or changed, on the reader threads; they write full batches.
        if !jobs.isEmpty, !isCancelled {
            let jobs = jobs
            let group = DispatchGroup()
            for number in 0..<min(readerCount, jobs.count) {
                group.enter()
                let thread = Thread { [self] in
                    readJobs(jobs, run)
                    group.leave()
                }
                thread.name = "reel.music.read.\(number)"
                thread.start()
            }
            group.wait()
        }
        try run.throwIfFailed()
        try flush(run.takeBatch(all: true), run)

        // Gone from disk: removed, unless the scan did not finish.
        let wasCancelled = isCancelled || walker.wasCancelled
        if !wasCancelled {
            let gone = run.unclaimedVanished()
            let removed = try index.remove(ids: gone)
            run.count { $0.removed += removed }
            for (root, paths) in forgottenFailures { try index.removeFailures(root: root, relativePaths: paths) }
        }
        return wasCancelled
    }

    private var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Why a music folder counts as missing, or nil if it is there (a readable folder, not
    /// empty while the index has files of it unless `emptyIsMissing` is false). Any thread.
    public func absence(of root: String, emptyIsMissing: Bool = true) throws(ReelError) -> String? {
        var info = stat()
        guard stat(root, &info) == 0 else { return "cannot reach it: \(MusicFolderWalker.errorText())" }
        guard info.st_mode & S_IFMT == S_IFDIR else { return "it is not a folder" }
        guard let directory = opendir(root) else { return "cannot read it: \(MusicFolderWalker.errorText())" }
        defer { closedir(directory) }
        if !emptyIsMissing { return nil }
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: &entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { return nil }
        }
        return try index.count(root: root).files > 0 ? "it is empty (a disk not mounted?)" : nil
    }

    /// A reader thread: takes jobs in turn until none is left, the scan is cancelled or a
    /// write failed.
    private func readJobs(_ jobs: [Job], _ run: ScanRun) {
        while !isCancelled, !run.hasFailed, let next = run.nextJob(count: jobs.count) {
            let job = jobs[next]
            let path = MusicIndex.join(job.root, job.relativePath)
            do throws(ReelError) {
                let audio = try reader(path)
                var file = ScannedMusicFile(root: job.root, relativePath: job.relativePath, stamp: job.stamp, audio: audio)
                if job.mayHaveMoved { file.replacing = claimMoved(file, run) }
                run.add(file: file)
            } catch {
                run.add(failure: MusicFileFailure(root: job.root, relativePath: job.relativePath, stamp: job.stamp, reason: error.message))
            }
            do throws(ReelError) {
                try flush(run.takeBatch(all: false, size: batchSize), run)
            } catch {
                run.fail(error)
            }
        }
    }

    /// The id of a vanished file this one is (same stamp, same audio), claimed so no other
    /// file takes it; nil if none.
    private func claimMoved(_ file: ScannedMusicFile, _ run: ScanRun) -> Int64? {
        for candidate in run.vanishedCandidates(file.stamp) {
            guard let old = try? index.track(id: candidate), old.audio == file.audio else { continue }
            if run.claim(candidate) { return candidate }
        }
        return nil
    }

    private func flush(_ batch: Batch?, _ run: ScanRun) throws(ReelError) {
        guard let batch, !batch.isEmpty else { return }
        try index.write(files: batch.files, failures: batch.failures)
        run.emit()
    }

    public static func normalized(_ root: String) -> String {
        var root = root
        while root.count > 1, root.hasSuffix("/") { root.removeLast() }
        return root
    }
}

/// A file to read.
private struct Job: Sendable {
    var root: String
    var relativePath: String
    var stamp: MusicFileStamp
    /// Its id when the index has it at this path (a changed file).
    var known: Int64?
    /// New, with the stamp of a file gone in this scan.
    var mayHaveMoved = false
}

private struct Batch: Sendable {
    var files: [ScannedMusicFile] = []
    var failures: [MusicFileFailure] = []
    var isEmpty: Bool { files.isEmpty && failures.isEmpty }
    var count: Int { files.count + failures.count }
}

/// The shared state of one scan: counts, the next job, the batch being filled, the files gone.
private final class ScanRun: Sendable {
    private struct State {
        var progress = MusicScanProgress(running: true)
        var nextJob = 0
        var batch = Batch()
        var vanished: [MusicFileStamp: [Int64]] = [:]
        var claimed: Set<Int64> = []
        var error: ReelError?
    }

    private let state = Locked(State())
    /// Serializes progress calls, so counts are delivered in order.
    private let emitting = Locked(())
    private let handler: @Sendable (MusicScanProgress) -> Void

    init(progress: @escaping @Sendable (MusicScanProgress) -> Void) {
        handler = progress
    }

    func count(_ change: (inout MusicScanProgress) -> Void) {
        state.withLock { change(&$0.progress) }
    }

    func emit() {
        emitting.withLock { _ in
            let progress = state.withLock { $0.progress }
            handler(progress)
        }
    }

    var vanished: [MusicFileStamp: [Int64]] {
        get { state.withLock { $0.vanished } }
        set { state.withLock { $0.vanished = newValue } }
    }

    func nextJob(count: Int) -> Int? {
        state.withLock { state in
            guard state.nextJob < count else { return nil }
            defer { state.nextJob += 1 }
            return state.nextJob
        }
    }

    func add(file: ScannedMusicFile) {
        state.withLock {
            $0.batch.files.append(file)
            $0.progress.indexed += 1
        }
    }

    func add(failure: MusicFileFailure) {
        state.withLock {
            $0.batch.failures.append(failure)
            $0.progress.failed += 1
        }
    }

    /// The batch, taken whole if it has `size` entries (or any, with `all`).
    func takeBatch(all: Bool, size: Int = 0) -> Batch? {
        state.withLock { state in
            guard all ? !state.batch.isEmpty : state.batch.count >= size else { return nil }
            defer { state.batch = Batch() }
            return state.batch
        }
    }

    func vanishedCandidates(_ stamp: MusicFileStamp) -> [Int64] {
        state.withLock { state in (state.vanished[stamp] ?? []).filter { !state.claimed.contains($0) } }
    }

    func claim(_ id: Int64) -> Bool {
        state.withLock { $0.claimed.insert(id).inserted }
    }

    func unclaimedVanished() -> [Int64] {
        state.withLock { state in state.vanished.values.flatMap { $0 }.filter { !state.claimed.contains($0) } }
    }

    func fail(_ error: ReelError) {
        state.withLock { if $0.error == nil { $0.error = error } }
    }

    var hasFailed: Bool { state.withLock { $0.error != nil } }

    func throwIfFailed() throws(ReelError) {
        if let error = state.withLock({ $0.error }) { throw error }
    }

    func finish() -> MusicScanProgress {
        state.withLock {
            $0.progress.running = false
            return $0.progress
        }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
