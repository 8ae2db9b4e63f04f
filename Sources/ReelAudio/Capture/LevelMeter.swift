// Peak and RMS levels of captured audio, in dBFS, over fixed windows.

#if canImport(Glibc)
import Glibc
#endif

/// Peak and RMS of one window, in dBFS (0 is full scale). Digital silence reads as `floor`.
public struct AudioLevels: Sendable, Equatable {
    public var peak: Double
    public var rms: Double

    public init(peak: Double, rms: Double) {
        self.peak = peak
        self.rms = rms
    }

    /// The lowest level reported: below what 16-bit audio can hold.
    public static let floor = -120.0
}

/// Accumulates 16-bit samples and yields levels once per window of `windowFrames` frames
/// (over all channels). Integer arithmetic only per sample (the peak and the sum of squares are
/// exact); the decibels are worked out once per window. Pure: no I/O, no clock.
public struct LevelMeter: Sendable {
    public let windowFrames: Int
    public let channels: Int
    private var framesInWindow = 0
    private var peakSample: Int32 = 0
    private var sumOfSquares: Int64 = 0

    public init(windowFrames: Int, channels: Int) {
        precondition(windowFrames > 0 && channels > 0)
        self.windowFrames = windowFrames
        self.channels = channels
    }

    /// Adds interleaved samples; returns the levels of the last window completed by them, if any.
    public mutating func add(_ samples: UnsafeBufferPointer<Int16>) -> AudioLevels? {
        var completed: AudioLevels?
        var index = 0
        let frames = samples.count / channels
        var frame = 0
        while frame < frames {
            let run = min(frames - frame, windowFrames - framesInWindow)
            let end = index + run * channels
            var peak = peakSample
            var sum: Int64 = 0
            // A square fits an Int32 (at most 2^30), a window's sum an Int64.
            while index < end {
                let sample = Int32(samples[index])
                let magnitude = sample < 0 ? 0 &- sample : sample
                peak = max(peak, magnitude)
                sum &+= Int64(sample &* sample)
                index += 1
            }
            peakSample = peak
            sumOfSquares &+= sum
            framesInWindow += run
            frame += run
            if framesInWindow == windowFrames {
                completed = Self.levels(peak: peakSample, sumOfSquares: Double(sumOfSquares), samples: windowFrames * channels)
                framesInWindow = 0
                peakSample = 0
                sumOfSquares = 0
            }
        }
        return completed
    }

    static func levels(peak: Int32, sumOfSquares: Double, samples: Int) -> AudioLevels {
        let fullScale = 32768.0
        let rms = (sumOfSquares / Double(samples)).squareRoot() / fullScale
        return AudioLevels(peak: decibels(Double(peak) / fullScale), rms: decibels(rms))
    }

    static func decibels(_ ratio: Double) -> Double {
        guard ratio > 0 else { return AudioLevels.floor }
        return max(AudioLevels.floor, 20 * log10(ratio))
    }
}
