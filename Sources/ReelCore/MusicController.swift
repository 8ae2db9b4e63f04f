// The music folders: their index kept up to date, and browsed by artist, album and track.

import Dispatch
import Logging
import ReelAudio
import ReelLibrary
import ReelModel
import ReelTags

/// The music folders (`music_dirs`) as every front end sees them: a scan at start (a full one
/// the first time; later only what changed, by size and mtime), `rescan`, the scan's progress on
/// `progress`, and the index's listings.
///
/// Threads: any thread may call; scans run on `scans` (one at a time), listings on `reads`
/// (concurrent), and replies come on those queues.
public final class MusicController: @unchecked Sendable {
    public typealias Reply<Value> = @Sendable (Result<Value, ReelError>) -> Void

    /// The scan's progress after every step, and when it ends (`running` false).
    public let progress = StateFeed(MusicScanProgress())
    /// The music folders, as configured.
    public let roots: [String]
    let index: MusicIndex
    private let scanner: MusicScanner?
    private let scans = DispatchQueue(label: "reel.music.scan")
    private let reads = DispatchQueue(label: "reel.music.read", attributes: .concurrent)
    private let logger: Logger
    /// A rescan asked for while one runs: one more follows it. And the last scan's number.
    private let schedule = Locked((again: false, last: 0))
    /// When the last scan ended (seconds since the epoch), nil before the first has.
    private let lastScanEnd = Locked<Double?>(nil)

    init(store: LibraryStore, roots: [String], reader: @escaping MusicScanner.Reader, logger: Logger) {
        self.roots = roots
        self.logger = logger
        index = MusicIndex(store: store)
        scanner = roots.isEmpty ? nil : MusicScanner(index: index, roots: roots, reader: reader)
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
        guard let scanner else { return }
        scans.async { [self] in
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
    }

    /// Stops a running scan (at shutdown).
    func shutdown() {
        scanner?.cancel()
        scans.sync {}
    }

    // MARK: Listings

    /// When the last scan since start ended (seconds since the epoch), nil while none has.
    public var lastScanEnded: Double? { lastScanEnd.withLock { $0 } }

    /// Runs `body` on the read queue with the index (and, through `index.store`, the library
    /// it lives in), for a front end that browses the music folders as a tree or by tag
    /// (`MusicIndex+Browse`); `reply` comes on that queue.
    public func browse<Value: Sendable>(
        _ body: @escaping @Sendable (MusicIndex) throws(ReelError) -> Value, reply: @escaping Reply<Value>
    ) {
        read({ [index] () throws(ReelError) in try body(index) }, reply: reply)
    }

    private func read<Value: Sendable>(_ body: @escaping @Sendable () throws(ReelError) -> Value, reply: @escaping Reply<Value>) {
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
        read({ [index] () throws(ReelError) in
            guard let track = try index.track(root: root, relativePath: relativePath), !track.missing else {
                throw ReelError(.notFound, "no music file \(relativePath) in \(root)")
            }
            return try TagReader.picture(path: track.path)
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
            let base = root.hasSuffix("/") ? root : root + "/"
            let directory = folder.isEmpty ? base : base + folder + "/"
            // As the scan: a symlink is followed only when it stays inside the music folder.
            guard let realRoot = Self.realPath(root) else { return nil }
            for name in names {
                guard let real = Self.realPath(directory + name), real.hasPrefix(realRoot + "/") else { continue }
                let descriptor = open(real, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { continue }
                defer { close(descriptor) }
                var info = stat()
                guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                let size = Int(info.st_size)
                guard offset < size, limit > 0 else { return (size, []) }
                var bytes = [UInt8](repeating: 0, count: min(limit, size - offset))
                var filled = 0
                while filled < bytes.count {
                    let count = bytes.withUnsafeMutableBytes { buffer in
                        pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled))
                    }
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { break }
                    filled += count
                }
                return (size, Array(bytes[..<filled]))
            }
            return nil
        }, reply: reply)
    }

    /// The canonical path of `path` (symlinks resolved), or nil when it is not there.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
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
        read({ [index] () throws(ReelError) in
            var albumArtist = albumArtist
            if albumArtist == nil {
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
        }, reply: reply)
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

#if canImport(Glibc)
import Glibc
#endif
