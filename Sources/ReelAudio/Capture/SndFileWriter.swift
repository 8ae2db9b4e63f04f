// Encoding through libsndfile: WAV, FLAC, Ogg Vorbis and Ogg Opus.

import CSndFile
import ReelModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where the recorder's frames go. Called from the recorder's writer thread only.
public protocol RecordingWriter: AnyObject {
    /// Appends interleaved frames; throws `disk_full` or `io_error`. A writer may hold the bytes
    /// until `flush`, `sync` or `close`.
    func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError)
    /// Hands what was written to the kernel (it then survives the process, not yet a power cut);
    /// throws as `write`. The capture writer calls it before it sleeps.
    func flush() throws(ReelError)
    /// Pushes what was written to the disk (survives a power cut); throws `io_error` naming the
    /// file when the disk says it did not take it (EIO: it may be failing).
    func sync() throws(ReelError)
    /// Finishes the file (final headers), syncs it and closes it; throws as `sync` (the file is
    /// closed all the same).
    func close() throws(ReelError)
}

extension RecordingWriter {
    /// For writers that hold nothing back.
    public func flush() throws(ReelError) {}
}

/// A failed fsync of `path` (the error of `errno`), as writers throw it.
func syncFailure(_ path: String, _ code: Int32) -> ReelError {
    ReelError(
        code == ENOSPC || code == EDQUOT ? .diskFull : .ioError,
        "cannot sync \(path) to the disk: \(String(cString: strerror(code))); what was recorded may not be on it")
}

/// A libsndfile encoder writing interleaved frames. Not thread-safe; one owner at a time.
public final class SndFileWriter: RecordingWriter {
    public let path: String
    public let pcmFormat: PCMFormat
    private var file: OpaquePointer?
    /// The file's descriptor, ours (libsndfile writes through `output`, its virtual I/O): its
    /// fsync reports a write-back error (EIO) once, to this descriptor; libsndfile's own
    /// `sf_write_sync` would swallow it.
    private var descriptor: Int32 = -1
    /// What libsndfile writes of FLAC, Vorbis and Opus goes through this buffer: one system call
    /// per `flush` instead of one per encoded frame. WAV is written straight to the descriptor:
    /// its header is rewritten after every write, so that a take cut short by a full disk keeps
    /// a header for the samples that reached it (`RecordingRepair` relies on it).
    private var output: WriteBehindFile?
    /// `fsync`, or a failing one in tests.
    private let syncDescriptor: @Sendable (Int32) -> Int32

    /// Sample rates Opus encodes at.
    public static let opusSampleRates = [8000, 12000, 16000, 24000, 48000]

    /// libFLAC's compression level for FLAC takes when none is configured. libsndfile's own
    /// default is 5; at 1 reeld's recording CPU is ~15 % lower for files ~2 % larger
    /// (`docs/performance.md`, bench/recording).
    public static let defaultFLACLevel = 1
    private static let flacLevel = Atomic<Int>(defaultFLACLevel)

    /// libFLAC's compression level (0–8; the config's `record_flac_level`) for the FLAC files
    /// opened from now on. Any thread; set once at start.
    public static var flacCompressionLevel: Int {
        get { flacLevel.load(ordering: .relaxed) }
        set { flacLevel.store(min(max(newValue, 0), 8), ordering: .relaxed) }
    }

    /// Checks that `codec` can be written at `format` before anything is created.
    public static func check(codec: String, format: PCMFormat) throws(ReelError) {
        _ = try sndfileInfo(codec: codec, format: format)
    }

    /// - Parameter live: the file is being recorded and must stay readable if the process dies:
    ///   a WAV header is kept up to date after every write, Opus pages are closed every 250 ms.
    ///   (libsndfile's Vorbis writer ignores the page latency: live Vorbis goes to `VorbisWriter`.)
    /// - Parameter fsync: syncs a descriptor (`Glibc.fsync`; a failing one in tests).
    public init(
        path: String, codec: String, format: PCMFormat, live: Bool = false,
        fsync syncDescriptor: @escaping @Sendable (Int32) -> Int32 = { Glibc.fsync($0) }
    ) throws(ReelError) {
        self.path = path
        self.pcmFormat = format
        self.syncDescriptor = syncDescriptor
        var info = try Self.sndfileInfo(codec: codec, format: format)
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            throw ReelError(code == ENOSPC || code == EDQUOT ? .diskFull : .ioError, "cannot create \(path): \(String(cString: strerror(code)))")
        }
        let output = codec == "wav" ? nil : WriteBehindFile(descriptor: descriptor)
        var io = WriteBehindFile.virtualIO
        let file: OpaquePointer
        let opened = SndFileOpening.open {
            output.map { sf_open_virtual(&io, Int32(SFM_WRITE), &info, $0.userData) }
                ?? sf_open_fd(descriptor, Int32(SFM_WRITE), &info, Int32(SF_FALSE))
        }
        switch opened {
        case .success(let sndfile): file = sndfile
        case .failure(let failure):
            Glibc.close(descriptor)
            unlink(path)
            throw ReelError(.ioError, "cannot create \(path): \(failure.message)")
        }
        self.descriptor = descriptor
        self.output = output
        self.file = file
        if codec == "flac" {
            // Before the header is written (below): libsndfile sets up libFLAC's encoder then.
            // libsndfile takes 0…1 for libFLAC's 0…8.
            var level = Double(Self.flacCompressionLevel) / 8
            sf_command(file, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size))
        }
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

    deinit { try? close() }

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
        if let code = output?.failure, code != 0 { throw writeFailure(code) }
        if written != frames {
            let code = errno
            if code == ENOSPC || code == EDQUOT { throw writeFailure(code) }
            throw ReelError(.ioError, "cannot write \(path): \(String(cString: sf_strerror(file)))")
        }
    }

    public func flush() throws(ReelError) {
        guard let output, file != nil else { return }
        guard output.flush() else { throw writeFailure(output.failure) }
    }

    private func writeFailure(_ code: Int32) -> ReelError {
        if code == ENOSPC || code == EDQUOT {
            return ReelError(.diskFull, "the disk holding \(path) is full")
        }
        return ReelError(.ioError, "cannot write \(path): \(String(cString: strerror(code)))")
    }

    /// libsndfile keeps nothing of WAV, FLAC or Opus in memory between writes that a sync could
    /// push (its `sf_write_sync` is only an fsync, whose error it drops): the buffer's flush,
    /// then the descriptor's fsync.
    public func sync() throws(ReelError) {
        guard file != nil else { return }
        try flush()
        guard syncDescriptor(descriptor) == 0 else { throw syncFailure(path, errno) }
    }

    /// Finishes the file (libsndfile writes the final header) and syncs it to disk: a finished
    /// take is answered as finished only once all of it is durable; when the disk refuses it,
    /// this throws (the file is closed all the same).
    public func close() throws(ReelError) {
        guard let file else { return }
        sf_close(file)
        self.file = nil
        let flushed = output?.flush() ?? true
        let failure = output?.failure ?? 0
        output = nil
        let synced = flushed && syncDescriptor(descriptor) == 0
        let code = errno
        Glibc.close(descriptor)
        descriptor = -1
        if !flushed { throw writeFailure(failure) }
        if !synced { throw syncFailure(path, code) }
    }
}
