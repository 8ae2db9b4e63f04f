// outputs: list the outputs, turn one on or off (`outputs.*`).

import ArgumentParser
import ReelModel
import ReelProtocol

extension Output {
    /// `1: Snapcast (pipe /run/reel/snapfifo, 48000:16:2) on, connected`, with the error that
    /// turned an output off on a second line.
    static func outputLines(_ outputs: [OutputState]) -> [String] {
        var lines: [String] = []
        for output in outputs {
            let detail: String
            switch output.kind {
            case .alsa(let device): detail = "device \(device)"
            case .pipe(let path, let format): detail = "pipe \(path), \(format)"
            }
            var line = "\(output.id): \(output.name) (\(detail)) \(output.enabled ? "on" : "off")"
            if output.enabled && output.status != .ready {
                line += ", " + output.status.rawValue.split(separator: "_").joined(separator: " ")
            }
            lines.append(line)
            if let error = output.error { lines.append("   \(error.message)") }
        }
        return lines
    }
}

struct OutputsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outputs",
        abstract: "List the outputs, or turn one on or off.",
        usage: "reel outputs [--socket <path>] [--json] [enable|disable|toggle <id>]",
        discussion: """
            Outputs are the ALSA device and the Snapcast pipes of the config's [[outputs]] \
            (type = "snapcast"), numbered from 0. `reel outputs enable 1` turns output 1 \
            on; what plays goes to every output that is on. --json prints the protocol's \
            {"outputs": [...]} object.
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case enable, disable, toggle
    }

    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Print the JSON reply.") var json = false
    @Argument(help: "enable, disable or toggle.") var action: Action?
    @Argument(help: "The output's number.") var id: Int?

    func validate() throws {
        if (action == nil) != (id == nil) {
            throw ValidationError("give both an action and an output number, such as: reel outputs enable 1")
        }
    }

    func run() throws {
        let client = try connection.connect()
        let method = action.map { "outputs.\($0.rawValue)" } ?? "outputs.list"
        let params: JSONObject = id.map { ["id": .int(Int64($0))] } ?? [:]
        let result = try client.call(method, params)
        if json {
            Output.line(result.jsonString)
            return
        }
        let outputs: [OutputState]
        do {
            outputs = try decodeOutputs(result)
        } catch {
            throw CLIError.unexpectedReply(method, error)
        }
        for line in Output.outputLines(outputs) { Output.line(line) }
    }
}
