// replaygain: show or change the daemon's ReplayGain settings, one `mixer.*` request.

import ArgumentParser
import ReelModel
import ReelProtocol

extension Output {
    /// `replaygain: album (preamp +0.0 dB, untagged +0.0 dB, limit on)`.
    static func replayGainLine(_ settings: ReplayGainSettings) -> String {
        func decibels(_ value: Double) -> String {
            let tenths = Int((abs(value) * 10).rounded())
            return (value < 0 && tenths > 0 ? "-" : "+") + "\(tenths / 10).\(tenths % 10) dB"
        }
        return "replaygain: \(settings.mode.rawValue) (preamp \(decibels(settings.preamp)), untagged "
            + "\(decibels(settings.missingPreamp)), limit \(settings.limit ? "on" : "off"))"
    }
}

/// The modes, as the command line takes them.
enum ReplayGainModeArgument: String, ExpressibleByArgument, CaseIterable {
    case off, track, album, auto
}

struct ReplayGainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replaygain",
        abstract: "Show or set ReplayGain (off, track, album, auto).",
        discussion: """
            With no argument, shows the mode, the preamp, the preamp for files without ReplayGain \
            tags and whether clipping prevention (the peak tags) is on. `auto` plays album gains \
            while the queue plays in order and track gains while it plays at random. Preamps are \
            in dB, from -15 to 15. ReplayGain is applied in Reel's own gain stage whatever the \
            mixer; `off` leaves the samples as they are. What is set is kept across restarts. \
            A negative preamp is written with `=`: `reel replaygain --preamp=-3`.
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: "off, track, album or auto.") var mode: ReplayGainModeArgument?

    @Option(help: ArgumentHelp("dB added to every tagged gain (-15 to 15).", valueName: "dB"))
    var preamp: Double?

    @Option(help: ArgumentHelp("dB applied to files without ReplayGain tags (-15 to 15).", valueName: "dB"))
    var missingPreamp: Double?

    @Option(help: ArgumentHelp("Clipping prevention from the peak tags.", valueName: "on|off"))
    var limit: Switch?

    func validate() throws {
        for (name, value) in [("--preamp", preamp), ("--missing-preamp", missingPreamp)] {
            if let value, !(value.isFinite && ReplayGainSettings.preampRange.contains(value)) {
                throw ValidationError("\(name) goes from -15 to 15 dB, not \(value)")
            }
        }
    }

    func run() throws {
        let client = try connection.connect()
        var params: JSONObject = [:]
        if let mode { params["mode"] = .string(mode.rawValue) }
        if let preamp { params["preamp"] = .double(preamp) }
        if let missingPreamp { params["missingPreamp"] = .double(missingPreamp) }
        if let limit { params["limit"] = .bool(limit == .on) }
        let state = try mixerCall(client, params.isEmpty ? "mixer.status" : "mixer.setReplayGain", params)
        Output.line(Output.replayGainLine(state.replayGain))
    }
}
