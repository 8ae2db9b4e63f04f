// The volume control as clients see it (`MixerState` in `protocol.md`, v2).

/// Where the volume is applied: a gain stage in Reel's audio path, the sound card's own
/// control, or nowhere.
public enum MixerKind: String, Sendable, Equatable, CaseIterable {
    case software, hardware, none
}

/// The mixer's state: `volume` 0–100 (nil without a mixer), `muted`, its kind, the
/// hardware control's name, and the ReplayGain settings (applied in software whatever the kind).
public struct MixerState: Equatable, Sendable {
    public var volume: Int?
    public var muted: Bool
    public var kind: MixerKind
    public var control: String?
    public var replayGain: ReplayGainSettings

    public init(
        volume: Int?, muted: Bool, kind: MixerKind, control: String? = nil,
        replayGain: ReplayGainSettings = ReplayGainSettings()
    ) {
        self.volume = volume
        self.muted = muted
        self.kind = kind
        self.control = control
        self.replayGain = replayGain
    }
}
