// A pipe output on the audio thread: converted frames, paced to the reader, written to a FIFO.

import ReelModel

/// What a pipe output is told by the config.
public struct PipeOutputSettings: Sendable, Equatable {
    public var name: String
    public var path: String
    public var format: OutputFormat
    /// How far ahead of the audible frame the pipe is filled: more than a reader's read (20 ms)
    /// and the audio thread's longest sleep while a pipe is on (50 ms), with room for a late
    /// wake-up.
    public var leadMilliseconds: Int
    /// What the pipe may hold beyond the lead before the excess counts as unread and is thrown
    /// away: room for a reader that reads late.
    public var slackMilliseconds: Int

    public init(
        name: String, path: String, format: OutputFormat = .snapcastDefault, leadMilliseconds: Int = 150,
        slackMilliseconds: Int = 150
    ) {
        self.name = name
        self.path = path
        self.format = format
        self.leadMilliseconds = leadMilliseconds
        self.slackMilliseconds = slackMilliseconds
    }
}

/// One pipe output. Every method runs on the audio thread.
///
/// The engine's frames arrive as the clock output (the ALSA device, or `RealTimeClock` when
/// the device is off) takes them, converted at once to the pipe's format (`PipeConverter`) and
/// kept in a ring. `flush` writes to the FIFO only what will be heard within the lead (150 ms)
/// of the clock's audible frame, so the pipe holds a little more than a reader's read (snapserver
/// reads 20 ms every 20 ms and fills what is missing with silence) and never seconds of audio.
/// What nobody reads is thrown away beyond the lead (`FIFOWriter.discard`): audio during an
/// outage is lost by design, and a reader that comes (back) starts at the frame heard now,
/// never earlier.
///
/// After a drop (a seek, a volume change, a new next track: the engine refills from the audible
/// frame) the pipe still holds what follows the audible frame; the same frames of the new stream
/// are skipped, so the reader hears no gap and no repeat. A pause or stop empties the pipe
/// (`silence`): the rooms stop with the device. At the end of the queue the reader hears the
/// pipe out.
final class PipeOutput {
    let id: Int
    let settings: PipeOutputSettings
    /// A reader that took something within this long is there.
    static let readerTimeoutNanoseconds: UInt64 = 500_000_000
    /// The ring holds the clock's whole buffer, and this much more.
    static let ringSlackSeconds = 1

    private let writer: FIFOWriter
    private var converter: PipeConverter?
    private var ring: ByteRing
    /// Since the last reset: output frames put in the ring, and taken out of it (written,
    /// skipped or dropped).
    private var produced: Int64 = 0
    private var consumed: Int64 = 0
    /// Frames of the new stream that the pipe already holds (after a drop).
    private var skipFrames: Int64 = 0
    /// Bytes ever written to the pipe, and thrown away from it by reeld.
    private var bytesWritten: Int64 = 0
    private var bytesDiscarded: Int64 = 0
    /// Bytes ever taken by the reader, as last measured, and when that last grew.
    private var bytesRead: Int64 = 0
    private var readerSeenAt: UInt64?
    /// Output frames dropped (nobody read, or the reader fell behind) and written, since the
    /// output was made (for logs and benchmarks).
    private(set) var droppedFrames: Int64 = 0
    private(set) var writtenFrames: Int64 = 0
    private(set) var status: OutputStatus = .ready

    init(id: Int, settings: PipeOutputSettings) {
        self.id = id
        self.settings = settings
        writer = FIFOWriter(path: settings.path)
        ring = ByteRing(capacity: settings.format.bytesPerFrame * settings.format.sampleRate * Self.ringSlackSeconds)
    }

    deinit { ring.deallocate() }

    private var bytesPerFrame: Int { settings.format.bytesPerFrame }

    private func frames(milliseconds: Int) -> Int64 {
        Int64(settings.format.sampleRate) * Int64(milliseconds) / 1000
    }

    /// Sets up the conversion from the engine's format, for a clock that takes `maxFrames` at a
    /// time and queues up to `bufferFrames` (when the clock opens; this may allocate).
    func configure(for format: PCMFormat, maxFrames: Int, bufferFrames: Int) throws(ReelError) {
        let outputFrames = bufferFrames * settings.format.sampleRate / max(format.sampleRate, 1)
        let bytes = (outputFrames + settings.format.sampleRate * Self.ringSlackSeconds) * bytesPerFrame
        if ring.capacity < bytes {
            ring.deallocate()
            ring = ByteRing(capacity: bytes)
        }
        if converter == nil || converter?.source != format || (converter?.maxFrames ?? 0) < maxFrames {
            converter = nil
            converter = try PipeConverter(source: format, target: settings.format, maxFrames: maxFrames)
        }
        reset()
    }

    /// Forgets every frame not yet written (the clock was dropped or prepared); what the pipe
    /// holds plays on, and the same frames of what comes next are skipped.
    func reset() {
        converter?.reset()
        ring.removeAll()
        produced = 0
        consumed = 0
        skipFrames = Int64(writer.queuedBytes() / bytesPerFrame)
    }

    /// Paused or stopped: empties the pipe as well, so the reader stops now and hears nothing
    /// old later.
    func silence() {
        reset()
        bytesDiscarded += Int64(writer.discard(upTo: Int.max))
        skipFrames = 0
    }

    /// Nothing plays (the queue ended, or the next track needs the clock reopened): forget the
    /// conversion. A reader hears what the pipe holds to its end; with no reader it is thrown
    /// away, so that one that comes later does not hear it.
    func close() {
        if status == .connected { reset() } else { silence() }
        skipFrames = 0
        converter = nil
    }

    /// The clock took its last frame before a drain (the end of the queue, or a track of
    /// another format next): what the resampler still holds (its last few milliseconds) follows
    /// them, written when due like the rest.
    func finish() {
        guard let converter else { return }
        produced += Int64(converter.finish(into: &ring))
    }

    /// Turned off: closes the pipe as well.
    func shutDown() {
        close()
        writer.disconnect()
        status = .disabled
        readerSeenAt = nil
    }

    /// Turned on again after `shutDown`.
    func reopen() {
        if status == .disabled { status = .ready }
    }

    /// Opens the FIFO now (when turned on, not at the first frame): a reader that opened it
    /// first (snapserver) then sees no end-of-file, so it is there, reading, when the music
    /// starts. Throws when the FIFO cannot be used.
    func connect(now: UInt64) throws(ReelError) {
        let lead = frames(milliseconds: settings.leadMilliseconds)
        let capacity = Int(lead + frames(milliseconds: settings.slackMilliseconds)) * bytesPerFrame * 2
        _ = try writer.connect(now: now, capacity: capacity)
    }

    /// Frames the clock output took; converted now, written when due.
    func take(_ buffer: UnsafeRawPointer, frames: Int) {
        guard let converter, frames > 0 else { return }
        var offset = 0
        while offset < frames {
            let chunk = min(frames - offset, converter.maxFrames)
            produced += Int64(converter.convert(
                buffer + offset * converter.source.bytesPerFrame, frames: chunk, into: &ring))
            offset += chunk
        }
        // The ring dropped its oldest frames if it overflowed: they count as taken.
        let held = Int64(ring.count / bytesPerFrame)
        if produced - consumed > held { consumed = produced - held }
    }

    /// Writes what is due: the frames up to the lead past `audibleSourceFrame` (frames of the
    /// clock since it was last prepared), after throwing away what nobody read beyond the lead.
    /// Returns the status when it changed, else nil. Throws when the FIFO cannot be used at all
    /// (the output must be turned off).
    func flush(audibleSourceFrame: Int64, now: UInt64) throws(ReelError) -> OutputStatus? {
        guard let converter else { return nil }
        let before = status
        let lead = frames(milliseconds: settings.leadMilliseconds)
        try connect(now: now)
        let connected = writer.isConnected
        if skipFrames > 0 {
            let skipped = min(skipFrames, Int64(ring.count / bytesPerFrame))
            ring.drop(Int(skipped) * bytesPerFrame)
            consumed += skipped
            skipFrames -= skipped
        }
        let sourceRate = Int64(max(converter.source.sampleRate, 1))
        let dueSource = audibleSourceFrame + sourceRate * Int64(settings.leadMilliseconds) / 1000
        var due = min(dueSource * Int64(settings.format.sampleRate) / sourceRate, produced) - consumed
        var reading = readerSeenAt.map { now &- $0 <= Self.readerTimeoutNanoseconds } ?? false
        if connected {
            let queued = Int64(writer.queuedBytes())
            let read = bytesWritten - bytesDiscarded - queued
            if read > bytesRead {
                bytesRead = read
                readerSeenAt = now
                reading = true
            }
            // Unread beyond the lead (and, while a reader reads, its slack, for a read that comes
            // late): the oldest is thrown away — before the frames due now are written, counting
            // them, so the pipe never holds more than that, not even for a moment (the audio
            // thread may wake late and have much to write). With nobody reading, the pipe then
            // holds only what is due from now on, so a reader that comes hears nothing from the
            // past.
            let slack = reading ? frames(milliseconds: settings.slackMilliseconds) : 0
            if !reading, due > lead {
                // Woken late with nobody reading: what is already past the audible frame is
                // not written at all.
                let late = min(due - lead, Int64(ring.count / bytesPerFrame))
                ring.drop(Int(late) * bytesPerFrame)
                consumed += late
                droppedFrames += late
                due -= late
            }
            let incoming = max(0, min(due, Int64(ring.count / bytesPerFrame))) * Int64(bytesPerFrame)
            if queued + incoming > (lead + slack) * Int64(bytesPerFrame) {
                let excess = min(queued, queued + incoming - lead * Int64(bytesPerFrame))
                let whole = excess / Int64(bytesPerFrame) * Int64(bytesPerFrame)
                let discarded = writer.discard(upTo: Int(whole))
                bytesDiscarded += Int64(discarded)
                droppedFrames += Int64(discarded / bytesPerFrame)
            }
            while due > 0 {
                let front = ring.front(limit: Int(due) * bytesPerFrame)
                guard front.count >= bytesPerFrame, let written = writer.write(front) else { break }
                // A FIFO fills whole pages; frame sizes divide 4096 (see `OutputFormat`), so a
                // short write still ends on a frame.
                let frames = written / bytesPerFrame
                ring.drop(frames * bytesPerFrame)
                consumed += Int64(frames)
                writtenFrames += Int64(frames)
                bytesWritten += Int64(frames * bytesPerFrame)
                due -= Int64(frames)
                if written < front.count { break }  // full
            }
        }
        if due > 0 {
            // The pipe is closed (after an error) or full: what is later than the lead is
            // dropped, never sent late.
            let late = due - (writer.isConnected ? lead : 0)
            if late > 0 {
                ring.drop(Int(late) * bytesPerFrame)
                consumed += late
                droppedFrames += late
            }
        }
        status = reading ? .connected : .waitingForReader
        return status == before ? nil : status
    }
}
