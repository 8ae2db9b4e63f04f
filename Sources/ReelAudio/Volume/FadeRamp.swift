// A fade over seconds (an alarm's fade-in, a fade-out before stopping), after the volume.

import Glibc

/// A slow change of level applied on the audio thread after the volume (`GainStage`), one step
/// per frame, so the sound rises or falls smoothly over many seconds without a volume change:
/// the volume the user set is never touched (nothing to restore, no mixer events), and a fade
/// works the same with a hardware mixer.
///
/// The level moves along a cubic curve (gain = x³ with x linear in time), near enough to
/// even steps in loudness over the 60 dB that matter, instead of a linear gain that is nearly
/// all heard in its first seconds. At gain 1 with no fade pending or running, the buffer is not
/// touched. Frames are counted as written, not as heard: a device's buffer (tenths of a second)
/// is ahead. Real-time safe: no allocation, locks or system calls.
public struct FadeRamp: Sendable {
    /// A fade from gain `from` to gain `to` (each 0…1) over `seconds`; 0 seconds jumps.
    public struct Request: Sendable, Equatable {
        public var from: Double
        public var to: Double
        public var seconds: Double

        public init(from: Double, to: Double, seconds: Double) {
            self.from = min(max(from.isNaN ? 1 : from, 0), 1)
            self.to = min(max(to.isNaN ? 1 : to, 0), 1)
            self.seconds = seconds.isFinite ? max(seconds, 0) : 0
        }

        /// Back to full level at once (after a fade-out and stop).
        public static let reset = Request(from: 1, to: 1, seconds: 0)
    }

    /// x, the cube root of the gain of the last frame processed.
    private var position: Double = 1
    private var targetPosition: Double = 1
    private var step: Double = 0
    private var remaining = 0
    private var pending: Request?

    public init() {}

    /// The gain of the last frame processed.
    public var gain: Double { position * position * position }

    public var isIdle: Bool { position == 1 && remaining == 0 && pending == nil }

    /// Starts `request` at the next frame processed.
    public mutating func start(_ request: Request) {
        pending = request
    }

    /// Scales `frames` interleaved frames of `format` at `buffer` in place.
    public mutating func apply(to buffer: UnsafeMutableRawPointer, frames: Int, format: PCMFormat) {
        if let request = pending {
            pending = nil
            position = Self.cubeRoot(request.from)
            targetPosition = Self.cubeRoot(request.to)
            remaining = max(0, Int(request.seconds * Double(format.sampleRate)))
            step = remaining > 0 ? (targetPosition - position) / Double(remaining) : 0
            if remaining == 0 { position = targetPosition }
        }
        guard frames > 0, format.channels > 0, !(remaining == 0 && position == 1) else { return }
        let channels = format.channels
        switch format.sample {
        case .s16:
            let samples = buffer.assumingMemoryBound(to: Int16.self)
            for frame in 0..<frames {
                let gain = Float(advance())
                for channel in 0..<channels {
                    let index = frame * channels + channel
                    let value = Float(samples[index]) * gain
                    samples[index] = Int16(min(max(value < 0 ? value - 0.5 : value + 0.5, -32768), 32767))
                }
            }
        case .s32:
            let samples = buffer.assumingMemoryBound(to: Int32.self)
            for frame in 0..<frames {
                let gain = advance()
                for channel in 0..<channels {
                    let index = frame * channels + channel
                    let value = Double(samples[index]) * gain
                    samples[index] = Int32(min(max(value < 0 ? value - 0.5 : value + 0.5, -2_147_483_648), 2_147_483_647))
                }
            }
        }
    }

    /// The next frame's gain; the last frame of a fade lands exactly on its target.
    private mutating func advance() -> Double {
        if remaining > 0 {
            remaining -= 1
            position = remaining == 0 ? targetPosition : position + step
        }
        return position * position * position
    }

    private static func cubeRoot(_ gain: Double) -> Double {
        gain <= 0 ? 0 : (gain >= 1 ? 1 : cbrt(gain))
    }
}
