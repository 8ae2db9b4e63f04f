// tree: a folder's whole subtree, drawn with box-drawing characters; one `library.list` per
// folder, over one connection.

import ArgumentParser
import ReelModel
import ReelProtocol

struct TreeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree",
        abstract: "Draw a folder's subtree.",
        discussion: """
            Folders end with '/', recordings show their duration; the last line counts the \
            folders and recordings below PATH.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The tree path of the folder to draw.", valueName: "path"))
    var path: String = "/"

    func validate() throws { try TreePath.validate(path) }

    func run() throws {
        let client = try connection.connect()
        let top = try client.call("library.list", ["path": .string(path)])
        let folder = try decodeItem(top["folder"], from: "library.list")
        Output.line(folder.path)
        var counts = (folders: 0, recordings: 0)
        try draw(try decodeItems(top, from: "library.list"), prefix: "", client: client, counts: &counts)
        Output.line("")
        Output.line("\(Output.count(counts.folders, "folder")), \(Output.count(counts.recordings, "recording"))")
    }

    /// Prints `items` under `prefix`, descending into each folder (by id, so odd names are safe).
    private func draw(
        _ items: [Item], prefix: String, client: DaemonClient, counts: inout (folders: Int, recordings: Int)
    ) throws(CLIError) {
        for (index, item) in items.enumerated() {
            let last = index == items.count - 1
            let branch = last ? "└── " : "├── "
            switch item.kind {
            case .folder:
                counts.folders += 1
                Output.line(prefix + branch + item.name + "/")
                let listing = try client.call("library.list", ["item": .string(item.id)])
                try draw(
                    try decodeItems(listing, from: "library.list"), prefix: prefix + (last ? "    " : "│   "),
                    client: client, counts: &counts)
            case .recording:
                counts.recordings += 1
                Output.line(prefix + branch + item.name + "  " + Output.duration(item))
            }
        }
    }
}
