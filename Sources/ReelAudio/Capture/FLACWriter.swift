// Encoding FLAC takes through libFLAC directly.

import CFLAC
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A FLAC encoder writing interleaved frames through libFLAC's stream encoder, without the MD5
/// of the audio that libsndfile always has libFLAC compute (a fifth of the encoder's CPU at
/// level 1; STREAMINFO's MD5 is then zero, which the format defines as "not computed"). The
/// file is what libsndfile would write: STREAMINFO (no sample count until the close, as a file
/// cut short by a power cut keeps it: `FLACRepair` counts what it holds), then the frames,
/// gathered in a `WriteBehindFile` into one system call per `flush`. At the close libFLAC seeks
/// back and writes the sample count and frame sizes into STREAMINFO. Not thread-safe; one owner
/// at a time (the recorder's writer thread).
public final class FLACWriter: RecordingWriter {
    public let path: String
    public let pcmFormat: PCMFormat
    /// libFLAC's compression level (0–8).
    public let level: Int
    /// Where the metadata ends and the first frame starts, in every file this writer makes: the
    /// VORBIS_COMMENT and PADDING blocks fill the bytes before it. 8 KiB holds about 80
    /// chapters with 40-character names (a mark costs 27 bytes plus 19 and its name); a take
    /// with more has them written through a copy. A 4 KiB multiple, so an in-place rewrite of
    /// the comments touches two whole pages.
    public static let metadataEnd = 8192
    private var encoder: UnsafeMutablePointer<FLAC__StreamEncoder>?
    private var descriptor: Int32 = -1
    private var output: WriteBehindFile?
    /// Interleaved samples as libFLAC takes them (32-bit), reused between writes.
    private var samples: UnsafeMutablePointer<Int32>
    private var samplesCapacity: Int
    private let syncDescriptor: @Sendable (Int32) -> Int32
    /// The PADDING block handed to libFLAC, which must outlive the encoder.
    private let padding: UnsafeMutablePointer<FLAC__StreamMetadata>

    /// - Parameter level: libFLAC's compression level (0–8; by default the configured
    ///   `record_flac_level`, `SndFileWriter.flacCompressionLevel`, when the file is opened).
    /// - Parameter fsync: syncs a descriptor (`Glibc.fsync`; a failing one in tests).
    public init(
        path: String, format: PCMFormat, level: Int = SndFileWriter.flacCompressionLevel,
        fsync syncDescriptor: @escaping @Sendable (Int32) -> Int32 = { Glibc.fsync($0) }
    ) throws(ReelError) {
        self.path = path
        self.pcmFormat = format
        self.syncDescriptor = syncDescriptor
        self.level = min(max(level, 0), 8)
        samplesCapacity = 4800 * max(format.channels, 1)
        samples = .allocate(capacity: samplesCapacity)
        padding = .allocate(capacity: 1)
        padding.initialize(to: FLAC__StreamMetadata())
        guard (1...8).contains(format.channels), (1...655_350).contains(format.sampleRate) else {
            throw ReelError(.unsupportedFormat, "cannot write flac at \(format.sampleRate) Hz with \(format.channels) channels")
        }
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            throw ReelError(code == ENOSPC || code == EDQUOT ? .diskFull : .ioError, "cannot create \(path): \(String(cString: strerror(code)))")
        }
        let output = WriteBehindFile(descriptor: descriptor)
        guard let encoder = FLAC__stream_encoder_new() else {
            Glibc.close(descriptor)
            unlink(path)
            throw ReelError(.ioError, "cannot create \(path): libFLAC could not make an encoder")
        }
        FLAC__stream_encoder_set_channels(encoder, UInt32(format.channels))
        FLAC__stream_encoder_set_bits_per_sample(encoder, format.sample == .s16 ? 16 : 24)
        FLAC__stream_encoder_set_sample_rate(encoder, UInt32(format.sampleRate))
        FLAC__stream_encoder_set_compression_level(encoder, UInt32(self.level))
        FLAC__stream_encoder_set_do_md5(encoder, 0)
        // "fLaC", STREAMINFO (4 + 34), libFLAC's VORBIS_COMMENT (4 + vendor length, vendor,
        // field count), then the PADDING block's header and bytes up to `metadataEnd`.
        let comment = 4 + 4 + reel_flac_vendor_length() + 4
        padding.pointee.type = FLAC__METADATA_TYPE_PADDING
        padding.pointee.length = UInt32(Self.metadataEnd - 4 - 38 - comment - 4)
        var blocks: [UnsafeMutablePointer<FLAC__StreamMetadata>?] = [padding]
        FLAC__stream_encoder_set_metadata(encoder, &blocks, 1)
        // libFLAC writes STREAMINFO here, at once: a take of no frames is a valid file from the start.
        let status = FLAC__stream_encoder_init_stream(
            encoder, Self.writeCallback, Self.seekCallback, Self.tellCallback, nil, output.userData)
        guard status == FLAC__STREAM_ENCODER_INIT_STATUS_OK, output.failure == 0 else {
            let failure = output.failure
            FLAC__stream_encoder_delete(encoder)
            Glibc.close(descriptor)
            unlink(path)
            if failure == ENOSPC || failure == EDQUOT { throw ReelError(.diskFull, "the disk holding \(path) is full") }
            throw ReelError(.ioError, "cannot create \(path): libFLAC refused the encoder (status \(status.rawValue))")
        }
        self.descriptor = descriptor
        self.output = output
        self.encoder = encoder
    }

    deinit {
        try? close()
        samples.deallocate()
        padding.deallocate()
    }

    public func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError) {
        guard let encoder, let output else { throw ReelError(.ioError, "\(path) is closed") }
        guard frames > 0 else { return }
        let count = frames * pcmFormat.channels
        if count > samplesCapacity {
            samples.deallocate()
            samplesCapacity = count
            samples = .allocate(capacity: count)
        }
        switch pcmFormat.sample {
        case .s16:
            let source = buffer.assumingMemoryBound(to: Int16.self)
            for index in 0..<count { samples[index] = Int32(source[index]) }
        case .s32:
            // 24 bits kept, as libsndfile writes 32-bit samples to a 24-bit FLAC.
            let source = buffer.assumingMemoryBound(to: Int32.self)
            for index in 0..<count { samples[index] = source[index] >> 8 }
        }
        let accepted = FLAC__stream_encoder_process_interleaved(encoder, samples, UInt32(frames))
        if output.failure != 0 { throw writeFailure(output.failure) }
        guard accepted != 0 else {
            let state = String(cString: FLAC__stream_encoder_get_resolved_state_string(encoder))
            throw ReelError(.ioError, "cannot write \(path): libFLAC: \(state)")
        }
    }

    public func flush() throws(ReelError) {
        guard let output, encoder != nil else { return }
        guard output.flush() else { throw writeFailure(output.failure) }
    }

    /// libFLAC holds the frames of an unfinished block (under a block's length, 1152 frames at
    /// levels 0–2), which no sync can push: the buffer's flush, then the descriptor's fsync.
    public func sync() throws(ReelError) {
        guard encoder != nil else { return }
        try flush()
        guard syncDescriptor(descriptor) == 0 else { throw syncFailure(path, errno) }
    }

    /// Encodes the last block, writes STREAMINFO's final counts and syncs the file; throws as
    /// `sync` (the file is closed all the same).
    public func close() throws(ReelError) {
        guard let encoder, let output else { return }
        let finished = FLAC__stream_encoder_finish(encoder) != 0
        FLAC__stream_encoder_delete(encoder)
        self.encoder = nil
        let flushed = output.flush()
        let failure = output.failure
        self.output = nil
        let synced = flushed && syncDescriptor(descriptor) == 0
        let code = errno
        Glibc.close(descriptor)
        descriptor = -1
        if !flushed || failure != 0 { throw writeFailure(failure) }
        if !synced { throw syncFailure(path, code) }
        if !finished { throw ReelError(.ioError, "cannot finish \(path): libFLAC could not complete the file") }
    }

    private func writeFailure(_ code: Int32) -> ReelError {
        if code == ENOSPC || code == EDQUOT {
            return ReelError(.diskFull, "the disk holding \(path) is full")
        }
        return ReelError(.ioError, "cannot write \(path): \(String(cString: strerror(code)))")
    }

    // libFLAC's output callbacks, over the `WriteBehindFile` passed as the client data.

    private static let writeCallback: FLAC__StreamEncoderWriteCallback = { _, bytes, count, _, _, data in
        guard let bytes else { return FLAC__STREAM_ENCODER_WRITE_STATUS_OK }
        return WriteBehindFile.from(data).write(bytes, count: count) == count
            ? FLAC__STREAM_ENCODER_WRITE_STATUS_OK : FLAC__STREAM_ENCODER_WRITE_STATUS_FATAL_ERROR
    }

    private static let seekCallback: FLAC__StreamEncoderSeekCallback = { _, offset, data in
        WriteBehindFile.from(data).seek(Int64(offset), whence: SEEK_SET) >= 0
            ? FLAC__STREAM_ENCODER_SEEK_STATUS_OK : FLAC__STREAM_ENCODER_SEEK_STATUS_ERROR
    }

    private static let tellCallback: FLAC__StreamEncoderTellCallback = { _, offset, data in
        offset?.pointee = UInt64(WriteBehindFile.from(data).tell())
        return FLAC__STREAM_ENCODER_TELL_STATUS_OK
    }
}
