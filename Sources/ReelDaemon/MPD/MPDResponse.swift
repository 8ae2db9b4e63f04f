// What an MPD command answers: `Key: value` lines, or an ACK with MPD's code and message.

import NIOCore
import ReelModel

/// The body of a successful reply (the lines before `OK` / `list_OK`). Values never contain a
/// newline (a tag with one would end the reply early: it is replaced by a space), and numbers
/// always use `.` as the decimal separator.
struct MPDResponse {
    private(set) var text = ""
    /// The payload of `binary: N` (`albumart`, `readpicture`), written after `text`: always the
    /// last field of a reply, as in MPD.
    private(set) var binary: [UInt8]?

    init() {}

    /// Room for `bytes` of text (a reply of many songs grows once, not step by step).
    mutating func reserveCapacity(_ bytes: Int) {
        text.reserveCapacity(bytes)
    }

    mutating func field(_ key: String, _ value: String) {
        text += key
        text += ": "
        if value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) {
            text += value.replacing("\r\n", with: " ").replacing("\n", with: " ").replacing("\r", with: " ")
        } else {
            text += value
        }
        text += "\n"
    }

    mutating func field(_ key: String, _ value: Int) {
        field(key, String(value))
    }

    /// Seconds with three decimals, as MPD prints `elapsed` and `duration`.
    mutating func field(_ key: String, seconds: Double) {
        field(key, Self.milliseconds(seconds))
    }

    mutating func append(_ other: MPDResponse) {
        text += other.text
    }

    /// Ends the reply with `binary: N`, the N bytes and a newline.
    mutating func binary(_ bytes: [UInt8]) {
        binary = bytes
    }

    var isEmpty: Bool { text.isEmpty && binary == nil }

    /// `12.345`: three decimals, a dot, whatever the locale.
    static func milliseconds(_ seconds: Double) -> String {
        let total = wholeMilliseconds(seconds)
        let fraction = total % 1000
        let padded = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(total / 1000).\(padded)"
    }

    /// Seconds as whole milliseconds, for a length a file's header gave: negative and NaN are 0,
    /// and a bogus header's absurd length is held at 10^15 ms (~31,700 years) rather than
    /// trapping on a conversion to Int.
    static func wholeMilliseconds(_ seconds: Double) -> Int {
        guard !seconds.isNaN, seconds > 0 else { return 0 }
        return Int(min(seconds * 1000, 1e15).rounded())
    }
}

/// An MPD error reply: `ACK [code@index] {command} message`.
struct MPDAck: Error, Equatable {
    /// MPD's `enum ack` (`src/protocol/Ack.hxx`).
    enum Code: Int, Sendable {
        case notList = 1, argument = 2, password = 3, permission = 4, unknown = 5
        case noExist = 50, playlistMax = 51, system = 52, playlistLoad = 53, updateAlready = 54
        case playerSync = 55, exist = 56
    }

    var code: Code
    var message: String
    /// The command's name, filled in by the connection when the handler leaves it empty.
    var command: String?

    init(_ code: Code, _ message: String, command: String? = nil) {
        self.code = code
        self.message = message
        self.command = command
    }

    /// MPD's argument errors: `Integer expected: abc`.
    static func argument(_ what: String, _ value: String) -> MPDAck {
        MPDAck(.argument, "\(what): \(value)")
    }

    /// The reply line for the command at `index` of a command list (0 outside a list).
    func line(index: Int) -> String {
        let message = self.message.replacing("\n", with: " ")
        return "ACK [\(code.rawValue)@\(index)] {\(command ?? "")} \(message)\n"
    }

    /// A core error as MPD would name its kind: a missing entry or file is `NO_EXIST`, a bad
    /// value `ARG`, a refused path `PERMISSION`, a device or disk failure `SYSTEM`.
    init(_ error: ReelError) {
        let code: Code
        switch error.reason {
        case .notFound, .notARecording, .notAFolder: code = .noExist
        case .outOfRange, .invalidName, .root, .cycle, .notPlaying, .notSeekable: code = .argument
        case .nameTaken: code = .exist
        case .forbidden, .readOnly: code = .permission
        case .unsupportedFormat, .corruptFile: code = .argument
        // MPD's own answer to a stream that cannot be opened (`Failed to open …`).
        case .unreachable: code = .system
        case .busy, .deviceBusy, .deviceUnavailable, .diskFull, .ioError, .notRecording, .noMixer: code = .system
        }
        self.init(code, error.message)
    }
}

/// MPD's idle subsystems, in the order MPD prints them (`src/IdleFlags.cxx`).
struct MPDSubsystems: OptionSet, Hashable, Sendable {
    let rawValue: UInt16

    static let database = MPDSubsystems(rawValue: 1 << 0)
    static let storedPlaylist = MPDSubsystems(rawValue: 1 << 1)
    static let playlist = MPDSubsystems(rawValue: 1 << 2)
    static let player = MPDSubsystems(rawValue: 1 << 3)
    static let mixer = MPDSubsystems(rawValue: 1 << 4)
    static let output = MPDSubsystems(rawValue: 1 << 5)
    static let options = MPDSubsystems(rawValue: 1 << 6)
    static let sticker = MPDSubsystems(rawValue: 1 << 7)
    static let update = MPDSubsystems(rawValue: 1 << 8)
    static let subscription = MPDSubsystems(rawValue: 1 << 9)
    static let message = MPDSubsystems(rawValue: 1 << 10)
    static let neighbor = MPDSubsystems(rawValue: 1 << 11)
    static let mount = MPDSubsystems(rawValue: 1 << 12)
    static let partition = MPDSubsystems(rawValue: 1 << 13)

    static let names: [(name: String, subsystem: MPDSubsystems)] = [
        ("database", .database), ("stored_playlist", .storedPlaylist), ("playlist", .playlist), ("player", .player),
        ("mixer", .mixer), ("output", .output), ("options", .options), ("sticker", .sticker), ("update", .update),
        ("subscription", .subscription), ("message", .message), ("neighbor", .neighbor), ("mount", .mount),
        ("partition", .partition),
    ]

    static let all = MPDSubsystems(rawValue: (1 << 14) - 1)

    /// The subsystems named by `idle`'s arguments (case-insensitive, as MPD); all when none.
    static func parse(_ arguments: [String]) throws(MPDAck) -> MPDSubsystems {
        guard !arguments.isEmpty else { return .all }
        var set: MPDSubsystems = []
        for argument in arguments {
            let lowered = argument.lowercased()
            guard let match = names.first(where: { $0.name == lowered }) else {
                throw MPDAck(.argument, "Unrecognized idle event: \(argument)")
            }
            set.insert(match.subsystem)
        }
        return set
    }

    /// `changed: X` lines for these subsystems, in MPD's order.
    var changedLines: String {
        var text = ""
        for (name, subsystem) in Self.names where contains(subsystem) {
            text += "changed: \(name)\n"
        }
        return text
    }
}
