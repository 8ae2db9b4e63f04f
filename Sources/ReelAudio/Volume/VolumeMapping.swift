// Hardware mixer controls to and from a volume of 0–100, the way alsamixer shows them.

#if canImport(Glibc)
import Glibc
#endif

/// The mapping of alsa-utils' `alsamixer/volume_mapping.c` (which MPD's hardware mixer uses
/// too), so that Reel's percent is alsamixer's bar:
/// - a control with no dB information: linear in raw register steps;
/// - a control whose dB range is at most 24 dB (`maxLinearRange`): linear in dB, every step
///   the same size;
/// - a wider control: cubic, normalized = 10^((dB − max) / 60 dB), the cube root of the linear
///   gain (so 50 % is −18 dB below the top). When the bottom of the range is a level rather
///   than mute, the curve is stretched so that the bottom is 0: with
///   min_norm = 10^((min − max) / 60 dB), percent = (normalized − min_norm) / (1 − min_norm).
///
/// dB values are in ALSA's unit, 0.01 dB (`-10350` is −103.5 dB); a range's lower bound may be
/// `muteDB` (`SND_CTL_TLV_DB_GAIN_MUTE`), a control whose lowest step mutes. Percents are
/// clamped to 0…100 and results rounded to the nearest step; a setting rounded by the hardware
/// may read back one percent off where the hardware's steps are coarser than 1 % (see
/// `ALSAMixer`, which keeps the percent asked for). Pure: any thread.
public enum VolumeMapping {
    /// alsamixer's `MAX_LINEAR_DB_SCALE`: ranges up to 24 dB are mapped linearly in dB.
    public static let maxLinearRange = 2400
    /// `SND_CTL_TLV_DB_GAIN_MUTE`: the lower bound of a range whose lowest step is mute.
    public static let muteDB = -9_999_999

    /// Whether `range` (0.01 dB) is mapped linearly in dB rather than on the cubic curve.
    public static func isLinear(dBRange range: ClosedRange<Int>) -> Bool {
        range.upperBound - range.lowerBound <= maxLinearRange
    }

    /// The percent (0–100) of a control at `dB` (0.01 dB) in a dB range.
    public static func percent(fromDB dB: Int, range: ClosedRange<Int>) -> Int {
        percent(normalized(fromDB: dB, range: range))
    }

    /// The dB value (0.01 dB) for `percent` in a dB range: its bounds at 0 and 100.
    public static func dB(fromPercent percent: Int, range: ClosedRange<Int>) -> Int {
        let clamped = min(max(percent, 0), 100)
        if clamped == 0 || range.lowerBound == range.upperBound { return range.lowerBound }
        if clamped == 100 { return range.upperBound }
        var volume = Double(clamped) / 100
        let span = Double(range.upperBound - range.lowerBound)
        if isLinear(dBRange: range) {
            return range.lowerBound + Int((volume * span).rounded())
        }
        if range.lowerBound != muteDB {
            let minimum = minimumNormalized(range)
            volume = volume * (1 - minimum) + minimum
        }
        let value = range.upperBound + Int((6000 * log10(volume)).rounded())
        return min(max(value, range.lowerBound), range.upperBound)
    }

    /// The percent (0–100) of a control at raw value `raw` in a raw range with no dB information.
    public static func percent(fromRaw raw: Int, range: ClosedRange<Int>) -> Int {
        percent(normalized(fromRaw: raw, range: range))
    }

    /// The raw value for `percent` in a raw range: the nearest step.
    public static func raw(fromPercent percent: Int, range: ClosedRange<Int>) -> Int {
        let clamped = min(max(percent, 0), 100)
        let span = Double(range.upperBound - range.lowerBound)
        return range.lowerBound + Int((Double(clamped) / 100 * span).rounded())
    }

    /// 0…1 for `dB` in a dB range, unrounded (for averaging channels and choosing steps).
    public static func normalized(fromDB dB: Int, range: ClosedRange<Int>) -> Double {
        guard range.upperBound > range.lowerBound else { return 0 }
        if dB <= range.lowerBound { return 0 }
        if dB >= range.upperBound { return 1 }
        let span = Double(range.upperBound - range.lowerBound)
        if isLinear(dBRange: range) {
            return Double(dB - range.lowerBound) / span
        }
        var normalized = pow(10, Double(dB - range.upperBound) / 6000)
        if range.lowerBound != muteDB {
            let minimum = minimumNormalized(range)
            normalized = (normalized - minimum) / (1 - minimum)
        }
        return min(max(normalized, 0), 1)
    }

    /// 0…1 for `raw` in a raw range, unrounded.
    public static func normalized(fromRaw raw: Int, range: ClosedRange<Int>) -> Double {
        guard range.upperBound > range.lowerBound else { return 0 }
        let value = Double(raw - range.lowerBound) / Double(range.upperBound - range.lowerBound)
        return min(max(value, 0), 1)
    }

    /// A 0…1 value as a percent, rounded half up.
    public static func percent(_ normalized: Double) -> Int {
        Int((min(max(normalized, 0), 1) * 100).rounded())
    }

    private static func minimumNormalized(_ range: ClosedRange<Int>) -> Double {
        pow(10, Double(range.lowerBound - range.upperBound) / 6000)
    }
}
