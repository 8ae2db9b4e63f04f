// add, queue, del, move, clear, next, prev, and the queue's options (repeat, random, single,
// consume). Positions on the command line count from 1, as mpc's do; the daemon counts from 0
// and names entries by id, so a position is looked up with `queue.list` before a request.

import ArgumentParser
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: Reading the queue

/// `queue.list`, decoded; long queues are read a page at a time.
enum QueueReader {
    /// Entries per `queue.list` request (well under the client's 1 MiB line limit).
    static let pageSize = 500

    /// The queue without its entries.
    static func summary(_ client: DaemonClient) throws(CLIError) -> QueueSummary {
        try decodeSummary(try client.call("queue.list", ["count": 0]))
    }

    /// The entry at 1-based `position`, and the queue's summary; exit 1 naming the queue's
    /// length when there is no such entry.
    static func entry(at position: Int, _ client: DaemonClient) throws(CLIError) -> (entry: QueueEntry, summary: QueueSummary) {
        let page = try self.page(client, start: position - 1, count: 1)
        guard let entry = page.entries.first else { throw noEntry(at: position, length: page.summary.length) }
        return (entry, page.summary)
    }

    /// `count` entries from 0-based `start` (all the rest when nil), and the queue's summary;
    /// the pages are read again if the queue changes between them.
    static func entries(_ client: DaemonClient, start: Int = 0, count: Int? = nil) throws(CLIError)
        -> (summary: QueueSummary, entries: [QueueEntry], reply: JSONObject)
    {
        var attempt = 0
        while true {
            attempt += 1
            var first: (summary: QueueSummary, reply: JSONObject)?
            var entries: [QueueEntry] = []
            var raw: [JSONValue] = []
            var changed = false
            repeat {
                let wanted = count.map { min($0 - entries.count, pageSize) } ?? pageSize
                let page = try self.page(client, start: start + entries.count, count: wanted)
                if let first, first.summary.version != page.summary.version {
                    changed = true
                    break
                }
                if first == nil { first = (page.summary, page.reply) }
                entries += page.entries
                raw += page.raw
                if page.entries.count < wanted { break }
            } while count.map({ entries.count < $0 }) ?? true
            guard let first else { throw CLIError.unexpectedReply("queue.list", "no reply") }
            if changed && attempt < 5 { continue }
            var reply = first.reply
            reply["entries"] = .array(raw)
            return (first.summary, entries, reply)
        }
    }

    /// The entry `id` (its `position` is 0-based), and the queue's summary; nil when it is not
    /// in the queue. `hint` (a 1-based position) is looked at first.
    static func entry(id: Int, hint: Int?, _ client: DaemonClient) throws(CLIError) -> (entry: QueueEntry?, summary: QueueSummary) {
        if let hint, hint >= 1 {
            let page = try self.page(client, start: hint - 1, count: 1)
            if let entry = page.entries.first, entry.id == id { return (entry, page.summary) }
        }
        let all = try entries(client)
        return (all.entries.first { $0.id == id }, all.summary)
    }

    /// One `queue.list` request.
    private static func page(_ client: DaemonClient, start: Int, count: Int) throws(CLIError)
        -> (summary: QueueSummary, entries: [QueueEntry], raw: [JSONValue], reply: JSONObject)
    {
        let result = try client.call("queue.list", ["start": .int(Int64(start)), "count": .int(Int64(count))])
        let summary = try decodeSummary(result)
        guard let reply = result.objectValue, let raw = result["entries"]?.arrayValue else {
            throw CLIError.unexpectedReply("queue.list", "\"entries\" is missing or not an array")
        }
        var entries: [QueueEntry] = []
        entries.reserveCapacity(raw.count)
        for value in raw {
            do {
                entries.append(try QueueEntry(json: value))
            } catch {
                throw CLIError.unexpectedReply("queue.list", error)
            }
        }
        return (summary, entries, raw, reply)
    }

    static func decodeSummary(_ result: JSONValue, from method: String = "queue.list") throws(CLIError) -> QueueSummary {
        do {
            return try QueueSummary(json: result)
        } catch {
            throw CLIError.unexpectedReply(method, error)
        }
    }

    /// `no entry at position 9 (the queue has 3)`, exit 1.
    static func noEntry(at position: Int, length: Int) -> CLIError {
        CLIError(
            exitCode: CLIError.refusedExitCode,
            message: "no entry at position \(position) (\(length == 0 ? "the queue is empty" : "the queue has \(length)"))",
            reason: "out_of_range")
    }
}

/// A 1-based queue position given on the command line: a whole number from 1.
func parseQueuePosition(_ text: String) throws(ValidationError) -> Int {
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text) else {
        throw ValidationError("'\(text)' is not a queue position: give a number from 1 (as `reel queue` shows)")
    }
    guard value >= 1 else { throw ValidationError("queue positions start at 1, not \(text)") }
    return value
}

// MARK: Output

extension Output {
    /// What the queue shows for an entry: a file's name, a recording's tree path.
    static func entryName(_ source: PlayerSource) -> String {
        switch source {
        case .file(let path): path.split(separator: "/").last.map(String.init) ?? path
        case .item(_, let path, _): path
        case .url(let url, let name, _): name ?? url
        }
    }

    /// The rows of `reel queue`: `>` on the current entry, the 1-based position, the name and
    /// the duration (m:ss, `~m:ss` for an estimate, `?` when unknown), columns aligned; a missing
    /// file says so.
    /// A music folder file's `Artist - Title` (or its title) as indexed; else the file's name or
    /// the recording's tree path.
    static func entryName(_ entry: QueueEntry) -> String {
        guard let title = entry.tags?.title else { return entryName(entry.source) }
        guard let artist = entry.tags?.artist else { return title }
        return "\(artist) - \(title)"
    }

    static func queueTable(_ entries: [QueueEntry], current: Int?) -> [String] {
        let positionWidth = String(entries.last.map { $0.position + 1 } ?? 1).count
        let names = entries.map(entryName)
        let nameWidth = names.map(\.count).max() ?? 0
        let durations = entries.map { entry in
            entry.duration.map { length($0, estimated: entry.durationEstimated) } ?? "?"
        }
        let durationWidth = durations.map(\.count).max() ?? 0
        return entries.indices.map { index in
            let entry = entries[index]
            let marker = entry.id == current ? ">" : " "
            let number = String(entry.position + 1)
            let position = String(repeating: " ", count: max(positionWidth - number.count, 0)) + number
            let duration = String(repeating: " ", count: durationWidth - durations[index].count) + durations[index]
            var row = "\(marker) \(position)  \(names[index].padding(to: nameWidth))  \(duration)"
            if entry.missing { row += "  (missing)" }
            return row
        }
    }

    /// `repeat: off  random: on  single: oneshot  consume: off`.
    static func optionsLine(_ options: QueueOptions) -> String {
        func word(_ on: Bool) -> String { on ? "on" : "off" }
        return "repeat: \(word(options.repeats))  random: \(word(options.random))  single: \(options.single.rawValue)  consume: \(word(options.consume))"
    }

    /// `3 entries (1:30)`, `1 entry (0:30)`, `0 entries`; the total leaves out unknown durations,
    /// and is `~1:30` when it counts an estimate.
    static func queueLength(_ length: Int, total: Double?, estimated: Bool = false) -> String {
        let count = "\(length) \(length == 1 ? "entry" : "entries")"
        guard let total, length > 0 else { return count }
        return "\(count) (\(Output.length(total, estimated: estimated)))"
    }
}

// MARK: add

/// What one argument of `reel add` stands for.
enum AddArgument: Equatable {
    /// A local file, absolute.
    case file(String)
    /// A local directory (absolute), the audio files found in it, in the order to add them, and
    /// the files in it that were left out, each with why.
    case directory(String, files: [String], skipped: [SkippedFile])
    /// A recording or folder of the library.
    case treePath(String)
    /// A URL (`queue.add {url}`).
    case url(String)

    /// A file of a directory that `reel add` leaves out, and why.
    struct SkippedFile: Equatable {
        var path: String
        var reason: String
    }

    /// As `reel play` reads its argument: an existing local path is that file or directory; else
    /// one starting with `/` is a tree path; else an error naming the absolute path looked at.
    /// A directory's files are those whose suffix (any case) is one of `suffixes`: what the
    /// daemon's decoders take (`daemon.info`'s `decoders`).
    static func resolve(_ argument: String, suffixes: Set<String>) throws(CLIError) -> AddArgument {
        if PlayArgument.isURL(argument) { return .url(argument) }
        let path = absolutePath(argument)
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { return .file(path) }
            let directory = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
            var visited: Set<[UInt64]> = []
            var found = Found()
            try collectAudioFiles(in: directory, suffixes: suffixes, into: &found, visited: &visited)
            guard !found.files.isEmpty else {
                throw CLIError(
                    exitCode: CLIError.refusedExitCode,
                    message: "no audio files in \(directory) (looked for \(suffixes.sorted().joined(separator: ", ")), in subdirectories too)"
                        + (found.skipped.isEmpty ? "" : "; \(found.skipped.count) other \(found.skipped.count == 1 ? "file" : "files") left out"))
            }
            return .directory(directory, files: found.files, skipped: found.skipped)
        } else if errno != ENOENT && errno != ENOTDIR {
            // It may exist but cannot be looked at from here (EACCES): let the daemon say.
            return .file(path)
        }
        if argument.hasPrefix("/") { return .treePath(argument) }
        throw CLIError(
            exitCode: CLIError.refusedExitCode,
            message: "no file or directory at \(path) (the library's recordings and folders are given by their tree paths, starting with '/')")
    }

    /// What reading a directory found.
    private struct Found {
        var files: [String] = []
        var skipped: [SkippedFile] = []
    }

    /// A directory's audio files by name, then each subdirectory's the same way (the order the
    /// daemon adds a library folder in); every other regular file is noted as skipped. Hidden
    /// entries are skipped silently; a directory reached twice through symbolic links is read once.
    private static func collectAudioFiles(
        in directory: String, suffixes: Set<String>, into found: inout Found, visited: inout Set<[UInt64]>
    ) throws(CLIError) {
        var info = stat()
        guard stat(directory, &info) == 0 else { return }
        guard visited.insert([UInt64(info.st_dev), UInt64(info.st_ino)]).inserted else { return }
        guard let handle = opendir(directory) else {
            throw CLIError(
                exitCode: CLIError.refusedExitCode,
                message: "cannot read the directory \(directory): \(String(cString: strerror(errno)))")
        }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { buffer in
                String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        closedir(handle)
        names.sort()
        var subdirectories: [String] = []
        for name in names {
            let path = directory == "/" ? "/" + name : directory + "/" + name
            guard stat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                subdirectories.append(path)
            case S_IFREG:
                let suffix = name.lastIndex(of: ".").map { String(name[name.index(after: $0)...]).lowercased() } ?? ""
                if suffixes.contains(suffix) {
                    found.files.append(path)
                } else {
                    let reason = suffix.isEmpty ? "no suffix to tell its format by" : "reeld has no decoder for .\(suffix) files"
                    found.skipped.append(SkippedFile(path: path, reason: reason))
                }
            default:
                continue
            }
        }
        for subdirectory in subdirectories {
            try collectAudioFiles(in: subdirectory, suffixes: suffixes, into: &found, visited: &visited)
        }
    }
}

struct AddCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add files, directories or recordings to the queue.",
        discussion: """
            Each ARG is read as `reel play` reads it: an existing local file is added as a file \
            (a relative name is taken from the current directory); an existing local directory \
            adds its audio files (by suffix: those the daemon's decoders take, as `reel info` \
            lists them) by name, then those of each subdirectory the same way, recursively, as \
            mpc does, and names every other file it leaves out, with why; otherwise an ARG starting with '/' is a recording or folder of the library \
            (a folder adds its recordings, subfolders included). Every ARG is checked before \
            anything is added. Entries go at the end of the queue, or with --next right after \
            the current entry, in the order given (the first given plays first); each ARG (a \
            directory too) is one change of the queue. A file in a directory that the daemon \
            cannot play is skipped with a warning (exit 1 at the end); any other refusal stops \
            there, after saying what was added.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Add right after the current entry instead of at the end.")
    var next = false

    @Option(help: "Add an album of the music folders (its tracks in disc and track order).")
    var album: String?

    @Option(name: .customLong("album-artist"), help: "With --album: the album of this artist (AlbumArtist, else Artist).")
    var albumArtist: String?

    @Argument(help: ArgumentHelp("Local files or directories, or tree paths (/Folder/Name).", valueName: "arg"))
    var arguments: [String] = []

    func validate() throws {
        if album != nil {
            if !arguments.isEmpty { throw ValidationError("give --album or files, not both") }
            return
        }
        if albumArtist != nil { throw ValidationError("--album-artist goes with --album") }
        if arguments.isEmpty { throw ValidationError("give something to add: a file, a directory, a tree path or --album NAME") }
        if arguments.contains(where: \.isEmpty) { throw ValidationError("an argument is empty") }
    }

    /// `reel add --album NAME [--album-artist A] [--next]`: one `queue.add` of the album.
    private func addAlbum(_ album: String) throws {
        let client = try connection.connect()
        var params: JSONObject = ["album": .string(album)]
        if let albumArtist { params["albumArtist"] = .string(albumArtist) }
        if next { params["next"] = true }
        let result = try client.call("queue.add", params)
        let count = result["entries"]?.arrayValue?.count ?? 0
        Output.line("added \(count) \(count == 1 ? "track" : "tracks") of \(album)")
    }

    /// Each argument is one `queue.add` (`sources`: a directory's files all in one): one change
    /// of the queue per argument (one version, one `queue.changed`), all or nothing, but for the
    /// files found in a directory that the daemon cannot play, which it skips and names
    /// (`skippable`: the daemon decides which refusals skip a file). A
    /// refusal stops there, after saying what the arguments before it added.
    func run() throws {
        if let album { return try addAlbum(album) }
        let client = try connection.connect()
        let suffixes = try Self.decoderSuffixes(client)
        var resolved: [AddArgument] = []
        for argument in arguments { resolved.append(try AddArgument.resolve(argument, suffixes: suffixes)) }
        var requests: [(argument: Int, sources: [JSONValue])] = []
        for (index, addition) in resolved.enumerated() {
            switch addition {
            case .file(let path):
                requests.append((index, [["file": .string(path)]]))
            case .directory(_, let files, let skipped):
                Self.report(skipped)
                requests.append((index, files.map { ["file": .string($0), "skippable": true] }))
            case .treePath(let path):
                requests.append((index, [["path": .string(path)]]))
            case .url(let url):
                requests.append((index, [["url": .string(url)]]))
            }
        }

        // "next: true" puts an argument's entries right after the current one, in order, so
        // adding the last argument first leaves them all in the order given. With no current
        // entry the daemon appends instead, so they are then added in order.
        let afterCurrent = try next && QueueReader.summary(client).current != nil
        if afterCurrent { requests.reverse() }

        var added = [[QueueEntry]](repeating: [], count: resolved.count)
        var skipped = 0
        var failure: CLIError?
        for request in requests {
            var params: JSONObject = ["sources": .array(request.sources)]
            if afterCurrent { params["next"] = true }
            do throws(CLIError) {
                let result = try client.call("queue.add", params)
                guard let values = result["entries"]?.arrayValue else {
                    throw CLIError.unexpectedReply("queue.add", "\"entries\" is missing or not an array")
                }
                for value in values {
                    do {
                        added[request.argument].append(try QueueEntry(json: value))
                    } catch {
                        throw CLIError.unexpectedReply("queue.add", error)
                    }
                }
                for value in result["skipped"]?.arrayValue ?? [] {
                    guard let index = value["index"]?.intValue, request.sources.indices.contains(index) else { continue }
                    let file = request.sources[index]["file"]?.stringValue ?? "?"
                    Output.error("reel: skipped \(file): \(value["message"]?.stringValue ?? "?")")
                    skipped += 1
                }
            } catch {
                let path = request.sources.first?["path"]?.stringValue
                failure = error.namingFileOrItem(path)
                break
            }
        }

        for (index, addition) in resolved.enumerated() where !added[index].isEmpty {
            Output.line(Self.describe(addition, added[index]))
        }
        if let failure { throw failure }
        if skipped > 0 {
            throw CLIError(
                exitCode: CLIError.refusedExitCode,
                message: "\(skipped) \(skipped == 1 ? "file was" : "files were") not added")
        }
    }

    /// The suffixes of the daemon's decoders (`daemon.info`'s `decoders`); from its `formats`
    /// when it is older and lists no decoders.
    static func decoderSuffixes(_ client: DaemonClient) throws(CLIError) -> Set<String> {
        let result = try client.call("daemon.info")
        let info: DaemonInfo
        do {
            info = try DaemonInfo(json: result)
        } catch {
            throw CLIError.unexpectedReply("daemon.info", error)
        }
        if !info.decoders.isEmpty { return Set(info.decoders.flatMap(\.suffixes).map { $0.lowercased() }) }
        return Set(info.formats.map { $0 == "vorbis" ? "ogg" : $0 })
    }

    /// Tells on stderr which files of a directory were left out and why: each by name, at most
    /// `reportLimit` of them, then how many more.
    static func report(_ skipped: [AddArgument.SkippedFile]) {
        for file in skipped.prefix(reportLimit) {
            Output.error("reel: skipped \(file.path): \(file.reason)")
        }
        if skipped.count > reportLimit {
            Output.error("reel: and \(skipped.count - reportLimit) more files skipped")
        }
    }

    static let reportLimit = 20

    /// `added /home/me/a.flac`, `added 12 files from /home/me/Album`, `added /Talks/Keynote`,
    /// `added 2 recordings from /Meetings`.
    static func describe(_ addition: AddArgument, _ entries: [QueueEntry]) -> String {
        switch addition {
        case .file(let path), .url(let path):
            return "added \(path)"
        case .directory(let path, _, _):
            return "added \(entries.count) \(entries.count == 1 ? "file" : "files") from \(path)"
        case .treePath(let path):
            let normalized = "/" + path.split(separator: "/").joined(separator: "/")
            if entries.count == 1, case .item(_, let itemPath, _) = entries[0].source, itemPath == normalized {
                return "added \(itemPath)"
            }
            return "added \(entries.count) \(entries.count == 1 ? "recording" : "recordings") from \(normalized)"
        }
    }
}

// MARK: queue

struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List the play queue.",
        discussion: """
            One line per entry: '>' on the current entry (playing, paused, or where `reel play` \
            starts), its position (from 1, as `reel play N`, `del` and `move` take it), the name \
            (`Artist - Title` for a file of a music folder, else a file's name or a recording's tree \
            path) and the duration. The last line gives the \
            number of entries, their total time and the options. --json prints the daemon's \
            queue.list reply.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    func run() throws {
        let client = try connection.connect()
        let queue = try QueueReader.entries(client)
        if output.json {
            Output.line(JSONValue.object(queue.reply).jsonString)
            return
        }
        for row in Output.queueTable(queue.entries, current: queue.summary.current) { Output.line(row) }
        let known = queue.entries.compactMap(\.duration)
        let total: Double? = known.isEmpty ? nil : known.reduce(0, +)
        let estimated = queue.entries.contains { $0.duration != nil && $0.durationEstimated }
        Output.line(
            Output.queueLength(queue.summary.length, total: total, estimated: estimated) + "  "
                + Output.optionsLine(queue.summary.options))
    }
}

// MARK: del, move, clear

struct DeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "del",
        abstract: "Remove entries from the queue.",
        discussion: """
            POSITION is as `reel queue` numbers entries, from 1; N-M is a range. Nothing is \
            removed if any position is not in the queue. Removing the entry being played goes \
            on with the next one (or stops, when paused). The library is not touched.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("Queue positions (3) or ranges (2-5).", valueName: "position"))
    var positions: [String] = []

    func validate() throws {
        if positions.isEmpty { throw ValidationError("give the positions to remove (as `reel queue` shows them)") }
        _ = try ranges()
    }

    /// The arguments as closed 1-based ranges.
    func ranges() throws(ValidationError) -> [ClosedRange<Int>] {
        var ranges: [ClosedRange<Int>] = []
        for text in positions {
            let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2 {
                let low = try parseQueuePosition(parts[0])
                let high = try parseQueuePosition(parts[1])
                guard low <= high else { throw ValidationError("'\(text)' is not a range: the first position must not be after the last") }
                ranges.append(low...high)
            } else {
                let position = try parseQueuePosition(text)
                ranges.append(position...position)
            }
        }
        return ranges
    }

    func run() throws {
        let ranges = try ranges()
        let client = try connection.connect()
        let length = try QueueReader.summary(client).length
        if let beyond = ranges.first(where: { $0.upperBound > length }) {
            throw QueueReader.noEntry(at: max(beyond.lowerBound, length + 1), length: length)
        }
        var ids: [Int] = []
        var seen: Set<Int> = []
        for range in ranges {
            let listed = try QueueReader.entries(client, start: range.lowerBound - 1, count: range.count)
            guard listed.entries.count == range.count else {
                throw QueueReader.noEntry(at: range.upperBound, length: listed.summary.length)
            }
            for entry in listed.entries where seen.insert(entry.id).inserted { ids.append(entry.id) }
        }
        let result = try client.call("queue.remove", ["ids": .array(ids.map { .int(Int64($0)) })])
        let left = result["length"]?.intValue.map { "; \(Output.queueLength($0, total: nil)) left" } ?? ""
        Output.line("removed \(ids.count) \(ids.count == 1 ? "entry" : "entries")\(left)")
    }
}

struct QueueMoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move an entry of the queue to another position.",
        discussion: """
            FROM and TO are positions as `reel queue` numbers them, from 1: `reel move 5 1` \
            makes the fifth entry the first. (`reel mv` moves an item in the library.)
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The entry's position.", valueName: "from"))
    var from: String

    @Argument(help: ArgumentHelp("Where it goes.", valueName: "to"))
    var to: String

    func validate() throws {
        _ = try parseQueuePosition(from)
        _ = try parseQueuePosition(to)
    }

    func run() throws {
        let from = try parseQueuePosition(from)
        let to = try parseQueuePosition(to)
        let client = try connection.connect()
        let (entry, summary) = try QueueReader.entry(at: from, client)
        guard to <= summary.length else {
            throw CLIError(
                exitCode: CLIError.refusedExitCode,
                message: "cannot move to position \(to): the queue has \(summary.length)", reason: "out_of_range")
        }
        _ = try client.call("queue.move", ["id": .int(Int64(entry.id)), "position": .int(Int64(to - 1))])
        Output.line("moved \(Output.entryName(entry.source)) from \(from) to \(to)")
    }
}

struct ClearCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear", abstract: "Empty the queue and stop playback.")

    @OptionGroup var connection: ConnectionOptions

    func run() throws {
        let client = try connection.connect()
        _ = try client.call("queue.clear")
        Output.line("cleared the queue")
    }
}

// MARK: next, prev

/// `next` and `prev`: the state they lead to, naming what plays.
protocol QueueSkipCommand: ParsableCommand {
    static var method: String { get }
    var connection: ConnectionOptions { get }
}

extension QueueSkipCommand {
    func run() throws {
        let client = try connection.connect()
        let state = try playerCall(client, Self.method)
        Output.line(Output.summary(state, naming: true))
    }
}

struct NextCommand: QueueSkipCommand {
    static let configuration = CommandConfiguration(
        commandName: "next",
        abstract: "Play the next entry of the queue.",
        discussion: "Only while playing or paused. After the last entry (without repeat) playback stops.")
    static let method = "player.next"
    @OptionGroup var connection: ConnectionOptions
}

struct PreviousCommand: QueueSkipCommand {
    static let configuration = CommandConfiguration(
        commandName: "prev",
        abstract: "Play the previous entry of the queue.",
        discussion: "Only while playing or paused. On the first entry it starts that one again.")
    static let method = "player.previous"
    @OptionGroup var connection: ConnectionOptions
}

// MARK: repeat, random, single, consume

/// `on` or `off`.
enum Switch: String, ExpressibleByArgument, CaseIterable {
    case on, off
}

/// `on`, `off` or `oneshot`.
enum SingleSwitch: String, ExpressibleByArgument, CaseIterable {
    case on, off, oneshot
}

/// The option commands: with no argument they toggle the option; they print every option.
protocol QueueOptionCommand: ParsableCommand {
    var connection: ConnectionOptions { get }
    /// The `queue.setOptions` parameter and its value, given the options now (nil when the
    /// value was given, so they need not be read).
    func change(from current: QueueOptions?) -> (String, JSONValue)
    /// Whether the new value depends on the current options (no argument: a toggle).
    var toggles: Bool { get }
}

extension QueueOptionCommand {
    func run() throws {
        let client = try connection.connect()
        let current = toggles ? try QueueReader.summary(client).options : nil
        let (key, value) = change(from: current)
        let result = try client.call("queue.setOptions", [key: value])
        do {
            Output.line(Output.optionsLine(try QueueOptions(json: result)))
        } catch {
            throw CLIError.unexpectedReply("queue.setOptions", error)
        }
    }
}

struct RepeatCommand: QueueOptionCommand {
    static let configuration = CommandConfiguration(
        commandName: "repeat", abstract: "Start the queue over after its last entry (no argument: toggle).")
    @OptionGroup var connection: ConnectionOptions
    @Argument var value: Switch?
    var toggles: Bool { value == nil }
    func change(from current: QueueOptions?) -> (String, JSONValue) {
        ("repeat", .bool(value.map { $0 == .on } ?? !(current?.repeats ?? false)))
    }
}

struct RandomCommand: QueueOptionCommand {
    static let configuration = CommandConfiguration(
        commandName: "random", abstract: "Play the queue in a shuffled order (no argument: toggle).")
    @OptionGroup var connection: ConnectionOptions
    @Argument var value: Switch?
    var toggles: Bool { value == nil }
    func change(from current: QueueOptions?) -> (String, JSONValue) {
        ("random", .bool(value.map { $0 == .on } ?? !(current?.random ?? false)))
    }
}

struct SingleCommand: QueueOptionCommand {
    static let configuration = CommandConfiguration(
        commandName: "single",
        abstract: "Stop after the current entry (no argument: toggle).",
        discussion: """
            on: stop after each entry (with repeat on, play the current entry again); oneshot: \
            stop after the current entry once, then go back to off. With no argument, off \
            becomes on and on or oneshot becomes off.
            """)
    @OptionGroup var connection: ConnectionOptions
    @Argument var value: SingleSwitch?
    var toggles: Bool { value == nil }
    func change(from current: QueueOptions?) -> (String, JSONValue) {
        switch value ?? ((current?.single ?? .off) == .off ? .on : .off) {
        case .on: ("single", .bool(true))
        case .off: ("single", .bool(false))
        case .oneshot: ("single", .string("oneshot"))
        }
    }
}

struct ConsumeCommand: QueueOptionCommand {
    static let configuration = CommandConfiguration(
        commandName: "consume", abstract: "Remove each entry from the queue once played (no argument: toggle).")
    @OptionGroup var connection: ConnectionOptions
    @Argument var value: Switch?
    var toggles: Bool { value == nil }
    func change(from current: QueueOptions?) -> (String, JSONValue) {
        ("consume", .bool(value.map { $0 == .on } ?? !(current?.consume ?? false)))
    }
}
