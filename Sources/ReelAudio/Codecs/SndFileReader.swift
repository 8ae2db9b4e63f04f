// Decoding through libsndfile: WAV, FLAC, Ogg Vorbis, Ogg Opus and the rest it knows.

import CSndFile
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A libsndfile decoder. Not thread-safe; one owner at a time.
public final class SndFileReader: AudioFileReader {
    public let path: String
    public let format: AudioFormat
    public let pcmFormat: PCMFormat
    public let frameCount: Int64?
    /// True for MPEG audio, which `AudioFileOpener` hands to libmpg123 instead.
    let isMPEG: Bool
    private var file: OpaquePointer?

    public init(path: String) throws(ReelError) {
        self.path = path
        var info = SF_INFO()
        let file: OpaquePointer
        switch SndFileOpening.open({ sf_open(path, Int32(SFM_READ), &info) }) {
        case .success(let opened): file = opened
        case .failure(let failure) where failure.isUnrecognisedFormat:
            throw ReelError(.unsupportedFormat, "\(path) is not an audio file Reel can decode (\(failure.message))")
        case .failure(let failure) where failure.isMPEGGuessWithoutFrames:
            throw ReelError(
                .unsupportedFormat, "\(path) is not an audio file Reel can decode (it begins like MPEG audio, but holds no MPEG frames)")
        case .failure(let failure):
            throw ReelError(.corruptFile, "cannot decode \(path): \(failure.message)")
        }
        self.file = file
        let major = Int(info.format) & SF_FORMAT_TYPEMASK
        let minor = Int(info.format) & SF_FORMAT_SUBMASK
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(file)
            throw ReelError(.corruptFile, "\(path) declares \(info.channels) channels at \(info.samplerate) Hz")
        }
        isMPEG = major == SF_FORMAT_MPEG
        let sample = Self.sampleFormat(forSubtype: minor)
        if minor == SF_FORMAT_FLOAT || minor == SF_FORMAT_DOUBLE {
            // Float files read as integers must be scaled, or they come out near silence.
            sf_command(file, Int32(SFC_SET_SCALE_FLOAT_INT_READ), nil, Int32(SF_TRUE))
        }
        format = AudioFormat(
            codec: Self.codecName(major: major, minor: minor), sampleRate: Int(info.samplerate),
            channels: Int(info.channels))
        pcmFormat = PCMFormat(sample: sample, sampleRate: Int(info.samplerate), channels: Int(info.channels))
        frameCount = (info.frames >= 0 && info.frames < Int64.max) ? info.frames : nil
    }

    deinit {
        if let file { sf_close(file) }
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        guard let file else { return 0 }
        let count: sf_count_t
        switch pcmFormat.sample {
        case .s16: count = sf_readf_short(file, buffer.assumingMemoryBound(to: Int16.self), sf_count_t(frames))
        case .s32: count = sf_readf_int(file, buffer.assumingMemoryBound(to: Int32.self), sf_count_t(frames))
        }
        if count < 0 || (count == 0 && sf_error(file) != 0 && sf_error(file) != Int32(SF_ERR_NO_ERROR)) {
            throw ReelError(.corruptFile, "cannot decode \(path): \(String(cString: sf_strerror(file)))")
        }
        return Int(count)
    }

    public func seek(to frame: Int64) throws(ReelError) {
        guard let file else { return }
        if sf_seek(file, sf_count_t(frame), SEEK_SET) < 0 {
            throw ReelError(.corruptFile, "cannot seek in \(path): \(String(cString: sf_strerror(file)))")
        }
    }

    static func sampleFormat(forSubtype subtype: Int) -> SampleFormat {
        switch subtype {
        case SF_FORMAT_PCM_24, SF_FORMAT_PCM_32, SF_FORMAT_FLOAT, SF_FORMAT_DOUBLE,
            SF_FORMAT_ALAC_24, SF_FORMAT_ALAC_32:
            return .s32
        default:
            return .s16
        }
    }

    static func codecName(major: Int, minor: Int) -> String {
        switch major {
        case SF_FORMAT_WAV, SF_FORMAT_WAVEX, SF_FORMAT_RF64, SF_FORMAT_W64: return "wav"
        case SF_FORMAT_FLAC: return "flac"
        case SF_FORMAT_OGG: return minor == SF_FORMAT_OPUS ? "opus" : "vorbis"
        case SF_FORMAT_MPEG: return "mp3"
        default: return majorExtension(major) ?? "pcm"
        }
    }

    /// libsndfile's file extension for a major format (`aiff`, `au`, `caf`, …).
    static func majorExtension(_ major: Int) -> String? {
        var info = SF_FORMAT_INFO()
        info.format = Int32(major)
        guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
              let text = info.extension
        else { return nil }
        return String(cString: text).lowercased()
    }

    /// The codecs the installed libsndfile decodes, named as `format.codec` names them.
    static func decodableCodecs() -> [String] {
        var codecs: Set<String> = []
        var count: Int32 = 0
        sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR_COUNT), &count, Int32(MemoryLayout<Int32>.size))
        for index in 0..<count {
            var info = SF_FORMAT_INFO()
            info.format = index
            sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            let major = Int(info.format)
            // Raw files carry no header to decode them by; Ogg is listed by its codecs below.
            if major != SF_FORMAT_OGG && major != SF_FORMAT_RAW { codecs.insert(codecName(major: major, minor: 0)) }
        }
        sf_command(nil, Int32(SFC_GET_FORMAT_SUBTYPE_COUNT), &count, Int32(MemoryLayout<Int32>.size))
        for index in 0..<count {
            var info = SF_FORMAT_INFO()
            info.format = index
            sf_command(nil, Int32(SFC_GET_FORMAT_SUBTYPE), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            if Int(info.format) == SF_FORMAT_VORBIS { codecs.insert("vorbis") }
            if Int(info.format) == SF_FORMAT_OPUS { codecs.insert("opus") }
        }
        return codecs.sorted()
    }
}
