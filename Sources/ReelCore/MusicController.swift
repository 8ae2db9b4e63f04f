// The music folders: their index kept up to date, and browsed by artist, album and track.

import Dispatch
import Logging
import ReelAudio
import ReelLibrary
import ReelModel

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
    /// The music folders as the index names them (absolute, a trailing `/` dropped, each once).
    public var indexedRoots: [String] { scanner?.roots ?? [] }
    let index: MusicIndex
    private let scanner: MusicScanner?
    private let scans = DispatchQueue(label: "reel.music.scan")
    private let reads = DispatchQueue(label: "reel.music.read", attributes: .concurrent)
    private let logger: Logger
    /// A rescan asked for while one runs: one more follows it. And the last scan's number.
    private let schedule = Locked((again: false, last: 0))

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
    func albumTracks(album: String, albumArtist: String?) throws(ReelError) -> [MusicTrack] {
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
