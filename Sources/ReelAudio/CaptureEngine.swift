// The capture engine: a capture thread that owns the PCM, a ring, and a writer thread that owns the file.

import Logging
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// What to record: where, in which codec and format, and for how long at most.
public struct CaptureRequest: Sendable {
    public var path: String
    /// `flac`, `wav`, `ogg` or `opus` (the codec registry's `recordingFormats`).
    public var codec: String
    public var format: PCMFormat
    /// Capture stops by itself after this many frames.
    public var maxFrames: Int64?

    public init(path: String, codec: String, format: PCMFormat, maxFrames: Int64? = nil) {
        self.path = path
        self.codec = codec
        self.format = format
        self.maxFrames = maxFrames
    }
}

/// What the capture engine publishes; read from any thread.
public struct CaptureSnapshot: Sendable, Equatable {
    public var running = false
    /// Frames read from the device (the recording's elapsed time).
    public var capturedFrames: Int64 = 0
    /// Frames handed to the encoder.
    public var writtenFrames: Int64 = 0
    /// Levels of the last complete window (a tenth of a second).
    public var levels: AudioLevels?
    /// Device overruns recovered, plus times the ring was full and audio was dropped.
    public var overruns = 0
    public var sampleRate = 0
    /// Why capture ended by itself (`disk_full`, `device_unavailable`, `io_error`).
    public var error: ReelError?

    public init() {}

    public var elapsed: Double {
        sampleRate > 0 ? Double(capturedFrames) / Double(sampleRate) : 0
    }
}

/// How a capture ended.
public enum CaptureEnding: Sendable, Equatable {
    /// `stop()` was called.
    case stopped
    /// `maxFrames` were captured.
    case limitReached
    /// The device or the disk failed; what was captured until then is in the file.
    case failed(ReelError)
}

/// Records one take at a time. The capture thread reads a period at a time (non-blocking, at
/// most a period's wait) into a ring of `ringSeconds`; the writer thread wakes four times a
/// second, encodes what the ring holds and syncs the file to disk every `syncInterval` seconds.
/// The capture thread runs at normal priority: the device's buffer (half a second by default,
/// see `PCMTiming.capture`) covers scheduling delays, and with PulseAudio's plugin a real-time
/// thread costs more in priority-inheritance locking than it saves. A slow disk fills the ring, never the
/// device's buffer; a full ring drops audio and counts an overrun.
///
/// The engine ends a take by itself at `maxFrames`, on a device failure (the file keeps what was
/// captured) or on a write failure such as a full disk; it then calls `onEnd` from the writer
/// thread once the file is closed. `onProgress` is called from the writer thread after every sync.
public final class CaptureEngine: @unchecked Sendable {
    public typealias WriterFactory = (CaptureRequest) throws(ReelError) -> RecordingWriter

    private let device: PCMInput
    private let timing: PCMTiming
    private let logger: Logger
    private let ringSeconds: Double
    private let syncInterval: Double
    private let makeWriter: WriterFactory
    private let published = Locked(CaptureSnapshot())
    private let stopRequested = Locked(false)
    private var threads: [pthread_t] = []
    /// The device's failures, told once each in the log (not once per retry).
    private let failures: DeviceFailureLog

    public init(
        device: PCMInput, timing: PCMTiming = .capture, ringSeconds: Double = 10, syncInterval: Double = 1,
        logger: Logger,
        makeWriter: @escaping WriterFactory = CaptureEngine.liveWriter
    ) {
        self.device = device
        self.timing = timing
        self.ringSeconds = ringSeconds
        self.syncInterval = syncInterval
        self.logger = logger
        failures = DeviceFailureLog(logger: logger)
        self.makeWriter = makeWriter
    }

    public var snapshot: CaptureSnapshot { published.current }

    /// The encoder for a live recording: the codec registry's writer of its format (Vorbis
    /// through `VorbisWriter`, a page every quarter second; the rest through libsndfile, kept
    /// readable as it grows).
    public static func liveWriter(_ request: CaptureRequest) throws(ReelError) -> RecordingWriter {
        guard let recording = CodecRegistry.recordingCodec(request.codec)?.recording else {
            throw ReelError(.unsupportedFormat, "cannot record \"\(request.codec)\"")
        }
        return try recording.makeWriter(request.path, request.format, true)
    }

    public var isRunning: Bool { !threads.isEmpty }

    /// Opens the device and creates the file, then starts both threads. Throws (with nothing
    /// left open) when the device or the file cannot be opened. Not reentrant: the caller
    /// serializes `start` and `stop`.
    public func start(
        _ request: CaptureRequest, onProgress: @escaping @Sendable (CaptureSnapshot) -> Void,
        onEnd: @escaping @Sendable (CaptureEnding) -> Void
    ) throws(ReelError) {
        precondition(threads.isEmpty, "a capture is already running")
        let configuration: PCMConfiguration
        do throws(ReelError) {
            configuration = try device.open(request.format, timing: timing)
        } catch {
            failures.failed("capture", device: device.name, error)
            throw error
        }
        let writer: RecordingWriter
        do {
            writer = try makeWriter(request)
        } catch {
            device.close()
            throw error
        }
        // The file (its header) and its name are on disk before the take is answered: a power
        // cut from now on leaves a file to repair, never a take without one.
        writer.sync()
        RecordingRepair.syncDirectory(of: request.path)
        let format = configuration.format
        let ring = CaptureRing(
            capacityFrames: max(Int(ringSeconds * Double(format.sampleRate)), configuration.periodFrames * 4),
            bytesPerFrame: format.bytesPerFrame)
        stopRequested.withLock { $0 = false }
        published.withLock { snapshot in
            snapshot = CaptureSnapshot()
            snapshot.running = true
            snapshot.sampleRate = format.sampleRate
        }
        let capture = CaptureLoop(
            device: device, configuration: configuration, ring: ring, maxFrames: request.maxFrames,
            published: published, stopRequested: stopRequested, logger: logger)
        let write = WriteLoop(
            writer: writer, ring: ring, format: format, syncInterval: syncInterval, published: published,
            stopRequested: stopRequested, logger: logger, onProgress: onProgress, onEnd: onEnd)
        threads = [
            AudioThread.start(name: "reel-capture", realtime: false) { capture.run() },
            AudioThread.start(name: "reel-writer", realtime: false) { write.run() },
        ]
    }

    /// Ends the take: capture stops, everything captured is written, the file is finished and
    /// closed. Returns the final snapshot. Safe to call after the engine ended by itself.
    @discardableResult
    public func stop() -> CaptureSnapshot {
        stopRequested.withLock { $0 = true }
        for thread in threads { pthread_join(thread, nil) }
        threads = []
        return published.withLock { snapshot in
            snapshot.running = false
            return snapshot
        }
    }
}

/// The capture thread: device → ring, levels, overruns, the frame limit.
private final class CaptureLoop: @unchecked Sendable {
    let device: PCMInput
    let configuration: PCMConfiguration
    let ring: CaptureRing
    let maxFrames: Int64?
    let published: Locked<CaptureSnapshot>
    let stopRequested: Locked<Bool>
    let logger: Logger

    init(
        device: PCMInput, configuration: PCMConfiguration, ring: CaptureRing, maxFrames: Int64?,
        published: Locked<CaptureSnapshot>, stopRequested: Locked<Bool>, logger: Logger
    ) {
        self.device = device
        self.configuration = configuration
        self.ring = ring
        self.maxFrames = maxFrames
        self.published = published
        self.stopRequested = stopRequested
        self.logger = logger
    }

    func run() {
        let format = configuration.format
        let periodFrames = configuration.periodFrames
        let periodMilliseconds = max(1, periodFrames * 1000 / max(format.sampleRate, 1))
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: periodFrames * format.bytesPerFrame, alignment: 16)
        defer {
            buffer.deallocate()
            device.drop()
            device.close()
            ring.close()
        }
        var meter = LevelMeter(windowFrames: max(format.sampleRate / 10, 1), channels: format.channels)
        var counters = XrunCounters()
        var captured: Int64 = 0
        var dropped = 0
        var ringFullLogged = false
        while !stopRequested.current {
            var wanted = periodFrames
            if let maxFrames {
                let left = maxFrames - captured
                if left <= 0 { break }
                wanted = Int(min(Int64(wanted), left))
            }
            let read = device.read(into: buffer, frames: wanted)
            if read == -Int(EAGAIN) {
                _ = device.wait(timeoutMilliseconds: 2 * periodMilliseconds)
                continue
            }
            if read < 0 {
                if let failure = XrunRecovery.recover(
                    from: Int32(read), device: device, counters: &counters, periodMilliseconds: periodMilliseconds)
                {
                    let error = ReelError(
                        .deviceUnavailable,
                        "the capture device \"\(device.name)\" failed: \(ALSA.describe(failure)); the recording keeps what was captured")
                    logger.error("capture device failed", metadata: ["device": "\(device.name)", "error": "\(error.message)"])
                    published.withLock { $0.error = error }
                    return
                }
                published.withLock { $0.overruns = counters.xruns + dropped }
                continue
            }
            guard read > 0 else { continue }
            var levels: AudioLevels?
            if format.sample == .s16 {
                levels = meter.add(
                    UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: Int16.self), count: read * format.channels))
            }
            let accepted = ring.put(buffer, frames: read)
            if accepted < read {
                dropped += 1
                if !ringFullLogged {
                    ringFullLogged = true
                    logger.warning(
                        "the disk is too slow: the capture buffer is full and audio is being dropped",
                        metadata: ["bufferedFrames": "\(ring.capacityFrames)"])
                }
            }
            captured += Int64(read)
            published.withLock { snapshot in
                snapshot.capturedFrames = captured
                snapshot.overruns = counters.xruns + dropped
                if let levels { snapshot.levels = levels }
            }
        }
    }
}

/// The writer thread: ring → encoder → disk, synced every `syncInterval`.
private final class WriteLoop: @unchecked Sendable {
    let writer: RecordingWriter
    let ring: CaptureRing
    let format: PCMFormat
    let syncInterval: Double
    let published: Locked<CaptureSnapshot>
    let stopRequested: Locked<Bool>
    let logger: Logger
    let onProgress: @Sendable (CaptureSnapshot) -> Void
    let onEnd: @Sendable (CaptureEnding) -> Void

    init(
        writer: RecordingWriter, ring: CaptureRing, format: PCMFormat, syncInterval: Double,
        published: Locked<CaptureSnapshot>, stopRequested: Locked<Bool>, logger: Logger,
        onProgress: @escaping @Sendable (CaptureSnapshot) -> Void, onEnd: @escaping @Sendable (CaptureEnding) -> Void
    ) {
        self.writer = writer
        self.ring = ring
        self.format = format
        self.syncInterval = syncInterval
        self.published = published
        self.stopRequested = stopRequested
        self.logger = logger
        self.onProgress = onProgress
        self.onEnd = onEnd
    }

    func run() {
        // Up to a tenth of a second per encoder call.
        let chunkFrames = max(format.sampleRate / 10, 256)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkFrames * format.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        let syncNanoseconds = UInt64(syncInterval * 1e9)
        var lastSync = monotonicNanoseconds()
        var written: Int64 = 0
        var failure: ReelError?
        while true {
            let frames = ring.take(into: buffer, maxFrames: chunkFrames, timeoutMilliseconds: 250)
            if frames > 0 {
                do throws(ReelError) {
                    try writer.write(buffer, frames: frames)
                } catch {
                    failure = error
                    logger.error("cannot write the recording", metadata: ["error": "\(error.message)"])
                    break
                }
                written += Int64(frames)
                published.withLock { $0.writtenFrames = written }
            } else if ring.isDrained {
                break
            }
            let now = monotonicNanoseconds()
            if now - lastSync >= syncNanoseconds {
                writer.sync()
                lastSync = now
                onProgress(published.current)
            }
        }
        if failure != nil {
            // Stop capturing; what is still in the ring cannot be written.
            stopRequested.withLock { $0 = true }
        }
        writer.close()
        let deviceError = published.withLock { snapshot -> ReelError? in
            if let failure { snapshot.error = failure }
            return snapshot.error
        }
        let stoppedByRequest = stopRequested.current && failure == nil
        let ending: CaptureEnding
        if let error = failure ?? deviceError {
            ending = .failed(error)
        } else if stoppedByRequest {
            ending = .stopped
        } else {
            ending = .limitReached
        }
        if ending != .stopped { onEnd(ending) }
    }
}
