// The recorder's control side: takes into the tree, their progress, their ending, crash repair.

import Dispatch
import Logging
import ReelAudio
internal import ReelLibrary
import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// What `recorder.start` asks for; nil takes the configured default.
public struct RecordingRequest: Sendable {
    public var folder: ItemReference = .root
    public var name: String?
    /// `flac`, `wav`, `ogg` or `opus`.
    public var codec: String?
    public var sampleRate: Int?
    public var channels: Int?
    /// Seconds: of the whole session when it has many takes.
    public var maxDuration: Double?
    /// A new take every this many seconds of captured frames (`NAME 001`, `NAME 002`, …).
    public var segmentSeconds: Double?
    /// `minute`, `hour` or `day`: segments begin on the wall clock.
    public var segmentAlign: String?
    /// Which recordings named `NAME` plus a number in the folder are deleted as takes land.
    public var keep: RetentionRule?
    /// Level-activated takes.
    public var trigger: TriggerRequest?
    /// Seconds before now the first take begins (needs `capture_preroll`).
    public var preroll: Double?
    /// What is recorded.
    public var source: RecordingSource = .capture

    public init(
        folder: ItemReference = .root, name: String? = nil, codec: String? = nil, sampleRate: Int? = nil,
        channels: Int? = nil, maxDuration: Double? = nil
    ) {
        self.folder = folder
        self.name = name
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.maxDuration = maxDuration
    }
}

/// Where a recording's audio comes from.
public enum RecordingSource: Sendable, Equatable {
    case capture
    /// What Reel plays, after decoding and before the volume (`PlayerTap`).
    case player
    /// A station recorded without playing it (`StreamCaptureInput`).
    case url(String)
}

/// `keep`: deletion of older takes of a series (`NAME 001`, …), oldest first.
public struct RetentionRule: Sendable, Equatable {
    /// At most this many, the take being made included.
    public var count: Int?
    /// None older than this many days.
    public var days: Double?
    /// Free space kept on the disk; below it the oldest go, and when none can, recording stops
    /// with `disk_full`.
    public var minFreeBytes: Int64?

    public init(count: Int? = nil, days: Double? = nil, minFreeBytes: Int64? = nil) {
        self.count = count
        self.days = days
        self.minFreeBytes = minFreeBytes
    }
}

/// `trigger`: a take while the level is above `level`.
public struct TriggerRequest: Sendable, Equatable {
    /// dBFS (sample peak).
    public var level: Double
    /// Seconds below the level before the take ends.
    public var hold: Double
    /// Seconds before the trigger the take begins.
    public var preroll: Double
    /// Takes whose sound (trigger to last sample above the level) is shorter are discarded.
    public var minLength: Double

    public init(level: Double, hold: Double = 2, preroll: Double = 1, minLength: Double = 0.5) {
        self.level = level
        self.hold = hold
        self.preroll = preroll
        self.minLength = minLength
    }
}

/// The defaults of a recording (config `record_format`, `record_sample_rate`, `record_channels`).
public struct RecordingDefaults: Sendable, Equatable {
    public var codec = "flac"
    public var sampleRate = 48000
    public var channels = 1
    /// Seconds of capture kept in memory while idle (config `capture_preroll`), so a take can
    /// begin in the past; 0 (the default) opens the device only to record.
    public var capturePreroll: Double = 0

    public init(codec: String = "flac", sampleRate: Int = 48000, channels: Int = 1, capturePreroll: Double = 0) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.capturePreroll = capturePreroll
    }
}

/// Owns the capture engine and the session being recorded: one take, segments, or level-triggered
/// takes. Commands and the engine's own endings run one after another on the recorder's queue;
/// replies are called there, and every change (a session starts or ends, a take lands, the item
/// is renamed or moved) is published to `changes`. The engine opens and closes takes on its
/// writer thread (`SessionTakes`): their rows are added and finished there, under `shared`'s lock.
public final class RecorderController: @unchecked Sendable {
    public typealias Reply<Value> = @Sendable (Result<Value, ReelError>) -> Void

    /// The capture device's engine.
    let captureEngine: CaptureEngine
    /// The engine of a session recording another source (the player, a station), while one runs.
    let sourceEngine = Locked<CaptureEngine?>(nil)
    /// The engine of the session now: a source's, or the capture device's.
    var engine: CaptureEngine { sourceEngine.current ?? captureEngine }
    /// Where `source: "player"` and `{url}` come from (set by `ReelCore` once the player exists).
    public var sources = RecordingSources()
    let timing: PCMTiming
    let ringSeconds: Double
    /// Each take's loudness, measured as it is recorded (its ReplayGain).
    private let loudness = TakeLoudness()
    let store: LibraryStore
    private let defaults: RecordingDefaults
    let logger: Logger
    private let deviceName: String
    /// Seconds of capture kept in memory while idle (config `capture_preroll`); 0: the device is
    /// opened only to record.
    private let capturePreroll: Double
    let queue = DispatchQueue(label: "reel.recorder")
    /// The wall clock, seconds since the epoch (injected by tests).
    let wallClock: @Sendable () -> Double

    /// The take being made.
    struct Take {
        var item: Item
        var path: String
        /// Its first frame, counted from the session's first frame (negative: pre-roll).
        var start: Int64 = 0
    }
    /// A session as the controller follows it.
    struct Session {
        var folder: ItemReference
        /// The folder's tree path when the session started (for messages once it is gone).
        var folderPath = "/"
        /// The series' base name; nil for a single take.
        var seriesName: String?
        var nextNumber = 1
        var codec: String
        var format: AudioFormat
        var keep: RetentionRule?
        var threshold: Double?
        var started: String
        var kept = 0
        var lastTake: Item?
        /// Bytes per second of the take being made (for `disk.secondsLeft`).
        var byteRate: Double?
        /// Takes follow each other with no gap (segments): a mark past a take's end belongs to the next.
        var contiguous = false
        /// Marks past the end of the take just closed, for the next one (`RecorderController+Marks`).
        var carriedMarks: [CarriedMark] = []
    }
    struct Shared {
        var session: Session?
        var take: Take?
        var last: Item?
        var lastError: ReelError?
        var lastOverruns = 0
        var lastElapsed = 0.0
        var disk: RecorderDisk?
        /// `player.mark`s' chapter writes waiting for a take that is closing (its row not yet
        /// finished), by item id: done once it is (`RecorderController+Marks`).
        var pendingChapters: [String: [@Sendable () -> Void]] = [:]
    }
    let shared = Locked(Shared())
    /// Held while a mark is added to the take being made, and while that take stops being the
    /// one being made: a mark is either in the take's file or in the next take.
    let markGate = Locked(0)
    /// The recorder's state when a recording starts or ends, and when its item is renamed or moved.
    public let changes = StateFeed(RecorderState())

    init(
        device: PCMInput, timing: PCMTiming, store: LibraryStore, defaults: RecordingDefaults, logger: Logger,
        capturePreroll: Double = 0, ringSeconds: Double = 10,
        wallClock: @escaping @Sendable () -> Double = { Double(time(nil)) }
    ) {
        captureEngine = CaptureEngine(device: device, timing: timing, ringSeconds: ringSeconds, logger: logger)
        self.timing = timing
        self.ringSeconds = ringSeconds
        deviceName = device.name
        self.store = store
        self.defaults = defaults
        self.logger = logger
        self.capturePreroll = capturePreroll > 0 ? capturePreroll : defaults.capturePreroll
        self.wallClock = wallClock
    }

    /// The recorder's state now. Any thread.
    public var state: RecorderState {
        let shared = shared.current
        guard let session = shared.session else {
            return RecorderState(
                state: .idle, item: shared.last, elapsed: shared.lastElapsed, overruns: shared.lastOverruns,
                error: shared.lastError)
        }
        let snapshot = engine.snapshot
        let series = session.seriesName.map { _ in RecorderSeries(takes: session.kept, started: session.started) }
        return RecorderState(
            state: shared.take != nil ? .recording : .armed, item: shared.take?.item ?? session.lastTake,
            elapsed: snapshot.elapsed, peak: snapshot.levels?.peak, rms: snapshot.levels?.rms,
            format: session.format, overruns: snapshot.overruns, error: nil, series: series, disk: shared.disk,
            threshold: session.threshold)
    }

    public var isRecording: Bool { shared.current.session != nil }

    func notify() {
        changes.publish(state)
    }

    /// Opens the capture device for pre-roll (config `capture_preroll`), when set and idle.
    /// Called at start and after each session; a failure is logged and retried at the next.
    public func listenForPreroll() {
        queue.async { [self] in listenIfConfigured() }
    }

    private func listenIfConfigured() {
        guard capturePreroll > 0, shared.current.session == nil, engine.listeningFormat == nil else { return }
        let format = PCMFormat(sample: .s16, sampleRate: defaults.sampleRate, channels: defaults.channels)
        do throws(ReelError) {
            try engine.listen(format: format, seconds: capturePreroll)
            logger.info(
                "capture device held open for pre-roll", metadata: ["device": "\(deviceName)", "seconds": "\(capturePreroll)"])
        } catch {
            logger.warning("cannot hold the capture device open for pre-roll", metadata: ["error": "\(error.message)"])
        }
    }

    // MARK: Commands

    public func start(_ request: RecordingRequest, reply: @escaping Reply<RecorderState>) {
        queue.async { [self] in
            do throws(ReelError) {
                try begin(request)
                reply(.success(state))
            } catch {
                reply(.failure(error))
            }
            notify()
        }
    }

    /// Ends the session and finishes its take; replies with the take's item (duration, size and
    /// format filled in), or the session's last take, or nil for a session that made none.
    public func stop(reply: @escaping Reply<Item?>) {
        queue.async { [self] in
            guard shared.current.session != nil else {
                reply(.failure(ReelError(.notRecording, "nothing is being recorded")))
                return
            }
            let item = endSession(keep: true)
            // The disk did not take the take (a failed fsync: EIO): not answered as saved.
            if let failure = engine.snapshot.error, failure.reason == .ioError || failure.reason == .diskFull {
                let error = ReelError(failure.reason, "the take \(item?.path ?? "being made") may not be on the disk: \(failure.message)")
                shared.withLock { $0.lastError = error }
                logger.error("recording stopped, not saved whole", metadata: ["path": "\(item?.path ?? "")", "error": "\(failure.message)"])
                notify()
                reply(.failure(error))
                return
            }
            notify()
            // After the take's chapters (queued when it closed): the file answered is final.
            queue.async { [self] in reply(.success(item.map { (try? store.item(id: $0.id)) ?? $0 })) }
        }
    }

    /// Ends the session and removes the take being made.
    public func cancel(reply: @escaping Reply<RecorderState>) {
        queue.async { [self] in
            guard shared.current.session != nil else {
                reply(.failure(ReelError(.notRecording, "nothing is being recorded")))
                return
            }
            let path = shared.current.take?.item.path
            _ = endSession(keep: false)
            logger.info("recording cancelled", metadata: ["path": "\(path ?? "(no take)")"])
            shared.withLock { shared in
                if shared.last?.path == path { shared.last = nil }
                shared.lastError = nil
            }
            reply(.success(state))
            notify()
        }
    }

    /// Finishes a recording in progress (at SIGTERM) and waits for it.
    public func shutdown() {
        queue.sync {
            if shared.current.session != nil {
                _ = endSession(keep: true)
            }
            engine.close()
        }
        // The last take's chapters, written on the queue after it closed.
        queue.sync {}
    }

    /// Stops the session for a full disk (retention found nothing left to delete). On the queue.
    func endSessionForDisk(_ error: ReelError) -> Item? {
        let item = endSession(keep: true, error: error)
        notify()
        return item
    }

    /// Stops the engine's session (the open take closed through `SessionTakes`); on the queue.
    private func endSession(keep: Bool, error: ReelError? = nil) -> Item? {
        let snapshot = engine.stop(keep: keep)
        sourceEngine.withLock { $0 = nil }
        if let codec = shared.current.session?.codec { settleCarriedMarks(codec: codec) }
        let last = shared.withLock { shared -> Item? in
            let last = shared.take?.item ?? shared.session?.lastTake ?? shared.last
            shared.session = nil
            shared.take = nil
            shared.disk = nil
            shared.lastElapsed = snapshot.elapsed
            shared.lastOverruns = snapshot.overruns
            if let error { shared.lastError = error }
            return last
        }
        listenIfConfigured()
        return last
    }

    // MARK: Starting

    private func begin(_ request: RecordingRequest) throws(ReelError) {
        if let session = shared.current.session {
            let what = shared.current.take?.item.path ?? session.seriesName ?? ""
            throw ReelError(.busy, "already recording \(what); stop it first (reel record stop)")
        }
        let codec = request.codec ?? defaults.codec
        guard CodecRegistry.recordingFormats.contains(codec) else {
            throw ReelError(
                .unsupportedFormat, "cannot record \"\(codec)\"; formats are \(CodecRegistry.recordingFormats.joined(separator: ", "))")
        }
        // Another source than the capture device: its input, and the format it plays in.
        let source = try sourceInput(request)
        let sampleRate = request.sampleRate ?? source?.format?.sampleRate ?? defaults.sampleRate
        let channels = request.channels ?? source?.format?.channels ?? defaults.channels
        guard (8000...192_000).contains(sampleRate) else {
            throw ReelError(.unsupportedFormat, "cannot record at \(sampleRate) Hz; use 8000 to 192000")
        }
        guard (1...8).contains(channels) else {
            throw ReelError(.unsupportedFormat, "cannot record \(channels) channels; use 1 to 8")
        }
        let pcm = PCMFormat(sample: .s16, sampleRate: sampleRate, channels: channels)
        try SndFileWriter.check(codec: codec, format: pcm)
        let rate = Double(sampleRate)
        var maxFrames: Int64?
        if let maxDuration = request.maxDuration {
            guard maxDuration.isFinite, maxDuration > 0, maxDuration <= maximumSeconds else {
                throw ReelError(
                    .outOfRange, "maxDuration must be more than 0 and at most \(Int(maximumSeconds)) seconds, not \(maxDuration)")
            }
            maxFrames = max(1, frameIndex(seconds: maxDuration, rate: rate))
        }
        let plan = try Self.plan(request, sampleRate: sampleRate, wallClock: wallClock())
        var prerollFrames: Int64 = 0
        if let preroll = request.preroll {
            guard preroll.isFinite, preroll >= 0 else {
                throw ReelError(.outOfRange, "preroll must be 0 or more seconds, not \(preroll)")
            }
            if case .triggered = plan {
                throw ReelError(.outOfRange, "preroll starts one take in the past; a trigger has its own preroll (trigger.preroll)")
            }
            guard source == nil || preroll == 0 else {
                throw ReelError(.outOfRange, "preroll reaches into the capture device's past; it cannot be used with source \(source?.description ?? "")")
            }
            guard capturePreroll > 0 else {
                throw ReelError(.outOfRange, "preroll needs the capture device held open: set capture_preroll (seconds) in the configuration")
            }
            guard preroll <= capturePreroll else {
                throw ReelError(.outOfRange, "preroll \(preroll) s reaches further back than capture_preroll (\(capturePreroll) s)")
            }
            prerollFrames = frameIndex(seconds: preroll, rate: rate)
        }
        try Self.checkKeep(request.keep)
        let series = plan != .single || request.keep != nil
        let format = AudioFormat(codec: CodecRegistry.recordingCodec(codec)?.name ?? codec, sampleRate: sampleRate, channels: channels)
        let folderItem = try store.item(request.folder)
        guard folderItem.kind == .folder else {
            throw ReelError(.notAFolder, "cannot record into \(folderItem.path): it is a recording, not a folder")
        }
        var session = Session(
            folder: .id(folderItem.id), codec: codec, format: format, keep: request.keep,
            threshold: request.trigger?.level, started: Self.iso8601(wallClock()))
        session.folderPath = folderItem.path
        if case .segments = plan { session.contiguous = true }
        if series {
            let name = request.name ?? Self.defaultName(at: time_t(wallClock()))
            try ItemName.validate(name + " 001")
            session.seriesName = name
            session.nextNumber = (try seriesTakes(in: session).last?.number ?? 0) + 1
        } else if let name = request.name {
            try ItemName.validate(name)
        }
        // A device held open for pre-roll at another format is reopened for this session.
        if source == nil, let listening = engine.listeningFormat, listening != pcm {
            guard prerollFrames == 0 else {
                throw ReelError(
                    .unsupportedFormat,
                    "the pre-roll is held at \(listening.sampleRate) Hz, \(listening.channels) channel(s); record at that format to use it")
            }
            engine.close()
        }
        shared.withLock { shared in
            shared.session = session
            shared.lastError = nil
        }
        let takes = SessionTakes(controller: self, request: request)
        if let source {
            sourceEngine.withLock { $0 = makeSourceEngine(source) }
        }
        do {
            try engine.start(CaptureSession(format: pcm, plan: plan, maxFrames: maxFrames, prerollFrames: prerollFrames), takes: takes)
        } catch {
            shared.withLock { shared in
                shared.session = nil
                shared.take = nil
            }
            sourceEngine.withLock { $0 = nil }
            listenIfConfigured()
            throw error
        }
        // A deletion of the first take (its folder deleted) that committed while it was starting
        // found no take to stop; one committed from now on does. Look again.
        if let take = shared.current.take, (try? store.item(id: take.item.id)) == nil {
            _ = endSession(keep: false)
            unlink(take.path)
            throw ReelError(.notFound, "\(take.item.path) was deleted (its folder with it) while the recording started")
        }
        logger.info(
            "recording", metadata: ["path": "\(shared.current.take?.item.path ?? session.seriesName ?? "")",
                                    "format": "\(codec) \(sampleRate) Hz \(channels) ch", "device": "\(source?.description ?? deviceName)",
                                    "mode": "\(Self.describe(plan))"])
    }

    static func describe(_ plan: TakePlan) -> String {
        switch plan {
        case .single: "one take"
        case .segments(let segments): "segments of \(segments.frames) frames (the first \(segments.firstFrames))"
        case .triggered(let trigger): "triggered at \(trigger.threshold) (16-bit), hold \(trigger.holdFrames) frames"
        }
    }

    /// The session's cutting plan from the request.
    static func plan(_ request: RecordingRequest, sampleRate: Int, wallClock: Double) throws(ReelError) -> TakePlan {
        let rate = Double(sampleRate)
        if let trigger = request.trigger {
            guard request.segmentSeconds == nil, request.segmentAlign == nil else {
                throw ReelError(.outOfRange, "trigger and segmentSeconds/segmentAlign cannot be combined: takes are cut by the level")
            }
            guard trigger.level.isFinite, trigger.level < 0, trigger.level >= -96 else {
                throw ReelError(.outOfRange, "trigger.level must be below 0 and at least -96 dBFS, not \(trigger.level)")
            }
            for (name, value, limit) in [("hold", trigger.hold, 3600.0), ("preroll", trigger.preroll, 60.0), ("minLength", trigger.minLength, 3600.0)] {
                guard value.isFinite, value >= 0, value <= limit else {
                    throw ReelError(.outOfRange, "trigger.\(name) must be 0 to \(Int(limit)) seconds, not \(value)")
                }
            }
            return .triggered(TriggerPlan(
                threshold: TriggerPlan.threshold(dBFS: trigger.level), holdFrames: frameIndex(seconds: trigger.hold, rate: rate),
                prerollFrames: frameIndex(seconds: trigger.preroll, rate: rate),
                minFrames: frameIndex(seconds: trigger.minLength, rate: rate)))
        }
        let units = ["minute": 60, "hour": 3600, "day": 86400]
        if let align = request.segmentAlign {
            guard let unit = units[align] else {
                throw ReelError(.outOfRange, "segmentAlign must be \"minute\", \"hour\" or \"day\", not \"\(align)\"")
            }
            let seconds = request.segmentSeconds ?? Double(unit)
            guard seconds >= 1, seconds == seconds.rounded(), unit % Int(seconds) == 0 else {
                throw ReelError(
                    .outOfRange, "with segmentAlign \"\(align)\", segmentSeconds must divide \(unit) seconds evenly, not \(seconds)")
            }
            // Units are counted in local time (a local day begins at local midnight).
            return .segments(SegmentPlan.aligned(
                seconds: Int(seconds), unitSeconds: unit, wallClock: wallClock + Double(localOffset(at: wallClock)),
                sampleRate: sampleRate))
        }
        if let seconds = request.segmentSeconds {
            guard seconds.isFinite, seconds >= 1, seconds <= maximumSeconds else {
                throw ReelError(.outOfRange, "segmentSeconds must be at least 1 and at most \(Int(maximumSeconds)), not \(seconds)")
            }
            return .segments(.every(seconds: seconds, sampleRate: sampleRate))
        }
        return .single
    }

    static func checkKeep(_ keep: RetentionRule?) throws(ReelError) {
        guard let keep else { return }
        if let count = keep.count, count < 1 {
            throw ReelError(.outOfRange, "keep.count must be at least 1, not \(count)")
        }
        if let days = keep.days, !(days.isFinite && days > 0) {
            throw ReelError(.outOfRange, "keep.days must be more than 0, not \(days)")
        }
        if let bytes = keep.minFreeBytes, bytes < 0 {
            throw ReelError(.outOfRange, "keep.minFreeBytes must be 0 or more, not \(bytes)")
        }
    }

    /// Seconds east of UTC at `seconds` since the epoch.
    static func localOffset(at seconds: Double) -> Int {
        var clock = time_t(seconds)
        var parts = tm()
        localtime_r(&clock, &parts)
        return parts.tm_gmtoff
    }

    static func iso8601(_ seconds: Double) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))"
            + "T\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))Z"
    }

    /// `Recording YYYY-MM-DD HH.MM.SS` in local time.
    public static func defaultName(at seconds: time_t) -> String {
        var clock = seconds
        var parts = tm()
        localtime_r(&clock, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "Recording \(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)).\(two(parts.tm_min)).\(two(parts.tm_sec))"
    }

    // MARK: Takes (on the engine's writer thread, or the queue for a session's first)

    /// Adds the take's row and creates its file.
    func openTake(_ take: CaptureTake, request: RecordingRequest) throws(ReelError) -> RecordingWriter {
        guard var session = shared.current.session else {
            throw ReelError(.notRecording, "the recording session ended")
        }
        let item: Item
        do throws(ReelError) {
            if let base = session.seriesName {
                item = try addSeriesTake(base: base, session: &session)
            } else {
                item = try addItem(request, folder: session.folder, format: session.format)
            }
        } catch where error.reason == .notFound {
            // The folder was deleted while the take started: say which take, not the folder's id.
            let name = session.seriesName ?? request.name ?? "the recording"
            let path = session.folderPath == "/" ? "/\(name)" : "\(session.folderPath)/\(name)"
            throw ReelError(.notFound, "\(path) could not start: its folder was deleted meanwhile")
        }
        let path: String
        let writer: RecordingWriter
        do throws(ReelError) {
            path = try store.audioPath(for: item)
            writer = try loudness.makeWriter(
                CaptureRequest(
                    path: path, codec: session.codec,
                    format: PCMFormat(sample: .s16, sampleRate: session.format.sampleRate, channels: session.format.channels)))
            // The file (its header) and its name are on disk before the take is listed as begun: a
            // power cut from now on leaves a file to repair, never a take without one.
            try writer.sync()
            RecordingRepair.syncDirectory(of: path)
        } catch {
            // Nothing was recorded: the item goes again.
            _ = try? store.delete(.id(item.id))
            throw error
        }
        shared.withLock { shared in
            shared.session?.nextNumber = session.nextNumber
            shared.take = Take(item: item, path: path, start: take.startFrame)
        }
        takeOpenedForMarks(item: item, start: take.startFrame)
        logger.info("take", metadata: ["path": "\(item.path)", "file": "\(path)", "startFrame": "\(take.startFrame)"])
        queue.async { [self] in notify() }
        return writer
    }

    /// `NAME 001`, `NAME 002`, …: the next free number (a name taken by something else is skipped).
    private func addSeriesTake(base: String, session: inout Session) throws(ReelError) -> Item {
        while true {
            let number = session.nextNumber
            session.nextNumber += 1
            let digits = String(number)
            let name = "\(base) \(String(repeating: "0", count: max(0, 3 - digits.count)))\(digits)"
            do {
                return try store.addRecording(parent: session.folder, name: name, format: session.format)
            } catch where error.reason == .nameTaken && number < 1_000_000 {
                continue
            }
        }
    }

    /// Adds the item; the default name gets " (2)", " (3)", … when a sibling has it.
    private func addItem(_ request: RecordingRequest, folder: ItemReference, format: AudioFormat) throws(ReelError) -> Item {
        if let name = request.name {
            return try store.addRecording(parent: folder, name: name, format: format)
        }
        let base = Self.defaultName(at: time_t(wallClock()))
        var attempt = 1
        while true {
            let name = attempt == 1 ? base : "\(base) (\(attempt))"
            do {
                return try store.addRecording(parent: folder, name: name, format: format)
            } catch where error.reason == .nameTaken && attempt < 1000 {
                attempt += 1
            }
        }
    }

    /// The take's file is closed: its row is finished (the file repaired first after a write
    /// failure), or, not kept, the take is deleted.
    func closedTake(_ take: CaptureTake, frames: Int64, keep: Bool, failure: ReelError?) {
        guard let current = shared.current.take, let session = shared.current.session else { return }
        markGate.withLock { _ in
            shared.withLock { shared in
                shared.take = nil
                // A kept take is the session's last from now on, as it is until its row is
                // finished below (repair, loudness, a commit that may wait for the database):
                // a state read meanwhile (the reply to `recorder.start` when the disk filled at
                // once, a push) names it, never a session with no take at all.
                if keep {
                    shared.session?.lastTake = current.item
                    shared.last = current.item
                }
            }
        }
        if !keep {
            do throws(ReelError) {
                try store.delete(.id(current.item.id))
                logger.info("take discarded", metadata: ["path": "\(current.item.path)", "frames": "\(frames)"])
            } catch {
                logger.warning(
                    "cannot remove a discarded take", metadata: ["path": "\(current.item.path)", "error": "\(error.message)"])
            }
            queue.async { [self] in
                finishPendingChapters(ofRecording: current.item.id)
                notify()
            }
            return
        }
        var frames = frames
        if let failure {
            // The encoder may have been cut off mid-frame or mid-page (a full disk): keep what is whole.
            do throws(ReelError) {
                let outcome = try RecordingRepair.repair(path: current.path, codec: session.codec)
                frames = outcome.frames
                logger.notice(
                    "recording repaired after the failure", metadata: ["path": "\(current.item.path)", "action": "\(outcome.action)",
                                                                      "error": "\(failure.message)"])
            } catch let repairError {
                logger.error(
                    "cannot repair the recording after the failure",
                    metadata: ["path": "\(current.item.path)", "error": "\(repairError.message)"])
            }
        }
        writeMarks(of: current, frames: frames, codec: session.codec)
        // A closed take is whole on disk before its row says it is finished: the writer's close
        // synced it; after a failure, the repair rewrote it and this syncs it.
        if failure != nil { RecordingRepair.syncFile(current.path) }
        let duration = Double(frames) / Double(max(session.format.sampleRate, 1))
        let gain = loudness.finish(recording: current.item.id, logger: logger)
        let size = RecordingRepair.fileSize(current.path)
        var item = current.item
        do throws(ReelError) {
            // Its length, size, finished state and ReplayGain in one commit.
            item = try store.updateRecording(
                id: current.item.id, duration: duration, size: size, finished: true, replayGain: gain)
        } catch let storeError {
            logger.error(
                "cannot record the finished recording's length", metadata: ["path": "\(current.item.path)", "error": "\(storeError.message)"])
            item.duration = duration
            item.size = size
        }
        logger.info("recording finished", metadata: ["path": "\(item.path)", "duration": "\(duration)", "bytes": "\(size)"])
        shared.withLock { shared in
            shared.session?.kept += 1
            shared.session?.lastTake = item
            shared.last = item
        }
        queue.async { [self, id = item.id] in
            finishPendingChapters(ofRecording: id)
            applyRetention()
            notify()
        }
    }

    /// The session ended by itself (its length limit, a full disk, a failed device).
    func sessionEnded(_ ending: CaptureEnding) {
        queue.async { [self] in
            guard shared.current.session != nil else { return }
            var error: ReelError?
            switch ending {
            case .stopped:
                break
            case .limitReached:
                logger.info("recording reached its length limit")
            case .failed(let failure):
                error = failure
                logger.error("recording stopped", metadata: ["reason": "\(failure.reason.rawValue)", "error": "\(failure.message)"])
            }
            _ = endSession(keep: true, error: error)
            notify()
        }
    }

    // MARK: While recording

    /// How often the row of the recording being made is brought up to date (its duration and
    /// size): each update is a database transaction and change events, so not at every sync.
    static let treeUpdateInterval: Double = 5

    /// After each sync (about once a second, from the writer thread): every
    /// `treeUpdateInterval` seconds of audio, the row grows with the file; free space is checked.
    func progress(_ snapshot: CaptureSnapshot) {
        queue.async { [self] in
            guard let session = shared.current.session else { return }
            if let take = shared.current.take {
                let seconds = Double(snapshot.takeFrames) / Double(max(session.format.sampleRate, 1))
                if seconds - (take.item.duration ?? 0) >= Self.treeUpdateInterval,
                   let item = try? store.updateRecording(id: take.item.id, duration: seconds, size: RecordingRepair.fileSize(take.path))
                {
                    shared.withLock { shared in
                        if shared.take?.item.id == take.item.id {
                            shared.take?.item = item
                            if seconds > 0 { shared.session?.byteRate = Double(item.size ?? 0) / seconds }
                        }
                    }
                }
            }
            checkDisk()
        }
    }

    /// Follows the item being recorded: a rename or move updates the state; its deletion ends
    /// the session (the file is gone with it). Called on the library's delivery queue.
    func libraryChanged(_ changes: [LibraryChange]) {
        guard let id = shared.current.take?.item.id,
              let change = changes.last(where: { $0.item.id == id && $0.kind != .updated })
        else { return }
        queue.async { [self] in
            guard let take = shared.current.take, take.item.id == id else { return }
            if change.kind == .removed {
                logger.info("the recording being made was deleted; recording stopped", metadata: ["path": "\(take.item.path)"])
                _ = endSession(keep: false)
                shared.withLock { shared in
                    if shared.last?.id == id { shared.last = nil }
                }
            } else {
                shared.withLock { $0.take?.item = change.item }
            }
            notify()
        }
    }

    // MARK: After a crash

    /// Repairs the recordings a previous run did not finish (`kill -9`, a power cut) and keeps
    /// them in the tree with their real length. Called once at start, before clients connect.
    public func repairUnfinished() {
        let unfinished: [Item]
        do {
            unfinished = try store.inProgressRecordings()
        } catch {
            logger.error("cannot look for unfinished recordings", metadata: ["error": "\(error.message)"])
            return
        }
        for item in unfinished {
            guard let path = try? store.audioPath(for: item) else { continue }
            let codec = LibraryStore.fileExtension(forCodec: item.format?.codec ?? "")
            do throws(ReelError) {
                if RecordingRepair.fileSize(path) == 0 {
                    // Nothing of it reached the disk (a power cut within its first second): it
                    // stays in the tree as a take of no frames, with a file every tool reads.
                    let pcm = PCMFormat(
                        sample: .s16, sampleRate: item.format?.sampleRate ?? defaults.sampleRate,
                        channels: item.format?.channels ?? defaults.channels)
                    try RecordingRepair.writeEmptyTake(path: path, codec: item.format?.codec ?? codec, format: pcm)
                    logger.notice(
                        "an unfinished recording's audio never reached the disk; kept as an empty take",
                        metadata: ["path": "\(item.path)", "file": "\(path)"])
                }
                let outcome = try RecordingRepair.repair(path: path, codec: codec)
                try store.updateRecording(
                    id: item.id, duration: outcome.duration, size: outcome.size, format: outcome.format, finished: true)
                logger.notice(
                    "repaired an unfinished recording", metadata: ["path": "\(item.path)", "file": "\(path)",
                                                                  "duration": "\(outcome.duration)", "action": "\(outcome.action)"])
            } catch {
                logger.error(
                    "cannot repair an unfinished recording; keeping it as it is",
                    metadata: ["path": "\(item.path)", "file": "\(path)", "error": "\(error.message)"])
                _ = try? store.updateRecording(id: item.id, duration: 0, size: RecordingRepair.fileSize(path), finished: true)
            }
        }
    }
}
