// The software mixer's volume law: a volume of 0–100 to the linear gain applied to samples.

#if canImport(Glibc)
import Glibc
#endif

/// The perceptual curve of the software mixer: gain = (volume / 100)³.
///
/// Why the cubic law (PulseAudio's, and the one alsamixer uses for wide hardware controls)
/// rather than MPD's software curve (e^(v/25) − 1) / (e^4 − 1):
/// - It is the law of Reel's own hardware mixer: `VolumeMapping` maps a control with more than
///   24 dB of range as alsamixer does, normalized = 10^(dB / 60), which is this cubic. So 50 %
///   sounds the same whether the mixer is `software` or `hardware`, and switching `kind` does
///   not jump the level.
/// - Desktop users know it: pavucontrol's, GNOME's and KDE's sliders and `pactl ... 50%` all
///   put 50 % at −18.06 dB, as here.
/// - Users coming from MPD hear little difference where volume is usually set: 75 % is −7.5 dB
///   here and −9 dB in MPD, 50 % is −18.1 dB here and −18.5 dB in MPD. The bottom is steeper
///   (25 % is −36 dB against −30 dB; 1 % is −120 dB against −62 dB, so the lowest few percent
///   are near silent on 16-bit audio), which is what PulseAudio users already have.
///
/// 100 is exactly gain 1.0 (bit-exact passthrough in `GainStage`) and 0 exactly 0. Pure:
/// any thread.
public enum VolumeCurve {
    /// The linear gain for `volume`, clamped to 0…100.
    public static func gain(forVolume volume: Int) -> Double {
        let clamped = min(max(volume, 0), 100)
        if clamped == 100 { return 1 }
        let fraction = Double(clamped) / 100
        return fraction * fraction * fraction
    }

    /// The gain for `volume` in dB (0 at 100, −∞ at 0).
    public static func decibels(forVolume volume: Int) -> Double {
        let gain = gain(forVolume: volume)
        return gain > 0 ? 20 * log10(gain) : -.infinity
    }
}
