// Recording Ogg Vorbis with libvorbisenc directly, so pages reach the disk every quarter second.

import CVorbis
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// An Ogg Vorbis encoder for live recording. libsndfile's Vorbis writer only emits a page when
/// it holds about 4 KB, which for quiet input is many seconds of audio that a crash would lose;
/// this one closes a page at least every `pageMilliseconds` of audio. Not thread-safe.
public final class VorbisWriter: RecordingWriter {
    public let path: String
    private let format: PCMFormat
    private let pageFrames: Int64
    private var fd: Int32
    private var info = vorbis_info()
    private var comment = vorbis_comment()
    private var dsp = vorbis_dsp_state()
    private var block = vorbis_block()
    private var stream = ogg_stream_state()
    private var framesSinceFlush: Int64 = 0
    private var open = true

    /// - Parameter quality: libvorbis VBR quality, -0.1 to 1 (0.4 is about 128 kbit/s stereo).
    public init(path: String, format: PCMFormat, quality: Float = 0.4, pageMilliseconds: Int = 250) throws(ReelError) {
        guard format.sample == .s16 else {
            throw ReelError(.unsupportedFormat, "Vorbis recording takes 16-bit samples")
        }
        self.path = path
        self.format = format
        pageFrames = Int64(format.sampleRate * pageMilliseconds / 1000)
        vorbis_info_init(&info)
        guard vorbis_encode_init_vbr(&info, Int(format.channels), Int(format.sampleRate), quality) == 0 else {
            vorbis_info_clear(&info)
            throw ReelError(
                .unsupportedFormat, "cannot record Vorbis at \(format.sampleRate) Hz with \(format.channels) channels")
        }
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            vorbis_info_clear(&info)
            throw ReelError(code == ENOSPC ? .diskFull : .ioError, "cannot create \(path): \(String(cString: strerror(code)))")
        }
        vorbis_comment_init(&comment)
        vorbis_comment_add_tag(&comment, "ENCODER", "reeld")
        vorbis_analysis_init(&dsp, &info)
        vorbis_block_init(&dsp, &block)
        ogg_stream_init(&stream, Int32.random(in: 1...Int32.max))
        var identification = ogg_packet()
        var commentPacket = ogg_packet()
        var codebooks = ogg_packet()
        vorbis_analysis_headerout(&dsp, &comment, &identification, &commentPacket, &codebooks)
        ogg_stream_packetin(&stream, &identification)
        ogg_stream_packetin(&stream, &commentPacket)
        ogg_stream_packetin(&stream, &codebooks)
        do throws(ReelError) {
            // The headers get pages of their own, as the Vorbis spec asks.
            try flushPages()
        } catch {
            release()
            throw error
        }
    }

    deinit { try? close() }

    public func write(_ buffer: UnsafeRawPointer, frames: Int) throws(ReelError) {
        guard open else { throw ReelError(.ioError, "\(path) is closed") }
        let channels = format.channels
        let samples = buffer.assumingMemoryBound(to: Int16.self)
        guard let planes = vorbis_analysis_buffer(&dsp, Int32(frames)) else {
            throw ReelError(.ioError, "the Vorbis encoder refused \(frames) frames")
        }
        for channel in 0..<channels {
            guard let plane = planes[channel] else { continue }
            for frame in 0..<frames {
                plane[frame] = Float(samples[frame * channels + channel]) / 32768
            }
        }
        vorbis_analysis_wrote(&dsp, Int32(frames))
        try drainEncoder()
        framesSinceFlush += Int64(frames)
        if framesSinceFlush >= pageFrames {
            try flushPages()
            framesSinceFlush = 0
        }
    }

    public func sync() throws(ReelError) {
        guard open else { return }
        guard fsync(fd) == 0 else { throw syncFailure(path, errno) }
    }

    /// Ends the stream (the last page carries end-of-stream), syncs and closes the file; throws
    /// the first failure (a write, the sync) after closing it all the same.
    public func close() throws(ReelError) {
        guard open else { return }
        vorbis_analysis_wrote(&dsp, 0)
        var failure: ReelError?
        do throws(ReelError) {
            try drainEncoder()
            try flushPages()
        } catch {
            failure = error
        }
        if fsync(fd) != 0, failure == nil { failure = syncFailure(path, errno) }
        release()
        if let failure { throw failure }
    }

    private func release() {
        open = false
        ogg_stream_clear(&stream)
        vorbis_block_clear(&block)
        vorbis_dsp_clear(&dsp)
        vorbis_comment_clear(&comment)
        vorbis_info_clear(&info)
        Glibc.close(fd)
        fd = -1
    }

    /// Moves every block the encoder can finish into packets, and full pages to the file.
    private func drainEncoder() throws(ReelError) {
        var packet = ogg_packet()
        while vorbis_analysis_blockout(&dsp, &block) == 1 {
            vorbis_analysis(&block, nil)
            vorbis_bitrate_addblock(&block)
            while vorbis_bitrate_flushpacket(&dsp, &packet) == 1 {
                ogg_stream_packetin(&stream, &packet)
                var page = ogg_page()
                while ogg_stream_pageout(&stream, &page) != 0 {
                    try writePage(page)
                }
            }
        }
    }

    /// Writes out every packet the stream holds, in as many pages as it takes.
    private func flushPages() throws(ReelError) {
        var page = ogg_page()
        while ogg_stream_flush(&stream, &page) != 0 {
            try writePage(page)
        }
    }

    private func writePage(_ page: ogg_page) throws(ReelError) {
        try writeAll(page.header, count: Int(page.header_len))
        try writeAll(page.body, count: Int(page.body_len))
    }

    private func writeAll(_ bytes: UnsafeMutablePointer<UInt8>?, count: Int) throws(ReelError) {
        guard let bytes else { return }
        var offset = 0
        while offset < count {
            let written = Glibc.write(fd, bytes + offset, count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == ENOSPC || code == EDQUOT {
                    throw ReelError(.diskFull, "the disk holding \(path) is full")
                }
                throw ReelError(.ioError, "cannot write \(path): \(String(cString: strerror(code)))")
            }
            offset += written
        }
    }
}
