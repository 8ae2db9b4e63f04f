// playlists, playlist, save, load: the stored playlists (`playlists.*`). Positions on the
// command line count from 1, as `reel queue` shows them; the daemon counts from 0.

import ArgumentParser
import ReelModel
import ReelProtocol

struct PlaylistsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlists",
        abstract: "List the stored playlists.",
        discussion: "Each with its number of entries. They are NAME.m3u files in the daemon's playlist_dir, as MPD keeps them.")

    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the JSON reply.") var json = false

    func run() throws {
        let result = try connection.connect().call("playlists.list")
        if json { return Output.line(result.jsonString) }
        let playlists = result["playlists"]?.arrayValue ?? []
        if playlists.isEmpty { return Output.line("no playlists") }
        for playlist in playlists {
            let length = playlist["length"]?.intValue ?? 0
            Output.line("\(playlist["name"]?.stringValue ?? "?")  (\(length) \(length == 1 ? "entry" : "entries"))")
        }
    }
}

struct PlaylistCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "Show a stored playlist, or change it.",
        discussion: """
            reel playlist NAME                 its entries (from 1; `missing` where the file or recording is gone)
            reel playlist NAME add SOURCE      a file, a recording or folder by tree path (/Notes), or a URL, at the end
            reel playlist NAME del POS...      remove entries
            reel playlist NAME move FROM TO    move an entry
            reel playlist NAME rename NEW      rename the playlist
            reel playlist NAME rm              delete the playlist
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The playlist's name.") var name: String
    @Argument(help: "add, del, move, rename or rm (nothing: show it).") var action: String?
    @Argument(help: "What the action takes.") var values: [String] = []
    @Flag(help: "Print the JSON reply.") var json = false

    func run() throws {
        let client = try connection.connect()
        switch action {
        case nil:
            let result = try client.call("playlists.get", ["name": .string(name)])
            if json { return Output.line(result.jsonString) }
            for entry in result["entries"]?.arrayValue ?? [] {
                let position = (entry["position"]?.intValue ?? 0) + 1
                var line = "\(position). \(Self.describe(entry))"
                if entry["missing"]?.boolValue == true { line += "  (missing)" }
                Output.line(line)
            }
            for broken in result["brokenLines"]?.arrayValue ?? [] {
                Output.error("line \(broken["line"]?.intValue ?? 0) of the file is no entry: \(broken["reason"]?.stringValue ?? "")")
            }
        case "add":
            guard values.count == 1 else { throw ValidationError("reel playlist NAME add takes one SOURCE") }
            var params: JSONObject = ["name": .string(name)]
            switch try PlayArgument.resolve(values[0]) {
            case .file(let path): params["file"] = .string(path)
            case .treePath(let path): params["path"] = .string(path)
            case .url(let url): params["url"] = .string(url)
            case .queuePosition:
                throw ValidationError("give a file, a tree path (/Notes/idea) or a URL, not \"\(values[0])\"")
            }
            report(try client.call("playlists.add", params))
        case "del":
            guard !values.isEmpty else { throw ValidationError("reel playlist NAME del takes positions (from 1)") }
            let positions = try values.map { text throws(ValidationError) -> JSONValue in .int(Int64(try Self.position(text) - 1)) }
            report(try client.call("playlists.remove", ["name": .string(name), "positions": .array(positions)]))
        case "move":
            guard values.count == 2 else { throw ValidationError("reel playlist NAME move takes FROM and TO (from 1)") }
            let from = try Self.position(values[0]) - 1
            let to = try Self.position(values[1]) - 1
            report(try client.call("playlists.move", ["name": .string(name), "from": .int(Int64(from)), "to": .int(Int64(to))]))
        case "rename":
            guard values.count == 1 else { throw ValidationError("reel playlist NAME rename takes the new name") }
            report(try client.call("playlists.rename", ["name": .string(name), "to": .string(values[0])]))
        case "rm":
            guard values.isEmpty else { throw ValidationError("reel playlist NAME rm takes nothing more") }
            let result = try client.call("playlists.delete", ["name": .string(name)])
            Output.line(json ? result.jsonString : "deleted \(name)")
        case let other?:
            throw ValidationError("unknown action \"\(other)\": give add, del, move, rename or rm")
        }
    }

    private func report(_ result: JSONValue) {
        if json { return Output.line(result.jsonString) }
        let length = result["length"]?.intValue ?? 0
        Output.line("\(result["name"]?.stringValue ?? name): \(length) \(length == 1 ? "entry" : "entries")")
    }

    static func position(_ text: String) throws(ValidationError) -> Int {
        guard let value = Int(text), value >= 1 else {
            throw ValidationError("'\(text)' is not a position: positions start at 1 (as `reel playlist NAME` shows them)")
        }
        return value
    }

    /// `Artist — Title` for a music file with tags, a recording's or file's path, a URL, or the
    /// line itself.
    static func describe(_ entry: JSONValue) -> String {
        if let title = entry["title"]?.stringValue, let artist = entry["artist"]?.stringValue {
            return "\(artist) — \(title)"
        }
        if let source = entry["source"], source != .null, let decoded = try? PlayerSource(json: source) {
            return Output.sourcePath(decoded)
        }
        return entry["entry"]?.stringValue ?? "?"
    }
}

struct SaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Save the queue as a stored playlist.",
        discussion: "A name taken is refused unless --replace (its entries become the queue's) or --append (the queue goes after them).")

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The playlist's name.") var name: String
    @Flag(help: "Replace a playlist of that name.") var replace = false
    @Flag(help: "Add the queue to the end of a playlist of that name.") var append = false
    @Flag(help: "Print the JSON reply.") var json = false

    func run() throws {
        guard !(replace && append) else { throw ValidationError("give --replace or --append, not both") }
        let mode = replace ? "replace" : append ? "append" : "create"
        let result = try connection.connect().call("playlists.save", ["name": .string(name), "mode": .string(mode)])
        if json { return Output.line(result.jsonString) }
        let length = result["length"]?.intValue ?? 0
        Output.line("saved \(name): \(length) \(length == 1 ? "entry" : "entries")")
    }
}

struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Add a stored playlist's entries to the queue.",
        discussion: """
            As one change of the queue. Entries whose file or recording is gone are skipped and named (they stay in the playlist). \
            NAME may also be a playlist file of the music folder by its path there (Artist/Album/list.m3u, .m3u8 or .pls), \
            its entries relative to its own folder.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "The playlist's name.") var name: String
    @Flag(help: "Print the JSON reply.") var json = false

    func run() throws {
        let result = try connection.connect().call("playlists.load", ["name": .string(name)])
        if json { return Output.line(result.jsonString) }
        let added = result["entries"]?.arrayValue?.count ?? 0
        Output.line("added \(added) \(added == 1 ? "entry" : "entries") from \(name)")
        for skipped in result["skipped"]?.arrayValue ?? [] {
            let position = (skipped["position"]?.intValue ?? 0) + 1
            Output.error("skipped \(position). \(skipped["entry"]?.stringValue ?? ""): \(skipped["message"]?.stringValue ?? "")")
        }
    }
}
