// mark [LABEL]: a mark in the take being recorded, or in the recording playing.

import ArgumentParser
import ReelModel
import ReelProtocol

struct MarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mark",
        abstract: "Mark this moment in the take being recorded, or in the recording playing: reel mark \"chorus\".",
        discussion: """
            While a take is being recorded, the mark goes into it (recorder.mark); otherwise into \
            the recording playing or paused (player.mark). Marks are kept with the recording \
            (library.get lists them), written into a FLAC, Ogg or Opus take as chapters when it \
            closes, and `reel seek --mark N` goes to one.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "What the mark is called (optional).") var label: String?

    func run() throws {
        let client = try connection.connect()
        let recorder = try client.call("recorder.status")
        let method = recorder["state"]?.stringValue == "recording" ? "recorder.mark" : "player.mark"
        var params: JSONObject = [:]
        if let label { params["label"] = .string(label) }
        let mark = try client.call(method, params)
        let at = mark["at"]?.doubleValue ?? 0
        let what = method == "recorder.mark" ? "the take" : "the recording"
        Output.line("marked \(formatSeconds(at)) in \(what)\(label.map { ": \($0)" } ?? "")")
    }
}
