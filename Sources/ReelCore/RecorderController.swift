// The recorder's control side: takes into the tree, their progress, their ending, crash repair.

import Dispatch
import Logging
import ReelAudio
internal import ReelLibrary
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// What `recorder.start` asks for; nil takes the configured default.
public struct RecordingRequest: Sendable {
    public var folder: ItemReference = .root
    public var name: String?
    /// `flac`, `wav`, `ogg` or `opus`.
    public var codec: String?
    public var sampleRate: Int?
    public var channels: Int?
    /// Seconds.
    public var maxDuration: Double?

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

/// The defaults of a recording (config `record_format`, `record_sample_rate`, `record_channels`).
public struct RecordingDefaults: Sendable, Equatable {
    public var codec = "flac"
    public var sampleRate = 48000
    public var channels = 1

    public init(codec: String = "flac", sampleRate: Int = 48000, channels: Int = 1) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// Owns the capture engine and the recording being made. One recording at a time. Commands and
/// the engine's own endings run one after another on the recorder's queue; replies are called
/// there, and every change (start, end, the item renamed or moved) is published to `changes`.
public final class RecorderController: @unchecked Sendable {
    public typealias Reply<Value> = @Sendable (Result<Value, ReelError>) -> Void

    private let engine: CaptureEngine
    /// Each take's loudness, measured as it is recorded (its ReplayGain).
    private let loudness = TakeLoudness()
    private let store: LibraryStore
    private let defaults: RecordingDefaults
    private let logger: Logger
    private let deviceName: String
    private let queue = DispatchQueue(label: "reel.recorder")

    /// The take being made; touched on `queue`, read under the lock for `state`.
    private struct Take {
        var item: Item
        var codec: String
        var format: AudioFormat
        var path: String
    }
    private struct Shared {
        var take: Take?
        var last: Item?
        var lastError: ReelError?
        var lastOverruns = 0
        var lastElapsed = 0.0
    }
    private let shared = Locked(Shared())
    /// The recorder's state when a recording starts or ends, and when its item is renamed or moved.
    public let changes = StateFeed(RecorderState())

    init(
        device: PCMInput, timing: PCMTiming, store: LibraryStore, defaults: RecordingDefaults, logger: Logger
    ) {
        engine = CaptureEngine(device: device, timing: timing, logger: logger, makeWriter: loudness.makeWriter)
        deviceName = device.name
        self.store = store
        self.defaults = defaults
        self.logger = logger
    }

    /// The recorder's state now. Any thread.
    public var state: RecorderState {
        let shared = shared.current
        guard let take = shared.take else {
            return RecorderState(
                state: .idle, item: shared.last, elapsed: shared.lastElapsed, overruns: shared.lastOverruns,
                error: shared.lastError)
        }
        let snapshot = engine.snapshot
        return RecorderState(
            state: .recording, item: take.item, elapsed: snapshot.elapsed,
            peak: snapshot.levels?.peak, rms: snapshot.levels?.rms,
            format: take.format, overruns: snapshot.overruns, error: nil)
    }

    public var isRecording: Bool { shared.current.take != nil }

    private func notify() {
        changes.publish(state)
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

    /// Finishes the recording; replies with its item (duration, size and format filled in).
    public func stop(reply: @escaping Reply<Item>) {
        queue.async { [self] in
            guard shared.current.take != nil else {
                reply(.failure(ReelError(.notRecording, "nothing is being recorded")))
                return
            }
            let item = finish(ending: .stopped)
            reply(.success(item))
            notify()
        }
    }

    /// Stops and removes the recording being made.
    public func cancel(reply: @escaping Reply<RecorderState>) {
        queue.async { [self] in
            guard let take = shared.current.take else {
                reply(.failure(ReelError(.notRecording, "nothing is being recorded")))
                return
            }
            let snapshot = engine.stop()
            do throws(ReelError) {
                try store.delete(.id(take.item.id))
            } catch {
                logger.warning(
                    "cannot remove the cancelled recording", metadata: ["path": "\(take.item.path)", "error": "\(error.message)"])
            }
            logger.info("recording cancelled", metadata: ["path": "\(take.item.path)"])
            shared.withLock { shared in
                shared.take = nil
                shared.last = nil
                shared.lastError = nil
                shared.lastElapsed = snapshot.elapsed
                shared.lastOverruns = snapshot.overruns
            }
            reply(.success(state))
            notify()
        }
    }

    /// Finishes a recording in progress (at SIGTERM) and waits for it.
    public func shutdown() {
        queue.sync {
            if shared.current.take != nil {
                _ = finish(ending: .stopped)
            }
        }
    }

    // MARK: Starting

    private func begin(_ request: RecordingRequest) throws(ReelError) {
        guard shared.current.take == nil else {
            let path = shared.current.take?.item.path ?? ""
            throw ReelError(.busy, "already recording \(path); stop it first (reel record stop)")
        }
        let codec = request.codec ?? defaults.codec
        guard CodecRegistry.recordingFormats.contains(codec) else {
            throw ReelError(
                .unsupportedFormat, "cannot record \"\(codec)\"; formats are \(CodecRegistry.recordingFormats.joined(separator: ", "))")
        }
        let sampleRate = request.sampleRate ?? defaults.sampleRate
        let channels = request.channels ?? defaults.channels
        guard (8000...192_000).contains(sampleRate) else {
            throw ReelError(.unsupportedFormat, "cannot record at \(sampleRate) Hz; use 8000 to 192000")
        }
        guard (1...8).contains(channels) else {
            throw ReelError(.unsupportedFormat, "cannot record \(channels) channels; use 1 to 8")
        }
        let pcm = PCMFormat(sample: .s16, sampleRate: sampleRate, channels: channels)
        try SndFileWriter.check(codec: codec, format: pcm)
        var maxFrames: Int64?
        if let maxDuration = request.maxDuration {
            guard maxDuration.isFinite, maxDuration > 0, maxDuration <= maximumSeconds else {
                throw ReelError(
                    .outOfRange, "maxDuration must be more than 0 and at most \(Int(maximumSeconds)) seconds, not \(maxDuration)")
            }
            maxFrames = max(1, frameIndex(seconds: maxDuration, rate: Double(sampleRate)))
        }
        let format = AudioFormat(codec: CodecRegistry.recordingCodec(codec)?.name ?? codec, sampleRate: sampleRate, channels: channels)
        let item = try addItem(request, format: format)
        let path: String
        do {
            path = try store.audioPath(for: item)
            try engine.start(
                CaptureRequest(path: path, codec: codec, format: pcm, maxFrames: maxFrames),
                onProgress: { [weak self] snapshot in self?.progress(snapshot, id: item.id) },
                onEnd: { [weak self] ending in self?.ended(ending, id: item.id) })
        } catch {
            // Nothing was recorded: the item goes again.
            try? store.delete(.id(item.id))
            throw error
        }
        shared.withLock { shared in
            shared.take = Take(item: item, codec: codec, format: format, path: path)
            shared.lastError = nil
        }
        // A deletion of the item (its folder deleted) that committed while the take was starting
        // found no take to stop; one committed from now on does. Look again.
        if (try? store.item(id: item.id)) == nil {
            engine.stop()
            unlink(path)
            shared.withLock { $0.take = nil }
            throw ReelError(.notFound, "\(item.path) was deleted (its folder with it) while the recording started")
        }
        logger.info(
            "recording", metadata: ["path": "\(item.path)", "file": "\(path)", "format": "\(codec) \(sampleRate) Hz \(channels) ch",
                                    "device": "\(deviceName)"])
    }

    /// Adds the item; the default name gets " (2)", " (3)", … when a sibling has it.
    private func addItem(_ request: RecordingRequest, format: AudioFormat) throws(ReelError) -> Item {
        if let name = request.name {
            return try store.addRecording(parent: request.folder, name: name, format: format)
        }
        let base = Self.defaultName(at: time(nil))
        var attempt = 1
        while true {
            let name = attempt == 1 ? base : "\(base) (\(attempt))"
            do {
                return try store.addRecording(parent: request.folder, name: name, format: format)
            } catch where error.reason == .nameTaken && attempt < 1000 {
                attempt += 1
            }
        }
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

    // MARK: While recording

    /// How often the row of the recording being made is brought up to date (its duration and
    /// size): each update is a database transaction and change events, so not at every sync.
    static let treeUpdateInterval: Double = 5

    /// After each sync (about once a second, on the writer thread): every
    /// `treeUpdateInterval` seconds of audio, the row grows with the file.
    private func progress(_ snapshot: CaptureSnapshot, id: String) {
        queue.async { [self] in
            guard let take = shared.current.take, take.item.id == id else { return }
            let seconds = Double(snapshot.writtenFrames) / Double(max(take.format.sampleRate, 1))
            guard seconds - (take.item.duration ?? 0) >= Self.treeUpdateInterval else { return }
            guard let item = try? store.updateRecording(id: id, duration: seconds, size: RecordingRepair.fileSize(take.path))
            else { return }
            shared.withLock { shared in
                if shared.take?.item.id == id { shared.take?.item = item }
            }
        }
    }

    /// The engine stopped by itself: the length limit, a full disk, a failed device. Called on
    /// the writer thread.
    private func ended(_ ending: CaptureEnding, id: String) {
        queue.async { [self] in
            guard let take = shared.current.take, take.item.id == id else { return }
            _ = finish(ending: ending)
            notify()
        }
    }

    /// Follows the item being recorded: a rename or move updates the state; its deletion ends
    /// the recording (the file is gone with it). Called on the library's delivery queue.
    func libraryChanged(_ changes: [LibraryChange]) {
        guard let id = shared.current.take?.item.id,
              let change = changes.last(where: { $0.item.id == id && $0.kind != .updated })
        else { return }
        queue.async { [self] in
            guard let take = shared.current.take, take.item.id == id else { return }
            if change.kind == .removed {
                engine.stop()
                logger.info("the recording being made was deleted; recording stopped", metadata: ["path": "\(take.item.path)"])
                shared.withLock { shared in
                    shared.take = nil
                    shared.last = nil
                }
            } else {
                shared.withLock { $0.take?.item = change.item }
            }
            notify()
        }
    }

    // MARK: Finishing

    /// Stops the engine (if still running), makes the file whole after a failure, and fills
    /// in the row. On the queue.
    private func finish(ending: CaptureEnding) -> Item {
        guard let take = shared.current.take else { preconditionFailure("finish without a take") }
        let snapshot = engine.stop()
        var error: ReelError?
        var frames = snapshot.writtenFrames
        if case .failed(let failure) = ending {
            error = failure
            // The encoder may have been cut off mid-frame or mid-page (a full disk): keep what is whole.
            do throws(ReelError) {
                let outcome = try RecordingRepair.repair(path: take.path, codec: take.codec)
                frames = outcome.frames
                logger.notice("recording repaired after the failure", metadata: ["path": "\(take.item.path)", "action": "\(outcome.action)"])
            } catch let repairError {
                logger.error(
                    "cannot repair the recording after the failure",
                    metadata: ["path": "\(take.item.path)", "error": "\(repairError.message)"])
            }
        }
        let duration = Double(frames) / Double(max(take.format.sampleRate, 1))
        loudness.keep(recording: take.item.id, store: store, logger: logger)
        let size = RecordingRepair.fileSize(take.path)
        var item = take.item
        do throws(ReelError) {
            item = try store.updateRecording(id: take.item.id, duration: duration, size: size, finished: true)
        } catch let storeError {
            logger.error("cannot record the finished recording's length", metadata: ["path": "\(take.item.path)", "error": "\(storeError.message)"])
            item.duration = duration
            item.size = size
        }
        switch ending {
        case .stopped:
            logger.info("recording finished", metadata: ["path": "\(item.path)", "duration": "\(duration)", "bytes": "\(size)"])
        case .limitReached:
            logger.info("recording reached its length limit", metadata: ["path": "\(item.path)", "duration": "\(duration)"])
        case .failed(let failure):
            logger.error(
                "recording stopped", metadata: ["path": "\(item.path)", "reason": "\(failure.reason.rawValue)",
                                                "error": "\(failure.message)", "kept": "\(duration) s"])
        }
        shared.withLock { shared in
            shared.take = nil
            shared.last = item
            shared.lastError = error
            shared.lastElapsed = snapshot.elapsed
            shared.lastOverruns = snapshot.overruns
        }
        return item
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
