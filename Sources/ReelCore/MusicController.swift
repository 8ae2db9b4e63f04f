// The music folders: their index kept up to date, and browsed by artist, album and track.

import Dispatch
import Logging
import ReelAudio
internal import ReelLibrary
import ReelModel
import ReelRuntime
import ReelTags

/// The music folders (`music_dirs`) as every front end sees them: a scan at start (a full one
/// the first time; later only what changed, by size and mtime), the index kept current while
/// reeld runs (`MusicWatcher`: inotify), `rescan`, the scans' progress on `progress`, and the
/// index's listings.
///
/// Every change the watcher reports is applied as a small scan with a number of its own,
/// published on `progress` like any scan (`running`, then not, with its counts): a batch of
/// changes (moves first, `MusicIndex.move`, keeping ids; then `MusicScanner.update` of the
/// paths changed), a music folder gone (its files marked missing: `missing`), or back (its
/// files present again, `restored`, and the folder scanned). After moves are written, the
/// queue's entries follow their files (`onMoves`).
///
/// Threads: any thread may call; scans and the watcher's changes run on `scans` (one at a
/// time, in order), listings on `reads` (concurrent), and replies come on those queues. The
/// watcher has its own thread (`reel.music.watch`), only with music folders.
public final class MusicController: @unchecked Sendable {
    public typealias Reply<Value> = @Sendable (Result<Value, ReelError>) -> Void

    /// The scan's progress after every step, and when it ends (`running` false).
    public let progress = StateFeed(MusicScanProgress())
    /// The music folders, as configured.
    public let roots: [String]
    /// The music folders as the index names them (absolute, a trailing `/` dropped, each once).
    public var indexedRoots: [String] { scanner?.roots ?? [] }
    let index: MusicIndex
    private let scanner: MusicScanner?
    private let scans = DispatchQueue(label: "reel.music.scan")
    private let reads = DispatchQueue(label: "reel.music.read", attributes: .concurrent)
    private let logger: Logger
    /// A rescan asked for while one runs: one more follows it. And the last scan's number.
    private let schedule = Locked((again: false, last: 0))
    /// Follows the disk while reeld runs; nil without music folders (then nothing runs).
    let watcher: MusicWatcher?
    private let onMoves: @Sendable ([(from: String, to: String)]) -> Void
    /// When the last scan ended (seconds since the epoch), nil before the first has.
    private let lastScanEnd = Locked<Double?>(nil)

    init(
        store: LibraryStore, roots: [String], extensions: Set<String> = CodecRegistry.suffixes,
        reader: @escaping MusicScanner.Reader,
        watchTiming: MusicWatcher.Timing = MusicWatcher.Timing(), logger: Logger,
        onMoves: @escaping @Sendable ([(from: String, to: String)]) -> Void = { _ in }
    ) {
        self.roots = roots
        self.logger = logger
        self.onMoves = onMoves
        index = MusicIndex(store: store)
        let scanner = roots.isEmpty ? nil : MusicScanner(index: index, roots: roots, extensions: extensions, reader: reader)
        self.scanner = scanner
        if let scanner {
            let box = WeakController()
            watcher = MusicWatcher(
                roots: roots, extensions: extensions.union(MusicPlaylistFile.suffixes), timing: watchTiming, logger: logger,
                isPresent: { root in
                    do throws(ReelError) { return try scanner.absence(of: root) == nil } catch { return false }
                },
                handler: { report in box.controller?.watched(report) })
            box.controller = self
        } else {
            watcher = nil
        }
    }

    /// Reads a file of a music folder for the index: its tags, once a decoder has opened it as
    /// playing would (`CodecRegistry.probe`), so that what the index lists is what plays. A file
    /// no decoder takes is a failure with the decoder's reason (`music.failures`). A file that
    /// plays but whose tags cannot be read (an MP3 named `.flac`: TagLib goes by the suffix) is
    /// listed by its name, with the stream the decoder found. The codec is the registry's name.
    /// Any thread.
    static let readPlayable: MusicScanner.Reader = { path throws(ReelError) in
        let playable = try CodecRegistry.probe(path: path)
        var audio: ScannedAudio
        do throws(ReelError) {
            audio = try TagReader.read(path: path)
        } catch where error.reason == .unsupportedFormat || error.reason == .corruptFile {
            audio = ScannedAudio(
                tags: TrackTags(), codec: playable.format.codec, sampleRate: playable.format.sampleRate,
                channels: playable.format.channels, duration: playable.duration, hasEmbeddedCover: false)
        }
        audio.codec = playable.format.codec
        return audio
    }

    /// The watcher's way back to its controller, set once the controller exists.
    private final class WeakController: @unchecked Sendable {
        weak var controller: MusicController?
    }

    /// Starts the scan at start-up, in the background (the index answers meanwhile with what it
    /// had). With no music folder, forgets any that were indexed before.
    func start() {
        guard scanner != nil else {
            scans.async { [self] in
                // No music folder: any that were indexed before are forgotten.
                do throws(ReelError) {
                    _ = try index.removeRoots(notIn: [])
                } catch {
                    logger.warning("cannot clear the music index", metadata: ["error": "\(error.message)"])
                }
            }
            return
        }
        schedule.withLock { $0.again = true }
        // Watches first, then the scan: a change made during the scan comes in a batch
        // applied after it.
        scans.async { [self] in watcher?.start() }
        scan()
    }

    /// Scans now, or right after the scan that runs; replies at once with the progress, whose
    /// `scan` is the number of the scan that answers this request: a client waits for a
    /// `scan.progress` of that number (or later) that is not `running`.
    public func rescan(reply: @escaping Reply<MusicScanProgress>) {
        guard scanner != nil else {
            reply(.failure(ReelError(.notFound, "there are no music folders; set music_dirs in reeld's config")))
            return
        }
        let number = schedule.withLock { schedule -> Int in
            schedule.again = true
            return schedule.last + 1
        }
        var answer = progress.latest.value
        answer.scan = number
        answer.running = true
        scan()
        reply(.success(answer))
    }

    /// Runs the scans asked for, one at a time, on `scans`: a request made while one runs is
    /// served by one more scan after it (several requests meanwhile, by the same one).
    private func scan() {
        scans.async { [self] in runRequestedScans() }
    }

    /// The full scans asked for and not run yet (on `scans`). A change from the watcher runs
    /// them first, so the number a `rescan` promised goes to that rescan.
    private func runRequestedScans() {
        guard let scanner else { return }
        while let number = schedule.withLock({ schedule -> Int? in
            guard schedule.again else { return nil }
            schedule.again = false
            schedule.last += 1
            return schedule.last
        }) {
            progress.publish(MusicScanProgress(scan: number, running: true))
            do throws(ReelError) {
                let outcome = try scanner.scan { [progress] step in
                    var running = step
                    running.scan = number
                    running.running = true
                    progress.publish(running)
                }
                var done = outcome.progress
                done.scan = number
                done.running = false
                lastScanEnd.withLock { $0 = Double(time(nil)) }
                progress.publish(done)
            } catch {
                var stopped = progress.latest.value
                stopped.scan = number
                stopped.running = false
                progress.publish(stopped)
                logger.error("the music scan failed", metadata: ["error": "\(error.message)"])
            }
        }
    }

    /// Stops the watcher and a running scan (at shutdown).
    func shutdown() {
        watcher?.stop()
        scanner?.cancel()
        scans.sync {}
    }

    // MARK: Following the disk

    /// A report of the watcher (on its thread): applied on `scans`, in order.
    private func watched(_ report: MusicWatcher.Report) {
        scans.async { [self] in
            runRequestedScans()
            switch report {
            case .changes(let batch): apply(batch)
            case .folderGone(let root): folderGone(root)
            }
        }
    }

    /// The next scan's number for a small scan, after any full scan asked for meanwhile (whose
    /// number a `rescan` reply promised).
    private func nextNumber() -> Int {
        while true {
            runRequestedScans()
            let number = schedule.withLock { schedule -> Int? in
                guard !schedule.again else { return nil }
                schedule.last += 1
                return schedule.last
            }
            if let number { return number }
        }
    }

    /// Runs one small scan: `body` returns its counts; published as scan `number`.
    private func smallScan(_ what: String, _ body: () throws(ReelError) -> MusicScanProgress) {
        let number = nextNumber()
        progress.publish(MusicScanProgress(scan: number, running: true))
        let started = ContinuousClock.now
        do throws(ReelError) {
            var done = try body()
            done.scan = number
            done.running = false
            if done.changedIndex { lastScanEnd.withLock { $0 = Double(time(nil)) } }
            progress.publish(done)
            logger.debug(
                "music folders followed",
                metadata: [
                    "what": "\(what)", "scan": "\(number)", "indexed": "\(done.indexed)", "removed": "\(done.removed)",
                    "moved": "\(done.moved)", "missing": "\(done.missing)", "restored": "\(done.restored)",
                    "milliseconds": "\((ContinuousClock.now - started) / .milliseconds(1))",
                ])
        } catch {
            progress.publish(MusicScanProgress(scan: number, running: false))
            logger.error("cannot bring the music index up to date", metadata: ["what": "\(what)", "error": "\(error.message)"])
        }
    }

    /// A batch of changes: moves (ids kept), then the paths changed.
    private func apply(_ batch: MusicWatchBatch) {
        guard let scanner else { return }
        var followed: [(from: String, to: String)] = []
        smallScan("changes") { () throws(ReelError) -> MusicScanProgress in
            var restored = 0
            for root in batch.returned { restored += try index.setMissing(root: root, false) }
            var moved = 0
            for move in batch.moves {
                let count = try index.move(
                    root: move.from.root, from: move.from.relativePath, toRoot: move.to.root, to: move.to.relativePath)
                if count > 0 {
                    moved += count
                    followed.append((move.from.absolute, move.to.absolute))
                }
            }
            var done = MusicScanProgress()
            if !batch.changed.isEmpty, !batch.rescan {
                done = try scanner.update(batch.changed, skipping: batch.writing).progress
            }
            done.moved = moved
            done.restored = restored
            return done
        }
        if !followed.isEmpty { onMoves(followed) }
        if batch.rescan {
            // Events were lost: scan everything.
            schedule.withLock { $0.again = true }
            runRequestedScans()
        }
    }

    /// A music folder went away: its files are marked missing.
    private func folderGone(_ root: String) {
        smallScan("folder gone") { () throws(ReelError) -> MusicScanProgress in
            // The watcher has logged it; the failure says why, as the scan would.
            let reason = (try? scanner?.absence(of: root)) ?? nil
            return MusicScanProgress(
                missing: try index.setMissing(root: root, true, reason: reason ?? "it went away"), missingFolders: [root])
        }
    }

    // MARK: Listings

    /// When the last scan since start ended (seconds since the epoch), nil while none has.
    public var lastScanEnded: Double? { lastScanEnd.withLock { $0 } }

    /// Runs `body` on the read queue with the catalog's named reads (`MusicCatalog`: the music
    /// index and the recordings tree as model values), for a front end that browses the music
    /// folders as a tree or by tag and encodes a large listing off its event loop (MPD's
    /// database); `reply` comes on that queue.
    public func browse<Value: Sendable>(
        _ body: @escaping @Sendable (MusicCatalog) throws(ReelError) -> Value, reply: @escaping Reply<Value>
    ) {
        read({ [index] () throws(ReelError) in try body(MusicCatalog(index: index)) }, reply: reply)
    }

    /// What the library knows of queue entries, read in one batch: the recordings among them
    /// (by item id) and the files of the music folders the index has (by absolute path; `files`
    /// gives each one's music folder and path there). A recording or file the library no
    /// longer has is left out. Never fails: a read error leaves everything out.
    public func describe(
        recordings ids: [String], files: [(path: String, root: String, relativePath: String)],
        reply: @escaping @Sendable (QueueEntryRecords) -> Void
    ) {
        reads.async { [index] in
            var records = QueueEntryRecords()
            for id in ids where records.recordings[id] == nil {
                if let item = try? index.store.item(id: id) { records.recordings[id] = item }
            }
            var wanted: [String: [String]] = [:]
            for file in files { wanted[file.root, default: []].append(file.relativePath) }
            for (root, paths) in wanted {
                guard let tracks = try? index.tracks(root: root, relativePaths: paths) else { continue }
                for track in tracks.values { records.tracks[track.path] = track }
            }
            reply(records)
        }
    }

    /// Runs `body` on `reads` and replies there.
    func read<Value: Sendable>(_ body: @escaping @Sendable () throws(ReelError) -> Value, reply: @escaping Reply<Value>) {
        reads.async {
            do throws(ReelError) {
                reply(.success(try body()))
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// The picture embedded in an indexed file (its front cover, else its first picture): bytes
    /// and MIME type; nil when it has none. `not_found` when the index has no such file present.
    public func embeddedPicture(
        root: String, relativePath: String, reply: @escaping Reply<(bytes: [UInt8], mimeType: String)?>
    ) {
        read({ [index, roots] () throws(ReelError) in
            guard let track = try index.track(root: root, relativePath: relativePath), !track.missing else {
                throw ReelError(.notFound, "no music file \(relativePath) in \(root)")
            }
            return try MusicCovers.embedded(in: track.path, musicFolders: roots).map { ($0.bytes, $0.mimeType) }
        }, reply: reply)
    }

    /// A piece of the first of `names` that is a readable file in `folder` ("" for the top) of
    /// the music folder `root`: the file's size and up to `limit` bytes from `offset` (none when
    /// `offset` is at or past the end). Nil when none of them is there. Only a music folder's
    /// own folders are read: `folder` must not climb out (`..`), and a cover that is a symlink
    /// must lead to a file inside the music folder (as the scan follows symlinks).
    public func folderFile(
        root: String, folder: String, names: [String], offset: Int, limit: Int,
        reply: @escaping Reply<(size: Int, bytes: [UInt8])?>
    ) {
        read({ [roots] () throws(ReelError) in
            guard roots.contains(root), !folder.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else {
                throw ReelError(.notFound, "\(folder) is not a folder of a music folder")
            }
            let directory = folder.isEmpty ? root : (root.hasSuffix("/") ? root + folder : root + "/" + folder)
            return MusicCovers.readFile(in: directory, names: names, insideOf: [root], offset: offset, limit: limit)
                .map { ($0.size, $0.bytes) }
        }, reply: reply)
    }

    /// Artists (AlbumArtist, else Artist), case-insensitively ordered.
    public func artists(reply: @escaping Reply<[MusicArtist]>) {
        read({ [index] () throws(ReelError) in try index.artists() }, reply: reply)
    }

    /// Albums, of one artist (AlbumArtist, else Artist) or all.
    public func albums(artist: String?, reply: @escaping Reply<[MusicAlbum]>) {
        read({ [index] () throws(ReelError) in try index.albums(ofArtist: artist) }, reply: reply)
    }

    /// An album's tracks in disc and track order. Without `albumArtist`, the album of that name
    /// when only one artist has one (`name_taken`, naming them, when several do). `not_found`
    /// when there is none.
    public func tracks(album: String, albumArtist: String?, reply: @escaping Reply<[MusicTrack]>) {
        read({ [self] () throws(ReelError) in try albumTracks(album: album, albumArtist: albumArtist) }, reply: reply)
    }

    /// `tracks(album:albumArtist:)`'s answer, on the caller's thread.
    /// `albumArtist` `""` names the album of that name that has no artist (AlbumArtist nor
    /// Artist), whatever other artists have one of the same name.
    func albumTracks(album: String, albumArtist given: String?) throws(ReelError) -> [MusicTrack] {
        try Self.albumTracks(in: index, album: album, albumArtist: given)
    }

    /// `albumTracks(album:albumArtist:)` in `index`, on the caller's thread (the player resolves
    /// `QueueAddition.album` with it).
    static func albumTracks(in index: MusicIndex, album: String, albumArtist given: String?) throws(ReelError) -> [MusicTrack] {
        var albumArtist = given.flatMap { $0.isEmpty ? nil : $0 }
        if given == nil {
            let named = try index.albums().filter { $0.name == album }
            if named.count > 1 {
                let artists = named.map { $0.albumArtist ?? "no artist" }.joined(separator: ", ")
                throw ReelError(
                    .nameTaken, "several albums are named \"\(album)\" (by \(artists)); say whose with albumArtist")
            }
            albumArtist = named.first?.albumArtist
        }
        let tracks = try index.tracks(inAlbum: album, albumArtist: albumArtist)
        guard !tracks.isEmpty else {
            let by = albumArtist.map { " by \($0)" } ?? ""
            throw ReelError(.notFound, "no album \"\(album)\"\(by) in the music folders")
        }
        return tracks
    }

    /// Tracks whose title, artist or album holds `text`, a page at a time.
    public func search(text: String, limit: Int, cursor: String?, reply: @escaping Reply<MusicSearchPage>) {
        read({ [index] () throws(ReelError) in try index.search(text: text, limit: limit, cursor: cursor) }, reply: reply)
    }

    /// One track by id (`not_found`).
    public func track(id: Int64, reply: @escaping Reply<MusicTrack>) {
        read({ [index] () throws(ReelError) in try index.track(id: id) }, reply: reply)
    }

    /// Files that could not be read, with why.
    public func failures(reply: @escaping Reply<[MusicScanFailure]>) {
        read({ [index] () throws(ReelError) in try index.failures() }, reply: reply)
    }

    /// Artists, albums, songs and their total length.
    public func stats(reply: @escaping Reply<MusicStats>) {
        read({ [index] () throws(ReelError) in try index.stats() }, reply: reply)
    }
}

/// The recordings and music files behind queue entries (`MusicController.describe`).
public struct QueueEntryRecords: Sendable {
    /// By item id.
    public var recordings: [String: Item] = [:]
    /// By absolute path.
    public var tracks: [String: MusicTrack] = [:]

    public init() {}
}

#if canImport(Glibc)
import Glibc
#endif
