// search QUERY: items whose names contain QUERY (case-insensitive), anywhere in the tree,
// a page at a time (`--cursor`) or every page (`--all`).

import ArgumentParser
import ReelModel
import ReelProtocol

struct SearchCommand: ParsableCommand {
    static let maximumLimit = 500

    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find folders and recordings by name.",
        discussion: """
            Matches names containing QUERY, ignoring case, over the whole tree. Prints one path \
            per line (folders end with '/', recordings show their duration). When there are more \
            results than --limit, a hint on stderr gives the --cursor for the next page; --all \
            fetches every page instead. --json prints the daemon's {items, nextCursor} reply \
            (with --all, all items and a null nextCursor).
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The text to look for in names.", valueName: "query"))
    var query: String

    @Option(help: ArgumentHelp("Results per page, 1 to 500 (default 50; 500 with --all).", valueName: "n"))
    var limit: Int?

    @Option(help: ArgumentHelp("Continue from this page (from a previous search's hint).", valueName: "cursor"))
    var cursor: String?

    @Flag(help: "Fetch and print every page.")
    var all = false

    func validate() throws {
        if let limit, !(1...Self.maximumLimit).contains(limit) {
            throw ValidationError("--limit must be from 1 to \(Self.maximumLimit), not \(limit)")
        }
    }

    func run() throws {
        let client = try connection.connect()
        var items: [Item] = []
        var next = cursor
        let pageSize = limit ?? (all ? Self.maximumLimit : nil)
        repeat {
            var params: JSONObject = ["query": .string(query)]
            if let pageSize { params["limit"] = .int(Int64(pageSize)) }
            if let next { params["cursor"] = .string(next) }
            let result = try client.call("library.search", params)
            if output.json && !all {
                Output.line(result.jsonString)
                return
            }
            items += try decodeItems(result, from: "library.search")
            switch result["nextCursor"] {
            case .string(let value)?: next = value
            case .null?, nil: next = nil
            default: throw CLIError.unexpectedReply("library.search", "\"nextCursor\" must be a string or null")
            }
        } while all && next != nil

        if output.json {
            Output.line(JSONValue.object(["items": .array(items.map(\.json)), "nextCursor": .null]).jsonString)
            return
        }
        let paths = items.map { $0.kind == .folder ? $0.path + "/" : $0.path }
        let width = paths.map(\.count).max() ?? 0
        for (item, path) in zip(items, paths) {
            let duration = Output.duration(item)
            Output.line(duration.isEmpty ? path : path.padding(to: width) + "  " + duration)
        }
        if items.isEmpty && next == nil { Output.error("no names contain '\(query)'") }
        if let next {
            var command = ["reel", "search", shellQuoted(query)]
            if let limit { command += ["--limit", "\(limit)"] }
            command += ["--cursor", shellQuoted(next)]
            Output.error("more results: \(command.joined(separator: " ")) (or --all for every page)")
        }
    }
}

/// `text` as one shell word: unchanged when it is plain, else in single quotes.
func shellQuoted(_ text: String) -> String {
    let plain = !text.isEmpty && text.unicodeScalars.allSatisfy {
        ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_./:=+,@%".unicodeScalars.contains($0)
    }
    return plain ? text : "'" + text.replacingAll("'", with: "'\\''") + "'"
}

extension String {
    /// Every occurrence of `target` replaced (no Foundation here).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
