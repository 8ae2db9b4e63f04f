// The player's saved state: what to resume after a restart, a crash or a power cut.

import Dispatch
import Logging
import ReelAudio
import ReelModel
import ReelProtocol
import ReelRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Keeps the player's state (entry, position, activity, volume, outputs) and the queue (entries,
/// options) in the data directory.
///
/// Files: `player-state.json` and `queue.json`, the *base*, each naming the last journal record
/// it includes (`"journal": N`); `state.journal`, one line per save since (`JournalRecord`).
///
/// When: a save appends one record to the journal with one `write` (no `fsync`; a record larger
/// than `chunkBytes` with one per `chunkBytes`, written as it is made from the queue's rows, its
/// line complete before the reply; cut off by a crash, it is ignored): the player's
/// whole state, and what changed in the queue as pieces of its list (removing one entry of
/// 10,000 writes two pieces, not the list). The reply to a client's command waits for the save
/// of the state the command left (`SaveBarrier`): a process killed after the reply loses nothing
/// acknowledged. Other changes (an entry that ends, a hardware mixer turned elsewhere, a pipe
/// that failed) are saved as they come, the position every 5 s while playing. The journal is
/// `fdatasync`ed within a second of a write: a power cut loses at most that second. The base is
/// rewritten (*compaction*, off the save's way) once the journal holds 4,096 records or 4 times
/// the bytes of `queue.json` (at least 1 MiB; `compactionDue`), half a second after an entry's
/// length or source changed in place (records do not carry that), and at start and shutdown.
///
/// Crash safety: a base file is written to a temp file, fsynced, renamed over the old one, and the
/// directory fsynced: a crash leaves the old or the new one, never half of one. A journal line
/// cut off by a crash is ignored: its command was never answered. A compaction writes the base
/// under the number of the last record it includes, then a new journal (temp file, rename) with
/// the records written meanwhile; a crash at any point leaves files that replay to the same state.
///
/// Threads: saves run in order on `queue` (`reel.player.state`), where the replies that waited are
/// then called; `fsync` and compaction's writes run on `disk` (`reel.player.state.disk`), never in
/// a save's way. Never the audio thread or an event loop.
public final class PlayerStateFile: @unchecked Sendable {
    static let saveInterval = 5.0
    static let syncInterval = 1.0
    static let settleDelay = 0.5
    static let retryDelay = 5.0
    static let maximumRecords = 4096
    static let minimumJournalBytes = 1 << 20
    /// The journal is compacted once it holds this many times the bytes of `queue.json`
    /// (`compactionDue`).
    static let journalBytesPerQueueByte = 4
    /// A record or base file of any size is written through a buffer of this many bytes (and
    /// one entry more): below malloc's mapping threshold (`HeapSettings`), so a record of
    /// 10,000 entries takes no fresh pages of its own.
    static let chunkBytes = 64 << 10

    let path: String
    let queuePath: String
    let journalPath: String
    private let directory: String
    private let player: PlayerController
    private let logger: Logger
    private let queue = DispatchQueue(label: "reel.player.state")
    private let disk = DispatchQueue(label: "reel.player.state.disk", qos: .utility)
    private var timer: DispatchSourceTimer?
    /// Take each followed feed's latest value (so that it wakes us again), and stop following it.
    private var feeds: [(take: @Sendable () -> Void, remove: @Sendable () -> Void)] = []
    private let wakePending = Atomic<Bool>(false)
    /// The volume and mute to save, when a mixer is set (read on `queue`).
    var mixerState: (@Sendable () -> (volume: Int?, muted: Bool, replayGain: ReplayGainSettings?))?
    /// Which outputs are on, by name (read on `queue`).
    var outputsState: (@Sendable () -> [String: Bool])?

    /// A compaction whose base files are being written.
    private struct Compaction {
        /// The last record the base includes.
        var sequence: Int
        var writesQueue: Bool
        /// `queueFileStale` as the compaction took it (given back if the compaction fails).
        var staleQueueFile: Bool
        /// Records written since, for the new journal: the pieces as they were written (a
        /// record of 10,000 entries is kept as its pieces, not copied into one growing array).
        var tail: [[UInt8]] = []
        /// The bytes in `tail`: the new journal's length.
        var tailBytes = 0
        var tailRecords = 0
    }

    // Touched on `queue` only.
    private var started = false
    private var finished = false
    /// The highest record number the files held at `load`.
    private var loadedSequence = 0
    /// The number of the last record written (or of the base, when none was since).
    private var sequence = 0
    private var layout = SavedLayout()
    private var lastPlayer: SavedPlayerState?
    private var lastOptions = QueueOptions()
    private var lastContentVersion = 0
    /// `queue.json` is to be written at the next compaction even if no record changed the queue:
    /// an entry's length, format or source changed in place (records do not carry that), or the
    /// last write of the whole state failed.
    private var queueFileStale = false
    private var journal: JournalFile?
    private var journalRecords = 0
    private var journalBytes = 0
    /// The journal could not be written: nothing more is appended until a compaction made a new one.
    private var broken = false
    /// The record `queue.json` includes, and the last record that changed the queue.
    private var queueBase = 0
    private var lastQueueRecord = 0
    private var queueBytes = 0
    private var compaction: Compaction?
    private var compactionScheduled = false
    /// A compaction failed and is to be tried again.
    private var retryCompaction = false
    private var syncScheduled = false
    /// A write failed and was logged; the next success is logged too.
    private var failing = false

    public init(directory: String, player: PlayerController, logger: Logger) {
        self.directory = directory
        self.path = directory + "/player-state.json"
        self.queuePath = directory + "/queue.json"
        self.journalPath = directory + "/state.journal"
        self.player = player
        self.logger = logger
    }

    // MARK: Loading

    /// The saved state and queue (the base files with the journal replayed), nil when there is
    /// none. A file that cannot be read is logged and ignored; a journal is read up to its first
    /// damaged line.
    public func load() -> (SavedPlayerState, SavedQueue)? {
        guard let json = read(path) else { return nil }
        let state: SavedPlayerState
        do throws(ReelError) {
            state = try SavedPlayerState(json: json)
        } catch {
            logger.warning("\(error.message); ignoring it", metadata: ["file": "\(path)"])
            return nil
        }
        if let legacy = state.legacySource {
            return (state, SavedQueue(entries: [legacy], options: QueueOptions()))
        }
        var saved = SavedQueue(entries: [], options: QueueOptions())
        let queueJSON = read(queuePath)
        if let queueJSON {
            do throws(ReelError) {
                saved = try SavedQueue(json: queueJSON)
            } catch {
                logger.warning("\(error.message); ignoring it", metadata: ["file": "\(queuePath)"])
            }
        }
        let playerBase = json["journal"]?.intValue
        let queueBase = queueJSON?["journal"]?.intValue
        let (records, cutOff, problem) = StateJournal.records(in: readBytes(journalPath) ?? [])
        let loaded = max(playerBase ?? 0, queueBase ?? 0, records.last?.sequence ?? 0)
        queue.sync { loadedSequence = loaded }
        if cutOff {
            logger.info(
                "the saved state's journal ends in an incomplete record (cut off by a crash or a full disk); ignoring it",
                metadata: ["file": "\(journalPath)"])
        }
        if let problem {
            logger.warning("the saved state's journal is damaged (\(problem)); reading it up to there", metadata: ["file": "\(journalPath)"])
        }
        guard let playerBase, let queueBase else {
            if !records.isEmpty {
                logger.warning(
                    "the saved state's journal does not belong to the saved state (written by an older reeld?); ignoring it",
                    metadata: ["file": "\(journalPath)"])
            }
            return (state, saved)
        }
        let replayed = StateJournal.replay(records, player: state, playerBase: playerBase, queue: saved, queueBase: queueBase)
        if let problem = replayed.problem {
            logger.warning("the saved state's journal is damaged (\(problem)); reading it up to there", metadata: ["file": "\(journalPath)"])
        }
        return (replayed.player, replayed.queue)
    }

    private func read(_ path: String) -> JSONValue? {
        guard let bytes = readBytes(path) else { return nil }
        do {
            return try JSONValue.parse(bytes)
        } catch {
            logger.warning("the saved player state is not valid JSON (\(error)); ignoring it", metadata: ["file": "\(path)"])
            return nil
        }
    }

    private func readBytes(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "r") else {
            if errno != ENOENT {
                logger.warning("cannot read the saved player state; ignoring it", metadata: ["file": "\(path)"])
            }
            return nil
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 256 << 20 {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    // MARK: Running

    /// Writes the base afresh (the state restored, a new journal), then saves every change:
    /// replies to clients' commands wait for their save from now on.
    public func start() {
        queue.sync {
            started = true
            sequence = loadedSequence
            var snapshot = player.saveSnapshot(layout: &layout, full: true)
            snapshot.player = completed(snapshot.player)
            remember(snapshot)
            queueFileStale = false
            writeBaseNow(snapshot, sequence: sequence)
        }
        follow(player.changes)
        follow(player.queueChanges)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.saveInterval, repeating: Self.saveInterval)
        timer.setEventHandler { [weak self] in
            guard let self, self.player.changes.latest.value.state == .playing else { return }
            self.save()
        }
        timer.resume()
        self.timer = timer
        player.saves.connect { [weak self] then in
            guard let self else { return then() }
            self.queue.async {
                // The reply waits for the record only; a compaction it makes due starts after.
                self.save(compacting: false)
                then()
                self.compactIfDue()
            }
        }
    }

    /// Saves after each change of `feed` (the player, the queue, the mixer, the outputs).
    func follow<Value: Sendable>(_ feed: StateFeed<Value>) {
        let consumer = feed.addConsumer { [weak self] in self?.changed() }
        queue.sync {
            feeds.append((take: { _ = feed.take(for: consumer) }, remove: { feed.removeConsumer(consumer) }))
        }
    }

    /// On the publishing thread (the audio thread among them): schedules one save.
    private func changed() {
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [self] in
            wakePending.store(false, ordering: .releasing)
            for feed in feeds { feed.take() }
            save()
        }
    }

    /// Saves the state now and stops (at shutdown, before the player stops): the whole state as
    /// the base, and an empty journal. Replies go out at once from then on.
    public func finish() {
        queue.sync {
            for feed in feeds { feed.remove() }
            feeds = []
            timer?.cancel()
            timer = nil
            finished = true
            // A compaction's writes end first (its end, queued on `queue`, then does nothing).
            disk.sync {}
            if !started { sequence = loadedSequence }
            var snapshot = player.saveSnapshot(layout: &layout, full: true)
            snapshot.player = completed(snapshot.player)
            if started, let record = record(of: snapshot) { append(record) }
            compaction = nil
            writeBaseNow(snapshot, sequence: sequence)
        }
        disk.sync {}
        player.saves.disconnect()
    }

    // MARK: Saving

    /// Records what changed since the last save, and starts a compaction when one is due. On `queue`.
    private func save(compacting: Bool = true) {
        guard started, !finished else { return }
        var snapshot = player.saveSnapshot(layout: &layout, full: false)
        snapshot.player = completed(snapshot.player)
        if let record = record(of: snapshot) { append(record) }
        // Behind what is queued already: a save that a change's feed woke runs before the save a
        // reply waits for (which then finds nothing new), and the compaction's snapshot would
        // hold that reply up.
        if compacting { queue.async { [self] in compactIfDue() } }
    }

    /// Starts a compaction when the journal has grown past its bounds. On `queue`.
    private func compactIfDue() {
        guard started, !finished else { return }
        // After a failed write, the retry timer compacts, not every save.
        if compaction == nil, !retryCompaction,
            broken || Self.compactionDue(records: journalRecords, journalBytes: journalBytes, queueBytes: queueBytes)
        {
            compact()
        }
    }

    /// The journal has grown past its bounds: `maximumRecords` records, or
    /// `journalBytesPerQueueByte` times the bytes of `queue.json` (at least
    /// `minimumJournalBytes`). Why a multiple: a `load` of 10,000 entries is a record of about
    /// `queue.json`'s size, so at 1× nearly every `clear` + `load` rewrote the whole queue as
    /// well (twice the bytes written per change on an SD card, and a compaction competing
    /// with the next command on 2 cores); at 4×, the bytes written are at most 1.25 times the
    /// records', and a start replays at most 4 times `queue.json`'s bytes (docs/reliability.md
    /// measures it).
    static func compactionDue(records: Int, journalBytes: Int, queueBytes: Int) -> Bool {
        records >= maximumRecords
            || journalBytes >= max(minimumJournalBytes, journalBytesPerQueueByte * queueBytes)
    }

    /// The player's state with the volume and outputs.
    private func completed(_ state: SavedPlayerState) -> SavedPlayerState {
        var state = state
        let mixer = mixerState?()
        state.volume = mixer?.volume
        state.muted = mixer?.muted ?? false
        state.replayGain = mixer?.replayGain
        state.outputs = outputsState?() ?? [:]
        return state
    }

    /// The record of what `snapshot` changed, numbered next; nil when nothing changed. Notes a
    /// content change (which schedules a compaction). On `queue`.
    private func record(of snapshot: SaveSnapshot) -> OutgoingRecord? {
        if snapshot.contentVersion != lastContentVersion {
            lastContentVersion = snapshot.contentVersion
            queueFileStale = true
            scheduleCompaction()
        }
        let options = snapshot.options != lastOptions ? snapshot.options : nil
        guard snapshot.edit != nil || options != nil || snapshot.player != lastPlayer else { return nil }
        sequence += 1
        let record = OutgoingRecord(
            sequence: sequence, player: snapshot.player, edit: snapshot.edit, rows: snapshot.rows, length: snapshot.length,
            options: options)
        remember(snapshot)
        if record.hasQueueChange { lastQueueRecord = sequence }
        return record
    }

    private func remember(_ snapshot: SaveSnapshot) {
        lastPlayer = snapshot.player
        lastOptions = snapshot.options
        lastContentVersion = snapshot.contentVersion
    }

    /// Appends `record` to the journal (and to a running compaction's tail): written as it is
    /// made, `chunkBytes` at a time (a record of 10,000 entries is some `write`s of one line,
    /// never a buffer of its size). On `queue`.
    private func append(_ record: OutgoingRecord) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(record.edit == nil ? 512 : Self.chunkBytes + 4096)
        var written = 0
        var error: Int32?
        let journal = broken ? nil : self.journal
        func emit(_ bytes: inout [UInt8]) {
            if compaction != nil {
                // A full piece itself (the next is made in a buffer of its own), a short one
                // (a record's end, a small record) copied to its size.
                compaction!.tail.append(bytes.count * 2 < bytes.capacity ? Array(bytes[...]) : bytes)
                compaction!.tailBytes += bytes.count
            }
            if error == nil, let journal { error = journal.append(bytes) }
            written += bytes.count
            bytes.removeAll(keepingCapacity: true)
        }
        record.write(into: &bytes, flushAt: Self.chunkBytes, flush: emit)
        bytes.append(0x0A)
        emit(&bytes)
        if compaction != nil { compaction!.tailRecords += 1 }
        guard journal != nil else { return }
        if let error {
            // Maybe part of a line: nothing more goes after it; a compaction writes a new journal.
            broken = true
            report("cannot write the saved state's journal; writing the whole state instead", file: journalPath, error: error)
            return
        }
        journalRecords += 1
        journalBytes += written
        scheduleSync()
    }

    /// `fdatasync`s the journal within a second. On `queue`.
    private func scheduleSync() {
        guard !syncScheduled else { return }
        syncScheduled = true
        queue.asyncAfter(deadline: .now() + Self.syncInterval) { [self] in
            syncScheduled = false
            guard let journal else { return }
            disk.async { journal.sync() }
        }
    }

    private func scheduleCompaction(after delay: Double = PlayerStateFile.settleDelay) {
        guard !compactionScheduled else { return }
        compactionScheduled = true
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            compactionScheduled = false
            guard started, !finished, queueFileStale || broken || retryCompaction else { return }
            compact()
        }
    }

    // MARK: Compaction

    /// Writes the whole state as the base (on `disk`), then a new journal of what was recorded
    /// meanwhile. One at a time. On `queue`.
    private func compact() {
        guard compaction == nil else { return }
        retryCompaction = false
        let taken = monotonicNanoseconds()
        var snapshot = player.saveSnapshot(layout: &layout, full: true)
        let snapshotMilliseconds = Double(monotonicNanoseconds() - taken) / 1e6
        snapshot.player = completed(snapshot.player)
        if let record = record(of: snapshot) { append(record) }
        let writesQueue = lastQueueRecord > queueBase || queueFileStale
        compaction = Compaction(sequence: sequence, writesQueue: writesQueue, staleQueueFile: queueFileStale)
        queueFileStale = false
        let sequence = self.sequence
        let base = snapshot
        disk.async { [self] in
            let started = monotonicNanoseconds()
            let written = writeBase(base, sequence: sequence, queue: writesQueue)
            let milliseconds = Double(monotonicNanoseconds() - started) / 1e6
            queue.async { [self] in
                finishCompaction(written, milliseconds: (snapshot: snapshotMilliseconds, write: milliseconds))
            }
        }
    }

    /// On `queue`, once the base files are written (or not).
    private func finishCompaction(_ written: Result<Int?, SaveFailure>, milliseconds: (snapshot: Double, write: Double)) {
        guard let done = compaction, !finished else { return }
        compaction = nil
        switch written {
        case .success(let bytes):
            if let bytes {
                queueBase = done.sequence
                queueBytes = bytes
            }
            switch JournalFile.create(at: journalPath, holding: done.tail) {
            case .success(let file):
                journal = file
                broken = false
                journalRecords = done.tailRecords
                journalBytes = done.tailBytes
                scheduleSync()
                recovered()
                logger.debug(
                    "saved state compacted",
                    metadata: [
                        "record": "\(done.sequence)", "queueBytes": "\(bytes.map(String.init) ?? "unchanged")",
                        "snapshotMilliseconds": "\(milliseconds.snapshot)", "writeMilliseconds": "\(milliseconds.write)",
                    ])
            case .failure(let failure):
                broken = true
                retryCompaction = true
                report("cannot write the saved state's journal; trying again in \(Int(Self.retryDelay)) s", file: failure.file, error: failure.error)
                scheduleCompaction(after: Self.retryDelay)
            }
        case .failure(let failure):
            queueFileStale = queueFileStale || done.staleQueueFile
            retryCompaction = true
            report("cannot save the player state; trying again in \(Int(Self.retryDelay)) s", file: failure.file, error: failure.error)
            scheduleCompaction(after: Self.retryDelay)
        }
    }

    /// Writes the base and an empty journal, here and now (start, shutdown). On `queue`.
    private func writeBaseNow(_ snapshot: SaveSnapshot, sequence: Int) {
        let written = writeBase(snapshot, sequence: sequence, queue: true)
        let journal = written.flatMap { _ in JournalFile.create(at: journalPath, holding: []) }
        switch (written, journal) {
        case (.success(let bytes), .success(let file)):
            self.journal = file
            broken = false
            queueBase = sequence
            lastQueueRecord = sequence
            queueBytes = bytes ?? 0
            journalRecords = 0
            journalBytes = 0
            file.sync()
            recovered()
        case (.failure(let failure), _), (_, .failure(let failure)):
            self.journal = nil
            broken = true
            retryCompaction = true
            queueFileStale = true
            report("cannot save the player state", file: failure.file, error: failure.error)
            if !finished { scheduleCompaction(after: Self.retryDelay) }
        }
    }

    /// Writes `player-state.json` and (with `queue`, of a full snapshot) `queue.json` as
    /// including record `sequence`; the size of `queue.json` when written. Any thread.
    private func writeBase(_ snapshot: SaveSnapshot, sequence: Int, queue: Bool) -> Result<Int?, SaveFailure> {
        var queueBytes: Int?
        if queue, snapshot.full {
            let written = writeDurably(to: queuePath) { out, flush in
                SavedQueue.writeFile(
                    rows: snapshot.rows, options: snapshot.options, journal: sequence, into: &out, flushAt: Self.chunkBytes,
                    flush: flush)
                out.append(0x0A)
            }
            switch written {
            case .success(let bytes): queueBytes = bytes
            case .failure(let failure): return .failure(failure)
            }
        }
        var object = snapshot.player.json.objectValue ?? JSONObject()
        object["journal"] = .int(Int64(sequence))
        let written = writeDurably(to: path) { out, _ in
            JSONValue.object(object).write(into: &out)
            out.append(0x0A)
        }
        if case .failure(let failure) = written { return .failure(failure) }
        return .success(queueBytes)
    }

    /// Writes what `write` makes to `path` atomically and durably: temp file, fsync, rename,
    /// fsync of the directory; the bytes written. `write` appends the text to its buffer and
    /// may call `flush` between parts to have what it holds written so far (a large file goes
    /// out `chunkBytes` at a time). Any thread.
    private func writeDurably(
        to path: String, _ write: (_ out: inout [UInt8], _ flush: (inout [UInt8]) -> Void) -> Void
    ) -> Result<Int, SaveFailure> {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(SaveFailure(file: temporary)) }
        var error: Int32?
        var written = 0
        func flush(_ bytes: inout [UInt8]) {
            if error == nil { error = writeAll(fd, bytes) }
            written += bytes.count
            bytes.removeAll(keepingCapacity: true)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.chunkBytes + 4096)
        write(&bytes, flush)
        flush(&bytes)
        if error == nil, fsync(fd) != 0 { error = errno }
        close(fd)
        guard error == nil, rename(temporary, path) == 0 else {
            let failure = SaveFailure(file: path, error: error ?? errno)
            unlink(temporary)
            return .failure(failure)
        }
        syncDirectory(of: path)
        return .success(written)
    }

    /// Logs a failure once until the next success.
    private func report(_ message: String, file: String, error: Int32) {
        guard !failing else { return }
        failing = true
        logger.warning("\(message)", metadata: ["file": "\(file)", "error": "\(String(cString: strerror(error)))"])
    }

    private func recovered() {
        guard failing else { return }
        failing = false
        logger.notice("the player state is saved again", metadata: ["directory": "\(directory)"])
    }
}

/// A file that could not be written, and why.
struct SaveFailure: Error {
    var file: String
    var error: Int32 = errno
}

/// `state.journal`, open for appending. Closed when the last reference goes (a pending `fsync`
/// holds one).
final class JournalFile: @unchecked Sendable {
    private let fd: Int32
    private let path: String
    /// The file was just made by a rename, which an `fsync` of the directory makes durable.
    private let renamed = Atomic<Bool>(true)

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// A new journal at `path` holding `pieces`, one after the other: written to a temp file,
    /// renamed over the old one.
    static func create(at path: String, holding pieces: [[UInt8]]) -> Result<JournalFile, SaveFailure> {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(SaveFailure(file: temporary)) }
        if let error = pieces.lazy.compactMap({ writeAll(fd, $0) }).first {
            close(fd)
            unlink(temporary)
            return .failure(SaveFailure(file: temporary, error: error))
        }
        // The records it holds were answered, and the journal it replaces may hold them synced:
        // on disk before the rename, or a power cut just after it could leave an empty journal.
        if !pieces.isEmpty { fdatasync(fd) }
        guard rename(temporary, path) == 0 else {
            let failure = SaveFailure(file: path)
            close(fd)
            unlink(temporary)
            return .failure(failure)
        }
        return .success(JournalFile(fd: fd, path: path))
    }

    /// Appends `bytes` with one `write` (more only when the kernel takes less); the error, or nil.
    func append(_ bytes: [UInt8]) -> Int32? {
        writeAll(fd, bytes)
    }

    /// `fdatasync`, and the directory's `fsync` after the file was made.
    func sync() {
        fdatasync(fd)
        if renamed.exchange(false, ordering: .acquiringAndReleasing) { syncDirectory(of: path) }
    }
}

/// Writes all of `bytes` to `fd`; the error, or nil.
private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if written == 0 { return EIO }
        offset += written
    }
    return nil
}

private func syncDirectory(of path: String) {
    let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0 else { return }
    fsync(fd)
    close(fd)
}
