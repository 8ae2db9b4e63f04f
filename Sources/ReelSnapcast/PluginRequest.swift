// What snapserver asks the plugin (`doc/json_rpc_api/stream_plugin.md` in Snapcast, as
// snapserver 0.26 sends it), read from one line of stdin. Pure.

import ReelProtocol

/// `Plugin.Stream.Player.Control`'s commands.
public enum PlayerCommand: Equatable, Sendable {
    case play, pause, playPause, stop, next, previous
    /// Seconds from the current position, negative to go back.
    case seek(offset: Double)
    /// Seconds from the start.
    case setPosition(Double)

    static let names = ["play", "pause", "playPause", "stop", "next", "previous", "seek", "setPosition"]
}

/// MPRIS's loop status, as Snapcast names it.
public enum LoopStatus: String, Equatable, Sendable, CaseIterable {
    case none, track, playlist
}

/// `Plugin.Stream.Player.SetProperty`'s properties that Reel has.
public enum PlayerProperty: Equatable, Sendable {
    case volume(Int)
    case mute(Bool)
    case loopStatus(LoopStatus)
    case shuffle(Bool)

    static let names = ["volume", "mute", "loopStatus", "shuffle"]
}

/// A request of snapserver's.
public enum PluginRequest: Equatable, Sendable {
    case getProperties
    case control(PlayerCommand)
    case setProperty(PlayerProperty)
}

/// One line from snapserver, decoded.
public enum PluginIncoming: Equatable, Sendable {
    /// A request to carry out; `id` nil for a notification, which gets no reply.
    case request(id: JSONValue?, PluginRequest)
    /// A bad line: reply with `error` when `id` is not nil (it is `.null` when the line had no
    /// readable id).
    case invalid(id: JSONValue?, error: RPCError)
    /// Nothing to do: a blank line, or a reply (snapserver sends none; a reply is never answered).
    case ignored

    public static let getProperties = "Plugin.Stream.Player.GetProperties"
    public static let control = "Plugin.Stream.Player.Control"
    public static let setProperty = "Plugin.Stream.Player.SetProperty"

    /// Decodes one line (without its newline). Never fails: every problem is an `.invalid`
    /// whose message names the member or value at fault.
    public init(line: [UInt8]) {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            self = .ignored
            return
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            self = .invalid(id: .null, error: .parseError("invalid JSON: \(error)"))
            return
        }
        if case .array = value {
            self = .invalid(id: .null, error: .invalidRequest("reel-snapcast takes one request per line, not a batch"))
            return
        }
        if let object = value.objectValue, object["method"] == nil,
           object["result"] != nil || object["error"] != nil
        {
            self = .ignored
            return
        }
        switch RPCRequestDecoding(value) {
        case .invalid(let id, let error):
            self = .invalid(id: id, error: error)
        case .request(let request):
            do {
                self = .request(id: request.id, try Self.decode(request))
            } catch {
                self = .invalid(id: request.id, error: error)
            }
        }
    }

    static func decode(_ request: RPCRequest) throws(RPCError) -> PluginRequest {
        switch request.method {
        case getProperties:
            // Parameters are not used; any are accepted.
            return .getProperties
        case control:
            return .control(try decodeCommand(request.params))
        case setProperty:
            return .setProperty(try decodeProperty(request.params))
        default:
            throw RPCError(
                code: RPCErrorCode.methodNotFound,
                message: "unknown method \"\(request.method)\"; reel-snapcast answers \(getProperties), \(control) and \(setProperty)")
        }
    }

    /// `{"command": name, "params": {...}}`; `params` may be left out for commands without any.
    static func decodeCommand(_ params: JSONObject) throws(RPCError) -> PlayerCommand {
        guard let rawCommand = params["command"] else {
            throw .invalidParams("\(control) needs \"command\", one of \(list(PlayerCommand.names))")
        }
        guard let command = rawCommand.stringValue else {
            throw .invalidParams("\"command\" must be a string, not \(rawCommand.kindDescription)")
        }
        let arguments: JSONObject
        switch params["params"] {
        case nil, .null?: arguments = [:]
        case .object(let given)?: arguments = given
        case let other?: throw .invalidParams("\"params\" of the \(command) command must be an object, not \(other.kindDescription)")
        }
        switch command {
        case "play": return .play
        case "pause": return .pause
        case "playPause": return .playPause
        case "stop": return .stop
        case "next": return .next
        case "previous": return .previous
        case "seek":
            return .seek(offset: try seconds(arguments, "offset", of: command))
        case "setPosition":
            let position = try seconds(arguments, "position", of: command)
            guard position >= 0 else { throw .invalidParams("\"position\" must not be negative, not \(position)") }
            return .setPosition(position)
        default:
            throw .invalidParams("unknown command \"\(command)\"; commands are \(list(PlayerCommand.names))")
        }
    }

    /// A finite number of seconds in the command's `params`.
    private static func seconds(_ arguments: JSONObject, _ name: String, of command: String) throws(RPCError) -> Double {
        guard let value = arguments[name], !value.isNull else {
            throw .invalidParams("the \(command) command needs \"params\": {\"\(name)\": seconds}")
        }
        guard let number = value.doubleValue, number.isFinite else {
            throw .invalidParams("\"\(name)\" must be a number of seconds, not \(value.kindDescription)")
        }
        return number
    }

    /// `{"<property>": value}`: exactly one member, as snapserver sends it.
    static func decodeProperty(_ params: JSONObject) throws(RPCError) -> PlayerProperty {
        guard params.count == 1, let (name, value) = params.members.first else {
            throw .invalidParams(
                "\(setProperty) needs exactly one property, {\"<property>\": value}, one of \(list(PlayerProperty.names)); got \(params.count)")
        }
        switch name {
        case "volume":
            guard let volume = value.intValue else {
                throw .invalidParams("volume must be an integer from 0 to 100, not \(value.kindDescription == "a number" ? "\(value)" : value.kindDescription)")
            }
            guard (0...100).contains(volume) else { throw .invalidParams("volume must be from 0 to 100, not \(volume)") }
            return .volume(volume)
        case "mute":
            guard let muted = value.boolValue else { throw .invalidParams("mute must be true or false, not \(value.kindDescription)") }
            return .mute(muted)
        case "shuffle":
            guard let shuffle = value.boolValue else { throw .invalidParams("shuffle must be true or false, not \(value.kindDescription)") }
            return .shuffle(shuffle)
        case "loopStatus":
            guard let raw = value.stringValue, let status = LoopStatus(rawValue: raw) else {
                throw .invalidParams("loopStatus must be \(list(LoopStatus.allCases.map(\.rawValue))), not \(value)")
            }
            return .loopStatus(status)
        case "rate":
            throw .invalidParams("rate is not supported: Reel plays at normal speed only")
        default:
            throw .invalidParams("unknown property \"\(name)\"; properties are \(list(PlayerProperty.names))")
        }
    }

    private static func list(_ names: [String]) -> String {
        names.map { "\"\($0)\"" }.joined(separator: ", ")
    }
}
