// snapserver's commands and properties as reeld's methods, and reeld's errors as replies
// snapserver can pass on. Pure.

import ReelProtocol

/// One request to send to reeld.
public struct ReeldCall: Equatable, Sendable {
    public var method: String
    public var params: JSONObject

    public init(_ method: String, _ params: JSONObject = [:]) {
        self.method = method
        self.params = params
    }
}

public enum ReeldCommands {
    /// `play` resumes, or starts the queue's current entry (the first once the queue ended);
    /// `playPause` is reeld's toggle; `seek` is relative, `setPosition` absolute.
    public static func call(for command: PlayerCommand) -> ReeldCall {
        switch command {
        case .play: ReeldCall("player.play")
        case .pause: ReeldCall("player.pause")
        case .playPause: ReeldCall("player.toggle")
        case .stop: ReeldCall("player.stop")
        case .next: ReeldCall("player.next")
        case .previous: ReeldCall("player.previous")
        case .seek(let offset): ReeldCall("player.seek", ["offset": .double(offset)])
        case .setPosition(let position): ReeldCall("player.seek", ["position": .double(position)])
        }
    }

    /// `loopStatus` sets repeat and single together (none: both off; track: both on;
    /// playlist: repeat alone), as MPD clients' MPRIS bridges do.
    public static func call(for property: PlayerProperty) -> ReeldCall {
        switch property {
        case .volume(let volume): ReeldCall("mixer.setVolume", ["volume": .int(Int64(volume))])
        case .mute(let muted): ReeldCall("mixer.setMuted", ["muted": .bool(muted)])
        case .shuffle(let random): ReeldCall("queue.setOptions", ["random": .bool(random)])
        case .loopStatus(let status):
            switch status {
            case .none: ReeldCall("queue.setOptions", ["repeat": false, "single": false])
            case .track: ReeldCall("queue.setOptions", ["repeat": true, "single": true])
            case .playlist: ReeldCall("queue.setOptions", ["repeat": true, "single": false])
            }
        }
    }

    /// reeld refused: the same code and message, with `data` a string (the message and
    /// reeld's reason): snapserver 0.26 reads an error's `data` as a string and shows
    /// "<its text for the code>: <data>" to its own clients.
    /// Errors of the link itself (not connected, connection lost) already have a string
    /// `data` and pass unchanged.
    public static func snapserverError(fromReeld error: RPCError) -> RPCError {
        if case .string? = error.data { return error }
        var detail = "reeld: \(error.message)"
        if let reason = error.reason { detail += " (\(reason))" }
        return RPCError(code: error.code, message: error.message, data: .string(detail))
    }

    /// An error of the plugin's own, with `data` the message (see `snapserverError`).
    public static func snapserverError(_ error: RPCError) -> RPCError {
        if case .string? = error.data { return error }
        return RPCError(code: error.code, message: error.message, data: .string(error.message))
    }
}
