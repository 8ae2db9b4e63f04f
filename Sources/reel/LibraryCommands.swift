// ls, mkdir, mv, rename, rm: the library tree, one `library.*` request each (tree, search and
// import have their own files). Tree paths start with `/`; anything else is a usage error.

import ArgumentParser
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: Shared helpers

enum TreePath {
    /// Exit 2 unless `path` is a tree path (starts with `/`); `role` names the argument.
    static func validate(_ path: String, role: String = "path") throws(ValidationError) {
        guard path.hasPrefix("/") else {
            throw ValidationError(
                "\(role) '\(path)' is not a tree path: tree paths start with '/' (e.g. /Meetings/Standup)")
        }
    }

    /// `/Meetings/2026` → (`/Meetings`, `2026`); nil for the root. Repeated and trailing
    /// slashes are ignored, as the daemon does.
    static func split(_ path: String) -> (parent: String, name: String)? {
        let names = path.split(separator: "/", omittingEmptySubsequences: true)
        guard let last = names.last else { return nil }
        return ("/" + names.dropLast().joined(separator: "/"), String(last))
    }
}

/// Decodes an Item out of a reply (or a member of one).
func decodeItem(_ value: JSONValue?, from method: String) throws(CLIError) -> Item {
    guard let value else { throw CLIError.unexpectedReply(method, "an item is missing") }
    do {
        return try Item(json: value)
    } catch {
        throw CLIError.unexpectedReply(method, error)
    }
}

/// Decodes the `items` array of a `library.list` or `library.search` reply.
func decodeItems(_ result: JSONValue, from method: String) throws(CLIError) -> [Item] {
    guard let array = result["items"]?.arrayValue else {
        throw CLIError.unexpectedReply(method, "\"items\" is missing or not an array")
    }
    var items: [Item] = []
    items.reserveCapacity(array.count)
    for value in array { items.append(try decodeItem(value, from: method)) }
    return items
}

extension Output {
    /// `2026-11-22 15:03` in local time for an ISO 8601 UTC timestamp (`2026-11-22T14:03:05Z`,
    /// fractions allowed); the text unchanged when it cannot be read.
    static func localTime(_ iso: String) -> String {
        let digits = Array(iso.utf8)
        func number(_ start: Int, _ count: Int) -> Int32? {
            guard start + count <= digits.count else { return nil }
            var value: Int32 = 0
            for byte in digits[start..<(start + count)] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int32(byte - 0x30)
            }
            return value
        }
        guard digits.count >= 19, digits[4] == 0x2D, digits[7] == 0x2D, digits[10] == 0x54 || digits[10] == 0x20,
              digits[13] == 0x3A, digits[16] == 0x3A,
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2)
        else { return iso }
        var utc = tm()
        utc.tm_year = year - 1900
        utc.tm_mon = month - 1
        utc.tm_mday = day
        utc.tm_hour = hour
        utc.tm_min = minute
        utc.tm_sec = second
        var seconds = timegm(&utc)
        var local = tm()
        guard localtime_r(&seconds, &local) != nil else { return iso }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(local.tm_year + 1900)-\(two(local.tm_mon + 1))-\(two(local.tm_mday)) \(two(local.tm_hour)):\(two(local.tm_min))"
    }

    /// A recording's duration as m:ss, `?` when unknown; empty for a folder.
    static func duration(_ item: Item) -> String {
        guard item.kind != .folder else { return "" }
        return item.duration.map(formatSeconds) ?? "?"
    }

    /// The rows of `reel ls`: kind, name, duration (right-aligned), created; columns aligned.
    static func itemTable(_ items: [Item]) -> [String] {
        let nameWidth = items.map(\.name.count).max() ?? 0
        let durations = items.map(duration)
        let durationWidth = durations.map(\.count).max() ?? 0
        return zip(items, durations).map { item, duration in
            let kind = item.kind.rawValue.padding(to: 9)
            let name = item.name.padding(to: nameWidth)
            let time = String(repeating: " ", count: durationWidth - duration.count) + duration
            return "\(kind)  \(name)  \(time)  \(localTime(item.created))"
        }
    }

    /// `3 items` / `1 item`.
    static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }
}

/// `--json` on the library commands.
struct JSONOption: ParsableArguments {
    @Flag(help: "Print the daemon's reply as one line of JSON.")
    var json = false
}

// MARK: ls

struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a folder of the library.",
        discussion: """
            One line per item: kind (folder or recording), name, duration (m:ss, blank for a \
            folder) and creation time (local time). Folders come first, then recordings, each by \
            name. --json prints the daemon's {folder, items} reply.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The folder's tree path.", valueName: "path"))
    var path: String = "/"

    func validate() throws { try TreePath.validate(path) }

    func run() throws {
        let client = try connection.connect()
        let result = try client.call("library.list", ["path": .string(path)])
        if output.json {
            Output.line(result.jsonString)
            return
        }
        let items = try decodeItems(result, from: "library.list")
        for row in Output.itemTable(items) { Output.line(row) }
    }
}

// MARK: mkdir

struct MakeFolderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mkdir",
        abstract: "Create a folder.",
        discussion: "The last part of PATH is created inside its parent, which must exist: `reel mkdir /Meetings/2026`.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The new folder's tree path.", valueName: "path"))
    var path: String

    func validate() throws {
        try TreePath.validate(path)
        guard TreePath.split(path) != nil else { throw ValidationError("the root folder '/' always exists; give a path below it") }
    }

    func run() throws {
        guard let target = TreePath.split(path) else { return }
        let client = try connection.connect()
        let result = try client.call(
            "library.createFolder", ["parentPath": .string(target.parent), "name": .string(target.name)])
        if output.json {
            Output.line(result.jsonString)
            return
        }
        let item = try decodeItem(result, from: "library.createFolder")
        Output.line("created \(item.path)")
    }
}

// MARK: mv

struct MoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mv",
        abstract: "Move an item into another folder.",
        discussion: """
            The item keeps its name: `reel mv /Inbox/Standup /Meetings` makes /Meetings/Standup. \
            A folder moves with its contents; it cannot go into itself or one of its subfolders. \
            To change a name, use `reel rename`.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The tree path of the item to move.", valueName: "path"))
    var path: String

    @Argument(help: ArgumentHelp("The tree path of the folder to move it into.", valueName: "dest-folder"))
    var destination: String

    func validate() throws {
        try TreePath.validate(path)
        try TreePath.validate(destination, role: "destination")
    }

    func run() throws {
        let client = try connection.connect()
        let result = try client.call("library.move", ["path": .string(path), "toPath": .string(destination)])
        if output.json {
            Output.line(result.jsonString)
            return
        }
        let item = try decodeItem(result, from: "library.move")
        Output.line("moved \(path) to \(item.path)")
    }
}

// MARK: rename

struct RenameCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename",
        abstract: "Rename an item in place.",
        discussion: """
            NEWNAME is a name, not a path: 1 to 255 bytes, no '/', not '.' or '..', and not the \
            name of a sibling.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The tree path of the item.", valueName: "path"))
    var path: String

    @Argument(help: ArgumentHelp("Its new name.", valueName: "newname"))
    var name: String

    func validate() throws { try TreePath.validate(path) }

    func run() throws {
        let client = try connection.connect()
        let result = try client.call("library.rename", ["path": .string(path), "name": .string(name)])
        if output.json {
            Output.line(result.jsonString)
            return
        }
        let item = try decodeItem(result, from: "library.rename")
        Output.line("renamed \(path) to \(item.path)")
    }
}

// MARK: rm

struct RemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Delete a recording or a folder, without asking.",
        discussion: """
            Deleting a folder deletes everything in it: its subfolders and recordings, and their \
            audio files. No -r is needed and nothing asks for confirmation. The root folder \
            cannot be deleted. Prints how many items were deleted (the folder included).
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The tree path of the item to delete.", valueName: "path"))
    var path: String

    func validate() throws { try TreePath.validate(path) }

    func run() throws {
        let client = try connection.connect()
        let result = try client.call("library.delete", ["path": .string(path)])
        if output.json {
            Output.line(result.jsonString)
            return
        }
        guard let count = result["deleted"]?.intValue else {
            throw CLIError.unexpectedReply("library.delete", "\"deleted\" is missing or not an integer")
        }
        Output.line("deleted \(Output.count(count, "item"))")
    }
}
