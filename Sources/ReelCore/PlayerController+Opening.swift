// Opening URL entries off the player's queue: connecting (the state says so while it lasts),
// giving up on a stop or a later start, station playlists expanded in place, and line-ups of
// URL entries for gapless play.

import ReelAudio
import ReelModel
import ReelRuntime

extension PlayerController {
    /// A start's URL being opened (`Shared.connecting`).
    struct Connecting {
        /// The start it is for (`Shared.startSerial`).
        var serial: Int
        /// Its queue entry; nil for `play {url}` (the queue becomes it once it opened).
        var entry: Int?
        var url: String
        var opening: URLOpening
        /// Play (true) or stay paused once opened: `pause`/`resume` while connecting change it.
        var playing: Bool
        /// The engine's token once the open was handed to the engine (it shows then).
        var token: Int?
    }

    /// A URL being opened to line up after `token` (`Shared.liningUp`).
    struct LiningUp {
        var token: Int
        var entry: Int
        var opening: URLOpening
    }

    /// What a start is asked: where, playing or paused, whether failures skip on, and whom to
    /// answer.
    struct StartRequest: Sendable {
        var serial: Int
        var position: Double
        var playing: Bool
        var skipping: Bool
        var reply: ReplyOnce
        /// Answer once the URL is connecting (a queue entry); else once it opened or failed
        /// (`play {url}`, whose failure leaves the queue alone).
        var replyWhenConnecting: Bool
        /// Entries tried at most; `attempts` so far.
        var limit: Int
        var attempts = 0
    }

    /// A reply called at most once (a start answers when connecting, and may fail later).
    final class ReplyOnce: @unchecked Sendable {
        private let reply: Reply
        private let done = Locked(false)
        init(_ reply: @escaping Reply) { self.reply = reply }
        func callAsFunction(_ result: Result<PlayerState, ReelError>) {
            let first = done.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { reply(result) }
        }
    }

    // MARK: Starts

    /// True while a start's URL is being opened. Any thread.
    var isConnecting: Bool { shared.withLock { $0.connecting != nil } }

    /// A new start: earlier ones are given up (their opens cancelled). Returns its serial. Any thread.
    func beginStart() -> Int {
        let (serial, cancelled) = shared.withLock { shared -> (Int, [URLOpening]) in
            shared.startSerial += 1
            return (shared.startSerial, Self.takeOpenings(&shared))
        }
        for opening in cancelled { opening.cancel() }
        return serial
    }

    /// Gives up any start in flight (a stop, a clear, the end of the queue); true when a URL
    /// was being opened for one. Any thread.
    @discardableResult
    func supersedeStarts() -> Bool {
        let (was, cancelled) = shared.withLock { shared -> (Bool, [URLOpening]) in
            shared.startSerial += 1
            let was = shared.connecting != nil
            return (was, Self.takeOpenings(&shared))
        }
        for opening in cancelled { opening.cancel() }
        return was
    }

    private static func takeOpenings(_ shared: inout Shared) -> [URLOpening] {
        let openings = [shared.connecting?.opening, shared.liningUp?.opening].compactMap { $0 }
        shared.connecting = nil
        shared.liningUp = nil
        return openings
    }

    /// While a URL is being opened, `pause`/`resume`/`toggle` say whether it plays once open;
    /// false (nothing done) when none is. Publishes the change.
    func setConnectingPlaying(_ change: (Bool) -> Bool) -> Bool {
        let changed = shared.withLock { shared -> Bool? in
            guard let connecting = shared.connecting, connecting.token == nil else { return nil }
            let playing = change(connecting.playing)
            shared.connecting?.playing = playing
            return playing != connecting.playing
        }
        guard let changed else { return false }
        if changed { publishState() }
        return true
    }

    /// `play {url}` (on `work`): opens `url` off `work`; once it opened the queue becomes it (or
    /// the streams of the playlist it is, the first of them started). A failure leaves the queue
    /// as it was, and is the reply.
    func playURL(_ url: String, position: Double, reply: @escaping Reply) {
        do throws(ReelError) {
            _ = try URLSource.check(url)
        } catch {
            startFailed(StartRequest(
                serial: 0, position: position, playing: true, skipping: false, reply: ReplyOnce(reply),
                replyWhenConnecting: false, limit: 1), error)
            return
        }
        let request = StartRequest(
            serial: beginStart(), position: position, playing: true, skipping: false, reply: ReplyOnce(reply),
            replyWhenConnecting: false, limit: 1)
        connect(entry: nil, url: url, request: request)
    }

    /// Starts opening `url` (queue entry `entry`, or nil for `play {url}`) for `request`, off
    /// `work`: what played stops, the state shows the entry connecting, and `connected` goes on
    /// on `work` once it opened or failed. On `work`.
    func connect(entry: Int?, url: String, request: StartRequest) {
        // The entry the stream's changes go to (for `play {url}`, once the queue has it).
        let target = Locked<Int?>(entry)
        let opening = URLOpening(url: url, configuration: streamConfiguration) { [weak self] in
            guard let self else { return }
            if let entry = target.current { streamChanged(entry: entry) } else { publishState() }
        }
        let begun = shared.withLock { shared -> Bool in
            guard shared.startSerial == request.serial else { return false }
            shared.connecting = Connecting(serial: request.serial, entry: entry, url: url, opening: opening, playing: request.playing)
            if let entry {
                try? shared.queue.setCurrent(entry)
                publishQueue(shared)
            }
            return true
        }
        guard begun else {
            request.reply(.failure(ReelError(.notPlaying, "another command replaced this play")))
            return
        }
        logger.info("connecting", metadata: ["url": "\(url)"])
        // What played stops: this entry comes instead (as MPD's play).
        engine.send(.stop({ _ in }))
        publishState()
        if request.replyWhenConnecting { request.reply(.success(state)) }
        opening.start { [weak self] result in
            guard let self else { return }
            work.async { self.connected(result, entry: entry, url: url, request: request, target: target) }
        }
    }

    /// On `work`: `url`'s open for `request` ended. Dropped when a later start or a stop came;
    /// else the audio plays, a playlist's streams replace the entry (or become the queue), or
    /// the failure is shown and, skipping, the next entry is tried.
    func connected(
        _ result: Result<URLContent, ReelError>, entry: Int?, url: String, request: StartRequest, target: Locked<Int?>
    ) {
        let current = shared.withLock { shared -> Bool in
            shared.connecting?.serial == request.serial && shared.startSerial == request.serial
        }
        guard current else {
            if case .success(.audio(_, let stream)) = result { stream.stop() }
            request.reply(.failure(ReelError(.notPlaying, "another command replaced this play")))
            return
        }
        switch result {
        case .success(.audio(let reader, let stream)):
            let opened = shared.withLock { shared -> OpenedEntry? in
                var id = entry
                if id == nil {
                    // `play {url}`: the queue becomes it now.
                    shared.queue.clear()
                    id = (try? shared.queue.add(
                        [NewQueueEntry(source: .url(url, name: nil, title: nil), duration: nil, format: nil)], at: nil,
                        afterCurrent: false))?.first?.id
                    shared.connecting?.entry = id
                }
                guard let id, let queued = shared.queue.entry(id: id) else { return nil }
                // A finite file has a length (exact from its Xing/Info tag, else estimated); a live
                // stream none.
                let length = reader.knownDuration
                shared.queue.setDuration(length?.seconds, estimated: length?.estimated ?? false, format: reader.format, missing: false, for: id)
                publishQueue(shared)
                return OpenedEntry(id: id, track: Track(entry: id, source: queued.source, file: url, stream: stream), reader: reader)
            }
            guard let opened else {
                stream.stop()
                shared.withLock { $0.connecting = nil }
                startFailed(request, ReelError(.notFound, "\(url) left the queue while it connected"))
                return
            }
            // The stream's changes reach its entry from now on (`play {url}`'s is new).
            target.withLock { $0 = opened.id }
            loadOpened(opened, request: request)
        case .success(.stations(let streams)):
            let first = shared.withLock { shared -> Int? in
                shared.connecting = nil
                let entries = Self.entries(of: streams)
                guard let entry else {
                    shared.queue.clear()
                    let added = try? shared.queue.add(entries, at: nil, afterCurrent: false)
                    publishQueue(shared)
                    return added?.first?.id
                }
                let added = Self.expand(entry: entry, into: entries, in: &shared.queue)
                publishQueue(shared)
                return added?.first?.id
            }
            logger.info("station playlist expanded", metadata: ["url": "\(url)", "streams": "\(streams.count)"])
            guard let first else {
                startFailed(request, ReelError(.notFound, "\(url) left the queue while it was fetched"))
                return
            }
            var next = request
            next.limit += streams.count
            // The playlist's streams are tried in order, each that fails skipped.
            next.skipping = true
            attemptStart(next, from: first)
        case .failure(let error):
            logger.info("cannot play", metadata: ["url": "\(url)", "error": "\(error.message)"])
            let successor = shared.withLock { shared -> Int? in
                shared.connecting = nil
                return entry.flatMap { shared.queue.successor(of: $0, .automatic) }
            }
            guard request.skipping, let successor, request.attempts < request.limit else {
                startFailed(request, error)
                return
            }
            shared.withLock { $0.skipError = error }
            publishState()
            attemptStart(request, from: successor)
        }
    }

    /// A playlist's streams as queue entries: each URL with the title the playlist gives it.
    static func entries(of streams: [ListedStream]) -> [NewQueueEntry] {
        streams.map { NewQueueEntry(source: .url($0.url, name: nil, title: $0.title), duration: nil, format: nil) }
    }

    /// Replaces queue entry `entry` by `entries`, at its position, as one change; the current
    /// entry becomes the first of them when it was `entry`. Nil when `entry` is gone.
    static func expand(entry: Int, into entries: [NewQueueEntry], in queue: inout PlayQueue) -> [QueueEntry]? {
        guard let position = queue.position(of: entry) else { return nil }
        let wasCurrent = queue.current == entry
        guard let added = try? queue.add(entries, at: position, afterCurrent: false) else { return nil }
        _ = try? queue.remove(ids: [entry], playing: false)
        if wasCurrent, let first = added.first { try? queue.setCurrent(first.id) }
        return added
    }

    // MARK: Line-ups

    /// On `work`: opens URL entry `entry` off `work` to line it up after `token` (gapless), unless
    /// it is being opened already. Lined up when it opened and still follows; a playlist is
    /// expanded in place and the line-up made again; a failure skips it.
    func lineUpURL(after token: Int, entry: Int, url: String, skipping: Set<Int>) {
        let opening = URLOpening(url: url, configuration: streamConfiguration) { [weak self] in
            self?.streamChanged(entry: entry)
        }
        let previous = shared.withLock { shared -> URLOpening? in
            defer { shared.liningUp = LiningUp(token: token, entry: entry, opening: opening) }
            return shared.liningUp?.opening
        }
        previous?.cancel()
        opening.start { [weak self] result in
            guard let self else { return }
            work.async { self.linedUpURL(result, after: token, entry: entry, url: url, opening: opening, skipping: skipping) }
        }
    }

    private func linedUpURL(
        _ result: Result<URLContent, ReelError>, after token: Int, entry: Int, url: String, opening: URLOpening,
        skipping: Set<Int>
    ) {
        let current = shared.withLock { shared -> Bool in
            guard shared.liningUp?.opening === opening else { return false }
            shared.liningUp = nil
            return true
        }
        guard current else {
            if case .success(.audio(_, let stream)) = result { stream.stop() }
            return
        }
        switch result {
        case .success(.audio(let reader, let stream)):
            let opened = shared.withLock { shared -> OpenedEntry? in
                guard let queued = shared.queue.entry(id: entry) else { return nil }
                let length = reader.knownDuration
                shared.queue.setDuration(length?.seconds, estimated: length?.estimated ?? false, format: reader.format, missing: false, for: entry)
                publishQueue(shared)
                return OpenedEntry(id: entry, track: Track(entry: entry, source: queued.source, file: url, stream: stream), reader: reader)
            }
            guard let opened, send(opened, after: token, wanted: entry) else {
                stream.stop()
                lineUp(after: token, skipping: skipping)
                return
            }
        case .success(.stations(let streams)):
            shared.withLock { shared in
                _ = Self.expand(entry: entry, into: Self.entries(of: streams), in: &shared.queue)
                publishQueue(shared)
            }
            lineUp(after: token, skipping: skipping)
        case .failure(let error):
            logger.info("cannot play", metadata: ["url": "\(url)", "error": "\(error.message)"])
            shared.withLock { $0.skipError = error }
            publishState()
            lineUp(after: token, skipping: skipping.union([entry]))
        }
    }
}
