// vol, mute: the daemon's volume control, one `mixer.*` request each (two for a toggle).

import ArgumentParser
import ReelModel
import ReelProtocol

/// Sends a `mixer.*` request and returns the MixerState in its reply.
func mixerCall(_ client: DaemonClient, _ method: String, _ params: JSONObject = [:]) throws(CLIError) -> MixerState {
    let result = try client.call(method, params)
    do {
        return try MixerState(json: result)
    } catch {
        throw CLIError.unexpectedReply(method, error)
    }
}

extension Output {
    /// `volume: 30%`, `volume: 30% (muted)`, `volume: 30% (hardware, Master)`; without a mixer,
    /// `volume: none (mixer = "none")`.
    static func mixerLine(_ state: MixerState) -> String {
        guard state.kind != .none, let volume = state.volume else { return "volume: none (mixer = \"none\")" }
        var notes: [String] = []
        if state.muted { notes.append("muted") }
        if state.kind == .hardware { notes.append(["hardware", state.control].compactMap(\.self).joined(separator: ", ")) }
        return "volume: \(volume)%" + (notes.isEmpty ? "" : " (\(notes.joined(separator: ", ")))")
    }
}

/// What `reel vol` was asked: nothing (show), a level, or a change.
enum VolumeArgument: Equatable {
    case show
    case level(Int)
    case offset(Int)

    /// `""` shows; `30` or `30%` sets (0 to 100); `+5`, `-10` (`%` allowed) change.
    init(parsing text: String?) throws(ValidationError) {
        guard let text else {
            self = .show
            return
        }
        var digits = Substring(text)
        if digits.hasSuffix("%") { digits = digits.dropLast() }
        var sign: Int?
        if let first = digits.first, first == "+" || first == "-" {
            sign = first == "+" ? 1 : -1
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), digits.count <= 9, let value = Int(digits)
        else {
            throw ValidationError("'\(text)' is not a volume: give 0 to 100 (30), or a change (+5, -10)")
        }
        if let sign {
            self = .offset(sign * value)
        } else {
            guard value <= 100 else { throw ValidationError("the volume goes from 0 to 100, not \(value)") }
            self = .level(value)
        }
    }
}

struct VolumeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vol",
        abstract: "Show or set the volume.",
        usage: "reel vol [--socket <path>] [<volume>]",
        discussion: """
            With no argument, shows the volume (0 to 100) and whether it is muted. N (or N%) sets \
            it; +N and -N change it, stopping at 0 and 100. A negative change needs no `--`: \
            `reel vol -10` works. Setting the volume does not unmute. Where the volume is applied \
            (Reel's own gain, the sound card's mixer, or nowhere) is `mixer` in the daemon's \
            config; with mixer = "none" setting it is refused.
            """)

    @OptionGroup var connection: ConnectionOptions

    // `.allUnrecognized` so that `-10` is taken as the change rather than an unknown option;
    // `validate()` insists on at most one value.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("The volume (30), or a change (+5, -10).", valueName: "volume"))
    var value: [String] = []

    func validate() throws {
        _ = try argument()
    }

    func argument() throws(ValidationError) -> VolumeArgument {
        let values = value.filter { $0 != "--" }
        guard values.count <= 1 else {
            throw ValidationError("vol takes one volume, not \(values.map { "'\($0)'" }.joined(separator: " "))")
        }
        return try VolumeArgument(parsing: values.first)
    }

    func run() throws {
        let argument = try argument()
        let client = try connection.connect()
        let state: MixerState
        switch argument {
        case .show: state = try mixerCall(client, "mixer.status")
        case .level(let level): state = try mixerCall(client, "mixer.setVolume", ["volume": .int(Int64(level))])
        case .offset(let offset): state = try mixerCall(client, "mixer.setVolume", ["offset": .int(Int64(offset))])
        }
        Output.line(Output.mixerLine(state))
    }
}

struct MuteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mute",
        abstract: "Mute or unmute (no argument: toggle).",
        discussion: "The volume is kept while muted and comes back with `reel mute off`.")

    @OptionGroup var connection: ConnectionOptions

    @Argument var value: Switch?

    func run() throws {
        let client = try connection.connect()
        let muted: Bool
        if let value {
            muted = value == .on
        } else {
            muted = !(try mixerCall(client, "mixer.status").muted)
        }
        Output.line(Output.mixerLine(try mixerCall(client, "mixer.setMuted", ["muted": .bool(muted)])))
    }
}
