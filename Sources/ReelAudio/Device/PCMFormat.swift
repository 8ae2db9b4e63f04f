// The interleaved PCM layout handed between readers, the engine and the device.

/// Sample layouts the engine moves: 16-bit for 16-bit and lossy sources, 32-bit for
/// 24- and 32-bit and floating-point sources (left-justified, so no bits are lost).
public enum SampleFormat: Sendable, Equatable {
    case s16
    case s32

    public var bytesPerSample: Int {
        switch self {
        case .s16: 2
        case .s32: 4
        }
    }
}

/// What a reader produces and a device is opened for.
public struct PCMFormat: Sendable, Equatable, CustomStringConvertible {
    public var sample: SampleFormat
    public var sampleRate: Int
    public var channels: Int

    public init(sample: SampleFormat, sampleRate: Int, channels: Int) {
        self.sample = sample
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var bytesPerFrame: Int { sample.bytesPerSample * channels }

    public var description: String { "\(sample) \(sampleRate) Hz \(channels) ch" }
}

/// Period and buffer sizes the engine asks a device for.
public struct PCMTiming: Sendable, Equatable {
    public var periodMicroseconds: Int
    public var bufferMicroseconds: Int

    public init(periodMicroseconds: Int = 50_000, bufferMicroseconds: Int = 250_000) {
        self.periodMicroseconds = periodMicroseconds
        self.bufferMicroseconds = bufferMicroseconds
    }
}

extension PCMTiming {
    /// Capture needs no low latency (levels are shown four times a second): longer periods mean
    /// fewer wake-ups. 250 ms periods in a one-second buffer: half arecord's wake-ups of the
    /// capture thread and of PulseAudio's client thread (~0.35 ms of CPU per recorded second).
    /// The writer is woken by each read (`CaptureEngine`), so a period's audio goes on to the file
    /// at once and a power cut loses no more than with 125 ms periods and the writer's timer.
    public static let capture = PCMTiming(periodMicroseconds: 250_000, bufferMicroseconds: 1_000_000)

    /// `capture`, or this timing's period and buffer where they are longer.
    public var forCapture: PCMTiming {
        let period = max(periodMicroseconds, Self.capture.periodMicroseconds)
        return PCMTiming(periodMicroseconds: period, bufferMicroseconds: max(bufferMicroseconds, 4 * period))
    }
}

/// A device opened for a format: the sizes it settled on.
public struct PCMConfiguration: Sendable, Equatable {
    public var format: PCMFormat
    public var periodFrames: Int
    public var bufferFrames: Int

    public init(format: PCMFormat, periodFrames: Int, bufferFrames: Int) {
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }
}
