// Encoding through libsndfile: WAV, FLAC, Ogg Vorbis and Ogg Opus.

import CSndFile
import ReelModel

/// A libsndfile encoder writing interleaved frames. Not thread-safe; one owner at a time.
public final class SndFileWriter {
    public let path: String
    public let pcmFormat: PCMFormat
    private var file: OpaquePointer?

    /// The codecs Reel records to: `wav`, `flac`, `ogg` (Vorbis) and `opus`.
    public static let codecs = ["wav", "flac", "ogg", "opus"]

    public init(path: String, codec: String, format: PCMFormat) throws(ReelError) {
        self.path = path
        self.pcmFormat = format
        let subtype = format.sample == .s16 ? SF_FORMAT_PCM_16 : SF_FORMAT_PCM_24
        let sfFormat: Int
        switch codec {
        case "wav": sfFormat = SF_FORMAT_WAV | subtype
        case "flac": sfFormat = SF_FORMAT_FLAC | subtype
        case "ogg", "vorbis": sfFormat = SF_FORMAT_OGG | SF_FORMAT_VORBIS
        case "opus":
            guard [8000, 12000, 16000, 24000, 48000].contains(format.sampleRate) else {
                throw ReelError(
                    .unsupportedFormat,
                    "Opus records at 8, 12, 16, 24 or 48 kHz, not \(format.sampleRate) Hz")
            }
            sfFormat = SF_FORMAT_OGG | SF_FORMAT_OPUS
        default:
            throw ReelError(
                .unsupportedFormat, "cannot write \"\(codec)\"; use one of \(Self.codecs.joined(separator: ", "))")
        }
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channels)
        info.format = Int32(sfFormat)
        guard sf_format_check(&info) != 0 else {
            throw ReelError(.unsupportedFormat, "cannot write \(codec) at \(format.sampleRate) Hz with \(format.channels) channels")
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw ReelError(.ioError, "cannot create \(path): \(String(cString: sf_strerror(nil)))")
        }
        self.file = file
    }

    deinit { close() }

    public func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError) {
        guard let file else { throw ReelError(.ioError, "\(path) is closed") }
        let written: sf_count_t
        switch pcmFormat.sample {
        case .s16:
            written = sf_writef_short(file, buffer.assumingMemoryBound(to: Int16.self), sf_count_t(frames))
        case .s32:
            written = sf_writef_int(file, buffer.assumingMemoryBound(to: Int32.self), sf_count_t(frames))
        }
        if written != frames {
            throw ReelError(.ioError, "cannot write \(path): \(String(cString: sf_strerror(file)))")
        }
    }

    public func close() {
        if let file { sf_close(file) }
        file = nil
    }
}
