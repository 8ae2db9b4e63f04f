// import FILE [FOLDER]: copy an audio file into the library as a recording.

import ArgumentParser
import ReelModel
import ReelProtocol

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Copy an audio file into the library as a recording.",
        discussion: """
            A relative FILE is taken from the current directory; the daemon reads it, so it must \
            be readable by the daemon, and it must decode as audio. FOLDER is a tree path \
            (default /). The recording is named after the file without its extension unless \
            --name is given. Prints the new recording's tree path and duration.
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: JSONOption

    @Argument(help: ArgumentHelp("The audio file to import.", valueName: "file"))
    var file: String

    @Argument(help: ArgumentHelp("The tree path of the folder to put it in.", valueName: "folder"))
    var folder: String = "/"

    @Option(help: ArgumentHelp("The recording's name.", valueName: "name"))
    var name: String?

    func validate() throws {
        if file.isEmpty { throw ValidationError("the file name is empty") }
        try TreePath.validate(folder, role: "folder")
    }

    func run() throws {
        var params: JSONObject = ["file": .string(absolutePath(file)), "folderPath": .string(folder)]
        if let name { params["name"] = .string(name) }
        let client = try connection.connect()
        let result = try client.call("library.import", params)
        if output.json {
            Output.line(result.jsonString)
            return
        }
        let item = try decodeItem(result, from: "library.import")
        var details = [Output.duration(item)]
        if let format = item.format { details.append("\(format.codec) \(format.sampleRate) Hz \(format.channels) ch") }
        Output.line("imported \(item.path) (\(details.joined(separator: ", ")))")
    }
}
