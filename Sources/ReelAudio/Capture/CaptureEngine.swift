// The capture engine: a capture thread that owns the PCM, a ring, and a writer thread that cuts takes and owns their files.

import Dispatch
import Logging
import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
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
    /// Frames read from the device since it was opened.
    public var capturedFrames: Int64 = 0
    /// The device frame the session began at (0 unless the engine was listening before).
    public var sessionStartFrame: Int64 = 0
    /// A session is running (recording or armed).
    public var inSession = false
    /// A take is open (false while a triggered session is armed).
    public var takeOpen = false
    /// Takes opened in the session so far.
    public var takes = 0
    /// Frames handed to the encoders in the session, all takes.
    public var writtenFrames: Int64 = 0
    /// Frames handed to the open take's encoder (pre-roll included).
    public var takeFrames: Int64 = 0
    /// Levels of the last complete window (a tenth of a second).
    public var levels: AudioLevels?
    /// Device overruns recovered, plus times the ring was full and audio was dropped.
    public var overruns = 0
    public var sampleRate = 0
    /// Why capture ended by itself (`disk_full`, `device_unavailable`, `io_error`).
    public var error: ReelError?

    public init() {}

    /// Seconds captured in the session.
    public var elapsed: Double {
        sampleRate > 0 ? Double(max(0, capturedFrames - sessionStartFrame)) / Double(sampleRate) : 0
    }
}

/// How a capture ended.
public enum CaptureEnding: Sendable, Equatable {
    /// `stop()` was called.
    case stopped
    /// `maxFrames` were captured (the session's length limit).
    case limitReached
    /// The device or the disk failed; what was captured until then is in the file.
    case failed(ReelError)
}

/// Records sessions of takes. The capture thread reads what the device holds (non-blocking;
/// one read per period, then a wait of at most two) into a ring of `ringSeconds`, and meters
/// it in integers; the writer thread is woken by the read that brings the ring to a quarter
/// second (without audio it sleeps half a second at most), cuts what the ring holds into takes
/// (`TakeCutter`: one take, segments, or level triggered), encodes it and syncs the open take's file every `syncInterval` seconds (half a
/// second by default: with a period in the device and the writer's quarter second, a power cut
/// then loses under a second; at 1 s the worst measured was 1.37 s, bench/powercut). The last
/// seconds taken from the ring stay in a history (`CaptureHistory`) for pre-roll: a triggered take
/// begins before its trigger, and a listening engine's session before `start` was called.
/// The capture thread runs at normal priority: the device's buffer (half a second by default,
/// see `PCMTiming.capture`) covers scheduling delays, and with PulseAudio's plugin a real-time
/// thread costs more in priority-inheritance locking than it saves. A slow disk fills the ring, never the
/// device's buffer; a full ring drops audio and counts an overrun.
///
/// Takes are sample-contiguous: a segment's first frame is the frame after the previous one's
/// last, whatever the codec. The engine ends a session by itself at `maxFrames`, on a device
/// failure (the open take keeps what was captured) or on a write failure such as a full disk;
/// it then calls `CaptureTakes.ended` from the writer thread once the take is closed.
///
/// Two ways to hold the device: `start` without `listen` opens it for the session and closes it
/// at its end; `listen` keeps it open between sessions (the last seconds in memory) until
/// `close`. `start`, `stop`, `listen` and `close` are called from one thread at a time.
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
    private var writeLoop: WriteLoop?
    /// The loops of a device opened and not yet started (`launch`).
    private var pendingThreads: [@Sendable () -> Void] = []
    /// Opened by `listen`: stays open between sessions.
    private var listening = false
    private var openFormat: PCMFormat?
    private var historyFrames = 0
    /// The device's failures, told once each in the log (not once per retry).
    private let failures: DeviceFailureLog

    public init(
        device: PCMInput, timing: PCMTiming = .capture, ringSeconds: Double = 10, syncInterval: Double = 0.5,
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

    /// The device is open (a session, or listening).
    public var isRunning: Bool { !threads.isEmpty && published.current.running }

    /// The device is held open between sessions, in this format.
    public var listeningFormat: PCMFormat? { listening && isRunning ? openFormat : nil }

    /// Seconds of the past a listening engine holds.
    public var historySeconds: Double {
        guard let openFormat, openFormat.sampleRate > 0 else { return 0 }
        return Double(historyFrames) / Double(openFormat.sampleRate)
    }

    /// One take into `request.path` (a session with the plan `single`). `onEnd` is called from
    /// the writer thread when the take ends by itself; `onProgress` after a sync, at most once a second.
    public func start(
        _ request: CaptureRequest, onProgress: @escaping @Sendable (CaptureSnapshot) -> Void,
        onEnd: @escaping @Sendable (CaptureEnding) -> Void
    ) throws(ReelError) {
        let takes = SingleTake(request: request, makeWriter: makeWriter, onProgress: onProgress, onEnd: onEnd)
        try start(CaptureSession(format: request.format, maxFrames: request.maxFrames), takes: takes)
    }

    /// Starts a session. Without `listen`, opens the device (the session begins at its first
    /// frame); while listening, the session begins at the frame captured now, its first take
    /// `prerollFrames` earlier. For `single` and `segments` the first take is opened here, so a
    /// file that cannot be created throws (with nothing left open). Returns the device frame the
    /// first take begins at.
    @discardableResult
    public func start(_ session: CaptureSession, takes: CaptureTakes) throws(ReelError) -> Int64 {
        precondition(!published.current.inSession, "a capture session is already running")
        let wasListening = listening && isRunning
        if wasListening {
            guard openFormat == session.format else {
                throw ReelError(
                    .unsupportedFormat,
                    "the capture device is held open at \(describe(openFormat)) for pre-roll; record at that format")
            }
            let available = Int64(historyFrames)
            var triggerPreroll: Int64 = 0
            if case .triggered(let plan) = session.plan { triggerPreroll = plan.prerollFrames }
            guard session.prerollFrames <= available, triggerPreroll <= available else {
                throw ReelError(
                    .outOfRange, "the pre-roll reaches \(seconds(max(session.prerollFrames, triggerPreroll), session.format)) s back; "
                        + "\(seconds(available, session.format)) s are held (capture_preroll)")
            }
        } else {
            guard session.prerollFrames == 0 else {
                throw ReelError(.outOfRange, "a pre-roll needs the capture device held open: set capture_preroll")
            }
            if !threads.isEmpty { close() }
            var history = 0
            if case .triggered(let plan) = session.plan { history = Int(plan.prerollFrames) }
            try open(session.format, historyFrames: history, captureLimit: session.maxFrames, listening: false)
        }
        let now = wasListening ? published.current.capturedFrames : 0
        let start = now - session.prerollFrames
        var first: RecordingWriter?
        if case .triggered = session.plan {
            first = nil
        } else {
            do {
                first = try takes.openTake(CaptureTake(index: 1, startFrame: -session.prerollFrames))
            } catch {
                if !wasListening { close() }
                throw error
            }
        }
        published.withLock { snapshot in
            snapshot.sessionStartFrame = now
            snapshot.inSession = true
            snapshot.takeOpen = first != nil
            snapshot.takes = first != nil ? 1 : 0
            snapshot.writtenFrames = 0
            snapshot.takeFrames = 0
            snapshot.error = nil
        }
        writeLoop?.post(
            .begin(WriteSession(session: session, takes: takes, sessionStart: now, firstTakeStart: start, first: first)))
        // A device opened for the session starts its threads once the session is posted, so
        // the writer has it before the first frame.
        launch()
        return start
    }

    /// Keeps the device open between sessions with the last `seconds` in memory, so a session
    /// can begin in the past (`CaptureSession.prerollFrames`). Throws when the device cannot be
    /// opened. Not while a session runs.
    public func listen(format: PCMFormat, seconds: Double) throws(ReelError) {
        precondition(!published.current.inSession, "listen while a session runs")
        if !threads.isEmpty { close() }
        try open(format, historyFrames: Int(seconds * Double(format.sampleRate)), captureLimit: nil, listening: true)
        listening = true
        launch()
    }

    /// Ends the session: the open take gets everything captured until now and is closed (`keep`
    /// false: discarded), then the device is closed unless listening. Returns the final
    /// snapshot. Safe to call after the session ended by itself, and with none.
    @discardableResult
    public func stop(keep: Bool = true) -> CaptureSnapshot {
        if listening && isRunning, let writeLoop {
            if published.current.inSession {
                let done = DispatchSemaphore(value: 0)
                writeLoop.post(.end(at: keep ? published.current.capturedFrames : nil, keep: keep, done: done))
                done.wait()
            }
            return published.current
        }
        writeLoop?.keepAtStop.withLock { $0 = keep }
        return close()
    }

    /// Closes the device (ending a session as `stop()` does) and stops listening.
    @discardableResult
    public func close() -> CaptureSnapshot {
        if threads.isEmpty && !pendingThreads.isEmpty {
            // Opened, never started.
            pendingThreads = []
            device.close()
        }
        stopRequested.withLock { $0 = true }
        for thread in threads { pthread_join(thread, nil) }
        threads = []
        writeLoop = nil
        listening = false
        return published.withLock { snapshot in
            snapshot.running = false
            snapshot.inSession = false
            snapshot.takeOpen = false
            return snapshot
        }
    }

    private func open(_ format: PCMFormat, historyFrames: Int, captureLimit: Int64?, listening: Bool) throws(ReelError) {
        let configuration: PCMConfiguration
        do throws(ReelError) {
            configuration = try device.open(format, timing: timing)
        } catch {
            failures.failed("capture", device: device.name, error)
            throw error
        }
        let format = configuration.format
        // The writer wakes for a quarter second of audio (one 250 ms capture period), or a period
        // where periods are longer: at most four batches a second, each right after the read that
        // completes it.
        let batchFrames = max(format.sampleRate / 4, configuration.periodFrames)
        let ring = CaptureRing(
            capacityFrames: max(Int(ringSeconds * Double(format.sampleRate)), configuration.periodFrames * 4),
            bytesPerFrame: format.bytesPerFrame, wakeFrames: batchFrames)
        stopRequested.withLock { $0 = false }
        published.withLock { snapshot in
            snapshot = CaptureSnapshot()
            snapshot.running = true
            snapshot.sampleRate = format.sampleRate
        }
        openFormat = format
        self.historyFrames = historyFrames
        // The writer reads a chunk (a tenth of a second) past the pre-roll.
        let history = historyFrames > 0
            ? CaptureHistory(capacityFrames: historyFrames + max(format.sampleRate / 10, 256) + 1, bytesPerFrame: format.bytesPerFrame)
            : nil
        let capture = CaptureLoop(
            device: device, configuration: configuration, ring: ring, maxFrames: captureLimit,
            published: published, stopRequested: stopRequested, logger: logger)
        // Without a batch, the writer sleeps two of them (the sync and the progress still come).
        let write = WriteLoop(
            ring: ring, history: history, format: format, syncInterval: syncInterval,
            idleWaitMilliseconds: 2 * batchFrames * 1000 / max(format.sampleRate, 1), published: published,
            stopRequested: stopRequested, logger: logger, listening: listening)
        writeLoop = write
        pendingThreads = [capture.run, write.run]
    }

    /// Starts the threads of a device just opened.
    private func launch() {
        guard threads.isEmpty, pendingThreads.count == 2 else { return }
        let (capture, write) = (pendingThreads[0], pendingThreads[1])
        pendingThreads = []
        threads = [
            OSThread.start(name: "reel-capture", realtime: false, capture),
            OSThread.start(name: "reel-writer", realtime: false, write),
        ]
    }

    private func describe(_ format: PCMFormat?) -> String {
        guard let format else { return "no format" }
        return "\(format.sampleRate) Hz, \(format.channels) channel\(format.channels == 1 ? "" : "s")"
    }

    private func seconds(_ frames: Int64, _ format: PCMFormat) -> String {
        let value = Double(frames) / Double(max(format.sampleRate, 1))
        return String(Int(value.rounded()))
    }
}

/// The takes of `CaptureEngine.start(_:onProgress:onEnd:)`: one file.
private final class SingleTake: CaptureTakes, @unchecked Sendable {
    let request: CaptureRequest
    let makeWriter: CaptureEngine.WriterFactory
    let onProgress: @Sendable (CaptureSnapshot) -> Void
    let onEnd: @Sendable (CaptureEnding) -> Void

    init(
        request: CaptureRequest, makeWriter: @escaping CaptureEngine.WriterFactory,
        onProgress: @escaping @Sendable (CaptureSnapshot) -> Void, onEnd: @escaping @Sendable (CaptureEnding) -> Void
    ) {
        self.request = request
        self.makeWriter = makeWriter
        self.onProgress = onProgress
        self.onEnd = onEnd
    }

    func openTake(_ take: CaptureTake) throws(ReelError) -> RecordingWriter {
        let writer = try makeWriter(request)
        // The file (its header) and its name are on disk before the take is answered: a power
        // cut from now on leaves a file to repair, never a take without one.
        try writer.sync()
        RecordingRepair.syncDirectory(of: request.path)
        return writer
    }
    func closedTake(_ take: CaptureTake, frames: Int64, keep: Bool, failure: ReelError?) {}
    func progress(_ snapshot: CaptureSnapshot) { onProgress(snapshot) }
    func ended(_ ending: CaptureEnding) { onEnd(ending) }
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
        // A read takes all the device holds (a period, or more after a late wake-up).
        let readFrames = Self.readFrames(configuration)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: readFrames * format.bytesPerFrame, alignment: 16)
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
            var wanted = readFrames
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
            // Less than asked for: the device is empty, and a read now would only find that
            // out (-EAGAIN). Wait for the next period instead: one read per wake-up.
            if read < wanted {
                _ = device.wait(timeoutMilliseconds: 2 * periodMilliseconds)
            }
        }
    }

    /// Frames one read asks for: the device's whole buffer, so a thread that woke late empties
    /// it in one read; at least a period, at most eight (the taps of what plays and of a
    /// station hold seconds).
    static func readFrames(_ configuration: PCMConfiguration) -> Int {
        let period = max(configuration.periodFrames, 1)
        return max(period, min(configuration.bufferFrames, 8 * period))
    }
}

/// A session as the writer thread holds it.
private final class WriteSession: @unchecked Sendable {
    let takes: CaptureTakes
    let sessionStart: Int64
    var cutter: TakeCutter
    var writer: RecordingWriter?
    var take: CaptureTake?
    var opened = 0
    var takeWritten: Int64 = 0
    var written: Int64 = 0

    init(session: CaptureSession, takes: CaptureTakes, sessionStart: Int64, firstTakeStart: Int64, first: RecordingWriter?) {
        self.takes = takes
        self.sessionStart = sessionStart
        cutter = TakeCutter(
            plan: session.plan, start: firstTakeStart, endFrame: session.maxFrames.map { sessionStart + $0 },
            channels: session.format.channels)
        if let first {
            writer = first
            take = CaptureTake(index: 1, startFrame: firstTakeStart - sessionStart)
            opened = 1
        }
    }
}

/// The writer thread: ring → history and the session's takes → encoders → disk, the open take
/// synced every `syncInterval`.
private final class WriteLoop: @unchecked Sendable {
    enum Command {
        case begin(WriteSession)
        /// End the session once the frames before `at` are written (nil: now); signal `done`.
        case end(at: Int64?, keep: Bool, done: DispatchSemaphore)
    }

    let ring: CaptureRing
    let history: CaptureHistory?
    let format: PCMFormat
    let syncInterval: Double
    /// How long the writer waits on an empty ring (a read or a command ends the wait sooner).
    let idleWaitMilliseconds: Int
    let published: Locked<CaptureSnapshot>
    let stopRequested: Locked<Bool>
    let logger: Logger
    /// Opened by `listen`: the device stays open after a session.
    let listening: Bool
    /// Whether the open take is kept when the device is closed (false: `stop(keep: false)`).
    let keepAtStop = Locked(true)
    private let commands = Locked<[Command]>([])
    private var session: WriteSession?
    private var ending: (at: Int64?, keep: Bool, done: DispatchSemaphore)?

    init(
        ring: CaptureRing, history: CaptureHistory?, format: PCMFormat, syncInterval: Double, idleWaitMilliseconds: Int,
        published: Locked<CaptureSnapshot>, stopRequested: Locked<Bool>, logger: Logger, listening: Bool
    ) {
        self.listening = listening
        self.idleWaitMilliseconds = idleWaitMilliseconds
        self.ring = ring
        self.history = history
        self.format = format
        self.syncInterval = syncInterval
        self.published = published
        self.stopRequested = stopRequested
        self.logger = logger
    }

    /// From the engine's caller; the writer wakes for it and applies it at once.
    func post(_ command: Command) {
        commands.withLock { $0.append(command) }
        ring.wake()
    }

    /// The shortest time between two `CaptureTakes.progress` calls.
    static let progressNanoseconds: UInt64 = 1_000_000_000

    /// An empty chunk, to feed the cutter nothing but the position.
    private var catchUpBuffer: UnsafeMutableRawPointer?

    func run() {
        // Up to a tenth of a second per encoder call.
        let chunkFrames = max(format.sampleRate / 10, 256)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunkFrames * format.bytesPerFrame, alignment: 16)
        catchUpBuffer = buffer
        defer {
            catchUpBuffer = nil
            buffer.deallocate()
        }
        let syncNanoseconds = UInt64(syncInterval * 1e9)
        var lastSync = monotonicNanoseconds()
        // Progress (the row's growth, the free space) wants no more than once a second: each is
        // a hop to the recorder's queue.
        let progressNanoseconds = max(syncNanoseconds, Self.progressNanoseconds)
        var lastProgress = lastSync
        var position: Int64 = 0
        while true {
            applyCommands(position: position)
            let frames = ring.take(into: buffer, maxFrames: chunkFrames, timeoutMilliseconds: idleWaitMilliseconds)
            if frames > 0 {
                if let session {
                    process(session, buffer, frames: frames, position: position)
                }
                history?.append(buffer, frames: frames, at: position)
                position += Int64(frames)
                // The ring is empty for now: what was encoded goes to the kernel before the
                // writer sleeps (the encoder buffers it; a crash of reeld then loses no more).
                if frames < chunkFrames, let session { flush(session) }
            } else if ring.isDrained {
                break
            }
            let now = monotonicNanoseconds()
            if now - lastSync >= syncNanoseconds {
                lastSync = now
                if let session {
                    do throws(ReelError) {
                        try session.writer?.sync()
                        if now - lastProgress >= progressNanoseconds {
                            lastProgress = now
                            session.takes.progress(published.current)
                        }
                    } catch {
                        fail(session, error)  // the disk refused what was written (EIO)
                    }
                }
            }
        }
        // The device is closed (a stop, the capture limit, a device failure).
        let deviceError = published.current.error
        if let session {
            let keep = keepAtStop.current
            do throws(ReelError) {
                try apply(session.cutter.finish(keep: keep), session, buffer, frames: 0, position: position, failure: deviceError)
            } catch {
                fail(session, error)
            }
            self.session = nil
            let result: CaptureEnding
            if let deviceError {
                result = .failed(deviceError)
            } else if stopRequested.current {
                result = .stopped
            } else {
                result = .limitReached
            }
            endSession()
            if result != .stopped { session.takes.ended(result) }
        }
        ending?.done.signal()
        for case .end(_, _, let done) in commands.withLock({ pending in defer { pending = [] }; return pending }) {
            done.signal()
        }
        published.withLock { $0.running = false }
    }

    private func applyCommands(position: Int64) {
        let pending = commands.withLock { pending in defer { pending = [] }; return pending }
        for command in pending {
            switch command {
            case .begin(let next):
                session = next
                // A take beginning in the past gets the history up to here at once.
                if let buffer = catchUpBuffer { process(next, buffer, frames: 0, position: position) }
            case .end(let at, let keep, let done):
                guard let session else {
                    done.signal()
                    continue
                }
                if let at, keep, at > position {
                    // Write what was captured until the stop, then end.
                    ending = (at, keep, done)
                    session.cutter.limit(to: at)
                } else {
                    finishSession(session, keep: keep, position: position)
                    done.signal()
                }
            }
        }
    }

    /// Cuts and writes one chunk into the session's takes.
    private func process(_ session: WriteSession, _ buffer: UnsafeMutableRawPointer, frames: Int, position: Int64) {
        let samples = UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: Int16.self), count: frames * format.channels)
        let steps = session.cutter.feed(samples, at: position)
        do throws(ReelError) {
            try apply(steps, session, buffer, frames: frames, position: position, failure: nil)
        } catch {
            fail(session, error)
            return
        }
        publish(session)
        if session.cutter.isFinished {
            self.session = nil
            endSession()
            if let ending {
                ending.done.signal()
                self.ending = nil
            } else {
                session.takes.ended(.limitReached)
                if !listening { stopRequested.withLock { $0 = true } }
            }
        }
    }

    private func finishSession(_ session: WriteSession, keep: Bool, position: Int64) {
        do throws(ReelError) {
            try apply(session.cutter.finish(keep: keep), session, nil, frames: 0, position: position, failure: nil)
        } catch {
            fail(session, error)
            return
        }
        self.session = nil
        endSession()
    }

    private func apply(
        _ steps: [TakeStep], _ session: WriteSession, _ buffer: UnsafeMutableRawPointer?, frames: Int, position: Int64,
        failure: ReelError?
    ) throws(ReelError) {
        for step in steps {
            switch step {
            case .open(let start):
                session.opened += 1
                let take = CaptureTake(index: session.opened, startFrame: start - session.sessionStart)
                session.take = take
                session.takeWritten = 0
                session.writer = try session.takes.openTake(take)
            case .write(let range):
                guard let writer = session.writer else { continue }
                var count: Int64 = 0
                if range.lowerBound < position, let history {
                    let given = try history.read(range.lowerBound..<min(range.upperBound, position)) { (pointer, run) throws(ReelError) in
                        try writer.write(pointer, frames: run)
                    }
                    count += Int64(given)
                    let wanted = min(range.upperBound, position) - range.lowerBound
                    if Int64(given) < wanted {
                        logger.warning("the pre-roll reaches further back than the history holds", metadata: ["missing": "\(wanted - Int64(given)) frames"])
                    }
                }
                let lower = max(range.lowerBound, position)
                if range.upperBound > lower, let buffer {
                    try writer.write(buffer + Int(lower - position) * format.bytesPerFrame, frames: Int(range.upperBound - lower))
                    count += range.upperBound - lower
                }
                session.takeWritten += count
                session.written += count
            case .close(_, let keep):
                guard let writer = session.writer, let take = session.take else { continue }
                session.writer = nil
                session.take = nil
                var closing: ReelError?
                do throws(ReelError) { try writer.close() } catch { closing = error }
                session.takes.closedTake(take, frames: session.takeWritten, keep: keep, failure: closing ?? failure)
                session.takeWritten = 0
                // The disk did not take the file: the session fails with that (`recorder.stop` says so).
                if let closing { throw closing }
            }
        }
    }

    private func flush(_ session: WriteSession) {
        do throws(ReelError) {
            try session.writer?.flush()
        } catch {
            fail(session, error)
        }
    }

    /// A write failed: the take is closed as it is (the caller repairs it), the session ends.
    private func fail(_ session: WriteSession, _ error: ReelError) {
        logger.error("cannot write the recording", metadata: ["error": "\(error.message)"])
        if let writer = session.writer, let take = session.take {
            try? writer.close()  // after a failure: the caller's error is the one that counts
            session.writer = nil
            session.take = nil
            session.takes.closedTake(take, frames: session.takeWritten, keep: true, failure: error)
        }
        published.withLock { $0.error = error }
        self.session = nil
        endSession()
        // Stop capturing; what is still in the ring cannot be written.
        stopRequested.withLock { $0 = true }
        session.takes.ended(.failed(error))
        if let ending {
            ending.done.signal()
            self.ending = nil
        }
    }

    private func publish(_ session: WriteSession) {
        published.withLock { snapshot in
            snapshot.writtenFrames = session.written
            snapshot.takeFrames = session.takeWritten
            snapshot.takeOpen = session.writer != nil
            snapshot.takes = session.opened
        }
    }

    private func endSession() {
        published.withLock { snapshot in
            snapshot.inSession = false
            snapshot.takeOpen = false
        }
    }
}
