// seek POSITION: absolute (`90`, `1:30`, `1:02:03`) or relative (`+10`, `-5`).

import ArgumentParser
import ReelModel
import ReelProtocol

struct SeekCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek",
        abstract: "Jump to a position in the playing track.",
        usage: "reel seek [--socket <path>] <position> | --mark <n>",
        discussion: """
            POSITION is seconds (90, 12.5), m:ss (1:30) or h:mm:ss (1:02:03) from the start, \
            or an offset from where playback is now: +10, -5, +1:00. A negative offset needs \
            no `--`: `reel seek -5` works. --mark N goes to the playing recording's mark N \
            (0 for the first, in the order library.get lists them).
            """)

    @OptionGroup var connection: ConnectionOptions

    // `.allUnrecognized` so that `-5` is taken as the position rather than an unknown option;
    // `validate()` insists on exactly one value.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Where to go: 90, 1:30, 1:02:03, +10 or -5.", valueName: "position"))
    var position: [String] = []

    @Option(help: "Go to the playing recording's mark N (0 for the first).") var mark: Int?

    func validate() throws {
        if mark != nil {
            guard position.filter({ $0 != "--" }).isEmpty else { throw ValidationError("give a position or --mark, not both") }
            return
        }
        _ = try target()
    }

    func target() throws(ValidationError) -> SeekTarget {
        let values = position.filter { $0 != "--" }
        guard let text = values.first else { throw ValidationError("missing the position to seek to (e.g. 90, 1:30, +10 or -5)") }
        guard values.count == 1 else {
            throw ValidationError("seek takes one position, not \(values.map { "'\($0)'" }.joined(separator: " "))")
        }
        guard let target = SeekTarget(parsing: text) else {
            throw ValidationError(
                "'\(text)' is not a position: give seconds (90), m:ss (1:30), h:mm:ss (1:02:03), or an offset (+10, -5)")
        }
        return target
    }

    func run() throws {
        if let mark {
            let state = try playerCall(try connection.connect(), "player.seek", ["mark": .int(Int64(mark))])
            Output.line(Output.summary(state))
            return
        }
        let params: JSONObject
        switch try target() {
        case .absolute(let seconds): params = ["position": .double(seconds)]
        case .relative(let seconds): params = ["offset": .double(seconds)]
        }
        let client = try connection.connect()
        let state = try playerCall(client, "player.seek", params)
        Output.line(Output.summary(state))
    }
}
