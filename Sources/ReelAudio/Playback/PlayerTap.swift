// What the player plays, as a capture source for the recorder: decoded frames, once heard.

import Logging
import ReelModel
import ReelRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The playback engine's tap: where the recorder (`source: "player"`) takes what Reel plays,
/// after decoding and before the volume, ReplayGain and fades (the decoded signal).
///
/// Frames are given when they are *heard*, not when they are decoded: the audio thread keeps
/// the decoded frames the device holds (`PlayerTapLine`) and releases them as the device's delay
/// says they have played. A pause, seek or volume change drops what the device holds and
/// decodes it again; those frames were never heard and are not recorded twice. While paused or
/// stopped nothing is heard, so nothing is recorded.
///
/// The audio thread never waits for the recorder: the attachment's lock is held only to swap a
/// pointer or read two counters (and by the audio thread to convert and copy); it converts the
/// frames to the recording's format (`PipeConverter`: channels mapped, 32-bit samples rounded to 16, another sample rate
/// resampled with libsoxr) and puts them into a bounded ring; what does not fit is dropped and
/// counted (`PlayerTapInput` logs it and reports it as an overrun), never waited for.
public final class PlayerTap: @unchecked Sendable {
    private let lock = ConditionLock()
    /// The recorder's end, while one is attached; under `lock`.
    private var sink: Sink?

    /// The attached recorder's ring and format; touched by the audio thread under `lock`.
    final class Sink {
        let ring: CaptureRing
        let target: PCMFormat
        /// Frames (of the target format) that did not fit or were skipped.
        var dropped: Int64 = 0
        /// Frames put into the ring.
        var delivered: Int64 = 0
        /// The audio thread's converter, made for the decoded format it last saw.
        var converter: PipeConverter?
        var staging: ByteRing
        static let chunkFrames = 4096

        init(ring: CaptureRing, target: PCMFormat) {
            self.ring = ring
            self.target = target
            // A chunk resampled up to 192 kHz from 8 kHz, with room to spare.
            staging = ByteRing(capacity: (Self.chunkFrames * 24 + 1024) * target.bytesPerFrame)
        }

        deinit { staging.deallocate() }
    }

    public init() {}

    /// Attaches a recorder's ring (the control side; waits for the audio thread's copy at most).
    func attach(_ sink: Sink) {
        lock.lock()
        self.sink = sink
        lock.unlock()
    }

    func detach(_ sink: Sink) {
        lock.lock()
        if self.sink === sink { self.sink = nil }
        lock.unlock()
    }

    /// A recorder is attached (a hint for the audio thread: it keeps decoded frames only then).
    var isAttached: Bool {
        lock.lock()
        defer { lock.unlock() }
        return sink != nil
    }

    /// Frames heard, in the decoded `format`: converted and put into the attached ring. On the
    /// audio thread; never waits.
    func heard(_ frames: UnsafeRawPointer, count: Int, format: PCMFormat) {
        guard count > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        guard let sink else { return }
        if sink.converter?.source != format {
            sink.converter = try? PipeConverter(
                source: format, target: OutputFormat(sampleRate: sink.target.sampleRate, bits: 16, channels: sink.target.channels),
                maxFrames: Sink.chunkFrames)
        }
        guard let converter = sink.converter else {
            sink.dropped += Int64(count)
            return
        }
        var offset = 0
        while offset < count {
            let run = min(count - offset, Sink.chunkFrames)
            converter.convert(frames + offset * format.bytesPerFrame, frames: run, into: &sink.staging)
            offset += run
            deliver(sink)
        }
    }

    /// What was kept no longer follows what comes next (a seek, a pause): the resampler forgets.
    func discontinuity() {
        lock.lock()
        defer { lock.unlock() }
        sink?.converter?.reset()
    }

    private func deliver(_ sink: Sink) {
        let bytesPerFrame = sink.target.bytesPerFrame
        while sink.staging.count >= bytesPerFrame {
            let front = sink.staging.front(limit: sink.staging.count / bytesPerFrame * bytesPerFrame)
            let frames = front.count / bytesPerFrame
            guard frames > 0, let base = front.baseAddress else { break }
            let accepted = sink.ring.put(base, frames: frames)
            sink.delivered += Int64(accepted)
            sink.dropped += Int64(frames - accepted)
            sink.staging.drop(frames * bytesPerFrame)
        }
    }

    /// The attached sink's counts (the capture thread, for its log).
    func counts(_ sink: Sink) -> (delivered: Int64, dropped: Int64) {
        lock.lock()
        defer { lock.unlock() }
        return (sink.delivered, sink.dropped)
    }
}

/// The decoded frames the device holds and has not played yet, by device frame. Owned by the
/// audio thread (`PlaybackRunner`); frames reach the tap when `release(upTo:)` says they were
/// heard, and are forgotten by `discard()` when the device's queue is dropped.
final class PlayerTapLine {
    let tap: PlayerTap
    private var storage: UnsafeMutableRawPointer?
    private var capacityFrames = 0
    private var format: PCMFormat?
    /// The device frame of the first frame held.
    private var start: Int64 = 0
    private var held = 0
    private var readIndex = 0

    init(tap: PlayerTap) { self.tap = tap }

    deinit { storage?.deallocate() }

    /// Frames just decoded, to be written at `deviceFrame` (after the last ones kept, or the
    /// line starts afresh there).
    func decoded(_ frames: UnsafeRawPointer, count: Int, format: PCMFormat, at deviceFrame: Int64) {
        guard count > 0 else { return }
        guard tap.isAttached else {
            held = 0
            return
        }
        if format != self.format || deviceFrame != start + Int64(held) {
            if held > 0 { tap.discontinuity() }
            held = 0
            readIndex = 0
            start = deviceFrame
            if format != self.format {
                self.format = format
                // Four seconds, or more than any device buffer holds at this rate.
                let wanted = max(format.sampleRate * 4, count * 4)
                if wanted > capacityFrames || storage == nil {
                    storage?.deallocate()
                    storage = UnsafeMutableRawPointer.allocate(byteCount: wanted * format.bytesPerFrame, alignment: 16)
                    capacityFrames = wanted
                }
            }
        }
        guard let storage else { return }
        var copied = 0
        while copied < count {
            if held == capacityFrames {
                // Fuller than a device ever holds: the oldest are given as heard.
                give(min(count - copied, capacityFrames))
            }
            let writeIndex = (readIndex + held) % capacityFrames
            let run = min(count - copied, capacityFrames - writeIndex, capacityFrames - held)
            (storage + writeIndex * format.bytesPerFrame).copyMemory(
                from: frames + copied * format.bytesPerFrame, byteCount: run * format.bytesPerFrame)
            held += run
            copied += run
        }
    }

    /// The device has played every frame before `deviceFrame`.
    func release(upTo deviceFrame: Int64) {
        let heard = Int(min(max(deviceFrame - start, 0), Int64(held)))
        if heard > 0 { give(heard) }
    }

    /// Everything held has played (the device drained at a track's end).
    func releaseAll() {
        if held > 0 { give(held) }
    }

    /// The device's queue was dropped: what it held was never heard.
    func discard() {
        if held > 0 { tap.discontinuity() }
        held = 0
        readIndex = 0
    }

    private func give(_ frames: Int) {
        guard let storage, let format, frames > 0 else { return }
        var left = min(frames, held)
        while left > 0 {
            let run = min(left, capacityFrames - readIndex)
            tap.heard(storage + readIndex * format.bytesPerFrame, count: run, format: format)
            readIndex = (readIndex + run) % capacityFrames
            held -= run
            start += Int64(run)
            left -= run
        }
        if held == 0 { readIndex = 0 }
    }
}
