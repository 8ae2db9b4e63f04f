// A station as a capture device: the recorder records a URL without playing it.

import Logging
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A `PCMInput` over a URL (`recorder.start {source: {url}}`): the station's stream is opened
/// with `URLSource.open` (its network thread, its decoder choice, its reconnects) and decoded on
/// the capture engine's capture thread; nothing reaches the speakers. The session's clock is the
/// station's audio: the recorder takes frames as they are decoded, and a drop or a reconnect
/// leaves a gap that is *skipped* (no silence is recorded for it; the take goes on with the
/// audio after it). Frames in another format than the session's are converted (`PipeConverter`).
///
/// Title changes (ICY `StreamTitle`, an HLS stream's ID3 tags) are kept in `titles` with the
/// session frame they begin at: the frame the decoder marks them at, as the player hears them
/// (`HTTPStream.title(atFrame:)`; see `noteTitles`), or, with a decoder that does not place
/// titles, an estimate from the bytes buffered ahead of it (`noteTitle`). Every method but
/// `connect` and the accessors is called by the capture thread only.
public final class StreamCaptureInput: PCMInput, @unchecked Sendable {
    public let url: String
    public var name: String { url }
    /// What the station's decoder gives.
    public let sourceFormat: PCMFormat
    public let titles: SourceTitles
    private let reader: AudioFileReader
    let stream: HTTPStream
    private let logger: Logger
    private var converter: PipeConverter?
    private var staging: ByteRing?
    private var decoded: UnsafeMutableRawPointer?
    private var decodedCapacity = 0
    private var target: PCMFormat?
    private var given: Int64 = 0
    /// Frames the station's decoder has given (its own frames, which its title marks count).
    private var decodedFrames: Int64 = 0
    /// Whether the decoder has marked a title yet (before it, its "no title" is only not yet).
    private var decoderNamedATitle = false
    /// An ICY stream's first title is still to be placed at the take's first frame.
    private var firstICYTitlePending = false
    /// The frame of an ICY stream's first mark, once placed (0 until then).
    private var firstTitleFrame: Int64 = 0
    private var ended = false
    /// Why the stream ended for good, once it did.
    public private(set) var failure: ReelError?

    private init(url: String, reader: AudioFileReader, stream: HTTPStream, titles: SourceTitles, logger: Logger) {
        self.url = url
        self.reader = reader
        self.stream = stream
        self.titles = titles
        self.logger = logger
        sourceFormat = reader.pcmFormat
    }

    deinit {
        stream.stop()
        decoded?.deallocate()
        staging?.deallocate()
    }

    /// Connects and opens the station's decoder (waiting for its first audio: up to the connect
    /// timeout plus the low-speed window); throws `unreachable` naming the URL, or
    /// `unsupported_format`. Not on an event loop or the audio thread.
    public static func connect(
        url: String, configuration: StreamConfiguration, logger: Logger, titles: SourceTitles = SourceTitles()
    ) throws(ReelError) -> StreamCaptureInput {
        let (reader, stream) = try URLSource.open(url: url, configuration: configuration)
        return StreamCaptureInput(url: url, reader: reader, stream: stream, titles: titles, logger: logger)
    }

    /// The stream's state now (reconnects, bitrate). Any thread.
    public var status: HTTPStreamStatus { stream.current }

    public func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        guard format.sample == .s16 else {
            throw ReelError(.unsupportedFormat, "recording a station is 16-bit")
        }
        target = format
        let periodFrames = max(format.sampleRate / 10, 256)
        let sourcePeriod = max(sourceFormat.sampleRate / 10, 256)
        if format != sourceFormat {
            converter = try PipeConverter(
                source: sourceFormat, target: OutputFormat(sampleRate: format.sampleRate, bits: 16, channels: format.channels),
                maxFrames: sourcePeriod)
            staging = ByteRing(capacity: (periodFrames * 48 + 1024) * format.bytesPerFrame)
            decodedCapacity = sourcePeriod
            decoded = UnsafeMutableRawPointer.allocate(byteCount: sourcePeriod * sourceFormat.bytesPerFrame, alignment: 16)
        }
        return PCMConfiguration(format: format, periodFrames: periodFrames, bufferFrames: periodFrames * 4)
    }

    public func prepare() -> Int32 { 0 }
    public func resume() -> Int32 { 0 }
    public func drop() {}

    public func wait(timeoutMilliseconds: Int) -> Int32 {
        _ = stream.buffer.waitForBytes(1, milliseconds: min(max(timeoutMilliseconds, 1), 100))
        return 0
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let target, !ended else { return -Int(EIO) }
        if !stream.placesTitlesByDecoding { noteTitle() }
        let count: Int
        if let converter, var staging, let decoded {
            // Converted frames left over from the last read first.
            if staging.count < target.bytesPerFrame {
                let read = decode(into: decoded, frames: decodedCapacity)
                guard read > 0 else { return read }
                converter.convert(decoded, frames: read, into: &staging)
            }
            var copied = 0
            let wanted = frames * target.bytesPerFrame
            while copied < wanted, staging.count >= target.bytesPerFrame {
                let front = staging.front(limit: (wanted - copied) / target.bytesPerFrame * target.bytesPerFrame)
                guard let base = front.baseAddress, front.count > 0 else { break }
                (buffer + copied).copyMemory(from: base, byteCount: front.count)
                copied += front.count
                staging.drop(front.count)
            }
            self.staging = staging
            count = copied / target.bytesPerFrame
            if count == 0 { return -Int(EAGAIN) }
        } else {
            count = decode(into: buffer, frames: frames)
            guard count > 0 else { return count }
        }
        given += Int64(count)
        return count
    }

    /// Notes the title on air, for a decoder that does not place titles (FFmpeg's, for a stream
    /// whose demuxer gives no byte offsets). A title is parsed when its bytes arrive, ahead of the decoder by
    /// what the buffer holds: it is placed that far ahead, at the stream's bitrate (the first
    /// one, seen before any audio, at frame 0). Titles that came and went within the buffer
    /// (a burst at connect) are not seen.
    private func noteTitle() {
        let status = stream.current
        var frame = given
        if given > 0, let kbps = status.bitrate, kbps > 0, let target {
            let seconds = Double(stream.bufferedBytes) * 8 / (Double(kbps) * 1000)
            frame += Int64(seconds * Double(target.sampleRate))
        }
        titles.note(status.title, atFrame: frame)
    }

    /// Notes the titles the decoder marked in the frames it just gave, `from` up to `to` (its
    /// frames), at the frames it marked them: the title at `from`, then each change before `to`.
    /// A decoder frame is a session frame (the source's frames are the session's, a gap skipped
    /// in both), scaled by the rates when the session converts.
    ///
    /// An ICY station's first metadata comes after its first `icy-metaint` bytes of audio and
    /// says what is on air: the programme the audio before it belongs to too. So the first title
    /// the decoder marks in an ICY stream names the take from its first frame (the player shows
    /// it only from the frame marked); the changes after it are at their frames.
    private func noteTitles(from: Int64, to: Int64) {
        guard let target else { return }
        if from == 0 { firstICYTitlePending = stream.current.head?.icyMetaInterval != nil }
        if firstICYTitlePending {
            let start = stream.title(atFrame: 0)
            if start.title != nil {
                firstICYTitlePending = false  // marked at the first frame: as any other
            } else if let first = start.next {
                firstICYTitlePending = false
                let title = stream.title(atFrame: first).title
                titles.note(title, atFrame: 0)
                decoderNamedATitle = title != nil
                firstTitleFrame = first
            } else {
                return  // not marked yet: nothing is named before it
            }
        }
        func sessionFrame(_ frame: Int64) -> Int64 {
            sourceFormat.sampleRate == target.sampleRate
                ? frame : frame * Int64(target.sampleRate) / Int64(max(sourceFormat.sampleRate, 1))
        }
        // Before an ICY stream's first mark, its title (noted at frame 0).
        var at = max(from, firstTitleFrame)
        guard at < to else { return }
        while true {
            let heard = stream.title(atFrame: at)
            if heard.title != nil || decoderNamedATitle { titles.note(heard.title, atFrame: sessionFrame(at)) }
            decoderNamedATitle = decoderNamedATitle || heard.title != nil
            guard let next = heard.next, next > at, next < to else { return }
            at = next
        }
    }

    /// Decodes station audio; -EAGAIN when nothing came in time, -EIO when the stream ended for good.
    private func decode(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        let count: Int
        do throws(ReelError) {
            count = try reader.read(into: buffer, frames: frames)
        } catch {
            finish(error)
            return -Int(EIO)
        }
        if count == 0 && reader.isWaitingForData {
            // Nothing came in time: the gap is skipped, not recorded as silence.
            return -Int(EAGAIN)
        }
        if count == 0 {
            finish(stream.current.failure ?? ReelError(.unreachable, "\(url): the stream ended"))
            return -Int(EIO)
        }
        if stream.placesTitlesByDecoding { noteTitles(from: decodedFrames, to: decodedFrames + Int64(count)) }
        decodedFrames += Int64(count)
        return count
    }

    private func finish(_ error: ReelError) {
        ended = true
        failure = error
        logger.warning("the recorded station ended", metadata: ["url": "\(url)", "error": "\(error.message)"])
    }

    public func close() {
        stream.stop()
    }
}
