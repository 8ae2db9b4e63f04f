// The software mixer on the audio thread: scales interleaved samples in place, ramping changes.

import ReelModel

/// Applies the software volume to PCM in place.
///
/// The control side decides the level; the audio thread owns the stage and calls every method
/// (the stage is a value with no locks: hand it new targets through the engine's commands).
/// `apply` is real-time safe: no allocation, no locks, no logging, no system calls.
///
/// - At gain 1 with no ramp in progress the buffer is not touched (bit-exact passthrough).
/// - A new target is reached by a linear ramp over `rampMilliseconds` of frames, from the gain
///   in effect (also mid-ramp), so a change does not click. The ramp ends exactly on the target.
/// - 16-bit samples are scaled in `Float` with TPDF dither (the sum of two uniform values in
///   ±0.5 LSB) before rounding, whenever the gain is not 1. Digital silence (a zero sample) stays
///   zero, and at gain 0 the buffer is zeroed.
/// - 32-bit samples (24- or 32-bit audio, left-justified) are scaled in `Double` and rounded to
///   the nearest 32-bit value: the error (under 2^-32 of full scale, about −192 dBFS) is far below
///   what a 24-bit DAC resolves, so no dither is added.
/// - The gain is the volume's times the ReplayGain of the track being written (see
///   `PlaybackRunner`): above 1 only when ReplayGain raises a quiet track (clipping prevention
///   is the ReplayGain `limit` setting's job); results are always clamped to the sample range.
public struct GainStage: Sendable {
    /// How long a change of level takes.
    public static let rampMilliseconds = 5

    /// The gain of the last frame processed (the ramp's start when a target changes).
    public private(set) var gain: Double = 1
    /// Where the ramp ends.
    public private(set) var target: Double = 1
    /// The ramp in progress: its start, its length in frames, and how many frames it has done.
    /// `rampFrames == 0`: no ramp. A new target sets `rampPending`: the length depends on the
    /// sample rate, known in `apply`.
    private var rampStart: Double = 1
    private var rampFrames = 0
    private var rampDone = 0
    private var rampPending = false
    /// xorshift32 state for the dither; never zero.
    private var noise: UInt32 = 0x9E37_79B9

    /// A stage at `volume` (on `VolumeCurve`), silent when `muted`, with no ramp pending.
    public init(volume: Int = 100, muted: Bool = false) {
        let initial = muted ? 0 : VolumeCurve.gain(forVolume: volume)
        gain = initial
        target = initial
        rampStart = initial
    }

    /// Gain 1 and no ramp: `apply` leaves the samples as they are.
    public var isPassthrough: Bool { gain == 1 && target == 1 && rampFrames == 0 && !rampPending }

    /// True while the level is still moving towards the target.
    public var isRamping: Bool { rampPending || rampFrames > 0 }

    /// Moves towards the gain of `volume` on `VolumeCurve`, or towards silence when `muted`.
    public mutating func setTarget(volume: Int, muted: Bool) {
        setTarget(gain: muted ? 0 : VolumeCurve.gain(forVolume: volume))
    }

    /// The largest gain the stage applies (ReplayGain's bound, about +23.5 dB).
    public static let maximumGain = ReplayGainSettings.maximumScale

    /// Moves towards a linear gain, clamped to 0…`maximumGain` (for gains computed elsewhere,
    /// such as ReplayGain combined with the volume).
    public mutating func setTarget(gain newTarget: Double) {
        let clamped = newTarget.isNaN ? 0 : min(max(newTarget, 0), Self.maximumGain)
        if clamped == target { return }
        target = clamped
        rampPending = gain != clamped
        rampFrames = 0
        rampDone = 0
    }

    /// Ends any ramp at its target: the next frame is at the target level. For when the engine
    /// drops what the device holds and refills it, so the new level starts at the first audible
    /// frame instead of ramping from a level nobody heard.
    public mutating func jumpToTarget() {
        gain = target
        rampStart = target
        rampFrames = 0
        rampDone = 0
        rampPending = false
    }

    /// Scales `frames` interleaved frames of `format` at `buffer` in place.
    public mutating func apply(to buffer: UnsafeMutableRawPointer, frames: Int, format: PCMFormat) {
        guard frames > 0, format.channels > 0 else { return }
        if rampPending {
            rampPending = false
            rampStart = gain
            rampFrames = max(1, format.sampleRate * Self.rampMilliseconds / 1000)
            rampDone = 0
        }
        if rampFrames == 0 && gain == 1 { return }
        var frame = 0
        if rampFrames > 0 {
            // Frame k of the ramp (1-based) is at start + (target − start)·k/n: its last frame
            // is exactly the target and the gain moves by the same step every frame.
            let run = min(frames, rampFrames - rampDone)
            let step = (target - rampStart) / Double(rampFrames)
            for index in 0..<run {
                let done = rampDone + index + 1
                let frameGain = done == rampFrames ? target : rampStart + step * Double(done)
                scale(buffer, from: index, count: 1, gain: frameGain, format: format)
            }
            rampDone += run
            frame = run
            if rampDone == rampFrames {
                gain = target
                rampFrames = 0
                rampDone = 0
            } else {
                gain = rampStart + step * Double(rampDone)
            }
        }
        guard frame < frames, gain != 1 else { return }
        scale(buffer, from: frame, count: frames - frame, gain: gain, format: format)
    }

    /// Scales `count` frames from frame `first` by a constant `gain`.
    private mutating func scale(
        _ buffer: UnsafeMutableRawPointer, from first: Int, count: Int, gain: Double, format: PCMFormat
    ) {
        let start = first * format.channels
        let samples = count * format.channels
        switch format.sample {
        case .s16:
            let pointer = buffer.assumingMemoryBound(to: Int16.self) + start
            if gain == 0 {
                pointer.update(repeating: 0, count: samples)
            } else {
                scale16(pointer, count: samples, gain: Float(gain))
            }
        case .s32:
            let pointer = buffer.assumingMemoryBound(to: Int32.self) + start
            if gain == 0 {
                pointer.update(repeating: 0, count: samples)
            } else {
                Self.scale32(pointer, count: samples, gain: gain)
            }
        }
    }

    private mutating func scale16(_ samples: UnsafeMutablePointer<Int16>, count: Int, gain: Float) {
        var state = noise
        for index in 0..<count {
            let sample = samples[index]
            if sample == 0 { continue }
            // One xorshift32 step gives both uniform values: the low and the high 16 bits.
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            let first = Float(state & 0xFFFF) * (1 / 65536) - 0.5
            let second = Float(state >> 16) * (1 / 65536) - 0.5
            let value = Float(sample) * gain + first + second
            // Round half away from zero by truncating; clamp before converting.
            let rounded = value < 0 ? value - 0.5 : value + 0.5
            let clamped = min(max(rounded, -32768), 32767)
            samples[index] = Int16(clamped)
        }
        noise = state
    }

    private static func scale32(_ samples: UnsafeMutablePointer<Int32>, count: Int, gain: Double) {
        for index in 0..<count {
            let value = Double(samples[index]) * gain
            let rounded = value < 0 ? value - 0.5 : value + 0.5
            let clamped = min(max(rounded, -2_147_483_648), 2_147_483_647)
            samples[index] = Int32(clamped)
        }
    }
}
