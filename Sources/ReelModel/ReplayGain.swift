// ReplayGain: what a file's tags say of its loudness, the user's settings, and the gain they
// give (`MixerState.replayGain` and `PlayerState.gain` in `protocol.md`, v3).

#if canImport(Glibc)
import Glibc
#endif

/// Which gain plays: none, each track's own, its album's, or the album's while the queue plays
/// in order and the track's while it plays at random (`auto`, as MPD's).
public enum ReplayGainMode: String, Sendable, Equatable, CaseIterable {
    case off, track, album, auto
}

/// One gain and the peak it goes with: `gain` in dB to bring the track (or album) to the
/// ReplayGain reference (−18 LUFS in ReplayGain 2.0), `peak` the largest sample as a fraction of
/// full scale (nil when not tagged).
public struct ReplayGainValue: Equatable, Hashable, Sendable {
    public var gain: Double
    public var peak: Double?

    public init(gain: Double, peak: Double? = nil) {
        self.gain = gain
        self.peak = peak
    }
}

/// What a file's tags (or a recording's measurement) say: a track gain, an album gain, either
/// or both missing.
public struct ReplayGainInfo: Equatable, Hashable, Sendable {
    public var track: ReplayGainValue?
    public var album: ReplayGainValue?

    public init(track: ReplayGainValue? = nil, album: ReplayGainValue? = nil) {
        self.track = track
        self.album = album
    }

    public static let none = ReplayGainInfo()
    public var isEmpty: Bool { track == nil && album == nil }

    /// The value `album` or track mode uses: the album's in album mode (the track's when the
    /// file has no album gain), the track's in track mode (the album's when it has no track
    /// gain); nil when the file has neither.
    public func value(album wantsAlbum: Bool) -> ReplayGainValue? {
        wantsAlbum ? album ?? track : track ?? album
    }
}

/// The user's ReplayGain settings (config `replaygain`, `replaygain_preamp`,
/// `replaygain_missing_preamp`, `replaygain_limit`; `mixer.setReplayGain`).
public struct ReplayGainSettings: Equatable, Sendable {
    public var mode: ReplayGainMode
    /// dB added to every tagged gain.
    public var preamp: Double
    /// dB applied to a file without ReplayGain tags.
    public var missingPreamp: Double
    /// Clipping prevention: the gain is lowered so that the tagged peak stays at full scale.
    public var limit: Bool

    /// The range `preamp` and `missingPreamp` may take, as MPD's.
    public static let preampRange: ClosedRange<Double> = -15...15
    /// The largest linear gain ever applied (about +23.5 dB), as MPD's: a bad tag cannot make a
    /// track deafening.
    public static let maximumScale = 15.0

    public init(mode: ReplayGainMode = .off, preamp: Double = 0, missingPreamp: Double = 0, limit: Bool = true) {
        self.mode = mode
        self.preamp = preamp
        self.missingPreamp = missingPreamp
        self.limit = limit
    }

    /// Whether album gains apply: album mode, or auto while the queue plays in order.
    public func usesAlbumGain(random: Bool) -> Bool {
        switch mode {
        case .off, .track: false
        case .album: true
        case .auto: !random
        }
    }

    /// The linear factor for a file with `info` (nil: its tags are not known, taken as none),
    /// with the queue playing at random or not; nil when ReplayGain is off.
    ///
    /// Tagged: 10^((gain + preamp)/20), lowered with `limit` so that peak × factor ≤ 1. Not
    /// tagged: 10^(missingPreamp/20). At most `maximumScale`.
    public func scale(for info: ReplayGainInfo?, random: Bool) -> Double? {
        guard mode != .off else { return nil }
        var scale: Double
        if let value = (info ?? .none).value(album: usesAlbumGain(random: random)) {
            scale = Self.linear(dB: value.gain + preamp)
            if limit, let peak = value.peak, peak > 0, scale * peak > 1 {
                scale = 1 / peak
            }
        } else {
            scale = Self.linear(dB: missingPreamp)
        }
        guard scale.isFinite else { return 1 }
        return min(max(scale, 0), Self.maximumScale)
    }

    /// `scale` in dB (what `PlayerState.gain` shows); nil when ReplayGain is off.
    public func gain(for info: ReplayGainInfo?, random: Bool) -> Double? {
        scale(for: info, random: random).map(Self.decibels(linear:))
    }

    public static func linear(dB: Double) -> Double { pow(10, dB / 20) }
    public static func decibels(linear: Double) -> Double { 20 * log10(linear) }
}

extension ReplayGainInfo {
    /// A tag's gain: "-6.48 dB", "+2.1 dB", "-6.48" (the unit is optional, case ignored); nil
    /// when it is not a finite number.
    public static func parseGain(_ text: String) -> Double? {
        var value = Substring(text).trimmingSpaces
        if value.lowercased().hasSuffix("db") { value = value.dropLast(2).trimmingSpaces }
        if value.hasPrefix("+") { value = value.dropFirst() }
        guard let number = Double(value), number.isFinite, abs(number) < 100 else { return nil }
        return number
    }

    /// A tag's peak: "0.988312" (a fraction of full scale; above 1 when the track clips); nil
    /// when it is not a finite number of at least 0.
    public static func parsePeak(_ text: String) -> Double? {
        guard let number = Double(Substring(text).trimmingSpaces), number.isFinite, number >= 0, number < 1000 else {
            return nil
        }
        return number
    }

    /// An Opus `R128_TRACK_GAIN` / `R128_ALBUM_GAIN`: a Q7.8 integer of dB to −23 LUFS, made a
    /// ReplayGain 2.0 gain (to −18 LUFS: 5 dB more, as MPD adds). The Opus header's output gain
    /// is not in it: the decoder applies that one always.
    public static func parseR128(_ text: String) -> Double? {
        guard let number = Int(Substring(text).trimmingSpaces), (-32768...32767).contains(number) else { return nil }
        return Double(number) / 256 + 5
    }

    /// The info of a file's tags (the raw strings, nil where absent): REPLAYGAIN_* first, the
    /// Opus R128_* gains where those are missing. A peak without its gain is ignored.
    public init(
        trackGain: String?, trackPeak: String?, albumGain: String?, albumPeak: String?,
        r128TrackGain: String? = nil, r128AlbumGain: String? = nil
    ) {
        func value(_ gain: String?, _ peak: String?, _ r128: String?) -> ReplayGainValue? {
            if let gain = gain.flatMap(Self.parseGain) {
                return ReplayGainValue(gain: gain, peak: peak.flatMap(Self.parsePeak))
            }
            return r128.flatMap(Self.parseR128).map { ReplayGainValue(gain: $0) }
        }
        self.init(
            track: value(trackGain, trackPeak, r128TrackGain), album: value(albumGain, albumPeak, r128AlbumGain))
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
