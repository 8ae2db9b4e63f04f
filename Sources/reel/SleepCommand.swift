// sleep: the sleep timer (`player.sleep`).

import ArgumentParser
import ReelModel
import ReelProtocol

extension Output {
    /// `23:41:05`: an instant on this machine's wall clock.
    static func localClock(_ instant: Double) -> String {
        let seconds = Int64(instant.rounded())
        let local = LocalDateTime(localSeconds: seconds + Int64(SystemTimeZone().utcOffset(at: seconds)))
        return String(local.description.split(separator: " ").last ?? "")
    }
}

struct SleepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleep",
        abstract: "Stop the music after a while (a sleep timer), or cancel it: reel sleep 30m, reel sleep off.",
        discussion: """
            The music fades out over the last --fade-out (default 30 s, at most the whole time), \
            then stops; the volume is as it was for the next play. A new timer replaces the old. \
            Durations: 90, 90s, 45m, 1h, 1h30m. `reel status` shows when it stops.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Argument(help: "How long until it stops (30m), or off.") var after: String
    @Option(name: .customLong("fade-out"), help: "Fade out over this long before stopping (default 30s).") var fadeOut: String?

    func run() throws {
        let params: JSONObject
        if after == "off" {
            guard fadeOut == nil else { throw ValidationError("reel sleep off takes no --fade-out") }
            params = ["cancel": true]
        } else {
            guard let seconds = parseSpokenDuration(after), seconds > 0 else {
                throw ValidationError("give how long until the music stops (such as 30m, 1h or 90s), or off; not \"\(after)\"")
            }
            var fade = min(30, seconds)
            if let fadeOut {
                guard let value = parseSpokenDuration(fadeOut) else {
                    throw ValidationError("--fade-out must be a duration such as 30s or 2m, not \"\(fadeOut)\"")
                }
                fade = value
            }
            params = ["after": .double(seconds), "fadeOut": .double(fade)]
        }
        let result = try connection.connect().call("player.sleep", params)
        if let at = result["at"]?.stringValue, let instant = CivilTime.instant(iso8601: at) {
            Output.line("the music stops at \(Output.localClock(Double(instant)))")
        } else {
            Output.line("no sleep timer")
        }
    }
}
