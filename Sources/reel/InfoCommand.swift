// info: what `daemon.info` says about the daemon.

import ArgumentParser
import ReelModel
import ReelProtocol

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show the daemon's version, devices and data directory.")

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's reply as JSON.")
    var json = false

    func run() throws {
        let client = try connection.connect()
        let result = try client.call("daemon.info")
        if json {
            Output.line(result.jsonString)
            return
        }
        let info: DaemonInfo
        do {
            info = try DaemonInfo(json: result)
        } catch {
            throw CLIError.unexpectedReply("daemon.info", error)
        }
        Output.line(Output.info(info, socket: client.socketPath))
    }
}
