// The player's tap as a capture device: the recorder's capture engine reads what Reel plays.

import Logging
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A `PCMInput` over `PlayerTap`: opened, it attaches a ring of `ringSeconds` to the tap; each
/// read takes what was heard since (never waiting: -EAGAIN when nothing was). Paused or stopped,
/// the player gives nothing and the session's clock stands still. The session's format is the
/// one it was opened for; what plays in another is converted by the tap.
///
/// The title changes of what plays (`title`, polled at each read) are kept in `titles` with the
/// frame they were seen at. Called by the capture thread only (as every `PCMInput`).
public final class PlayerTapInput: PCMInput, @unchecked Sendable {
    public let name = "player"
    public let titles: SourceTitles
    private let tap: PlayerTap
    private let ringSeconds: Double
    private let title: @Sendable () -> String?
    private let logger: Logger
    private var sink: PlayerTap.Sink?
    private var given: Int64 = 0
    private var droppedLogged: Int64 = 0

    public init(
        tap: PlayerTap, ringSeconds: Double = 10, logger: Logger, titles: SourceTitles = SourceTitles(),
        title: @escaping @Sendable () -> String? = { nil }
    ) {
        self.tap = tap
        self.ringSeconds = ringSeconds
        self.logger = logger
        self.titles = titles
        self.title = title
    }

    public func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        guard format.sample == .s16 else {
            throw ReelError(.unsupportedFormat, "recording what plays is 16-bit")
        }
        let capacity = max(Int(ringSeconds * Double(format.sampleRate)), 4096)
        let sink = PlayerTap.Sink(ring: CaptureRing(capacityFrames: capacity, bytesPerFrame: format.bytesPerFrame), target: format)
        self.sink = sink
        given = 0
        droppedLogged = 0
        tap.attach(sink)
        return PCMConfiguration(format: format, periodFrames: max(format.sampleRate / 10, 256), bufferFrames: capacity)
    }

    public func prepare() -> Int32 { 0 }
    public func resume() -> Int32 { 0 }
    public func drop() {}

    public func wait(timeoutMilliseconds: Int) -> Int32 {
        usleep(UInt32(min(max(timeoutMilliseconds, 1), 100)) * 1000)
        return 0
    }

    /// Frames heard since the last read, or -EAGAIN when none were. Frames the tap dropped since
    /// the last read (the ring was full) are an overrun, as a capture device's: logged, and this
    /// read answers -EPIPE (the engine counts it in `overruns`, prepares, reads again; what the
    /// ring holds is kept for that read).
    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let sink else { return -Int(EBADF) }
        let dropped = tap.counts(sink).dropped
        if dropped > droppedLogged {
            logger.warning(
                "recording what plays: the recorder fell behind and frames were dropped",
                metadata: ["droppedFrames": "\(dropped)", "since": "\(dropped - droppedLogged)"])
            droppedLogged = dropped
            return -Int(EPIPE)
        }
        titles.note(title(), atFrame: given)
        let taken = sink.ring.take(into: buffer, maxFrames: frames, timeoutMilliseconds: 0)
        guard taken > 0 else { return -Int(EAGAIN) }
        given += Int64(taken)
        return taken
    }

    /// Frames the tap put into the ring so far (all heard; read or not yet).
    public var deliveredFrames: Int64 { sink.map { tap.counts($0).delivered } ?? 0 }

    /// Frames the tap could not hand over (the ring was full, or an attach was in progress).
    public var droppedFrames: Int64 { sink.map { tap.counts($0).dropped } ?? droppedLogged }

    public func close() {
        if let sink { tap.detach(sink) }
        sink = nil
    }
}
