// A source that cannot seek, read so that the engine can still go back to the audible frame.

import ReelModel

/// Reads a source that cannot seek (`canSeek` false: a stream that comes as it plays) and keeps
/// the last `capacity` frames it decoded, so that what the engine does by going back — a pause
/// (the device's queued frames are dropped, the decoder goes back to the frame heard), a
/// software volume change or a queue edit (the same, to be heard at once) — works as on a
/// file: `seek` to a frame within what is kept replays it from memory, and reading on past it
/// decodes anew. A seek before what is kept, or past what was decoded, is `not_seekable`.
///
/// `capacity` must hold more than the device queues (its buffer) plus a period: the engine
/// never goes back further than what the device had not played. Used on the audio thread only.
public final class RewindableReader: AudioFileReader {
    public let base: AudioFileReader
    public var path: String { base.path }
    public var format: AudioFormat { base.format }
    public var pcmFormat: PCMFormat { base.pcmFormat }
    public var frameCount: Int64? { base.frameCount }
    public var frameCountIsFinal: Bool { base.frameCountIsFinal }
    public var estimatedFrameCount: Int64? { base.estimatedFrameCount }
    public var canSeek: Bool { false }

    /// Frames kept.
    public let capacity: Int
    private let bytesPerFrame: Int
    /// The last frames decoded: frame `f` is at `(f % capacity) * bytesPerFrame`.
    private var ring: UnsafeMutableRawPointer
    /// The frame after the last one decoded from `base`.
    private var decodedEnd: Int64
    /// The frame the next `read` gives.
    private var position: Int64
    /// The first frame the ring holds for the source's current run (where it was created or
    /// last moved the source to): frames before it in the ring are of another run.
    private var runStart: Int64

    /// `base` positioned at `frame` (the engine loads a track at its start frame).
    public init(_ base: AudioFileReader, capacity: Int, at frame: Int64 = 0) {
        self.base = base
        self.capacity = max(capacity, 1)
        bytesPerFrame = base.pcmFormat.bytesPerFrame
        ring = UnsafeMutableRawPointer.allocate(byteCount: self.capacity * bytesPerFrame, alignment: 16)
        decodedEnd = frame
        position = frame
        runStart = frame
    }

    deinit { ring.deallocate() }

    /// The first frame still kept.
    private var keptStart: Int64 { max(decodedEnd - Int64(capacity), runStart, 0) }

    public var isWaitingForData: Bool { base.isWaitingForData }

    /// Within what is kept, or wherever the source can go back to itself (a stream's buffer).
    public func canSeek(to frame: Int64) -> Bool {
        (frame >= keptStart && frame <= decodedEnd) || base.canSeek(to: frame)
    }

    public func seekRefusal(to frame: Int64) -> ReelError {
        let refusal = base.seekRefusal(to: frame)
        guard refusal.message == ReelError(.notSeekable, "cannot seek in \(path)").message else { return refusal }
        let rate = Double(pcmFormat.sampleRate)
        return ReelError(
            .notSeekable,
            "\(path) cannot seek: only the last \(formatSeconds(Double(decodedEnd - keptStart) / rate)) played are kept")
    }

    /// From what is kept when it can; else the source goes there and what is kept starts
    /// afresh from that frame.
    public func seek(to frame: Int64) throws(ReelError) {
        if frame >= keptStart && frame <= decodedEnd {
            position = frame
            return
        }
        guard base.canSeek(to: frame) else { throw seekRefusal(to: frame) }
        try base.seek(to: frame)
        decodedEnd = frame
        position = frame
        runStart = frame
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) throws(ReelError) -> Int {
        guard frames > 0 else { return 0 }
        if position < decodedEnd {
            // Replaying what is kept: up to the end of it, and not across the ring's end.
            let count = min(frames, Int(decodedEnd - position))
            copyOut(from: position, count: count, into: buffer)
            position += Int64(count)
            return count
        }
        let count = try base.read(into: buffer, frames: min(frames, capacity))
        keep(buffer, count: count)
        position += Int64(count)
        return count
    }

    /// Copies `count` kept frames from `frame` on.
    private func copyOut(from frame: Int64, count: Int, into buffer: UnsafeMutableRawPointer) {
        var done = 0
        while done < count {
            let slot = Int((frame + Int64(done)) % Int64(capacity))
            let run = min(count - done, capacity - slot)
            (buffer + done * bytesPerFrame).copyMemory(from: ring + slot * bytesPerFrame, byteCount: run * bytesPerFrame)
            done += run
        }
    }

    /// Keeps `count` frames just decoded (the last `capacity` of them).
    private func keep(_ buffer: UnsafeRawPointer, count: Int) {
        var done = 0
        while done < count {
            let slot = Int((decodedEnd + Int64(done)) % Int64(capacity))
            let run = min(count - done, capacity - slot)
            (ring + slot * bytesPerFrame).copyMemory(from: buffer + done * bytesPerFrame, byteCount: run * bytesPerFrame)
            done += run
        }
        decodedEnd += Int64(count)
    }
}
