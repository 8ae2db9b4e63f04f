// A pipe output on the audio thread: converted frames, paced to the reader, written to a FIFO.

import ReelModel

/// What a pipe output is told by the config.
public struct PipeOutputSettings: Sendable, Equatable {
    public var name: String
    public var path: String
    public var format: OutputFormat

    public init(name: String, path: String, format: OutputFormat = .snapcastDefault) {
        self.name = name
        self.path = path
        self.format = format
    }
}

/// One pipe output. Every method runs on the audio thread.
///
/// The engine's frames arrive as the clock output (the ALSA device, or `RealTimeClock` when
/// the device is off) takes them, converted at once to the pipe's format (`PipeConverter`) and
/// kept in a ring. `flush` writes to the FIFO only what will be heard within `leadNanoseconds`
/// of the clock's audible frame, so the FIFO holds a little more than a reader's read (snapserver
/// reads 20 ms every 20 ms and fills what is missing with silence) and never seconds of audio:
/// a pause, seek or stop leaves at most the lead behind. While nobody reads, what falls due is
/// dropped (audio during an outage is lost by design, never replayed late).
final class PipeOutput {
    let id: Int
    let settings: PipeOutputSettings
    /// How far ahead of the audible frame the FIFO is filled.
    static let leadNanoseconds: UInt64 = 100_000_000
    /// The ring holds the clock's whole buffer ahead of what is due; 2 s is more than enough.
    static let ringSeconds = 2

    private let writer: FIFOWriter
    private var converter: PipeConverter?
    private var ring: ByteRing
    /// Since the clock was last prepared: source frames taken, output frames put in the ring,
    /// output frames taken out of it (written or dropped).
    private var sourceTaken: Int64 = 0
    private var produced: Int64 = 0
    private var consumed: Int64 = 0
    /// Output frames dropped because nobody read, or the reader fell behind; since the output
    /// was made (for logs and benchmarks).
    private(set) var droppedFrames: Int64 = 0
    private(set) var writtenFrames: Int64 = 0
    private(set) var status: OutputStatus = .ready

    init(id: Int, settings: PipeOutputSettings) {
        self.id = id
        self.settings = settings
        writer = FIFOWriter(path: settings.path)
        ring = ByteRing(capacity: settings.format.bytesPerFrame * settings.format.sampleRate * Self.ringSeconds)
    }

    deinit { ring.deallocate() }

    var isConnected: Bool { writer.isConnected }

    /// Sets up the conversion from the engine's format (when the clock opens).
    func configure(for format: PCMFormat, maxFrames: Int) throws(ReelError) {
        if let converter, converter.source == format, converter.maxFrames >= maxFrames {
            reset()
            return
        }
        converter = nil
        converter = try PipeConverter(source: format, target: settings.format, maxFrames: maxFrames)
        reset()
    }

    /// Forgets every frame not yet written (drop, prepare, pause, seek).
    func reset() {
        converter?.reset()
        ring.removeAll()
        sourceTaken = 0
        produced = 0
        consumed = 0
    }

    /// Nothing plays: forget the conversion; the FIFO stays open for the reader.
    func close() {
        reset()
        converter = nil
    }

    /// Turned off: closes the FIFO as well.
    func shutDown() {
        close()
        writer.disconnect()
        status = .disabled
    }

    /// Turned on again after `shutDown`.
    func reopen() {
        if status == .disabled { status = .ready }
    }

    /// Frames the clock output took; converted now, written when due.
    func take(_ buffer: UnsafeRawPointer, frames: Int) {
        guard let converter, frames > 0 else { return }
        var offset = 0
        while offset < frames {
            let chunk = min(frames - offset, converter.maxFrames)
            let made = converter.convert(
                buffer + offset * converter.source.bytesPerFrame, frames: chunk, into: &ring)
            produced += Int64(made)
            offset += chunk
        }
        sourceTaken += Int64(frames)
        // The ring dropped its oldest frames if it overflowed: they count as consumed.
        let held = Int64(ring.count / settings.format.bytesPerFrame)
        if produced - consumed > held { consumed = produced - held }
    }

    /// Writes what is due: the frames up to `leadNanoseconds` past `audibleSourceFrame` (frames
    /// of the clock since it was prepared). Returns the status when it changed, else nil.
    /// Throws when the FIFO cannot be used at all (the output must be turned off).
    func flush(audibleSourceFrame: Int64, now: UInt64) throws(ReelError) -> OutputStatus? {
        guard let converter else { return nil }
        let sourceRate = Int64(converter.source.sampleRate)
        let outputRate = Int64(settings.format.sampleRate)
        let dueSource = audibleSourceFrame + sourceRate * Int64(Self.leadNanoseconds) / 1_000_000_000
        let dueOutput = min(dueSource * outputRate / max(sourceRate, 1), produced)
        var due = dueOutput - consumed
        let before = status
        let connected = try writer.connect(now: now)
        let bytesPerFrame = settings.format.bytesPerFrame
        if connected {
            while due > 0 {
                let front = ring.front(limit: Int(due) * bytesPerFrame)
                guard front.count >= bytesPerFrame else { break }
                guard let written = writer.write(front) else { break }  // the reader went away
                let frames = written / bytesPerFrame
                // A FIFO fills whole pages; frame sizes divide 4096 (see `OutputFormat`), so a
                // short write still ends on a frame.
                ring.drop(frames * bytesPerFrame)
                consumed += Int64(frames)
                writtenFrames += Int64(frames)
                due -= Int64(frames)
                if written < front.count { break }  // full: the reader is behind
            }
        }
        if due > 0 {
            // Nobody reads: drop what is due. A reader that did not take it: keep up to the lead
            // for its next read, drop what is older. Never send audio late.
            let keep = writer.isConnected ? outputRate * Int64(Self.leadNanoseconds) / 1_000_000_000 : 0
            let late = due - keep
            if late > 0 {
                ring.drop(Int(late) * bytesPerFrame)
                consumed += late
                droppedFrames += late
            }
        }
        status = writer.isConnected ? .connected : .waitingForReader
        return status == before ? nil : status
    }
}
