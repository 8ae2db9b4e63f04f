import Foundation
import Glibc
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import ReelProtocol
import ReelRuntime
import ReelTestSupport
import Testing

/// The saved state through the core: a client's command is answered only once the state it left
/// is in the files (so `kill -9` after the reply loses nothing), a long queue's edit writes little,
/// and files left at any point of a compaction read back the same. Real files on ALSA's `null`
/// device; a crash is a second reader of the files while the first core still runs.
@Suite struct SavedStateTests {
    /// A core with a pipe output (off) besides the ALSA device, not started.
    func makeCore(_ directory: String) throws -> ReelCore {
        try ReelCore(
            dataDirectory: directory + "/data", output: ALSAOutput(name: "null"), timing: PCMTiming(),
            input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
            mediaRoots: [], mixer: MixerSettings(),
            outputs: [
                OutputConfiguration(name: "device", kind: .alsa(device: "null")),
                OutputConfiguration(
                    name: "pipe", kind: .pipe(path: directory + "/fifo", format: OutputFormat(sampleRate: 48000, bits: 16, channels: 2)),
                    enabled: false),
            ],
            logger: Logger(label: "test"))
    }

    func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "reel-saved-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        return directory
    }

    /// What the files in the data directory hold now, as the next start would read them.
    func loadFiles(_ directory: String, _ core: ReelCore) -> (SavedPlayerState, SavedQueue)? {
        PlayerStateFile(directory: directory + "/data", player: core.player, logger: Logger(label: "test")).load()
    }

    /// Runs a command and waits for its reply.
    func run<Value: Sendable>(_ command: (@escaping @Sendable (Value) -> Void) throws -> Void) throws -> Value {
        let done = Awaited<Value>()
        try command { done.put($0) }
        return try #require(done.get())
    }

    static func path(_ entry: SavedQueue.Entry) -> String {
        if case .file(let path) = entry.source { return path }
        return "?"
    }

    // MARK: The order: save, then reply

    /// Every command a client can send passes its reply through the save: the save comes first,
    /// then the reply, once each.
    @Test func everyCommandIsAnsweredAfterTheSaveOfTheStateItLeft() throws {
        let directory = try scratch()
        let core = try makeCore(directory)
        defer { core.shutdown() }
        let log = Locked<[String]>([])
        core.player.saves.connect { then in
            log.withLock { $0.append("saved") }
            then()
        }
        let files = try (1...4).map { index in
            let path = directory + "/\(index).wav"
            try writeWAV(path, frames: 8000 * 30)
            return path
        }
        let player = core.player
        var commands = 0
        /// Runs `command` and expects exactly one save, then its reply.
        func expectSavedFirst<Value: Sendable>(
            _ name: String, _ command: (@escaping @Sendable (Value) -> Void) throws -> Void
        ) throws {
            let before = log.current.count
            let reply: @Sendable (Value) -> Void = { _ in log.withLock { $0.append("replied") } }
            _ = try run { (done: @escaping @Sendable (Value) -> Void) in
                try command { value in
                    reply(value)
                    done(value)
                }
            }
            #expect(Array(log.current.dropFirst(before)) == ["saved", "replied"], "\(name)")
            commands += 1
        }
        for file in files {
            try expectSavedFirst("queue.add") { player.add(.file(file), at: nil, afterCurrent: false, reply: $0) }
        }
        let ids = try player.listQueue().entries.map(\.id)
        try expectSavedFirst("queue.move") { try player.moveEntry(id: ids[0], to: 2, saved: $0) }
        try expectSavedFirst("MPD move") { try player.moveEntries(range: 0..<2, to: 1, saved: $0) }
        try expectSavedFirst("MPD swapid") { try player.swapEntries(id: ids[1], with: ids[2], saved: $0) }
        try expectSavedFirst("MPD shuffle") { try player.shuffleQueue(range: nil, saved: $0) }
        try expectSavedFirst("queue.setOptions") { player.setQueueOptions(repeats: true, saved: $0) }
        try expectSavedFirst("player.load") { player.load(entry: ids[0], position: 1, playing: false, reply: $0) }
        try expectSavedFirst("player.seek") { player.seek(.absolute(2), reply: $0) }
        try expectSavedFirst("player.pause") { player.pause(reply: $0) }
        try expectSavedFirst("player.toggle") { player.toggle(reply: $0) }
        try expectSavedFirst("player.resume") { player.resume(reply: $0) }
        try expectSavedFirst("player.stop") { player.stop(reply: $0) }
        try expectSavedFirst("player.play (the queue)") { player.play(reply: $0) }
        try expectSavedFirst("player.next") { player.next(reply: $0) }
        try expectSavedFirst("player.previous") { player.previous(reply: $0) }
        try expectSavedFirst("player.play {entry}") { player.play(entry: ids[1], reply: $0) }
        try expectSavedFirst("queue.remove") { try player.removeEntries(ids: [ids[3]], followed: $0) }
        try expectSavedFirst("mixer.setVolume") { core.mixer.setVolume(30, reply: $0) }
        try expectSavedFirst("mixer.setMuted") { core.mixer.setMuted(true, reply: $0) }
        try expectSavedFirst("outputs.enable") { core.outputs.enable(1, reply: $0) }
        try expectSavedFirst("outputs.disable") { core.outputs.disable(1, reply: $0) }
        try expectSavedFirst("outputs.toggle") { core.outputs.toggle(1, reply: $0) }
        try expectSavedFirst("queue.clear") { player.clearQueue(saved: $0) }
        try expectSavedFirst("player.play {file}") { player.play(.file(files[0]), reply: $0) }
        // Refused commands too (nothing changed, but the answer still comes after a save).
        try expectSavedFirst("player.seek out of range") { player.seek(.absolute(-1), reply: $0) }
        try expectSavedFirst("mixer.setVolume 101") { core.mixer.setVolume(101, reply: $0) }
        #expect(commands == 29)
    }

    /// With the real state file: in each reply, the files already hold what the reply says.
    @Test func whenTheReplyComesTheFilesHoldTheStateItLeft() throws {
        let directory = try scratch()
        let core = try makeCore(directory)
        defer { core.shutdown() }
        core.start(resume: .no)
        let files = try (1...3).map { index in
            let path = directory + "/\(index).wav"
            try writeWAV(path, frames: 8000 * 30)
            return path
        }
        let player = core.player
        /// In the reply (the next command waits for it): the files as the next start reads them,
        /// and the core's state.
        struct Seen: Sendable {
            var files: (SavedPlayerState, SavedQueue)?
            var paths: [String]
            var options: QueueOptions
            var current: Int?
            var volume: Int?
            var outputs: [String: Bool]
        }
        func check<Value: Sendable>(_ name: String, _ command: (@escaping @Sendable (Value) -> Void) throws -> Void) throws -> Value {
            let seen = Awaited<Seen>()
            let value: Value = try run { (done: @escaping @Sendable (Value) -> Void) in
                try command { value in
                    let listing = try? player.listQueue()
                    let paths = (listing?.entries ?? []).map { entry -> String in
                        if case .file(let path) = entry.source { return path }
                        return "?"
                    }
                    seen.put(Seen(
                        files: loadFiles(directory, core), paths: paths, options: player.queueSummary.options,
                        current: listing?.summary.current.flatMap { id in listing?.entries.firstIndex { $0.id == id } },
                        volume: core.mixer.state.volume, outputs: core.outputs.saved))
                    done(value)
                }
            }
            guard let state = seen.get(), let (saved, queue) = state.files else {
                Issue.record("\(name): nothing saved")
                return value
            }
            #expect(queue.entries.map(Self.path) == state.paths, "\(name)")
            #expect(queue.options == state.options, "\(name)")
            #expect(saved.current == state.current, "\(name)")
            #expect(saved.volume == state.volume, "\(name)")
            #expect(saved.outputs == state.outputs, "\(name)")
            return value
        }
        for file in files {
            _ = try check("queue.add") { player.add(.file(file), at: 0, afterCurrent: false, reply: $0) }
        }
        let ids = try player.listQueue().entries.map(\.id)
        _ = try check("queue.move") { try player.moveEntry(id: ids[2], to: 0, saved: $0) }
        _ = try check("queue.setOptions") { player.setQueueOptions(random: true, single: .oneshot, consume: true, saved: $0) }
        let loaded = try check("player.load") { player.load(entry: ids[1], position: 4, playing: false, reply: $0) }.get()
        #expect(loaded.state == .paused)
        let sought = try check("player.seek") { player.seek(.absolute(7.25), reply: $0) }.get()
        let afterSeek = try #require(loadFiles(directory, core)).0
        #expect(afterSeek.state == .paused && afterSeek.position == sought.position && sought.position == 7.25)
        _ = try check("mixer.setVolume") { core.mixer.setVolume(23, reply: $0) }
        _ = try check("outputs.enable") { core.outputs.enable(1, reply: $0) }
        _ = try check("queue.remove") { try player.removeEntries(ids: [ids[0]], followed: $0) }
        let stopped = try check("player.stop") { player.stop(reply: $0) }.get()
        #expect(stopped.state == .stopped)
        #expect(try #require(loadFiles(directory, core)).0.state == .stopped)
        _ = try check("queue.clear") { player.clearQueue(saved: $0) }
        #expect(try #require(loadFiles(directory, core)).1.entries.isEmpty)
    }

    // MARK: What a save costs on a long queue

    /// Removing one entry of 10,000 appends a record of a few hundred bytes; the queue file is
    /// not written again.
    @Test func removingAnEntryOfALongQueueWritesASmallRecordNotTheQueue() throws {
        let directory = try scratch()
        let entries = (0..<10_000).map { SavedQueue.Entry(source: .file(path: directory + "/music/\($0).flac"), duration: 180) }
        let base = SavedQueue(entries: entries, options: QueueOptions())
        try Data(base.json.jsonBytes).write(to: URL(fileURLWithPath: directory + "/data/queue.json"))
        try Data(SavedPlayerState(current: 0, position: 0, state: .stopped).json.jsonBytes)
            .write(to: URL(fileURLWithPath: directory + "/data/player-state.json"))
        let core = try makeCore(directory)
        defer { core.shutdown() }
        core.start(resume: .no)
        let queueFile = directory + "/data/queue.json"
        let journal = directory + "/data/state.journal"
        let before = try FileManager.default.attributesOfItem(atPath: queueFile)
        let ids = try core.player.listQueue().entries.map(\.id)
        #expect(ids.count == 10_000)
        #expect(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int == 0)

        let summary = try run { try core.player.removeEntries(ids: [ids[4321]], followed: $0) }
        #expect(summary.length == 9_999)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        #expect(size > 0 && size < 1000, "one record of \(size) bytes")
        let after = try FileManager.default.attributesOfItem(atPath: queueFile)
        #expect(after[.modificationDate] as? Date == before[.modificationDate] as? Date)
        #expect(after[.size] as? Int == before[.size] as? Int)

        let (_, saved) = try #require(loadFiles(directory, core))
        #expect(saved.entries.count == 9_999)
        #expect(saved.entries.map(Self.path) == (0..<10_000).filter { $0 != 4321 }.map { directory + "/music/\($0).flac" })
    }

    /// A journal that reaches its limit is compacted into the base; what the files hold stays the
    /// queue's state throughout.
    @Test func aLongJournalIsCompactedIntoTheBase() throws {
        let directory = try scratch()
        let core = try makeCore(directory)
        defer { core.shutdown() }
        core.start(resume: .no)
        try writeWAV(directory + "/a.wav", frames: 800)
        _ = try run { core.player.add(.file(directory + "/a.wav"), at: nil, afterCurrent: false, reply: $0) }.get()
        for index in 0..<(PlayerStateFile.maximumRecords + 10) {
            _ = try run { core.player.setQueueOptions(repeats: index % 2 == 0, saved: $0) }
        }
        /// The record `queue.json` includes, and the records in the journal.
        func files() throws -> (base: Int, records: Int) {
            let queue = try JSONValue.parse(Array(Data(contentsOf: URL(fileURLWithPath: directory + "/data/queue.json"))))
            let journal = try Data(contentsOf: URL(fileURLWithPath: directory + "/data/state.journal"))
            return (queue["journal"]?.intValue ?? -1, journal.filter { $0 == 0x0A }.count)
        }
        let deadline = Date().addingTimeInterval(30)
        var seen = try files()
        while seen.base == 0 || seen.records >= 100, Date() < deadline {
            usleep(20_000)
            seen = try files()
        }
        #expect(seen.base >= PlayerStateFile.maximumRecords, "the base includes the records up to the limit")
        #expect(seen.records < 100, "the journal holds only what came after")
        let (_, saved) = try #require(loadFiles(directory, core))
        #expect(saved.entries.map(Self.path) == [directory + "/a.wav"])
        #expect(saved.options.repeats == core.player.queueSummary.options.repeats)
    }

    /// The journal is compacted at 4,096 records, or once it holds 4 times the bytes of
    /// `queue.json` (1 MiB at least): a `load` of 10,000 entries, a record of about
    /// `queue.json`'s size, no longer rewrites the whole queue after each `clear` + `load`.
    @Test func theJournalIsCompactedAtItsRecordsOrFourTimesTheQueueFile() {
        let due = PlayerStateFile.compactionDue
        let mebibyte = 1 << 20
        #expect(!due(1, mebibyte - 1, 100))
        #expect(due(1, mebibyte, 100))
        #expect(!due(2, 1_600_000, 1_600_000), "one load of the queue's size")
        #expect(!due(8, 6_399_999, 1_600_000))
        #expect(due(8, 6_400_000, 1_600_000))
        #expect(!due(PlayerStateFile.maximumRecords - 1, 1000, 100))
        #expect(due(PlayerStateFile.maximumRecords, 1000, 100))
    }

    // MARK: A full disk

    /// With no room left, commands are still answered (the failure is logged), and once there is
    /// room again the whole state is written at the next try.
    @Test(.enabled(if: getuid() == 0, "mounts a tmpfs")) func aFullDiskDelaysNoReplyAndTheStateIsWrittenOnceThereIsRoom() throws {
        let directory = try scratch()
        try #require(try TestTool.status("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", directory + "/data"]) == 0)
        defer { _ = try? TestTool.status("umount", ["-l", directory + "/data"]) }
        let core = try makeCore(directory)
        defer { core.shutdown() }
        core.start(resume: .no)
        try writeWAV(directory + "/a.wav", frames: 800)
        _ = try run { core.player.add(.file(directory + "/a.wav"), at: nil, afterCurrent: false, reply: $0) }.get()
        // Fill the filesystem.
        let filler = directory + "/data/filler"
        _ = try TestTool.status("dd", ["if=/dev/zero", "of=\(filler)", "bs=64k"])
        for index in 0..<300 {
            _ = try run { core.player.setQueueOptions(repeats: index % 2 == 0, saved: $0) }
            _ = try run { core.player.add(.file(directory + "/a.wav"), at: 0, afterCurrent: false, reply: $0) }.get()
        }
        let live = try core.player.listQueue().entries.count
        #expect(live == 301)
        #expect((loadFiles(directory, core)?.1.entries.count ?? 0) < live, "the disk was full: not all could be written")
        try FileManager.default.removeItem(atPath: filler)
        let deadline = Date().addingTimeInterval(30)
        var saved = loadFiles(directory, core)?.1.entries.count
        while saved != live, Date() < deadline {
            usleep(50_000)
            saved = loadFiles(directory, core)?.1.entries.count
        }
        #expect(saved == live, "the files hold the queue again once there is room")
    }

    // MARK: Crash safety of the files

    /// The files a compaction leaves at each point (base files written one after the other, then
    /// the journal replaced) all read back as the same state, and so do a journal cut off
    /// mid-line and files written by a reeld without a journal.
    @Test func filesLeftAtAnyPointOfACompactionReadTheSame() throws {
        let directory = try scratch()
        let data = directory + "/data"
        let core = try makeCore(directory)
        defer { core.shutdown() }
        func entry(_ name: String) -> SavedQueue.Entry { SavedQueue.Entry(source: .file(path: "/music/\(name).flac")) }
        func write(_ json: JSONValue, journal: Int?, to name: String) throws {
            var object = try #require(json.objectValue)
            if let journal { object["journal"] = .int(Int64(journal)) }
            try Data(JSONValue.object(object).jsonBytes).write(to: URL(fileURLWithPath: data + "/" + name))
        }
        func writeJournal(_ records: [JournalRecord], tail: [UInt8] = []) throws {
            try Data(records.flatMap { $0.json.jsonBytes + [0x0A] } + tail).write(to: URL(fileURLWithPath: data + "/state.journal"))
        }
        let oldQueue = SavedQueue(entries: ["a", "b", "c"].map(entry), options: QueueOptions())
        let oldPlayer = SavedPlayerState(current: 0, position: 0, state: .stopped)
        var player1 = SavedPlayerState(current: 1, position: 3, state: .paused)
        player1.volume = 50
        var player2 = SavedPlayerState(current: 2, position: 4, state: .paused)
        player2.volume = 60
        let records = [
            JournalRecord(sequence: 1, player: player1, edit: [.keep(start: 0, count: 1), .keep(start: 2, count: 1)], length: 2, options: nil),
            JournalRecord(
                sequence: 2, player: player2, edit: [.keep(start: 0, count: 2), .add([entry("d")])], length: 3,
                options: QueueOptions(repeats: true)),
        ]
        let newQueue = SavedQueue(entries: ["a", "c", "d"].map(entry), options: QueueOptions(repeats: true))
        var player3 = player2
        player3.position = 9
        let written = JournalRecord(sequence: 3, player: player3, edit: nil, length: 0, options: nil)
        func expectState(_ what: String, player: SavedPlayerState = player2) throws {
            let (state, queue) = try #require(loadFiles(directory, core), "\(what)")
            #expect(queue == newQueue, "\(what)")
            #expect(state == player, "\(what)")
        }

        // Before the compaction: the old base and the journal.
        try write(oldQueue.json, journal: 0, to: "queue.json")
        try write(oldPlayer.json, journal: 0, to: "player-state.json")
        try writeJournal(records)
        try expectState("before")
        // A record being written when the process died.
        try writeJournal(records, tail: Array(written.json.jsonBytes.prefix(40)))
        try expectState("a record cut off")
        try writeJournal(records + [written])
        try expectState("with record 3", player: player3)
        // queue.json written, player-state.json not yet; then both; then the new journal.
        try write(newQueue.json, journal: 2, to: "queue.json")
        try expectState("queue.json written", player: player3)
        try write(player2.json, journal: 2, to: "player-state.json")
        try expectState("both written", player: player3)
        try writeJournal([written])
        try expectState("journal replaced", player: player3)
        try writeJournal([])
        try expectState("journal emptied")

        // Written by a reeld without a journal (no "journal" in the base): a journal is ignored.
        try write(newQueue.json, journal: nil, to: "queue.json")
        try write(player2.json, journal: nil, to: "player-state.json")
        try writeJournal([JournalRecord(sequence: 7, player: oldPlayer, edit: [], length: 0, options: nil)])
        try expectState("older files")
    }
    /// A new journal holds what was recorded while a compaction ran, kept as the pieces the
    /// records were written in (a record of 10,000 entries is some 64 KiB pieces): every piece,
    /// in order, with nothing between them; and later records go after them.
    @Test func aNewJournalHoldsEveryPieceInOrder() throws {
        let directory = try scratch()
        let path = directory + "/data/state.journal"
        let big = [UInt8](repeating: 0x61, count: PlayerStateFile.chunkBytes + 7)
        let pieces: [[UInt8]] = [Array("{\"seq\":1}\n{".utf8), big, [], Array("}\n".utf8)]
        let journal = try JournalFile.create(at: path, holding: pieces).get()
        #expect(journal.append(Array("{\"seq\":3}\n".utf8)) == nil)
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written == pieces.flatMap { $0 } + Array("{\"seq\":3}\n".utf8))
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))

        _ = try JournalFile.create(at: path, holding: []).get()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
    }

    /// The same for a repetitive queue (a playlist that names its files again): a version 1
    /// base, an add recorded with each entry once and its order, then the compaction's version 2
    /// base; at each point the files read back as the same queue.
    @Test func filesLeftAtAnyPointOfACompactionOfARepetitiveQueueReadTheSame() throws {
        let directory = try scratch()
        let data = directory + "/data"
        let core = try makeCore(directory)
        defer { core.shutdown() }
        func entry(_ name: String) -> SavedQueue.Entry { SavedQueue.Entry(source: .file(path: "/music/\(name).flac"), duration: 1) }
        func write(_ bytes: [UInt8], to name: String) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: data + "/" + name))
        }
        func writeJournal(_ records: [JournalRecord], tail: [UInt8] = []) throws {
            try write(records.flatMap { $0.jsonBytes + [0x0A] } + tail, to: "state.journal")
        }
        func withJournal(_ json: JSONValue, _ journal: Int) throws -> [UInt8] {
            var object = try #require(json.objectValue)
            object["journal"] = .int(Int64(journal))
            return JSONValue.object(object).jsonBytes
        }
        // A version 1 base as an older reeld wrote it: a, b, a.
        let oldJSON: JSONObject = [
            "version": 1, "entries": .array(["a", "b", "a"].map(entry).map(\.json)),
            "options": SavedQueue.json(of: QueueOptions()),
        ]
        let player = SavedPlayerState(current: 0, position: 0, state: .stopped)
        var player1 = SavedPlayerState(current: 3, position: 2, state: .paused)
        player1.volume = 70
        // Record 1: 1,000 entries added at the end, c and d in turn.
        let order = (0..<1000).map { $0 % 2 }
        let records = [
            JournalRecord(
                sequence: 1, player: player1,
                edit: [.keep(start: 0, count: 3), .add(SavedEntries(entries: [entry("c"), entry("d")], order: order))],
                length: 1003, options: nil),
        ]
        let expected = ["a", "b", "a"].map(entry) + order.map { [entry("c"), entry("d")][$0] }
        let newQueue = SavedQueue(
            saved: SavedEntries(entries: ["a", "b", "c", "d"].map(entry), order: [0, 1, 0] + order.map { $0 + 2 }),
            options: QueueOptions())
        // (A version 1 base is read as it is, a, b, a: nothing is hashed to find the repeats.)
        func expectState(_ what: String, distinct: Int = 5) throws {
            let (state, queue) = try #require(loadFiles(directory, core), "\(what)")
            #expect(queue.entries == expected, "\(what)")
            #expect(queue.saved.entries.count == distinct, "\(what): each entry of the add once")
            #expect(state == player1, "\(what)")
        }

        try write(withJournal(JSONValue.object(oldJSON), 0), to: "queue.json")
        try write(withJournal(player.json, 0), to: "player-state.json")
        try writeJournal([])
        try #require(loadFiles(directory, core)?.1.entries == ["a", "b", "a"].map(entry), "the version 1 base")
        // The add's record cut off mid-line: it was never answered.
        try writeJournal([], tail: Array(records[0].jsonBytes.prefix(200)))
        #expect(loadFiles(directory, core)?.1.entries == ["a", "b", "a"].map(entry), "a record cut off")
        try writeJournal(records)
        try expectState("with the add's record")
        // The compaction: queue.json (version 2) written, player-state.json not yet; then both;
        // then the new journal.
        let queueBytes = newQueue.fileBytes(journal: 1)
        #expect(queueBytes.count < 2_500, "the base holds each entry once: \(queueBytes.count) bytes")
        try write(queueBytes, to: "queue.json")
        try expectState("queue.json written", distinct: 4)
        try write(withJournal(player1.json, 1), to: "player-state.json")
        try expectState("both written", distinct: 4)
        try writeJournal([])
        try expectState("journal replaced", distinct: 4)
    }
}
