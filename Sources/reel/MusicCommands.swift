// artists, albums, scan: the music folders, browsed by tag (`music.*`, `library.rescan`).

import ArgumentParser
import ReelModel
import ReelProtocol

struct ArtistsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "artists",
        abstract: "List the artists of the music folders.",
        discussion: """
            One line per artist (AlbumArtist, else Artist): its name, its albums and tracks. \
            --json prints the protocol's {"artists": [...]} object.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the JSON reply.") var json = false

    func run() throws {
        let result = try connection.connect().call("music.artists")
        if json { return Output.line(result.jsonString) }
        for artist in result["artists"]?.arrayValue ?? [] {
            let name = artist["name"]?.stringValue ?? "?"
            let albums = artist["albums"]?.intValue ?? 0
            let tracks = artist["tracks"]?.intValue ?? 0
            Output.line("\(name)  (\(albums) \(albums == 1 ? "album" : "albums"), \(tracks) \(tracks == 1 ? "track" : "tracks"))")
        }
    }
}

struct AlbumsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "albums",
        abstract: "List the albums of the music folders, of one artist or all.",
        discussion: """
            One line per album: its name, its artist (AlbumArtist, else Artist), its date and \
            tracks. `reel add --album NAME` queues one. --json prints the protocol's \
            {"albums": [...]} object.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the JSON reply.") var json = false
    @Argument(help: "Only this artist's albums.") var artist: String?

    func run() throws {
        let params: JSONObject = artist.map { ["artist": .string($0)] } ?? [:]
        let result = try connection.connect().call("music.albums", params)
        if json { return Output.line(result.jsonString) }
        for album in result["albums"]?.arrayValue ?? [] {
            var line = album["name"]?.stringValue ?? "?"
            if let artist = album["albumArtist"]?.stringValue { line += " — \(artist)" }
            if let date = album["date"]?.stringValue { line += " (\(date))" }
            let tracks = album["tracks"]?.intValue ?? 0
            line += ", \(tracks) \(tracks == 1 ? "track" : "tracks")"
            Output.line(line)
        }
    }
}

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Rescan the music folders and show the progress until it ends.",
        discussion: """
            Reads again what changed in the music folders (new, changed and removed files; \
            unchanged ones by size and mtime are not read again), then prints what the scan \
            found. Files that could not be read are listed with why. --no-wait returns at once.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Flag(name: .customLong("no-wait"), help: "Start the scan and return.") var noWait = false

    func run() throws {
        let client = try connection.connect()
        _ = try client.call("subscribe", ["stream": .string("scan")])
        let started = try decode(client.call("library.rescan"))
        if noWait { return Output.line(Self.describe(started)) }
        // Done when a push of this request's scan (its number, or a later one) is not running.
        var final: MusicScanProgress
        while true {
            let event = try client.nextEvent()
            guard case .notification("scan.progress", let params) = event else { continue }
            final = try decode(.object(params))
            if final.scan >= started.scan && !final.running {
                Output.line(Self.describe(final))
                break
            }
        }
        let failures = try client.call("music.failures")["failures"]?.arrayValue ?? []
        let missing = Set(final.missingFolders)
        for failure in failures {
            let path = failure["path"]?.stringValue ?? "?"
            let reason = failure["reason"]?.stringValue ?? "?"
            Output.line(missing.contains(path) ? "  \(path): \(reason)" : "  could not read \(path): \(reason)")
        }
    }

    private func decode(_ value: JSONValue) throws(CLIError) -> MusicScanProgress {
        do {
            return try MusicScanProgress(json: value)
        } catch {
            throw CLIError.unexpectedReply("library.rescan", error)
        }
    }

    /// `scanned: 1,204 files, 3 new or changed, 1,200 unchanged, 1 failed, 0 removed`, and
    /// `, 1 music folder missing` when one is.
    static func describe(_ progress: MusicScanProgress) -> String {
        let verb = progress.running ? "scanning" : "scanned"
        let missing = progress.missingFolders.count
        return "\(verb): \(progress.seen) files, \(progress.indexed) new or changed, \(progress.unchanged) unchanged, "
            + "\(progress.failed) failed, \(progress.removed) removed"
            + (missing == 0 ? "" : ", \(missing) music \(missing == 1 ? "folder" : "folders") missing")
    }
}
