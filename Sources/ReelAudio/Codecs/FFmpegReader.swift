// Decoding through FFmpeg (loaded on first use): AAC, ALAC, WavPack, APE, WMA, DSD, TTA,
// Musepack and the rest the registry names with `Codec.Decoder.ffmpeg`.

import CFFmpeg
import ReelModel

/// An FFmpeg decoder, sample-exact where the container says so: an MP4's edit list (its
/// encoder delay and padding) bounds what is played, so a 3.000 s AAC file plays 3.000 s, and a
/// seek decodes from a packet before its target and drops what lies before it. Not
/// thread-safe; one owner at a time.
public final class FFmpegReader: AudioFileReader {
    public let path: String
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    public let frameCount: Int64?
    /// FFmpeg's name for the codec (`aac`, `wmav2`, `dsd_lsbf`), before the registry names it.
    public let ffmpegCodec: String
    /// The source's own precision in bits (16, 24, 32), nil for a lossy codec.
    public let sourceBits: Int?
    private var decoder: OpaquePointer?

    /// Opens `path`; throws `unsupported_format` (not a format FFmpeg decodes, no audio in it, or
    /// FFmpeg cannot be loaded), `corrupt_file` or `io_error`, each naming the file.
    public convenience init(path: String) throws(ReelError) {
        guard let opened = try Self.open(path: path) else {
            throw ReelError(.unsupportedFormat, "\(path) is not an audio file Reel can decode (not a format FFmpeg knows)")
        }
        self.init(path: path, decoder: opened)
    }

    /// The decoder of `path`, nil when FFmpeg knows no such format (then another decoder's
    /// verdict may say more); throws as `init(path:)` for the rest.
    static func open(path: String) throws(ReelError) -> OpaquePointer? {
        var status = REEL_FF_OK
        var message = [CChar](repeating: 0, count: 512)
        if let decoder = reel_ff_open(path, &status, &message, message.count) { return decoder }
        let detail = String(cString: message)
        switch status {
        case REEL_FF_UNKNOWN_FORMAT: return nil
        case REEL_FF_IO: throw ReelError(.ioError, "cannot read \(path): \(detail)")
        case REEL_FF_CORRUPT: throw ReelError(.corruptFile, "cannot decode \(path): \(detail)")
        case REEL_FF_NOT_LOADED: throw ReelError(.unsupportedFormat, "cannot decode \(path): \(detail)")
        default: throw ReelError(.unsupportedFormat, "\(path) is not an audio file Reel can decode (\(detail))")
        }
    }

    /// A reader over a decoder `open` gave.
    init(path: String, decoder: OpaquePointer) {
        self.path = path
        self.decoder = decoder
        let info = reel_ff_get_info(decoder)
        ffmpegCodec = String(cString: info.codec)
        sourceBits = info.source_bits > 0 ? Int(info.source_bits) : nil
        format = AudioFormat(
            codec: Self.registryName(ffmpegCodec: ffmpegCodec), sampleRate: Int(info.sample_rate), channels: Int(info.channels))
        pcmFormat = PCMFormat(sample: info.bits == 16 ? .s16 : .s32, sampleRate: Int(info.sample_rate), channels: Int(info.channels))
        frameCount = info.frames >= 0 && info.frames_exact != 0 ? info.frames : nil
        estimatedFrameCount = info.frames >= 0 && info.frames_exact == 0 ? info.frames : nil
    }

    /// The container's length when it is not exact (ADTS AAC's from its bitrate, ASF's in
    /// milliseconds after the decoder's delay): shown as an estimate, bounding nothing.
    public let estimatedFrameCount: Int64?

    deinit {
        reel_ff_close(decoder)
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        guard let decoder else { return 0 }
        var message = [CChar](repeating: 0, count: 256)
        let count = reel_ff_read(decoder, buffer, Int64(frames), &message, message.count)
        if count < 0 { throw ReelError(.corruptFile, "cannot decode \(path): \(String(cString: message))") }
        return Int(count)
    }

    public func seek(to frame: Int64) throws(ReelError) {
        guard let decoder else { return }
        var message = [CChar](repeating: 0, count: 256)
        if reel_ff_seek(decoder, frame, &message, message.count) < 0 {
            throw ReelError(.corruptFile, "cannot seek in \(path): \(String(cString: message))")
        }
    }

    /// The registry's name for what FFmpeg calls a codec: its WMA versions are `wma`, its DSD
    /// layouts `dsd`, Musepack's versions `musepack`; the rest keep FFmpeg's name.
    static func registryName(ffmpegCodec name: String) -> String {
        switch name {
        case "aac", "aac_latm": "aac"
        case "wmav1", "wmav2", "wmapro", "wmalossless", "wmavoice": "wma"
        case "dsd_lsbf", "dsd_msbf", "dsd_lsbf_planar", "dsd_msbf_planar": "dsd"
        case "musepack7", "musepack8": "musepack"
        default: name
        }
    }

    /// Loads FFmpeg if it is not yet (for `CodecRegistry`'s checks); nil when it is ready, else why not.
    static func load() -> String? {
        reel_ff_load().map { String(cString: $0) }
    }

    /// True once FFmpeg has been loaded in this process (tests: a daemon that never needed it has not).
    public static var isLoaded: Bool { reel_ff_loaded() != 0 }

    /// Whether the installed FFmpeg has a decoder of this name (loads FFmpeg).
    public static func hasDecoder(_ name: String) -> Bool {
        reel_ff_has_decoder(name) != 0
    }
}
