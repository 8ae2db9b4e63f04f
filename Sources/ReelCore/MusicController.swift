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
    let index: MusicIndex
    private let scanner: MusicScanner?
    private let scans = DispatchQueue(label: "reel.music.scan")
    private let reads = DispatchQueue(label: "reel.music.read", attributes: .concurrent)
    private let logger: Logger
    /// A rescan asked for while one runs: one more follows it.
    private let again = Locked(false)

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
                do throws(ReelError) {
                    _ = try index.removeRoots(notIn: [])
                } catch {
                    logger.warning("cannot clear the music index", metadata: ["error": "\(error.message)"])
                }
            }
            return
        }
        scan()
    }

    /// Scans now, or right after the scan that runs; replies at once with the progress.
    public func rescan(reply: @escaping Reply<MusicScanProgress>) {
        guard scanner != nil else {
            reply(.failure(ReelError(.notFound, "there are no music folders; set music_dirs in reeld's config")))
            return
        }
        if progress.latest.value.running {
            again.withLock { $0 = true }
        } else {
            var starting = progress.latest.value
            starting.running = true
            progress.publish(starting)
            scan()
        }
        reply(.success(progress.latest.value))
    }

    private func scan() {
        guard let scanner else { return }
        scans.async { [self] in
            repeat {
                again.withLock { $0 = false }
                let started = monotonicNanoseconds()
                do throws(ReelError) {
                    let outcome = try scanner.scan { [progress] step in
                        var running = step
                        running.running = true
                        progress.publish(running)
                    }
                    var done = outcome.progress
                    done.running = false
                    progress.publish(done)
                    logger.info(
                        "music folders scanned",
                        metadata: [
                            "seen": "\(done.seen)", "indexed": "\(done.indexed)", "unchanged": "\(done.unchanged)",
                            "failed": "\(done.failed)", "removed": "\(done.removed)",
                            "missingFolders": "\(outcome.missingRoots)",
                            "seconds": "\(Double(monotonicNanoseconds() - started) / 1e9)",
                        ])
                } catch {
                    var stopped = progress.latest.value
                    stopped.running = false
                    progress.publish(stopped)
                    logger.error("the music scan failed", metadata: ["error": "\(error.message)"])
                }
            } while again.current
        }
    }

    /// Stops a running scan (at shutdown).
    func shutdown() {
        scanner?.cancel()
        scans.sync {}
    }

    // MARK: Listings

    private func read<Value: Sendable>(_ body: @escaping @Sendable () throws(ReelError) -> Value, reply: @escaping Reply<Value>) {
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

    /// An album's tracks in disc and track order. `not_found` when it has none.
    public func tracks(album: String, albumArtist: String?, reply: @escaping Reply<[MusicTrack]>) {
        read({ [index] () throws(ReelError) in
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
