// reeld's state as Snapcast's stream properties (`Plugin.Stream.Player.GetProperties` and
// `Plugin.Stream.Player.Properties`). Pure: the same view and clock give the same JSON.

import ReelModel
import ReelProtocol

public enum SnapcastProperties {
    /// The properties without `metadata`. `view` nil means not connected to reeld: stopped,
    /// nothing can be controlled (snapserver then refuses commands itself). `now` is
    /// `CLOCK_MONOTONIC` seconds, the clock of `PlayerState.timestamp`, to bring a playing
    /// position up to date.
    public static func properties(of view: ReeldView?, at now: Double) -> JSONObject {
        guard let view else {
            return [
                "playbackStatus": "stopped", "canGoNext": false, "canGoPrevious": false, "canPlay": false,
                "canPause": false, "canSeek": false, "canControl": false,
            ]
        }
        let player = view.player ?? .stopped
        var object: JSONObject = ["playbackStatus": .string(player.state.rawValue)]
        if let options = view.queue?.options {
            object["loopStatus"] = .string(loopStatus(options).rawValue)
            object["shuffle"] = .bool(options.random)
        }
        if let mixer = view.mixer {
            if let volume = mixer.volume { object["volume"] = .int(Int64(volume)) }
            object["mute"] = .bool(mixer.muted)
        }
        object["position"] = .double(position(of: player, at: now))

        let hasEntries = (view.queue?.length ?? 0) > 0
        let active = player.state != .stopped
        let canPlay = hasEntries || player.source != nil
        object["canGoNext"] = .bool(active && hasEntries)
        object["canGoPrevious"] = .bool(active && hasEntries)
        object["canPlay"] = .bool(canPlay)
        // playPause needs canPause in snapserver, also to start from stopped.
        object["canPause"] = .bool(canPlay)
        object["canSeek"] = .bool(active && player.duration != nil)
        object["canControl"] = true
        return object
    }

    /// `repeat` and `single` as MPRIS's loop status: repeat with single repeats the track,
    /// repeat alone the queue; without repeat (single alone stops after the track) it is none.
    public static func loopStatus(_ options: QueueOptions) -> LoopStatus {
        guard options.repeats else { return .none }
        return options.single == .off ? .playlist : .track
    }

    /// Seconds into the track at `now`: a playing position advances from its timestamp (never
    /// past the duration).
    public static func position(of player: PlayerState, at now: Double) -> Double {
        guard player.state == .playing, now > player.timestamp else { return player.position }
        let advanced = player.position + (now - player.timestamp)
        if let duration = player.duration, advanced > duration { return duration }
        return advanced
    }

    /// The metadata of the current track: `trackId` (the queue entry's id), `title` (a
    /// recording's name, a file's name), `duration`, `url` (a file's `file://` URL), `album` (a
    /// recording's folder). `{}` when there is no current track, so that snapserver drops what
    /// it showed. No `file`: snapserver 0.26 does not know that tag (its documentation lists it)
    /// and would log a warning for every push.
    public static func metadata(of view: ReeldView?) -> JSONObject {
        guard let track = view?.track else { return [:] }
        var object: JSONObject = ["trackId": .string(String(track.id)), "title": .string(title(of: track.source))]
        if let duration = track.duration { object["duration"] = .double(duration) }
        switch track.source {
        case .file(let path):
            object["url"] = .string(fileURL(path))
        case .item(_, let path, _):
            if let folder = folderName(of: path) { object["album"] = .string(folder) }
        case .url(let url, let name, _):
            // A stream: its URL, and the station as the album (the title on air is `title`).
            object["url"] = .string(url)
            if let name { object["album"] = .string(name) }
        }
        return object
    }

    /// A recording's name; a file's name (the last part of its path).
    public static func title(of source: PlayerSource) -> String {
        switch source {
        case .item(_, _, let name): return name
        case .url(let url, let name, let title): return title ?? name ?? url
        case .file(let path):
            let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init)
            return name ?? path
        }
    }

    /// The name of the folder a tree path is in; nil for the root.
    static func folderName(of treePath: String) -> String? {
        let parts = treePath.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 2 else { return nil }
        return String(parts[parts.count - 2])
    }

    /// `file://` and the path, each byte outside RFC 3986's unreserved set and `/` as `%XX`.
    public static func fileURL(_ path: String) -> String {
        var url = "file://"
        let hex = Array("0123456789ABCDEF")
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"), UInt8(ascii: "/"):
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                url.append("%")
                url.append(hex[Int(byte >> 4)])
                url.append(hex[Int(byte & 0x0F)])
            }
        }
        return url
    }
}
