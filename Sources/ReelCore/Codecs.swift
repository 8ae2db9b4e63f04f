// The codec registry as the front ends see it: what plays, and under which names.

import ReelAudio
import ReelModel

/// What the front ends report of the codec registry (`CodecRegistry`, in ReelAudio): the
/// decoders (`daemon.info`, MPD's `decoders`, the CLI's `reel add DIR`) and the content type of a
/// file by its suffix (HTTP). Immutable; any thread.
public enum Codecs {
    /// Every codec that plays, with its suffixes and MIME types.
    public static var decoders: [CodecDescription] { CodecRegistry.descriptions }

    /// The formats the recorder writes (`record_format`, `recorder.start`'s `format`).
    public static var recordingFormats: [String] { CodecRegistry.recordingFormats }

    /// The `Content-Type` of a file with this suffix (`application/octet-stream` if no codec
    /// has it).
    public static func mimeType(forSuffix suffix: String) -> String {
        CodecRegistry.mimeType(forSuffix: suffix)
    }
}
