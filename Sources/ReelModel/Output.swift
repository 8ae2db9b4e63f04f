// Where the player's sound goes: the ALSA device and Snapcast pipes, each on or off.

/// A fixed PCM format an output takes, written as snapserver's `sampleformat`: `rate:bits:channels`
/// (`48000:16:2`). 24-bit samples travel in 4 bytes, as snapserver reads them.
public struct OutputFormat: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var sampleRate: Int
    public var bits: Int
    public var channels: Int

    public init(sampleRate: Int, bits: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.bits = bits
        self.channels = channels
    }

    /// Snapserver's default and ours.
    public static let snapcastDefault = OutputFormat(sampleRate: 48000, bits: 16, channels: 2)

    /// Parses `rate:bits:channels`; the error names the part that is wrong.
    public init(parsing text: String) throws(OutputFormatError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let rate = Int(parts[0]), let bits = Int(parts[1]), let channels = Int(parts[2]) else {
            throw OutputFormatError("format \"\(text)\" is not RATE:BITS:CHANNELS, such as 48000:16:2")
        }
        guard (8000...384_000).contains(rate) else {
            throw OutputFormatError("format \"\(text)\": the rate must be 8000 to 384000 Hz")
        }
        guard [16, 24, 32].contains(bits) else {
            throw OutputFormatError("format \"\(text)\": bits must be 16, 24 or 32")
        }
        // Frames whose size divides a 4 KiB page: a FIFO then never takes part of a frame.
        guard [1, 2, 4, 8].contains(channels) else {
            throw OutputFormatError("format \"\(text)\": channels must be 1, 2, 4 or 8")
        }
        self.init(sampleRate: rate, bits: bits, channels: channels)
    }

    /// Bytes of one sample: 2 for 16 bits, 4 for 24 (in 4 bytes) and 32.
    public var bytesPerSample: Int { bits == 16 ? 2 : 4 }
    public var bytesPerFrame: Int { bytesPerSample * channels }

    public var description: String { "\(sampleRate):\(bits):\(channels)" }
}

/// Why a `rate:bits:channels` text is not a format.
public struct OutputFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What an output is.
public enum OutputKind: Equatable, Sendable {
    /// The ALSA playback device (`device` in the config).
    case alsa(device: String)
    /// A named pipe (FIFO) a reader such as snapserver reads, in a fixed format (`snapcast` on
    /// the wire and in the config).
    case pipe(path: String, format: OutputFormat)

    /// `alsa` or `snapcast` (a pipe, which snapserver reads), as the protocol names the kind.
    public var name: String {
        switch self {
        case .alsa: "alsa"
        case .pipe: "snapcast"
        }
    }
}

/// How an output is doing now.
public enum OutputStatus: String, Equatable, Sendable {
    /// Turned off.
    case disabled
    /// On: the ALSA device, or a pipe that has not played since it was turned on.
    case ready
    /// A pipe, on, that has played with nobody reading it: what plays is dropped until a reader
    /// opens it.
    case waitingForReader = "waiting_for_reader"
    /// A pipe a reader has open: it takes what plays.
    case connected
}

/// One output as clients see it.
public struct OutputState: Equatable, Sendable {
    /// The output's number: its place in the config, from 0 (MPD's `outputid`).
    public var id: Int
    public var name: String
    public var kind: OutputKind
    public var enabled: Bool
    public var status: OutputStatus
    /// Why the output was turned off by reeld (a pipe path that is not a FIFO, not writable…),
    /// until it is enabled again.
    public var error: ReelError?

    public init(id: Int, name: String, kind: OutputKind, enabled: Bool, status: OutputStatus, error: ReelError? = nil) {
        self.id = id
        self.name = name
        self.kind = kind
        self.enabled = enabled
        self.status = status
        self.error = error
    }
}
