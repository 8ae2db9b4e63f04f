// Queue commands: add, list, look up, changes, remove, move, swap, shuffle, clear, options; and
// following the library.

import ReelAudio
internal import ReelLibrary
import ReelModel

/// What `queue.add` adds: a file by absolute path, or a recording, or a folder's recordings
/// (its own by name, then each subfolder likewise, recursively: MPD's order for a directory).
public enum QueueAddition: Sendable, Equatable {
    case file(String)
    case recording(ItemReference)
    /// Several recordings in this order, added at once (MPD's `findadd`); folders are refused.
    case recordings([ItemReference])
    /// Files of the music folders in this order (an album, a search's results), from the index:
    /// no file is opened to add them. One whose music folder is missing is refused.
    case musicTracks([MusicTrack])
    /// One track of the music index by id (`not_found` when there is none).
    case musicTrack(Int64)
    /// An album's tracks in disc and track order, as `MusicController.tracks(album:albumArtist:)`
    /// finds them.
    case album(name: String, albumArtist: String?)
    /// An http(s) URL, queued as it is (nothing is fetched until it plays; MPD's `add URL`). One
    /// that turns out to be a station playlist when it plays is replaced by its streams then.
    case url(String)
    /// An http(s) URL; when its name says it is a station playlist (`.m3u`, `.m3u8`, `.pls`,
    /// `.xspf`), the streams it lists, fetched when added (JSON-RPC `queue.add {url}`). A
    /// playlist known only by its content type is expanded when it plays.
    case urlOrPlaylist(String)
    /// The streams of the station playlist at this URL, fetched when added (MPD's `load URL`);
    /// an HLS playlist is queued as one entry; a stream or anything else is refused.
    case stationPlaylist(String)
}

extension PlayerController {
    /// The schemes a URL source may have (`daemon.info`'s `urlSchemes`, MPD's `urlhandlers`).
    public static var urlSchemes: [String] { URLSource.schemes }

    /// Whether `text` is a URL of a scheme the player plays (not checked further: adding it
    /// says what is wrong with it).
    public static func isStreamURL(_ text: String) -> Bool {
        guard URLSource.looksLikeURL(text), let scheme = text.split(separator: ":").first else { return false }
        return URLSource.schemes.contains(scheme.lowercased())
    }
}

/// What an add of several sources did: the entries added (in queue order), how many each
/// addition gave (0 for one skipped), and the additions skipped with why.
public struct QueueAddOutcome: Sendable {
    public var entries: [QueueEntry]
    public var counts: [Int]
    public var skipped: [(index: Int, error: ReelError)]
}

/// Additions in an order that may name one again: each distinct addition once, and the
/// order of all as indices into them (a playlist of 10,000 lines naming 200 tracks: 200
/// additions, 10,000 indices). Each is resolved once (`PlayerController.add`). Entries made
/// already (a playlist's indexed files: `PlayerController.musicFileEntry`) come first, in
/// `made`, and are added as they are.
struct QueueAdditionRun: Sendable {
    /// Entries made already, each a distinct addition that cannot fail.
    var made: [NewQueueEntry] = []
    var additions: [QueueAddition]
    /// One per place: an index into `made` (below `made.count`), else `made.count` plus an
    /// index into `additions`.
    var order: [Int]
    /// No two additions name the same music track (a playlist's: one addition per file), so a
    /// track's entry is made without looking for it among those made before.
    var distinctTracks = false

    /// Each addition once, in this order.
    init(_ additions: [QueueAddition]) {
        self.additions = additions
        order = Array(additions.indices)
    }

    init(additions: [QueueAddition], order: [Int], distinctTracks: Bool = false) {
        self.additions = additions
        self.order = order
        self.distinctTracks = distinctTracks
    }
}

/// A window of the queue (`queue.list`).
public struct QueueListing: Sendable, Equatable {
    public var summary: QueueSummary
    public var entries: [QueueEntry]
}

extension PlayerController {
    public typealias AddReply = @Sendable (Result<[QueueEntry], ReelError>) -> Void
    /// Called with the queue's summary once the change is saved (and the player has followed it).
    public typealias Saved<Value: Sendable> = @Sendable (Value) -> Void

    /// Adds a file, a recording or a folder's recordings at `position` (nil appends), or right
    /// after the current entry. A file must be absolute, inside the media roots and decodable; a
    /// folder must hold recordings. On error nothing is added.
    public func add(_ addition: QueueAddition, at position: Int?, afterCurrent: Bool, reply: @escaping AddReply) {
        add([addition], at: position, afterCurrent: afterCurrent, reply: reply)
    }

    /// Adds several sources as one change: their entries, in order, at `position` (nil appends)
    /// or right after the current entry — one new queue version, one published change (MPD's
    /// `add /` of music and recordings, `findadd` hitting both, `reel add DIR`). Each addition
    /// follows `add`'s rules; if any fails (or the list is empty) nothing is added and the
    /// error names that addition.
    public func add(_ additions: [QueueAddition], at position: Int?, afterCurrent: Bool, reply: @escaping AddReply) {
        add(additions, skippable: [], at: position, afterCurrent: afterCurrent) { result in
            reply(result.map(\.entries))
        }
    }

    public typealias AddManyReply = @Sendable (Result<QueueAddOutcome, ReelError>) -> Void

    /// `add(_:at:afterCurrent:reply:)`, where the additions at the indices in `skippable` (files
    /// found by reading a directory) are left out when they cannot be played — a format no
    /// decoder takes, a corrupt or unreadable file, a file gone (`QueueAddOutcome.skipped`) —
    /// rather than failing the add. The rest is still one change; when every addition was
    /// skipped, nothing changes (no new version) and the outcome lists them all.
    public func add(
        _ additions: [QueueAddition], skippable: Set<Int>, at position: Int?, afterCurrent: Bool,
        reply: @escaping AddManyReply
    ) {
        add(additions, skippable: { skippable.contains($0) }, at: position, afterCurrent: afterCurrent, reply: reply)
    }

    /// `add(_:skippable:at:afterCurrent:reply:)` of the additions of `run` in its order (a
    /// playlist's: each distinct track once, and its lines as indices), each distinct addition
    /// resolved once; those that may be skipped are told by `skippable` (by index in
    /// `run.additions`; a playlist's: every one). The outcome's `counts` and `skipped` are by
    /// index in `run.order`: a skipped addition is skipped at every place it is named. Without
    /// `listing` the outcome's `entries` is empty: no entry value is made for a reply that does
    /// not show them (MPD's `load`).
    func add(
        _ run: QueueAdditionRun, skippable: @escaping @Sendable (Int) -> Bool, listing: Bool = true,
        at position: Int?, afterCurrent: Bool, reply: @escaping AddManyReply
    ) {
        let reply = saves.after(reply)
        guard !run.order.isEmpty else {
            reply(.failure(ReelError(.notFound, "nothing to add: the list of sources is empty")))
            return
        }
        if let position, position < 0 {
            reply(.failure(ReelError(.outOfRange, "position \(position) is outside the queue (0…\(queueLength))")))
            return
        }
        // Station playlists are fetched first, off `work` (they wait for the network).
        fetchPlaylists(of: run.additions) { [self] fetched in
            work.async { [self] in
                add(
                    run, fetched: fetched, skippable: skippable, listing: listing, at: position,
                    afterCurrent: afterCurrent, reply: reply)
            }
        }
    }

    func add(
        _ additions: [QueueAddition], skippable: @escaping @Sendable (Int) -> Bool, listing: Bool = true,
        at position: Int?, afterCurrent: Bool, reply: @escaping AddManyReply
    ) {
        add(
            QueueAdditionRun(additions), skippable: skippable, listing: listing, at: position, afterCurrent: afterCurrent,
            reply: reply)
    }

    /// The rest of `add(_:skippable:listing:at:afterCurrent:reply:)` on `work`, the playlists
    /// fetched. Each distinct addition is resolved once, and the entries are gathered as a run
    /// (`NewQueueRun`): the entries of an addition named again (a playlist's lines), and of a
    /// music track or file that several additions name, share one entry down to the saved
    /// state's record. The entries `run` made already are the run's first distinct entries, as
    /// they are (not copied unless an addition adds more).
    private func add(
        _ run: QueueAdditionRun, fetched: [Int: Result<[ListedStream]?, ReelError>],
        skippable: (Int) -> Bool, listing: Bool, at position: Int?, afterCurrent: Bool, reply: @escaping AddManyReply
    ) {
        let additions = run.additions
        let made = run.made.count
        var distinct = run.made
        // Each addition's entries as indices into `distinct`: `entryIndices[first[k]..<first[k] + count[k]]`
        // (count -1: skipped, `errors[k]` says why).
        var entryIndices: [Int] = []
        entryIndices.reserveCapacity(additions.count)
        var first: [Int] = []
        first.reserveCapacity(additions.count)
        var count: [Int] = []
        count.reserveCapacity(additions.count)
        var errors: [Int: ReelError] = [:]
        // Music files already checked and made into entries in this add (a playlist names one
        // file many times), by track id: their index in `distinct`.
        var checked = CheckedMusic()
        for (index, addition) in additions.enumerated() {
            first.append(entryIndices.count)
            do throws(ReelError) {
                // A playlist's line of the music folders: its entry, without a list of one.
                if case .musicTracks(let tracks) = addition, tracks.count == 1, fetched.isEmpty {
                    if run.distinctTracks {
                        distinct.append(try checkedMusicEntry(tracks[0]))
                        entryIndices.append(distinct.count - 1)
                    } else {
                        entryIndices.append(try musicEntryIndex(tracks[0], checked: &checked, distinct: &distinct))
                    }
                    count.append(1)
                    continue
                }
                // A file named again (by another addition): opened once.
                if case .file(let path) = addition, fetched[index] == nil {
                    if let known = checked.files[path] {
                        entryIndices.append(known)
                    } else {
                        let entries = try resolve(addition, checked: &checked)
                        checked.files[path] = distinct.count
                        entryIndices.append(distinct.count)
                        distinct += entries
                    }
                    count.append(1)
                    continue
                }
                let resolved: [NewQueueEntry]
                if let result = fetched[index] {
                    resolved = try Self.entries(of: addition, fetched: result)
                } else {
                    resolved = try resolve(addition, checked: &checked)
                }
                entryIndices.append(contentsOf: distinct.count..<distinct.count + resolved.count)
                distinct += resolved
                count.append(resolved.count)
            } catch where skippable(index) && Self.skippableReasons.contains(error.reason) {
                errors[index] = error
                count.append(-1)
            } catch {
                reply(.failure(error))
                return
            }
        }
        var order: [Int] = []
        order.reserveCapacity(run.order.count)
        var counts: [Int] = []
        counts.reserveCapacity(run.order.count)
        var skipped: [(index: Int, error: ReelError)] = []
        for (line, item) in run.order.enumerated() {
            if item < made {
                order.append(item)
                counts.append(1)
                continue
            }
            let addition = item - made
            let entries = count[addition]
            if entries < 0 {
                skipped.append((line, errors[addition]!))
                counts.append(0)
            } else if entries == 1 {
                order.append(entryIndices[first[addition]])
                counts.append(1)
            } else {
                order.append(contentsOf: entryIndices[first[addition]..<first[addition] + entries])
                counts.append(entries)
            }
        }
        if order.isEmpty {
            // Every addition was skipped: nothing changes, and the reply says why.
            reply(.success(QueueAddOutcome(entries: [], counts: counts, skipped: skipped)))
            return
        }
        let entries = NewQueueRun(distinct: distinct, order: order)
        let result = shared.withLock { shared -> Result<[QueueEntry], ReelError> in
            do throws(ReelError) {
                let positions = try shared.queue.insert(entries, at: position, afterCurrent: afterCurrent)
                publishQueue(shared)
                return .success(listing ? shared.queue.entries(start: positions.lowerBound, count: positions.count) : [])
            } catch {
                return .failure(error)
            }
        }
        reply(result.map { QueueAddOutcome(entries: $0, counts: counts, skipped: skipped) })
        if case .success = result { reconcileChain() }
    }

    /// Fetches the station playlists among `additions` (one at a time, off `work`), then calls
    /// `done` with each one's outcome by its index; at once when there are none.
    private func fetchPlaylists(
        of additions: [QueueAddition], done: @escaping @Sendable ([Int: Result<[ListedStream]?, ReelError>]) -> Void
    ) {
        let urls: [(index: Int, url: String)] = additions.enumerated().compactMap { index, addition in
            switch addition {
            case .stationPlaylist(let url): (index, url)
            case .urlOrPlaylist(let url) where PlayerController.namesStationPlaylist(url): (index, url)
            default: nil
            }
        }
        let configuration = streamConfiguration
        @Sendable func fetch(_ left: ArraySlice<(index: Int, url: String)>, _ results: [Int: Result<[ListedStream]?, ReelError>]) {
            guard let next = left.first else { return done(results) }
            _ = URLOpening.fetchStations(url: next.url, configuration: configuration) { result in
                var results = results
                results[next.index] = result
                fetch(left.dropFirst(), results)
            }
        }
        fetch(urls[...], [:])
    }

    /// The entries of a fetched addition: the playlist's streams, or the URL as it is.
    static func entries(of addition: QueueAddition, fetched: Result<[ListedStream]?, ReelError>) throws(ReelError)
        -> [NewQueueEntry]
    {
        let streams = try fetched.get()
        switch addition {
        case .stationPlaylist(let url) where streams == nil:
            throw ReelError(.notFound, "\(url) is not a playlist: it is a stream (add it as one)")
        case .stationPlaylist(let url), .urlOrPlaylist(let url):
            guard let streams else {
                return [NewQueueEntry(source: .url(try URLSource.check(url), name: nil, title: nil), duration: nil, format: nil)]
            }
            return entries(of: streams)
        default:
            return []
        }
    }

    /// Whether `url`'s name says it is a station playlist (`.m3u`, `.m3u8`, `.pls`, `.xspf`).
    public static func namesStationPlaylist(_ url: String) -> Bool {
        URLSource.namesPlaylist(url)
    }

    /// Why an addition may be skipped (`add(_:skippable:…)`): it is not audio reeld plays, or it
    /// could not be read.
    static let skippableReasons: Set<ErrorReason> = [.unsupportedFormat, .corruptFile, .ioError, .notFound]

    var queueLength: Int { shared.withLock { $0.queue.length } }

    /// A window of the queue: `count` entries from position `start` (all from `start` when nil).
    public func listQueue(start: Int = 0, count: Int? = nil) throws(ReelError) -> QueueListing {
        guard start >= 0 else { throw ReelError(.outOfRange, "start \(start) is outside the queue") }
        if let count, count < 0 { throw ReelError(.outOfRange, "count \(count) is negative") }
        return shared.withLock { shared in
            QueueListing(
                summary: shared.queue.summary,
                entries: shared.queue.entries(start: start, count: count ?? max(shared.queue.length - start, 0)))
        }
    }

    /// The queue's summary now. Any thread.
    public var queueSummary: QueueSummary { shared.withLock { $0.queue.summary } }

    /// The entry with this id, nil if there is none. Any thread.
    public func entry(id: Int) -> QueueEntry? { shared.withLock { $0.queue.entry(id: id) } }

    /// The entry at this position, nil outside the queue. Any thread.
    public func entry(at position: Int) -> QueueEntry? { shared.withLock { $0.queue.entry(at: position) } }

    /// The entries added, moved or changed since the summary's `entriesVersion` was `version`,
    /// in position order (MPD's `plchanges`; see `PlayQueue.changes(since:)`). Entries removed
    /// at the end are not listed: compare the summary's `length`. Any thread.
    public func changedEntries(since version: Int) -> [QueueEntry] {
        shared.withLock { $0.queue.changes(since: version) }
    }

    /// Removes entries (all or none: an unknown id is `not_found`, and nothing changes). Removing
    /// the entry being played starts the next one while playing, and stops while paused; removing
    /// the current entry while stopped leaves none (MPD), so play starts at the first.
    ///
    /// `followed` gets the summary once the player has followed the removal (stopped when the
    /// paused entry went, started the next one when the playing entry went) and the state it left
    /// is saved. A front end answers then, so that a client's next status shows the player as the
    /// removal left it (MPD answers `delete` so), and the removal survives a crash.
    public func removeEntries(ids: [Int], followed: @escaping Saved<QueueSummary>) throws(ReelError) {
        _ = try removeEntries(ids: ids, whenFollowed: saves.after(followed))
    }

    /// `removeEntries(ids:followed:)` without waiting for anything (following the library). The
    /// player follows after this returns.
    @discardableResult
    func removeEntries(ids: [Int]) throws(ReelError) -> QueueSummary {
        try removeEntries(ids: ids, whenFollowed: nil)
    }

    /// Removes, and calls `followed` once the player has followed (on the audio thread, on
    /// `work`, or before returning).
    private func removeEntries(ids: [Int], whenFollowed followed: (@Sendable (QueueSummary) -> Void)?) throws(ReelError)
        -> QueueSummary
    {
        var snapshot = engine.snapshot
        // A URL entry being opened counts as the one playing (or paused).
        if let connecting = shared.withLock({ $0.connecting }), connecting.token == nil {
            snapshot.activity = connecting.playing ? .playing : .paused
        }
        let stopped = snapshot.activity == .stopped
        let outcome = try shared.withLock { shared throws(ReelError) -> (QueueSummary, restart: Int??, currentGone: Bool) in
            let playing = shared.connecting.flatMap { $0.token == nil ? $0.entry : nil }
                ?? snapshot.token.flatMap { shared.tracks[$0]?.entry }
            let removal = try shared.queue.remove(ids: ids, playing: !stopped)
            var restart: Int?? = nil
            if !stopped, let playing, shared.queue.position(of: playing) == nil {
                // What was playing left the queue.
                if case .removed(let successor) = removal {
                    restart = .some(successor)
                } else {
                    restart = .some(shared.queue.current)
                }
            }
            publishQueue(shared)
            return (shared.queue.summary, restart, removal != .untouched)
        }
        // Stopped: the player's entry was the current one, which is gone now.
        if stopped && outcome.currentGone { publishState() }
        let summary = outcome.0
        switch outcome.restart {
        case .some(let successor?) where snapshot.activity == .playing:
            work.async { [self] in start(entry: successor, position: 0, playing: true, skipping: true) { _ in followed?(summary) } }
        case .some:
            if supersedeStarts() { publishState() }
            engine.send(.stop({ _ in followed?(summary) }))
        case .none:
            work.async { [self] in reconcileChain() }
            followed?(summary)
        }
        return summary
    }

    /// Moves an entry to `position` (`not_found`, `out_of_range`: then nothing changes); `saved`
    /// gets the summary once the change is saved.
    public func moveEntry(id: Int, to position: Int, saved: @escaping Saved<QueueSummary>) throws(ReelError) {
        let summary = try moveEntry(id: id, to: position)
        saves.after(saved)(summary)
    }

    func moveEntry(id: Int, to position: Int) throws(ReelError) -> QueueSummary {
        let summary = try shared.withLock { shared throws(ReelError) -> QueueSummary in
            try shared.queue.move(id: id, to: position)
            publishQueue(shared)
            return shared.queue.summary
        }
        work.async { [self] in reconcileChain() }
        return summary
    }

    /// Moves the entries at the positions `range` so that the first of them is at `position`
    /// (MPD's `move START:END TO`; `out_of_range`, see `PlayQueue.move(range:to:)`). Any thread;
    /// the chain is brought in line on `work`; `saved` gets the summary once the change is saved.
    public func moveEntries(range: Range<Int>, to position: Int, saved: @escaping Saved<QueueSummary>) throws(ReelError) {
        let summary = try moveEntries(range: range, to: position)
        saves.after(saved)(summary)
    }

    func moveEntries(range: Range<Int>, to position: Int) throws(ReelError) -> QueueSummary {
        let summary = try shared.withLock { shared throws(ReelError) -> QueueSummary in
            try shared.queue.move(range: range, to: position)
            publishQueue(shared)
            return shared.queue.summary
        }
        work.async { [self] in reconcileChain() }
        return summary
    }

    /// Swaps the positions of two entries (MPD's `swapid`; `not_found`). Any thread; the chain is
    /// brought in line on `work`; `saved` gets the summary once the change is saved.
    public func swapEntries(id: Int, with other: Int, saved: @escaping Saved<QueueSummary>) throws(ReelError) {
        let summary = try swapEntries(id: id, with: other)
        saves.after(saved)(summary)
    }

    func swapEntries(id: Int, with other: Int) throws(ReelError) -> QueueSummary {
        let summary = try shared.withLock { shared throws(ReelError) -> QueueSummary in
            try shared.queue.swap(id: id, with: other)
            publishQueue(shared)
            return shared.queue.summary
        }
        work.async { [self] in reconcileChain() }
        return summary
    }

    /// Sets the priority (0...255) of entries (MPD's `prio`/`prioid`; all or nothing, see
    /// `PlayQueue.setPriority`). Any thread; the chain is brought in line on `work` (in random
    /// mode what plays next may change).
    public func setPriority(_ priority: Int, ids: [Int]) throws(ReelError) -> QueueSummary {
        let summary = try shared.withLock { shared throws(ReelError) -> QueueSummary in
            try shared.queue.setPriority(priority, ids: ids)
            publishQueue(shared)
            return shared.queue.summary
        }
        work.async { [self] in reconcileChain() }
        return summary
    }

    /// Shuffles the entries at the positions `range`, nil for all (MPD's `shuffle`; an end past
    /// the queue is clipped, a bad start is `out_of_range`). While playing or paused the current
    /// entry goes on and, when inside the range, moves to its start; when stopped there is no
    /// current entry afterwards (see `PlayQueue.shuffle(range:playing:)`). Any thread; the
    /// chain is brought in line on `work`; `saved` gets the summary once the change is saved.
    public func shuffleQueue(range: Range<Int>? = nil, saved: @escaping Saved<QueueSummary>) throws(ReelError) {
        let summary = try shuffleQueue(range: range)
        saves.after(saved)(summary)
    }

    func shuffleQueue(range: Range<Int>? = nil) throws(ReelError) -> QueueSummary {
        let playing = engine.snapshot.activity != .stopped
        let (summary, currentChanged) = try shared.withLock { shared throws(ReelError) -> (QueueSummary, Bool) in
            let before = shared.queue.current
            try shared.queue.shuffle(range: range, playing: playing)
            publishQueue(shared)
            return (shared.queue.summary, shared.queue.current != before)
        }
        // Stopped: the player's entry is the current one, which is gone now.
        if currentChanged { publishState() }
        work.async { [self] in reconcileChain() }
        return summary
    }

    /// Empties the queue and stops playback (as MPD's `clear`); `saved` gets the summary once
    /// playback has stopped and the empty queue is saved.
    public func clearQueue(saved: @escaping Saved<QueueSummary>) {
        clearQueue(whenStopped: saves.after(saved))
    }

    @discardableResult
    func clearQueue(whenStopped stopped: (@Sendable (QueueSummary) -> Void)? = nil) -> QueueSummary {
        let summary = shared.withLock { shared -> QueueSummary in
            shared.queue.clear()
            publishQueue(shared)
            return shared.queue.summary
        }
        if supersedeStarts() { publishState() }
        if engine.snapshot.activity != .stopped {
            engine.send(.stop({ _ in stopped?(summary) }))
        } else {
            stopped?(summary)
        }
        return summary
    }

    /// Changes any of the options (nil leaves one as it is); `saved` gets them once saved.
    public func setQueueOptions(
        repeats: Bool? = nil, random: Bool? = nil, single: SingleMode? = nil, consume: Bool? = nil,
        saved: @escaping Saved<QueueOptions>
    ) {
        let options = setQueueOptions(repeats: repeats, random: random, single: single, consume: consume)
        saves.after(saved)(options)
    }

    @discardableResult
    func setQueueOptions(repeats: Bool? = nil, random: Bool? = nil, single: SingleMode? = nil, consume: Bool? = nil)
        -> QueueOptions
    {
        let options = shared.withLock { shared -> QueueOptions in
            shared.queue.setOptions(repeats: repeats, random: random, single: single, consume: consume)
            publishQueue(shared)
            return shared.queue.options
        }
        work.async { [self] in
            reconcileChain()
            if random != nil { applyReplayGain() }  // `auto` follows random
        }
        return options
    }

    /// Publishes the queue's summary; called under `shared`'s lock so that summaries go out in
    /// the order of the changes.
    func publishQueue(_ shared: Shared) {
        let summary = shared.queue.summary
        if summary != queueChanges.latest.value { queueChanges.publish(summary) }
    }

    // MARK: Resolving additions

    /// The entries an addition stands for (on `work`: it opens files and reads the library).
    func resolve(_ addition: QueueAddition) throws(ReelError) -> [NewQueueEntry] {
        var checked = CheckedMusic()
        return try resolve(addition, checked: &checked)
    }

    /// The music tracks an add has checked against the media roots and made into entries, by
    /// id: a track named again (the same values) is not checked or made again. `index` is the
    /// entry's place in the add's distinct entries, once it has one (`musicEntryIndex`).
    struct CheckedMusic {
        var entries: [Int64: (track: MusicTrack, entry: NewQueueEntry, index: Int?)] = [:]
        /// Files added by path (`QueueAddition.file`), opened and checked once per add: their
        /// entry's index in the add's distinct entries.
        var files: [String: Int] = [:]
    }

    /// `resolve(_:)`, taking the entries of the music tracks in `checked` (checked earlier in
    /// the same add) as they are, and adding those it checks.
    func resolve(_ addition: QueueAddition, checked: inout CheckedMusic) throws(ReelError) -> [NewQueueEntry] {
        switch addition {
        case .file(let path):
            try mediaRoots.check(path)
            // Described, not played: a long MP3 without a Xing/Info tag is not counted here (it
            // is when it plays), and its entry shows the estimate.
            let reader = try AudioFileOpener.open(path: path, mp3Length: .estimate)
            let length = reader.knownDuration
            return [NewQueueEntry(
                source: .file(path: path), duration: length?.seconds, format: reader.format, tags: indexedTags(ofFile: path),
                durationEstimated: length?.estimated ?? false)]
        case .recording(let reference):
            let item = try store.item(reference)
            if item.kind == .playlist { return try playlistEntries(item, checked: &checked) }
            guard item.kind == .folder else { return [try entry(of: item)] }
            var entries: [NewQueueEntry] = []
            try collectRecordings(in: item, into: &entries)
            guard !entries.isEmpty else {
                throw ReelError(.notFound, "the folder \(item.path) holds no \(item.readOnly ? "tracks" : "recordings")")
            }
            return entries
        case .musicTracks(let tracks):
            guard !tracks.isEmpty else { throw ReelError(.notFound, "no tracks to add") }
            return try tracks.map { track throws(ReelError) -> NewQueueEntry in try musicEntry(track, checked: &checked) }
        case .musicTrack(let id):
            return try resolve(.musicTracks([try MusicIndex(store: store).track(id: id)]), checked: &checked)
        case .album(let name, let albumArtist):
            let tracks = try MusicController.albumTracks(in: MusicIndex(store: store), album: name, albumArtist: albumArtist)
            return try resolve(.musicTracks(tracks), checked: &checked)
        case .url(let url), .urlOrPlaylist(let url), .stationPlaylist(let url):
            // (A playlist by its name was fetched before: `fetchPlaylists`.)
            return [NewQueueEntry(source: .url(try URLSource.check(url), name: nil, title: nil), duration: nil, format: nil)]
        case .recordings(let references):
            return try references.map { reference throws(ReelError) -> NewQueueEntry in
                let item = try store.item(reference)
                guard item.kind == .recording else {
                    throw ReelError(.notARecording, "\(item.path) is a folder, not a recording")
                }
                return NewQueueEntry(
                    source: .item(id: item.id, path: item.path, name: item.name), duration: item.duration,
                    format: item.format)
            }
        }
    }

    /// The entry of a track of the music folders (checked against the media roots), or the one
    /// `checked` holds for it; one its music folder is missing from is refused.
    func musicEntry(_ track: MusicTrack, checked: inout CheckedMusic) throws(ReelError) -> NewQueueEntry {
        if let made = checked.entries[track.id], made.track == track { return made.entry }
        let entry = try checkedMusicEntry(track)
        checked.entries[track.id] = (track, entry, nil)
        return entry
    }

    /// The index in `distinct` of the entry of a track of the music folders: the one `checked`
    /// put there for it, or a new one (checked against the media roots, as `musicEntry`).
    func musicEntryIndex(
        _ track: MusicTrack, checked: inout CheckedMusic, distinct: inout [NewQueueEntry]
    ) throws(ReelError) -> Int {
        if let made = checked.entries[track.id], made.track == track {
            if let index = made.index { return index }
            distinct.append(made.entry)
            checked.entries[track.id]?.index = distinct.count - 1
            return distinct.count - 1
        }
        let entry = try checkedMusicEntry(track)
        distinct.append(entry)
        checked.entries[track.id] = (track, entry, distinct.count - 1)
        return distinct.count - 1
    }

    /// The entry of a track of the music folders, checked against the media roots.
    private func checkedMusicEntry(_ track: MusicTrack) throws(ReelError) -> NewQueueEntry {
        try musicFileEntry(root: track.root, relativePath: track.relativePath, MusicQueueFile(track))
    }

    /// The entry of the file at `relativePath` of the music folder `root`, from what the index
    /// has of it (`MusicIndex.queueFiles`), checked against the media roots; one whose music
    /// folder is missing is refused (`not_found`). The one rule for an indexed file's entry,
    /// whether its track was read whole or not. Any thread.
    func musicFileEntry(root: String, relativePath: String, _ file: MusicQueueFile) throws(ReelError) -> NewQueueEntry {
        // (Made once: joins the root and the relative path.)
        let path = MusicTrack.path(root: root, relativePath: relativePath)
        guard !file.missing else {
            throw ReelError(.notFound, "\(path) is in a music folder that is not there now")
        }
        try mediaRoots.check(path)
        return NewQueueEntry(
            source: .file(path: path), duration: file.duration,
            format: AudioFormat(codec: file.codec, sampleRate: file.sampleRate, channels: file.channels),
            tags: DisplayTags(
                title: MusicTrack.displayTitle(title: file.title, relativePath: relativePath), artist: file.artist,
                album: file.album))
    }

    /// The tags the music index has for a file in a music folder; nil for any other file.
    private func indexedTags(ofFile path: String) -> DisplayTags? {
        guard let location = mediaRoots.musicLocation(of: path),
            let track = try? MusicIndex(store: store).track(root: location.root, relativePath: location.relativePath)
        else { return nil }
        return track.displayTags
    }

    /// The entry of a recording, or of a track of the music folders (a file, with its tags).
    private func entry(of item: Item) throws(ReelError) -> NewQueueEntry {
        guard item.kind == .track else {
            return NewQueueEntry(
                source: .item(id: item.id, path: item.path, name: item.name), duration: item.duration, format: item.format)
        }
        guard let file = item.file else { throw ReelError(.notFound, "\(item.path) has no file") }
        try mediaRoots.check(file)
        return NewQueueEntry(source: .file(path: file), duration: item.duration, format: item.format, tags: item.tags)
    }

    /// The entries of a playlist file of the `/Music` branch: what each of its entries adds;
    /// one that names nothing playable is skipped and logged (as `playlists.load` skips it).
    /// None playable is `not_found`.
    private func playlistEntries(_ item: Item, checked: inout CheckedMusic) throws(ReelError) -> [NewQueueEntry] {
        guard let additions = try playlistFileAdditions.withLock({ $0 })?(item) else {
            throw ReelError(.notFound, "cannot read the playlist \(item.path)")
        }
        var entries: [NewQueueEntry] = []
        var skipped: [String] = []
        for addition in additions {
            do throws(ReelError) {
                entries += try resolve(addition.get(), checked: &checked)
            } catch {
                skipped.append(error.message)
            }
        }
        if !skipped.isEmpty {
            logger.notice(
                "skipped playlist entries that name nothing playable",
                metadata: ["playlist": "\(item.path)", "skipped": "\(skipped.count)", "first": "\(skipped[0])"])
        }
        guard !entries.isEmpty else {
            throw ReelError(.notFound, "the playlist \(item.path) has no entry that can be played")
        }
        return entries
    }

    /// A folder's recordings (or a music folder's tracks) by name (case folded, as MPD and the tree's listing order them),
    /// then each subfolder's the same way.
    private func collectRecordings(in folder: Item, into entries: inout [NewQueueEntry]) throws(ReelError) {
        let items = try store.list(folder: .id(folder.id)).items.sorted { a, b in
            let (foldedA, foldedB) = (a.name.lowercased(), b.name.lowercased())
            return foldedA != foldedB ? foldedA < foldedB : a.name < b.name
        }
        // (A music folder's playlist files are not added with it, as MPD's `add DIR`.)
        for item in items where item.kind == .recording || item.kind == .track {
            entries.append(try entry(of: item))
        }
        for item in items where item.kind == .folder {
            try collectRecordings(in: item, into: &entries)
        }
    }

    // MARK: Following the library

    /// A deleted recording leaves the queue; a renamed or moved one (or one in a renamed or moved
    /// folder) is followed. Called on the library's delivery queue.
    func libraryChanged(_ changes: [LibraryChange]) {
        var removedIDs: Set<String> = []
        var removedFolders: [String] = []
        var renames: [(old: String, new: String, name: String, id: String)] = []
        for change in changes {
            switch change.kind {
            case .removed:
                if change.item.kind == .recording { removedIDs.insert(change.item.id) } else { removedFolders.append(change.item.path + "/") }
            case .renamed, .moved:
                if let old = change.oldPath { renames.append((old, change.item.path, change.item.name, change.item.id)) }
            case .added, .updated:
                break
            }
        }
        guard !removedIDs.isEmpty || !removedFolders.isEmpty || !renames.isEmpty else { return }
        let gone = shared.withLock { shared -> [Int] in
            var gone: [Int] = []
            for entry in shared.queue.allEntries {
                guard case .item(let id, var path, var name) = entry.source else { continue }
                if removedIDs.contains(id) || removedFolders.contains(where: { path.hasPrefix($0) }) {
                    gone.append(entry.id)
                    continue
                }
                var changed = false
                for rename in renames {
                    if rename.id == id {
                        path = rename.new
                        name = rename.name
                        changed = true
                    } else if path.hasPrefix(rename.old + "/") {
                        path = rename.new + path.dropFirst(rename.old.count)
                        changed = true
                    }
                }
                if changed { shared.queue.updateSource(.item(id: id, path: path, name: name), for: entry.id) }
            }
            if !renames.isEmpty { publishQueue(shared) }
            return gone
        }
        if !gone.isEmpty {
            logger.info("recordings in the queue were deleted; removing them", metadata: ["entries": "\(gone.count)"])
            _ = try? removeEntries(ids: gone)
        }
        if !renames.isEmpty { publishState() }
    }
}

extension PlayerController {
    // MARK: Following the music folders

    /// Files of the music folders renamed or moved (or their folders), as the index saw them:
    /// queue entries whose file is an old path (or under an old folder) take the new path, in
    /// order (a file moved twice ends at its last path). Entries of files deleted are left
    /// alone: they are skipped with an error when reached, as any file gone. Any thread (called
    /// on the music scan's queue after the move is written).
    public func followMoves(_ moves: [(from: String, to: String)]) {
        guard !moves.isEmpty else { return }
        let changed = shared.withLock { shared -> Int in
            var changed = 0
            for entry in shared.queue.allEntries {
                guard case .file(var path) = entry.source else { continue }
                let original = path
                for move in moves {
                    if path == move.from {
                        path = move.to
                    } else if path.hasPrefix(move.from + "/") {
                        path = move.to + path.dropFirst(move.from.count)
                    }
                }
                if path != original {
                    shared.queue.updateSource(.file(path: path), for: entry.id)
                    changed += 1
                }
            }
            if changed > 0 { publishQueue(shared) }
            return changed
        }
        if changed > 0 {
            logger.info("queue entries follow their files, moved in a music folder", metadata: ["entries": "\(changed)"])
            publishState()
        }
    }
}
