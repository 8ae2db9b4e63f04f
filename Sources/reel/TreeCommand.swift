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
            Folders end with '/', recordings and tracks show their duration; the last line \
            counts the folders, recordings and tracks below PATH. The music folders' branch \
            (/Music) is drawn only when PATH is in it: `reel tree /Music`.
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
        var counts = Counts()
        try draw(
            try decodeItems(top, from: "library.list"), prefix: "", client: client, inBranch: folder.readOnly,
            counts: &counts)
        Output.line("")
        var line = "\(Output.count(counts.folders, "folder")), \(Output.count(counts.recordings, "recording"))"
        if counts.tracks > 0 { line += ", \(Output.count(counts.tracks, "track"))" }
        Output.line(line)
    }

    struct Counts {
        var folders = 0
        var recordings = 0
        var tracks = 0
    }

    /// Prints `items` under `prefix`, descending into each folder (by id, so odd names are safe).
    private func draw(
        _ items: [Item], prefix: String, client: DaemonClient, inBranch: Bool, counts: inout Counts
    ) throws(CLIError) {
        for (index, item) in items.enumerated() {
            let last = index == items.count - 1
            let branch = last ? "└── " : "├── "
            switch item.kind {
            case .folder where item.readOnly && !inBranch:
                // The music folders: thousands of files, drawn by `reel tree /Music`.
                Output.line(prefix + branch + item.name + "/  (music folders: reel tree \(item.path))")
            case .folder:
                counts.folders += 1
                Output.line(prefix + branch + item.name + "/")
                let listing = try client.call("library.list", ["item": .string(item.id)])
                try draw(
                    try decodeItems(listing, from: "library.list"), prefix: prefix + (last ? "    " : "│   "),
                    client: client, inBranch: inBranch, counts: &counts)
            case .recording:
                counts.recordings += 1
                Output.line(prefix + branch + item.name + "  " + Output.duration(item))
            case .track:
                counts.tracks += 1
                Output.line(prefix + branch + item.name + "  " + Output.duration(item))
            case .playlist:
                Output.line(prefix + branch + item.name + "  (playlist)")
            }
        }
    }
}
