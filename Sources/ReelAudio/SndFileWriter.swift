// Encoding through libsndfile: WAV, FLAC, Ogg Vorbis and Ogg Opus.

import CSndFile
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// Where the recorder's frames go. Called from the recorder's writer thread only.
public protocol RecordingWriter: AnyObject {
    /// Appends interleaved frames; throws `disk_full` or `io_error`.
    func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError)
    /// Pushes what was written to the disk (survives a power cut).
    func sync()
    /// Finishes the file (final headers) and closes it.
    func close()
}

/// A libsndfile encoder writing interleaved frames. Not thread-safe; one owner at a time.
public final class SndFileWriter: RecordingWriter {
    public let path: String
    public let pcmFormat: PCMFormat
    private var file: OpaquePointer?

    /// Sample rates Opus encodes at.
    public static let opusSampleRates = [8000, 12000, 16000, 24000, 48000]

    /// Checks that `codec` can be written at `format` before anything is created.
    public static func check(codec: String, format: PCMFormat) throws(ReelError) {
        _ = try sndfileInfo(codec: codec, format: format)
    }

    /// - Parameter live: the file is being recorded and must stay readable if the process dies:
    ///   a WAV header is kept up to date after every write, Opus pages are closed every 250 ms.
    ///   (libsndfile's Vorbis writer ignores the page latency: live Vorbis goes to `VorbisWriter`.)
    public init(path: String, codec: String, format: PCMFormat, live: Bool = false) throws(ReelError) {
        self.path = path
        self.pcmFormat = format
        var info = try Self.sndfileInfo(codec: codec, format: format)
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            let detail = String(cString: sf_strerror(nil))
            throw ReelError(errno == ENOSPC ? .diskFull : .ioError, "cannot create \(path): \(detail)")
        }
        self.file = file
        if live {
            switch codec {
            case "wav":
                sf_command(file, Int32(SFC_SET_UPDATE_HEADER_AUTO), nil, Int32(SF_TRUE))
            case "ogg", "vorbis", "opus":
                var milliseconds: Double = 250
                sf_command(file, Int32(SFC_SET_OGG_PAGE_LATENCY_MS), &milliseconds, Int32(MemoryLayout<Double>.size))
            default:
                break
            }
        }
        // libsndfile writes a FLAC or Opus header only with the first audio (Opus: at close):
        // written now, the file is a valid take of no frames from the start (a power cut in
        // the first second leaves something to repair) and a take closed empty still reads.
        // Not for Vorbis: libsndfile's Vorbis writer then writes its header pages twice and the
        // file does not decode (live Vorbis takes go through `VorbisWriter`, which writes its
        // headers at open itself).
        if codec != "ogg" && codec != "vorbis" {
            sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
        }
    }

    private static func sndfileInfo(codec: String, format: PCMFormat) throws(ReelError) -> SF_INFO {
        let subtype = format.sample == .s16 ? SF_FORMAT_PCM_16 : SF_FORMAT_PCM_24
        let sfFormat: Int
        switch codec {
        case "wav": sfFormat = SF_FORMAT_WAV | subtype
        case "flac": sfFormat = SF_FORMAT_FLAC | subtype
        case "ogg", "vorbis": sfFormat = SF_FORMAT_OGG | SF_FORMAT_VORBIS
        case "opus":
            guard opusSampleRates.contains(format.sampleRate) else {
                throw ReelError(
                    .unsupportedFormat,
                    "Opus records at 8, 12, 16, 24 or 48 kHz, not \(format.sampleRate) Hz")
            }
            sfFormat = SF_FORMAT_OGG | SF_FORMAT_OPUS
        default:
            throw ReelError(
                .unsupportedFormat, "cannot record \"\(codec)\"; use one of \(CodecRegistry.recordingFormats.joined(separator: ", "))")
        }
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channels)
        info.format = Int32(sfFormat)
        guard sf_format_check(&info) != 0 else {
            throw ReelError(
                .unsupportedFormat, "cannot write \(codec) at \(format.sampleRate) Hz with \(format.channels) channels")
        }
        return info
    }

    deinit { close() }

    public func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError) {
        guard let file else { throw ReelError(.ioError, "\(path) is closed") }
        errno = 0
        let written: sf_count_t
        switch pcmFormat.sample {
        case .s16:
            written = sf_writef_short(file, buffer.assumingMemoryBound(to: Int16.self), sf_count_t(frames))
        case .s32:
            written = sf_writef_int(file, buffer.assumingMemoryBound(to: Int32.self), sf_count_t(frames))
        }
        if written != frames {
            let code = errno
            if code == ENOSPC || code == EDQUOT {
                throw ReelError(.diskFull, "the disk holding \(path) is full")
            }
            throw ReelError(.ioError, "cannot write \(path): \(String(cString: sf_strerror(file)))")
        }
    }

    public func sync() {
        if let file { sf_write_sync(file) }
    }

    /// Finishes the file (libsndfile writes the final header) and syncs it to disk: a finished
    /// take is answered as finished only once all of it is durable.
    public func close() {
        guard let file else { return }
        sf_close(file)
        self.file = nil
        RecordingRepair.syncFile(path)
    }
}
