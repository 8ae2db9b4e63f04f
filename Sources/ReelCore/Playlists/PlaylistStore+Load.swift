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
            let lines: ArraySlice<String>
            let additions: [Result<QueueAddition, ReelError>]
            do throws(ReelError) {
                let source = try self.source(name, locating: true)
                let all = source.uris
                guard start >= 0, start <= all.count, (end ?? all.count) >= start else {
                    throw ReelError(.outOfRange, "the range \(start):\(end.map(String.init) ?? "") is outside the playlist \(name) (0…\(all.count))")
                }
                let window = start..<min(end ?? all.count, all.count)
                // Indexed from 0, as the rest counts them.
                lines = ArraySlice(Array(all[window]))
                additions = self.additions(for: source, window)
            } catch {
                return reply(.failure(error))
            }
            var skipped: [(position: Int, uri: String, error: ReelError)] = []
            var queued: [QueueAddition] = []
            var positions: [Int] = []
            for (offset, addition) in additions.enumerated() {
                switch addition {
                case .success(let addition):
                    queued.append(addition)
                    positions.append(start + offset)
                case .failure(let error):
                    skipped.append((start + offset, lines[offset], error))
                }
            }
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
            let (skippedBefore, queuedPositions) = (skipped, positions)
            guard !queued.isEmpty else {
                return finish(.success(PlaylistLoadOutcome(entries: [], skipped: skipped)))
            }
            player.add(queued, skippable: { _ in true }, listing: listing, at: position, afterCurrent: false) { result in
                finish(result.map { outcome in
                    var all = skippedBefore
                    for (index, error) in outcome.skipped {
                        all.append((queuedPositions[index], lines[queuedPositions[index] - start], error))
                    }
                    return PlaylistLoadOutcome(entries: outcome.entries, skipped: all.sorted { $0.position < $1.position })
                })
            }
        }
    }

    /// What each entry of `window` of a playlist adds to the queue, or why it adds nothing.
    func additions(for source: Source, _ window: Range<Int>) -> [Result<QueueAddition, ReelError>] {
        let locations = source.locations
        // The whole playlist: its files as read (a playlist loaded again is not hashed again).
        let music = window == locations.indices ? source.music : PlaylistMusicLines(locations[window])
        switch source {
        case .stored: return additions(for: source.uris[window], locations: locations[window], music: music)
        case .folder: return additions(for: source.uris[window], locations: locations[window], music: music, indexedOnly: true)
        }
    }

    /// What each line adds to the queue, or why it adds nothing: the music folders' files from
    /// the index in one query per folder (no file opened), recordings from the tree. With
    /// `indexedOnly` (a playlist file of a music folder), a music folder path the index does
    /// not have names nothing (as MPD, which looks it up in its database); otherwise it is the
    /// file itself, checked when added. `music` is the music files of `locations` (made from
    /// them when nil); its line numbers are the indices of `locations`.
    func additions(
        for lines: ArraySlice<String>, locations: ArraySlice<PlaylistPaths.Location>, music: PlaylistMusicLines? = nil,
        indexedOnly: Bool = false
    ) -> [Result<QueueAddition, ReelError>] {
        let music = music ?? PlaylistMusicLines(locations)
        // Each file's addition made once: the lines that name it again share it.
        let tracks = indexedTracks(music.files).map { $0.map { QueueAddition.musicTracks([$0]) } }
        return locations.indices.map { index -> Result<QueueAddition, ReelError> in
            switch locations[index] {
            case .music(let root, let path):
                if let addition = tracks[music.fileOfLine[index - music.firstLine]] { return .success(addition) }
                if indexedOnly {
                    return .failure(ReelError(.notFound, "\(lines[index]) is not a file of the music folders"))
                }
                // Not indexed (yet): the file itself, checked when added.
                return .success(.file(PlaylistPaths.absolutePath(root: root, path: path)))
            case .recording(let treePath):
                do throws(ReelError) {
                    let item = try LibraryController.recordingOrFolder(fileTreePath: treePath, in: store)
                    guard item.kind == .recording else {
                        return .failure(ReelError(.notARecording, "\(lines[index]) is a folder, not a recording"))
                    }
                    return .success(.recordings([.id(item.id)]))
                } catch {
                    return .failure(ReelError(.notFound, "no recording at \(lines[index])"))
                }
            case .url(let url):
                return .success(.url(url))
            case .file(let path):
                return .success(.file(path))
            case .invalid(let why):
                return .failure(ReelError(.notFound, why))
            }
        }
    }

    /// The entries of these lines (indexed by position in the playlist), each with what it names
    /// now (`playlists.get`, MPD's `listplaylistinfo`), made in one pass after one lookup of the
    /// index.
    func entries(_ lines: ArraySlice<String>, locations: ArraySlice<PlaylistPaths.Location>) -> [PlaylistEntry] {
        let tracks = indexedTracks(locations)
        var entries: [PlaylistEntry] = []
        entries.reserveCapacity(lines.count)
        for position in lines.indices {
            let target: PlaylistEntry.Target
            switch locations[position] {
            case .music(let root, let path):
                target = tracks[root]?[path].map { .music($0) } ?? .missing
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
        return entries
    }

    /// The index's track of each of `files` (nil: not indexed), in one query per music folder.
    private func indexedTracks(_ files: [(root: String, path: String)]) -> [MusicTrack?] {
        var wanted: [String: [String]] = [:]
        for file in files { wanted[file.root, default: []].append(file.path) }
        var found: [String: [String: MusicTrack]] = [:]
        let index = MusicIndex(store: store)
        for (root, paths) in wanted {
            found[root] = (try? index.tracks(root: root, relativePaths: paths)) ?? [:]
        }
        return files.map { found[$0.root]?[$0.path] }
    }

    /// The index's files present among the music locations, by root and path.
    private func indexedTracks(_ locations: ArraySlice<PlaylistPaths.Location>) -> [String: [String: MusicTrack]] {
        var wanted: [String: [String]] = [:]
        for case .music(let root, let path) in locations { wanted[root, default: []].append(path) }
        var found: [String: [String: MusicTrack]] = [:]
        let index = MusicIndex(store: store)
        for (root, paths) in wanted {
            found[root] = (try? index.tracks(root: root, relativePaths: paths)) ?? [:]
        }
        return found
    }
}

/// The files of the music folders that a playlist's lines name, each once, and the file each
/// line names: a playlist that names 200 files 50 times is looked up in the index as 200 files,
/// and its 10,000 lines find theirs by number, not by hashing their paths on every load.
struct PlaylistMusicLines: Sendable {
    /// Each file once, in the order of the first line naming it.
    var files: [(root: String, path: String)] = []
    /// For each line from `firstLine`: its file's index in `files`, or -1 (not a music file).
    var fileOfLine: [Int] = []
    /// The index of the first line (the locations' start).
    var firstLine = 0

    init(_ locations: ArraySlice<PlaylistPaths.Location>) {
        firstLine = locations.startIndex
        fileOfLine.reserveCapacity(locations.count)
        var indexOfFile: [String: [String: Int]] = [:]
        for location in locations {
            guard case .music(let root, let path) = location else {
                fileOfLine.append(-1)
                continue
            }
            if let known = indexOfFile[root]?[path] {
                fileOfLine.append(known)
            } else {
                indexOfFile[root, default: [:]][path] = files.count
                fileOfLine.append(files.count)
                files.append((root, path))
            }
        }
    }
}
