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
    /// Capture needs no low latency (levels are shown about eight times a second): longer periods
    /// mean fewer wake-ups. 125 ms periods in a 500 ms buffer, as arecord asks for. (250 ms
    /// periods halve the wake-ups of the capture thread and PulseAudio's client thread, ~0.35 ms
    /// of CPU per recorded second, but through PulseAudio's plugin the first second a null sink's
    /// monitor delivers then went missing from a trigger's pre-roll: TriggeredRecordingTests.)
    public static let capture = PCMTiming(periodMicroseconds: 125_000, bufferMicroseconds: 500_000)

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
