// The format of an audio stream as clients see it.

/// Codec, rate and channel count of a file or a recording (`format` in `protocol.md`).
public struct AudioFormat: Equatable, Sendable {
    /// `wav`, `flac`, `vorbis`, `opus` or `mp3`.
    public var codec: String
    public var sampleRate: Int
    public var channels: Int

    public init(codec: String, sampleRate: Int, channels: Int) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }
}
