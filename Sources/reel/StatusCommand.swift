// status: the player's state, as a line for people or the daemon's JSON.

import ArgumentParser
import ReelModel
import ReelProtocol

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what the player is doing.",
        discussion: "--json prints the PlayerState object of the protocol, on one line.")

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's PlayerState JSON.")
    var json = false

    func run() throws {
        let client = try connection.connect()
        let result = try client.call("player.status")
        if json {
            // The daemon writes with the same compact writer, so this is the text it sent.
            Output.line(result.jsonString)
            return
        }
        let state: PlayerState
        do {
            state = try PlayerState(json: result)
        } catch {
            throw CLIError.unexpectedReply("player.status", error)
        }
        Output.line(Output.statusLine(state))
        if let error = state.error { Output.line("last error: \(error.message)") }
        if let sleepAt = state.sleepAt { Output.line("sleep timer: stops at \(Output.localClock(sleepAt))") }
    }
}
