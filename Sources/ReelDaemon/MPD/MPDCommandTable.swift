// The MPD commands Reel answers: each one's name, permission, argument counts and handler.

import ReelModel

/// MPD's permission bits (`src/client/Permission.hxx`).
struct MPDPermission: OptionSet, Sendable {
    let rawValue: UInt8
    static let read = MPDPermission(rawValue: 1)
    static let add = MPDPermission(rawValue: 2)
    /// `PERMISSION_PLAYER` ("control" in mpd.conf).
    static let player = MPDPermission(rawValue: 4)
    static let admin = MPDPermission(rawValue: 8)
    static let all: MPDPermission = [.read, .add, .player, .admin]
}

/// What one connection has negotiated: its permissions, the tags it wants, the binary chunk
/// size, whether it came over a Unix socket (which may add absolute paths), its channels and
/// messages. Lives on the event loop with its connection.
final class MPDClient {
    var permission: MPDPermission
    var tags: MPDTagSet = .all
    var binaryLimit = 8192
    let isLocal: Bool
    var mailbox = MPDMailbox()
    /// Posts idle events to this client's connection (set by `MPDConnection`).
    var notify: (MPDSubsystems) -> Void = { _ in }

    init(permission: MPDPermission, isLocal: Bool) {
        self.permission = permission
        self.isLocal = isLocal
    }
}

/// One command to carry out: its arguments, the connection's state.
struct MPDRequest {
    let name: String
    let arguments: [String]
    let client: MPDClient
    /// The table the command came from (for `commands`).
    let table: MPDCommandTable

    var count: Int { arguments.count }

    subscript(index: Int) -> String { arguments[index] }

    /// MPD's `ParseCommandArgInt`: a whole number (`Integer expected: x`).
    func int(_ index: Int, in range: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)) throws(MPDAck) -> Int {
        let text = arguments[index]
        guard let value = Int(text) ?? Self.leadingInteger(text) else { throw .argument("Integer expected", text) }
        guard range.contains(value) else { throw .argument("Number too large", text) }
        return value
    }

    /// MPD's `ParseCommandArgUnsigned`.
    func unsigned(_ index: Int) throws(MPDAck) -> Int {
        let text = arguments[index]
        guard let value = Int(text) ?? Self.leadingInteger(text) else { throw .argument("Integer expected", text) }
        // MPD reads with strtoul: a negative number wraps around and is "too large".
        guard value >= 0, value <= Int(UInt32.max) else { throw .argument("Number too large", text) }
        return value
    }

    /// MPD's `ParseCommandArgBool`: exactly `0` or `1`.
    func bool(_ index: Int) throws(MPDAck) -> Bool {
        switch arguments[index] {
        case "0": return false
        case "1": return true
        default: throw .argument("Boolean (0/1) expected", arguments[index])
        }
    }

    /// MPD's `ParseCommandArgFloat` / song time: seconds, not negative unless `signed`.
    func seconds(_ index: Int, signed: Bool = false) throws(MPDAck) -> Double {
        let text = arguments[index]
        guard let value = Double(text), value.isFinite else { throw .argument("Float expected", text) }
        if !signed, value < 0 { throw .argument("Negative value not allowed", text) }
        return value
    }

    /// MPD's `ParseCommandArgRange`: `N` (one position), `START:END` or `START:` (to the end,
    /// given as nil).
    func range(_ index: Int) throws(MPDAck) -> (start: Int, end: Int?) {
        let text = arguments[index]
        // MPD's old clients send -1 for "everything".
        if text == "-1" { return (0, nil) }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let start = Int(parts[0]) ?? Self.leadingInteger(String(parts[0])) else {
            throw .argument("Integer or range expected", text)
        }
        guard start >= 0 else { throw .argument("Number is negative", text) }
        guard start <= Int(Int32.max) else { throw .argument("Number too large", text) }
        guard parts.count == 2 else { return (start, start + 1) }
        if parts[1].isEmpty { return (start, nil) }
        guard let end = Int(parts[1]) else { throw .argument("Integer or range expected", text) }
        guard end >= 0 else { throw .argument("Number is negative", text) }
        guard end <= Int(Int32.max) else { throw .argument("Number too large", text) }
        guard end >= start else { throw .argument("Malformed range", text) }
        return (start, end)
    }

    /// Digits too many for an `Int`: MPD's strtol saturates, and the range check then says
    /// "Number too large"; so a long run of digits reads as the largest number.
    private static func leadingInteger(_ text: String) -> Int? {
        let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return text.first == "-" ? Int.min : Int.max
    }
}

/// How a handler answers: once, from any thread.
typealias MPDReply = @Sendable (Result<MPDResponse, MPDAck>) -> Void

/// One command of the table.
struct MPDCommand: Sendable {
    let name: String
    let permission: MPDPermission
    /// Argument counts; `max` nil means any number.
    let min: Int
    let max: Int?
    let run: @Sendable (MPDRequest, @escaping MPDReply) -> Void

    /// `run` answers through `reply`, now or later; an ACK it throws (a bad argument, before it
    /// starts anything) is the answer instead.
    init(
        _ name: String, _ permission: MPDPermission, _ min: Int, _ max: Int?,
        _ run: @escaping @Sendable (MPDRequest, @escaping MPDReply) throws(MPDAck) -> Void
    ) {
        self.name = name
        self.permission = permission
        self.min = min
        self.max = max
        self.run = { request, reply in
            do throws(MPDAck) {
                try run(request, reply)
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// A handler that answers at once: returns the body or throws the ACK.
    static func now(
        _ name: String, _ permission: MPDPermission, _ min: Int, _ max: Int?,
        _ body: @escaping @Sendable (MPDRequest) throws(MPDAck) -> MPDResponse
    ) -> MPDCommand {
        MPDCommand(name, permission, min, max) { request, reply throws(MPDAck) in reply(.success(try body(request))) }
    }

    /// MPD's checks before a command runs: permission, then argument count.
    func check(_ request: MPDRequest) throws(MPDAck) {
        guard request.client.permission.isSuperset(of: permission) else {
            throw MPDAck(.permission, "you don't have permission for \"\(name)\"")
        }
        if let max, min == max, request.count != max {
            throw MPDAck(.argument, "wrong number of arguments for \"\(name)\"")
        }
        if request.count < min { throw MPDAck(.argument, "too few arguments for \"\(name)\"") }
        if let max, request.count > max { throw MPDAck(.argument, "too many arguments for \"\(name)\"") }
    }
}

/// The commands, by name. `commands` lists exactly these (those the client may run), sorted as
/// MPD sorts its table; anything else is `ACK [5@0] {} unknown command "x"`.
struct MPDCommandTable: Sendable {
    private let byName: [String: MPDCommand]
    let sorted: [MPDCommand]

    init(_ commands: [MPDCommand]) {
        var byName: [String: MPDCommand] = [:]
        for command in commands {
            precondition(byName[command.name] == nil, "MPD command \(command.name) registered twice")
            byName[command.name] = command
        }
        self.byName = byName
        sorted = commands.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
    }

    func command(named name: String) -> MPDCommand? { byName[name] }
}
