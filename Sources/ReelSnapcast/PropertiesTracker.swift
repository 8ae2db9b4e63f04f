// When to push `Plugin.Stream.Player.Properties`: snapserver never polls, so every change
// must be pushed, but a position that merely advanced with playing time is no change. Pure.

import ReelProtocol

/// Remembers what snapserver was last told and decides what to push next.
public struct PropertiesTracker: Sendable {
    /// A position further than this from where the last one would be by now is a jump (a
    /// seek) and is pushed.
    public static let positionTolerance = 1.0

    private var properties: JSONObject?
    private var metadata: JSONObject?
    /// The last position told, whether it was advancing, and when.
    private var position: (seconds: Double, playing: Bool, at: Double)?

    public init() {}

    /// snapserver was told these (a `GetProperties` reply or a push).
    public mutating func told(properties: JSONObject, metadata: JSONObject, at now: Double) {
        var rest = properties
        let seconds = rest.removeValue(forKey: "position")?.doubleValue
        self.properties = rest
        self.metadata = metadata
        position = seconds.map { ($0, rest["playbackStatus"] == "playing", now) }
    }

    /// The params of the push to send for the state now, or nil when nothing changed: all the
    /// properties, with `metadata` only when it changed (snapserver keeps the last it got).
    /// Records the push as told.
    public mutating func push(properties: JSONObject, metadata: JSONObject, at now: Double) -> JSONObject? {
        var rest = properties
        let seconds = rest.removeValue(forKey: "position")?.doubleValue
        let metadataChanged = metadata != self.metadata
        var changed = metadataChanged || rest != self.properties
        if !changed {
            switch (seconds, position) {
            case (nil, nil): break
            case (let seconds?, let last?):
                let expected = last.seconds + (last.playing ? now - last.at : 0)
                changed = abs(seconds - expected) > Self.positionTolerance
            default: changed = true
            }
        }
        guard changed else { return nil }
        told(properties: properties, metadata: metadata, at: now)
        var params = properties
        if metadataChanged { params["metadata"] = .object(metadata) }
        return params
    }
}
