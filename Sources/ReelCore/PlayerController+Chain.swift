// Keeping the engine's chain of tracks what the queue says: starting entries, lining up the
// next one ahead of time, and following the engine as entries become audible or end.

import Dispatch
import ReelAudio
internal import ReelLibrary
import ReelModel
import ReelRuntime

extension PlayerController {
    /// An entry opened and ready for the engine.
    struct OpenedEntry {
        var id: Int
        var track: Track
        var reader: AudioFileReader
    }

    // MARK: Starting

    /// Loads entry `id` (on `work`). With `skipping`, an entry that cannot be opened is skipped
    /// with an error on the player stream and the next one in play order is tried, until every
    /// entry has failed; without, its error is the reply. A URL entry is opened off `work`
    /// (`PlayerController+Opening`): the reply comes once it is connecting, and this start
    /// goes on when it opened.
    func start(entry id: Int, position: Double, playing: Bool, skipping: Bool, reply: @escaping Reply) {
        let serial = beginStart()
        let limit = shared.withLock { $0.queue.length }
        let request = StartRequest(
            serial: serial, position: position, playing: playing, skipping: skipping, reply: ReplyOnce(reply),
            replyWhenConnecting: true, limit: max(limit, 1))
        attemptStart(request, from: id)
    }

    /// On `work`: opens `id` (and, skipping, the entries after it that fail) for `request`.
    func attemptStart(_ request: StartRequest, from id: Int) {
        var request = request
        var candidate: Int? = id
        var lastError = ReelError(.notFound, "nothing follows in the queue")
        while let current = candidate, request.attempts < request.limit {
            guard shared.withLock({ $0.startSerial }) == request.serial else {
                // A later start or a stop came meanwhile.
                request.reply(.failure(ReelError(.notPlaying, "another command replaced this play")))
                return
            }
            request.attempts += 1
            let url = shared.withLock { shared -> String? in
                guard case .url(let url, _, _) = shared.queue.entry(id: current)?.source else { return nil }
                return url
            }
            if let url {
                connect(entry: current, url: url, request: request)
                return
            }
            do throws(ReelError) {
                loadOpened(try open(entry: current), request: request)
                return
            } catch {
                guard request.skipping else {
                    startFailed(request, error)
                    return
                }
                lastError = error
                shared.withLock { $0.skipError = error }
                publishState()
                candidate = shared.withLock { $0.queue.successor(of: current, .automatic) }
            }
        }
        startFailed(request, lastError)
    }

    /// A start found nothing to play: the state and the reply say why.
    func startFailed(_ request: StartRequest, _ error: ReelError) {
        // The state says why too: a client that did not ask (a page, an MPD client) shows it.
        shared.withLock { $0.skipError = error }
        request.reply(.failure(error))
        publishState()
    }

    /// Hands an opened entry to the engine for `request` (on `work`).
    func loadOpened(_ opened: OpenedEntry, request: StartRequest) {
        let position = request.position
        if let duration = opened.reader.duration, position > duration {
            shared.withLock { shared in
                if shared.connecting?.serial == request.serial { shared.connecting = nil }
            }
            request.reply(.failure(ReelError(
                .outOfRange,
                "cannot start \(opened.track.source.displayName) at \(formatSeconds(position)): it is \(formatSeconds(duration)) long")))
            publishState()
            return
        }
        let token = shared.withLock { shared -> Int? in
            guard shared.startSerial == request.serial else { return nil }
            let token = shared.newToken(for: opened.track)
            shared.audibleToken = token
            // A play asked for that starts clears an earlier failure (as MPD's play does); one
            // that skipped entries to get here keeps the last skip's error on show.
            if !request.skipping { shared.skipError = nil }
            try? shared.queue.setCurrent(opened.id)
            // Shown as connecting until the engine has it.
            if shared.connecting?.serial == request.serial { shared.connecting?.token = token }
            publishQueue(shared)
            return token
        }
        guard let token else {
            opened.track.stream?.stop()
            request.reply(.failure(ReelError(.notPlaying, "another command replaced this play")))
            return
        }
        let playing = shared.withLock { $0.connecting?.serial == request.serial ? $0.connecting!.playing : request.playing }
        let startFrame = frameIndex(seconds: position, rate: Double(opened.reader.pcmFormat.sampleRate))
        logger.info("play", metadata: ["file": "\(opened.track.file)", "format": "\(opened.reader.format.codec)"])
        let replayGain = replayGainScale(for: opened.track.replayGain)
        let reply = adapt(request.reply.callAsFunction)
        engine.send(.load(
            ReaderBox(opened.reader, replayGain: replayGain), token: token, startFrame: startFrame, startPlaying: playing,
            { [self] result in
                // On the audio thread: the engine has the entry (or refused it); it is no longer
                // shown as connecting.
                let cleared = shared.withLock { shared -> Bool in
                    guard shared.connecting?.token == token else { return false }
                    shared.connecting = nil
                    return true
                }
                if cleared, case .failure = result { publishState() }
                reply(result)
            }))
    }

    /// Opens entry `id`'s file, or throws why it cannot be played (and marks it missing when
    /// its file is gone).
    func open(entry id: Int) throws(ReelError) -> OpenedEntry {
        guard let entry = shared.withLock({ $0.queue.entry(id: id) }) else {
            throw ReelError(.notFound, "no queue entry with id \(id)")
        }
        var file = ""
        do throws(ReelError) {
            let source: PlayerSource
            switch entry.source {
            case .file(let path):
                try mediaRoots.check(path)
                file = path
                source = entry.source
            case .item(let itemID, _, _):
                let item = try store.item(id: itemID)
                file = try store.audioPath(for: item)
                source = .item(id: item.id, path: item.path, name: item.name)
            case .url(let url, _, _):
                // Never here: URL entries are opened off `work` (`connect`).
                throw ReelError(.unsupportedFormat, "\(url) is opened by connecting to it, not as a file")
            }
            let reader = try AudioFileOpener.open(path: file)
            let replayGain = replayGainInfo(of: file, source: source)
            let length = reader.knownDuration
            shared.withLock { shared in
                shared.queue.setDuration(
                    length?.seconds, estimated: length?.estimated ?? false, format: reader.format, missing: false, for: id)
            }
            return OpenedEntry(
                id: id, track: Track(entry: id, source: source, file: file, replayGain: replayGain), reader: reader)
        } catch var error {
            if case .item(_, let treePath, _) = entry.source {
                // Name the recording, not its file inside the data directory.
                error.message = "cannot play the recording \(treePath): \(error.message)"
            }
            logger.info("cannot play", metadata: ["file": "\(file)", "error": "\(error.message)"])
            if error.reason == .notFound {
                shared.withLock { shared in
                    shared.queue.setDuration(entry.duration, format: entry.format, missing: true, for: id)
                }
            }
            throw error
        }
    }

    /// A URL entry's stream changed (its state, station, a title decoded, or metadata skipped,
    /// which is logged; on its network thread or the audio thread), or a title's time came (on
    /// `work`): the station and the title heard now go into the queue entry (MPD's
    /// `playlistinfo` shows them, a saved queue keeps them), and the state is published. A title decoded but not heard yet is
    /// published when its audio is: a timer on `work` comes back then, one at a time
    /// (`TitleWakeUps`: a title marked while one is pending for an earlier title adds none).
    func streamChanged(entry id: Int, onlyIfHeard: Bool = false) {
        let (snapshot, position) = engine.currentPosition()
        let rate = Double(max(snapshot.sampleRate, 1))
        var wakeUp: (serial: Int, delay: Double)?
        var notices: [String] = []
        shared.withLock { shared in
            guard let (token, track) = shared.tracks.filter({ $0.value.entry == id && $0.value.stream != nil })
                .max(by: { $0.key < $1.key }),
                let stream = track.stream,
                let entry = shared.queue.entry(id: id), case .url(let url, _, _) = entry.source
            else { return }
            notices = stream.takeNotices()
            let frame = snapshot.token == token ? Int64(position * rate) : 0
            let heardTitle = stream.title(atFrame: frame)
            if let next = heardTitle.next, snapshot.token == token, snapshot.activity == .playing {
                // The title's time (`onlyIfHeard`: a wake-up that came early publishes nothing).
                let delay = max(Double(next - frame) / rate, 0) + 0.005
                let due = monotonicNanoseconds() + UInt64(delay * 1e9)
                if let serial = shared.titleWakeUps.request(entry: id, at: due) { wakeUp = (serial, delay) }
            }
            let status = stream.current
            let heard = [status.name, heardTitle.title]
            // Only a change of what the stream says (not of its state) touches the entry; then,
            // as MPD, the stream's name and title replace every tag a client set (`addtagid`).
            guard heard != track.heardTags, status.name != nil || heardTitle.title != nil else { return }
            shared.tracks[token]?.heardTags = heard
            shared.queue.updateSource(PlayerSource.url(url, name: status.name, title: heardTitle.title), for: id)
            shared.queue.updateTags(nil, for: id)
            publishQueue(shared)
        }
        // Metadata the stream sent that was skipped (a broken ID3 tag): a log line each.
        for notice in notices { logger.notice("stream metadata skipped", metadata: ["entry": "\(id)", "why": "\(notice)"]) }
        let now = state
        if !onlyIfHeard || now.source != changes.latest.value.source { changes.publish(now) }
        if let wakeUp {
            work.asyncAfter(deadline: .now() + wakeUp.delay) { [self] in
                // One replaced by an earlier one since does nothing: that one looks.
                guard shared.withLock({ $0.titleWakeUps.fire(wakeUp.serial) }) else { return }
                streamChanged(entry: id, onlyIfHeard: true)
            }
        }
    }

    /// What `openPlayable` found: an entry opened, or a URL entry to open off `work`.
    enum Playable {
        case opened(OpenedEntry)
        case url(id: Int, url: String)
    }

    /// Opens the first entry that plays, starting at `id` (or after it, when `including` is
    /// false) and following the play order; each one that fails is skipped with its error on
    /// the player stream. Stops at a URL entry (opened off `work`, by the caller). Throws the
    /// last error when every entry failed, `not_found` when there is nothing to try.
    func openPlayable(from id: Int, including: Bool) throws(ReelError) -> Playable {
        let limit = shared.withLock { $0.queue.length }
        var candidate: Int? = including ? id : shared.withLock { $0.queue.successor(of: id, .automatic) }
        var lastError = ReelError(.notFound, "nothing follows in the queue")
        var attempts = 0
        while let current = candidate, attempts < limit {
            attempts += 1
            let url = shared.withLock { shared -> String? in
                guard case .url(let url, _, _) = shared.queue.entry(id: current)?.source else { return nil }
                return url
            }
            if let url { return .url(id: current, url: url) }
            do throws(ReelError) {
                return .opened(try open(entry: current))
            } catch {
                lastError = error
                shared.withLock { $0.skipError = error }
                publishState()
                candidate = shared.withLock { $0.queue.successor(of: current, .automatic) }
            }
        }
        throw lastError
    }

    // MARK: Following the engine

    /// On the audio thread after each discrete engine change: count the time playing, publish,
    /// then act on `work`.
    func engineChanged(_ snapshot: PlaybackSnapshot) {
        let now = monotonicNanoseconds()
        playTime.withLock { $0.update(playing: snapshot.activity == .playing, at: now) }
        changes.publish(state(of: snapshot, position: engine.currentPosition().position))
        work.async { [self] in followEngine(snapshot) }
    }

    /// On the audio thread: the engine started decoding `token` with nothing after it.
    func engineWantsNext(after token: Int) {
        work.async { [self] in lineUp(after: token) }
    }

    /// On `work`: a new audible entry advances the queue (consume, single oneshot); the end of
    /// the chain ends the queue or, when the next entry could not be lined up in time, starts it.
    func followEngine(_ snapshot: PlaybackSnapshot) {
        var startNext: Int?
        shared.withLock { shared in
            // Tokens grow with every start and line-up: an older one is a late report.
            guard let token = snapshot.token, let track = shared.tracks[token], token >= (shared.audibleToken ?? 0)
            else { return }
            if shared.audibleToken != token {
                if let previous = shared.audibleToken, let finished = shared.tracks[previous],
                   shared.queue.position(of: finished.entry) != nil
                {
                    _ = shared.queue.advance(from: finished.entry, to: track.entry)
                } else if shared.queue.position(of: track.entry) != nil {
                    try? shared.queue.setCurrent(track.entry)
                }
                shared.audibleToken = token
                shared.skipError = nil
                publishQueue(shared)
            }
            if let duration = snapshot.duration, let entry = shared.queue.entry(id: track.entry),
               entry.duration != duration || entry.durationEstimated != snapshot.frameCountIsEstimate
            {
                // A length learned while playing (an MP3 without a Xing/Info tag), or its estimate.
                shared.queue.setDuration(
                    duration, estimated: snapshot.frameCountIsEstimate, format: entry.format, missing: entry.missing,
                    for: entry.id)
                publishQueue(shared)
            }
            if snapshot.activity == .stopped && snapshot.reachedEnd && shared.endedToken != token {
                shared.endedToken = token
                let finished = track.entry
                if shared.queue.position(of: finished) != nil {
                    let next = shared.queue.successor(of: finished, .automatic)
                    _ = shared.queue.advance(from: finished, to: next)
                    startNext = next
                }
                publishQueue(shared)
            }
            prune(&shared, keeping: snapshot.lined + [token])
            releaseStreams(&shared, after: snapshot)
        }
        // Playing a stream (again, or from elsewhere in it): its next title's time.
        if snapshot.activity == .playing, let token = snapshot.token,
            let entry = shared.withLock({ $0.tracks[token].flatMap { $0.stream == nil ? nil : $0.entry } })
        {
            streamChanged(entry: entry, onlyIfHeard: true)
        }
        if let next = startNext {
            // The next entry was not lined up in time (or could not be): start it now.
            start(entry: next, position: 0, playing: true, skipping: true) { _ in }
        }
    }

    /// Ends the connections of URL tracks the engine no longer holds (played to their end,
    /// stopped, replaced): their buffers are freed now, not when the track is forgotten.
    /// Tokens after the engine's newest may be in flight: kept.
    private func releaseStreams(_ shared: inout Shared, after snapshot: PlaybackSnapshot) {
        let newest = (snapshot.lined + [snapshot.token ?? 0]).max() ?? 0
        let held = Set(snapshot.lined)
        for (token, track) in shared.tracks where track.stream != nil && token <= newest && !held.contains(token) {
            track.stream?.stop()
            shared.tracks[token]?.stream = nil
        }
    }

    /// Forgets tracks the engine no longer holds (keeping the newest, which may be in flight).
    private func prune(_ shared: inout Shared, keeping tokens: [Int]) {
        guard shared.tracks.count > tokens.count + 8 else { return }
        let keep = Set(tokens)
        let audible = shared.audibleToken
        let recent = shared.nextToken - 4
        shared.tracks = shared.tracks.filter { keep.contains($0.key) || $0.key == audible || $0.key >= recent }
        shared.linedUp = shared.linedUp.filter { shared.tracks[$0.key] != nil }
    }

    // MARK: Lining up

    /// On `work`: opens the entry that follows `token`'s and lines it up in the engine, unless
    /// it is already lined up. Entries that fail are skipped (with an error on the stream), as
    /// are those in `skipping` (URL entries that failed to open for this line-up). A URL entry
    /// is opened off `work` (`lineUpURL`), and lined up when it opened.
    func lineUp(after token: Int, skipping: Set<Int> = []) {
        guard let after = shared.withLock({ $0.tracks[token]?.entry }) else { return }
        for _ in 0..<3 {
            let wanted = shared.withLock { shared -> Int?? in
                guard shared.queue.position(of: after) != nil else { return .none }
                var next = shared.queue.successor(of: after, .automatic)
                var walked = 0
                while let failed = next, skipping.contains(failed), walked < shared.queue.length {
                    next = shared.queue.successor(of: failed, .automatic)
                    walked += 1
                }
                if let next, shared.linedUp[token] == next { return .none }
                if let next, shared.liningUp?.token == token, shared.liningUp?.entry == next { return .none }
                return .some(next)
            }
            guard case .some(let next) = wanted else { return }
            guard let next else {
                shared.withLock { $0.linedUp[token] = nil }
                engine.send(.lineUp(after: token, next: nil, { _ in }))
                return
            }
            let opened: OpenedEntry
            do throws(ReelError) {
                switch try openPlayable(from: next, including: true) {
                case .opened(let entry):
                    opened = entry
                    // A URL being opened for this line-up no longer follows: given up.
                    let stale = shared.withLock { shared -> URLOpening? in
                        guard shared.liningUp?.token == token else { return nil }
                        defer { shared.liningUp = nil }
                        return shared.liningUp?.opening
                    }
                    stale?.cancel()
                case .url(let id, let url):
                    lineUpURL(after: token, entry: id, url: url, skipping: skipping)
                    return
                }
            } catch {
                // Every entry failed: nothing follows; playback stops after this one.
                engine.send(.lineUp(after: token, next: nil, { _ in }))
                return
            }
            if send(opened, after: token, wanted: next) { return }
        }
    }

    /// Lines `opened` up after `token` if the entry after `token`'s is still `wanted` (or
    /// `opened` itself); false when the queue changed meanwhile. On `work`.
    func send(_ opened: OpenedEntry, after token: Int, wanted next: Int) -> Bool {
        // The queue may have changed while the file opened: line up only what still follows.
        let sent = shared.withLock { shared -> Int? in
            guard let after = shared.tracks[token]?.entry, shared.queue.position(of: after) != nil,
                  let still = shared.queue.successor(of: after, .automatic),
                  still == next || still == opened.id
            else { return nil }
            let nextToken = shared.newToken(for: opened.track)
            shared.linedUp[token] = opened.id
            return nextToken
        }
        guard let sent else { return false }
        let replayGain = replayGainScale(for: opened.track.replayGain)
        engine.send(.lineUp(after: token, next: TrackBox(opened.reader, token: sent, replayGain: replayGain), { _ in }))
        return true
    }

    /// On `work`, after a queue edit: where the engine's chain no longer follows the queue
    /// (the next entry removed or moved, random turned on), line up what the queue says now.
    func reconcileChain() {
        let lined = engine.snapshot.lined
        guard !lined.isEmpty else { return }
        let mismatch = shared.withLock { shared -> Int? in
            for (index, token) in lined.enumerated() {
                guard let entry = shared.tracks[token]?.entry, shared.queue.position(of: entry) != nil else {
                    return nil
                }
                let wanted = shared.queue.successor(of: entry, .automatic)
                let held = index + 1 < lined.count ? shared.tracks[lined[index + 1]]?.entry : shared.linedUp[token]
                if wanted != held {
                    shared.linedUp[token] = nil
                    return token
                }
            }
            return nil
        }
        if let token = mismatch { lineUp(after: token) }
    }
}
