// Loading a stored playlist into the queue, and what its lines name now.

internal import ReelLibrary
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

extension PlaylistStore {
    /// Adds the entries `start..<end` of `name` (all when nil) to the queue at `position` (nil
    /// appends) as one change (`PlayerController.add(_:skippable:…)`: one queue version). An
    /// entry that names nothing now — a file or recording gone, a line Reel cannot play — is
    /// skipped, named in the outcome and the log, and stays in the file. When every entry is
    /// skipped (or the range is empty) the queue does not change. `name` may also be the URI of
    /// a playlist file in a music folder (`source(_:)`), when no stored playlist has that name.
    /// Without `listing` the outcome's `entries` is empty: no entry value is made for a reply
    /// that does not show them (MPD's `load` answers OK).
    public func load(
        _ name: String, start: Int = 0, end: Int? = nil, at position: Int? = nil, listing: Bool = true,
        reply: @escaping Reply<PlaylistLoadOutcome>
    ) {
        queue.async { [self] in
            let lines: [String]
            let planned: PlaylistAdditions
            do throws(ReelError) {
                let source = try self.source(name, locating: true)
                lines = source.uris
                guard start >= 0, start <= lines.count, (end ?? lines.count) >= start else {
                    throw ReelError(.outOfRange, "the range \(start):\(end.map(String.init) ?? "") is outside the playlist \(name) (0…\(lines.count))")
                }
                planned = self.additions(for: source, start..<min(end ?? lines.count, lines.count), making: true)
                if let error = planned.error { throw error }
            } catch {
                return reply(.failure(error))
            }
            let skipped = planned.failures.map { (position: $0.line, uri: lines[$0.line], error: $0.error) }
            let finish: @Sendable (Result<PlaylistLoadOutcome, ReelError>) -> Void = { [logger] result in
                if case .success(let outcome) = result, !outcome.skipped.isEmpty {
                    logger.notice(
                        "skipped playlist entries that name nothing playable",
                        metadata: [
                            "playlist": "\(name)", "skipped": "\(outcome.skipped.count)",
                            "first": "\(outcome.skipped[0].uri): \(outcome.skipped[0].error.message)",
                        ])
                }
                reply(result)
            }
            guard !planned.run.order.isEmpty else {
                return finish(.success(PlaylistLoadOutcome(entries: [], skipped: skipped)))
            }
            let queuedLines = planned.lines
            player.add(planned.run, skippable: { _ in true }, listing: listing, at: position, afterCurrent: false) { result in
                finish(result.map { outcome in
                    guard !outcome.skipped.isEmpty else { return PlaylistLoadOutcome(entries: outcome.entries, skipped: skipped) }
                    var all = skipped
                    for (index, error) in outcome.skipped {
                        all.append((queuedLines[index], lines[queuedLines[index]], error))
                    }
                    return PlaylistLoadOutcome(entries: outcome.entries, skipped: all.sorted { $0.position < $1.position })
                })
            }
        }
    }

    /// What each entry of `window` of a playlist adds to the queue, or why it adds nothing
    /// (with `making`, the indexed files' entries are made here: see
    /// `additions(for:locations:music:indexedOnly:made:)`). On `queue`.
    ///
    /// The entries made of a whole stored playlist are kept with it as read (`lastRead`): loaded
    /// again while its file has not changed and nothing was written to the library since
    /// (`indexGeneration`: no scan, tag or folder change or recording), its files
    /// are not looked up again. Not with media roots, whose check (symlinks followed) is made
    /// at every load.
    func additions(for source: Source, _ window: Range<Int>, making: Bool = false) -> PlaylistAdditions {
        let locations = source.locations
        let whole = window == locations.indices
        // The whole playlist: its files as read (a playlist loaded again is not hashed again).
        let music = whole ? source.music : PlaylistMusicLines(locations[window])
        var made: MadeEntries?
        if making {
            var kept: ReadPlaylist?
            if case .stored(let read) = source, whole, player.mediaRoots.roots.isEmpty { kept = read }
            if let reused = kept?.made, reused.writes == indexGeneration {
                made = reused
            } else {
                made = madeEntries(music.files)
                // Not kept when a lookup failed: the next load looks up again.
                if made?.complete == true, let kept, lastRead?.name == kept.name, lastRead?.stamp == kept.stamp {
                    lastRead?.made = made
                }
            }
        }
        switch source {
        case .stored: return additions(for: source.uris[window], locations: locations[window], music: music, made: made)
        case .folder:
            return additions(
                for: source.uris[window], locations: locations[window], music: music, indexedOnly: true, made: made)
        }
    }

    /// The entries of the indexed ones of `files` (`PlaylistMusicLines.files`), made from the
    /// index's rows (`PlayerController.musicFileEntry`), and why a file's could not be made.
    func madeEntries(_ files: [(root: String, path: String)]) -> MadeEntries {
        var made = MadeEntries(ofFile: [Int](repeating: -1, count: files.count), writes: indexGeneration)
        made.entries.reserveCapacity(files.count)
        let player = self.player
        made.complete = indexedQueueFiles(files) { number, file in
            let (root, path) = files[number]
            do throws(ReelError) {
                let entry = try player.musicFileEntry(root: root, relativePath: path, file)
                made.ofFile[number] = made.entries.count
                made.entries.append(entry)
            } catch {
                made.unmade[number] = error
            }
        }
        return made
    }

    /// What each line adds to the queue, or why it adds nothing: the music folders' files from
    /// the index in one query per folder (no file opened), recordings from the tree. With
    /// `indexedOnly` (a playlist file of a music folder), a music folder path the index does
    /// not have names nothing (as MPD, which looks it up in its database); otherwise it is the
    /// file itself, checked when added. `music` is the music files of `locations` (made from
    /// them when nil); its line numbers are the indices of `locations`. Each music file is one
    /// addition, however many lines name it.
    ///
    /// With `made` (`load`: `madeEntries(_:)` of `music.files`), an indexed file's entry is
    /// the one made from the index's row (no track read whole, no addition per file), in
    /// `run.made`; a file whose entry could not be made is skipped at each line naming it when
    /// the reason is one an add skips (`PlayerController.skippableReasons`), else `error` says
    /// why the whole load fails. Without it (`play`, `perLine`), each is a `musicTracks`
    /// addition.
    func additions(
        for lines: ArraySlice<String>, locations: ArraySlice<PlaylistPaths.Location>, music: PlaylistMusicLines? = nil,
        indexedOnly: Bool = false, made: MadeEntries? = nil
    ) -> PlaylistAdditions {
        let music = music ?? PlaylistMusicLines(locations)
        var planned = PlaylistAdditions()
        // Each music file's track (without `made`), or its entry's index in `run.made` and why
        // one could not be made (with it).
        let making = made != nil
        var tracks: [MusicTrack?] = []
        var madeOfFile: [Int] = []
        var unmade: [Int: ReelError] = [:]
        if let made {
            planned.run.made = made.entries
            madeOfFile = made.ofFile
            unmade = made.unmade
        } else {
            tracks = indexedTracks(music.files).tracks
        }
        planned.run.order.reserveCapacity(locations.count)
        planned.lines.reserveCapacity(locations.count)
        // Each music file's addition, by its index in `music.files`, once a line named it.
        var additionOfFile = [Int](repeating: -1, count: music.files.count)
        for index in locations.indices {
            // A music file's line by its number (its location is not even looked at).
            let file = music.fileOfLine[index - music.firstLine]
            if file >= 0 {
                if additionOfFile[file] < 0 {
                    if making, madeOfFile[file] >= 0 {
                        additionOfFile[file] = madeOfFile[file]
                    } else if let error = unmade[file] {
                        guard PlayerController.skippableReasons.contains(error.reason) else {
                            planned.error = error
                            return planned
                        }
                        planned.failures.append((index, error))
                        continue
                    } else if !making, let track = tracks[file] {
                        additionOfFile[file] = planned.add(.musicTracks([track]))
                    } else if indexedOnly {
                        planned.failures.append((index, ReelError(.notFound, "\(lines[index]) is not a file of the music folders")))
                        continue
                    } else {
                        // Not indexed (yet): the file itself, checked when added.
                        let (root, path) = music.files[file]
                        additionOfFile[file] = planned.add(.file(PlaylistPaths.absolutePath(root: root, path: path)))
                    }
                }
                planned.run.order.append(additionOfFile[file])
                planned.lines.append(index)
                continue
            }
            switch addition(of: locations[index], line: lines[index]) {
            case .success(let addition):
                planned.run.order.append(planned.add(addition))
                planned.lines.append(index)
            case .failure(let error):
                planned.failures.append((index, error))
            }
        }
        return planned
    }

    /// What a line that is not a music folder's file adds, or why it adds nothing.
    private func addition(of location: PlaylistPaths.Location, line: String) -> Result<QueueAddition, ReelError> {
        switch location {
        case .music(let root, let path):
            return .success(.file(PlaylistPaths.absolutePath(root: root, path: path)))
        case .recording(let treePath):
            do throws(ReelError) {
                let item = try LibraryController.recordingOrFolder(fileTreePath: treePath, in: store)
                guard item.kind == .recording else {
                    return .failure(ReelError(.notARecording, "\(line) is a folder, not a recording"))
                }
                return .success(.recordings([.id(item.id)]))
            } catch {
                return .failure(ReelError(.notFound, "no recording at \(line)"))
            }
        case .url(let url):
            return .success(.url(url))
        case .file(let path):
            return .success(.file(path))
        case .invalid(let why):
            return .failure(ReelError(.notFound, why))
        }
    }

    /// The entries of these lines (indexed by position in the playlist), each with what it names
    /// now (`playlists.get`, MPD's `listplaylistinfo`), made in one pass after one lookup of the
    /// index. `music` is the music files of `locations` (made from them when nil), as for
    /// `additions(for:locations:music:indexedOnly:)`; `targets`, when given, what each of
    /// `music.files` names now (the index is not read). Returns the entries and what each of
    /// `music.files` names (nil when a lookup failed: not to be kept).
    func entries(
        _ lines: ArraySlice<String>, locations: ArraySlice<PlaylistPaths.Location>, music: PlaylistMusicLines? = nil,
        targets known: [PlaylistEntry.Target]? = nil
    ) -> (entries: [PlaylistEntry], musicTargets: [PlaylistEntry.Target]?) {
        let music = music ?? PlaylistMusicLines(locations)
        // Each file's target once: the lines naming a file share it.
        var complete = true
        let targets = known ?? {
            let (targets, found) = indexedTargets(music.files)
            complete = found
            return targets
        }()
        var entries: [PlaylistEntry] = []
        entries.reserveCapacity(lines.count)
        for position in lines.indices {
            let target: PlaylistEntry.Target
            switch locations[position] {
            case .music:
                target = targets[music.fileOfLine[position - music.firstLine]]
            case .recording(let treePath):
                if let item = try? LibraryController.recordingOrFolder(fileTreePath: treePath, in: store), item.kind == .recording {
                    target = .recording(item)
                } else {
                    target = .missing
                }
            case .url(let url):
                target = PlayerController.isStreamURL(url) ? .url(url) : .missing
            case .file(let path):
                target = access(path, R_OK) == 0 ? .file(path) : .missing
            case .invalid:
                target = .missing
            }
            entries.append(PlaylistEntry(position: position, uri: lines[position], target: target))
        }
        return (entries, complete ? targets : nil)
    }

    /// Calls `body` with each of `files` the index has (by its index in `files`) and what an
    /// entry takes of it, in one query per music folder (`MusicIndex.queueFiles`).
    /// (`files` are distinct: `PlaylistMusicLines.files`.) Returns whether every lookup was
    /// made (`byMusicFolder`).
    private func indexedQueueFiles(
        _ files: [(root: String, path: String)], _ body: (_ number: Int, _ file: MusicQueueFile) -> Void
    ) -> Bool {
        let index = MusicIndex(store: store)
        return byMusicFolder(files) { root, paths, numbers throws(ReelError) in
            try index.queueFiles(root: root, distinctPaths: paths) { found, file in body(numbers?[found] ?? found, file) }
        }
    }

    /// The index's track of each of `files` (nil: not indexed), in one query per music folder.
    /// (`files` are distinct: `PlaylistMusicLines.files`.) (`complete`: every lookup was made;
    /// see `byMusicFolder`.)
    private func indexedTracks(_ files: [(root: String, path: String)]) -> (tracks: [MusicTrack?], complete: Bool) {
        let index = MusicIndex(store: store)
        // Made at the first folder of several: one folder's tracks are the answer as they are
        // (no array of every file made in vain).
        var found: [MusicTrack?] = []
        let complete = byMusicFolder(files) { root, paths, numbers throws(ReelError) in
            let tracks = try index.tracks(root: root, distinctPaths: paths)
            guard let numbers else {
                found = tracks
                return
            }
            if found.isEmpty { found = [MusicTrack?](repeating: nil, count: files.count) }
            for (number, track) in zip(numbers, tracks) { found[number] = track }
        }
        // (No lookup made, or none that could be.)
        if found.count != files.count { found = [MusicTrack?](repeating: nil, count: files.count) }
        return (found, complete)
    }

    /// What each of `files` names now: its index track (boxed), or `.missing` when the index
    /// does not have it; in one query per music folder. Each track goes straight into its box
    /// (`MusicIndex.forEachTrack`), without an array of every track made first: for 10,000
    /// files that array is 2.4 MB of fresh pages, copied out again. (`files` are distinct:
    /// `PlaylistMusicLines.files`.) (`complete`: every lookup was made; see `byMusicFolder`:
    /// the files of a failed one are all `.missing`.)
    private func indexedTargets(_ files: [(root: String, path: String)]) -> (targets: [PlaylistEntry.Target], complete: Bool) {
        let index = MusicIndex(store: store)
        var targets = [PlaylistEntry.Target](repeating: .missing, count: files.count)
        let complete = byMusicFolder(files) { root, paths, numbers throws(ReelError) in
            do throws(ReelError) {
                try index.forEachTrack(root: root, distinctPaths: paths) { found, track in
                    targets[numbers?[found] ?? found] = .music(track)
                }
            } catch {
                for found in paths.indices { targets[numbers?[found] ?? found] = .missing }
                throw error
            }
        }
        return (targets, complete)
    }

    /// Runs `lookUp` once per music folder that `files` name, with its files' paths and each
    /// one's index in `files` (nil: all of `files` in order, the common playlist of one music
    /// folder, with nothing regrouped). Returns whether every lookup was made: a failed one is
    /// logged, and its files are taken as not indexed this time.
    private func byMusicFolder(
        _ files: [(root: String, path: String)],
        _ lookUp: (_ root: String, _ paths: [String], _ numbers: [Int]?) throws(ReelError) -> Void
    ) -> Bool {
        var folders: [(root: String, numbers: [Int]?)] = []
        if let root = files.first?.root, files.allSatisfy({ $0.root == root }) {
            folders = [(root, nil)]
        } else {
            var wanted: [String: [Int]] = [:]
            for (number, file) in files.enumerated() { wanted[file.root, default: []].append(number) }
            folders = wanted.map { ($0.key, $0.value) }
        }
        var complete = true
        for (root, numbers) in folders {
            let paths = numbers.map { $0.map { files[$0].path } } ?? files.map(\.path)
            do throws(ReelError) {
                try lookUp(root, paths, numbers)
            } catch {
                logger.warning(
                    "could not look \(paths.count) playlist files up in the music index; taken as not indexed this time",
                    metadata: ["root": "\(root)", "error": "\(error)"])
                complete = false
            }
        }
        return complete
    }
}

/// The queue entries of a playlist's indexed files (`PlaylistStore.madeEntries(_:)`), by file
/// of its `PlaylistMusicLines.files`.
struct MadeEntries: Sendable {
    var entries: [NewQueueEntry] = []
    /// For each file: its entry's index in `entries`, or -1 (not indexed, or not made).
    var ofFile: [Int]
    /// Why a file's entry could not be made, by file.
    var unmade: [Int: ReelError] = [:]
    /// `PlaylistStore.indexGeneration` before the index was read for them.
    var writes: Int
    /// Every lookup was made (else not to be kept).
    var complete = true
}

/// What a playlist's lines add to the queue: each distinct addition once and the order of the
/// lines that add something (`run`), the line each of those is (`lines`, indexed as the
/// playlist's lines), and the lines that add nothing with why (`failures`, in line order).
struct PlaylistAdditions {
    /// (Each music file is one addition: `distinctTracks`.)
    var run = QueueAdditionRun(additions: [], order: [], distinctTracks: true)
    var lines: [Int] = []
    var failures: [(line: Int, error: ReelError)] = []
    /// Why nothing is to be added (an indexed file's entry refused for a reason an add does
    /// not skip: `additions(for:locations:music:indexedOnly:making:)`).
    var error: ReelError?

    /// Appends `addition` to the run's distinct additions; its index in the run's order (after
    /// the entries made, which are all made first).
    mutating func add(_ addition: QueueAddition) -> Int {
        run.additions.append(addition)
        return run.made.count + run.additions.count - 1
    }

    /// Each line's outcome, in line order (for callers that take one addition per line; made
    /// without entries, so every index of the run's order is an addition's).
    var perLine: [Result<QueueAddition, ReelError>] {
        var outcomes: [(line: Int, outcome: Result<QueueAddition, ReelError>)] = []
        outcomes.reserveCapacity(lines.count + failures.count)
        for (index, line) in lines.enumerated() { outcomes.append((line, .success(run.additions[run.order[index]]))) }
        for failure in failures { outcomes.append((failure.line, .failure(failure.error))) }
        return outcomes.sorted { $0.line < $1.line }.map(\.outcome)
    }
}
