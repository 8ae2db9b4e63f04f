import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import Testing

/// The queue driving the player through the core, on ALSA's `null` device (unpaced: a file
/// plays out in milliseconds), with real files and a real library. No socket.
///
/// Playing on that device, whatever follows a command may already be over when the test looks:
/// a check of what a command did reads the queue summary that command published (`QueueLog`),
/// or is made while paused or stopped; waits poll for a state, never sleep.
@Suite struct QueuePlaybackTests {
    func add(_ core: ReelCore, _ addition: QueueAddition, at position: Int? = nil, next: Bool = false) -> Result<[QueueEntry], ReelError> {
        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(addition, at: position, afterCurrent: next) { added.put($0) }
        return added.get() ?? .failure(ReelError(.ioError, "no reply"))
    }

    func run(_ start: (@escaping PlayerController.Reply) -> Void) -> Result<PlayerState, ReelError> {
        let done = Awaited<Result<PlayerState, ReelError>>()
        start { done.put($0) }
        return done.get() ?? .failure(ReelError(.ioError, "no reply"))
    }

    func waitUntil(timeout: Double = 10, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    func files(_ directory: String, count: Int) throws -> [String] {
        try (1...count).map { index in
            let path = directory + "/t\(index).wav"
            try writeWAV(path, frames: 800)
            return path
        }
    }

    @Test func theQueuePlaysEveryEntryInOrderAndEndsWithNoCurrentEntry() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        let paths = try files(directory, count: 3)
        for path in paths { _ = try add(core, .file(path)).get() }
        let first = try #require(try core.player.listQueue().entries.first)
        let started = try run { core.player.play(entry: first.id, reply: $0) }.get()
        #expect(started.entry == first.id)
        #expect(waitUntil { core.player.queueSummary.current == nil && core.player.state.state == .stopped })
        let summary = core.player.queueSummary
        #expect(summary.length == 3, "nothing is consumed without consume")
        #expect(core.player.state.entry == nil)
        // play (or resume) starts again at the first entry.
        let again = try run { core.player.play(reply: $0) }.get()
        #expect(again.entry == first.id)
    }

    @Test func consumeRemovesEachEntryOnceTheNextStarts() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        for path in try files(directory, count: 4) { _ = try add(core, .file(path)).get() }
        _ = core.player.setQueueOptions(consume: true)
        let first = try #require(try core.player.listQueue().entries.first)
        _ = try run { core.player.play(entry: first.id, reply: $0) }.get()
        #expect(waitUntil { core.player.state.state == .stopped && core.player.queueSummary.length == 0 },
                "left: \(core.player.queueSummary)")
    }

    @Test func singleStopsAfterTheEntry() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        for path in try files(directory, count: 3) { _ = try add(core, .file(path)).get() }
        _ = core.player.setQueueOptions(single: .oneshot)
        let entries = try core.player.listQueue().entries
        _ = try run { core.player.play(entry: entries[1].id, reply: $0) }.get()
        #expect(waitUntil { core.player.state.state == .stopped })
        #expect(waitUntil { core.player.queueSummary.options.single == .off }, "oneshot goes off once it stopped playback")
        #expect(core.player.queueSummary.current == entries[1].id)
    }

    @Test func nextConsumesTheEntryItLeavesAndPreviousOnTheFirstRestartsIt() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        for path in try files(directory, count: 3) { _ = try add(core, .file(path)).get() }
        let ids = try core.player.listQueue().entries.map(\.id)
        _ = try run { core.player.load(entry: ids[0], position: 0, playing: false, reply: $0) }.get()
        let restarted = try run { core.player.previous(reply: $0) }.get()
        #expect(restarted.entry == ids[0], "previous on the first entry restarts it")
        _ = try run { core.player.load(entry: ids[0], position: 0, playing: false, reply: $0) }.get()
        _ = core.player.setQueueOptions(consume: true)
        let log = QueueLog(core.player.queueChanges)
        let next = try run { core.player.next(reply: $0) }.get()
        #expect(next.entry == ids[1])
        // The queue as `next` left it (`next` plays, as MPD's does when paused, and the entries
        // after it may have played out and been consumed by now).
        let skipped = try #require(log.summaries.first { $0.current == ids[1] })
        #expect(skipped.length == 2, "next with consume removes the entry it leaves")
        #expect(skipped.next == ids[2])
        #expect(core.player.entry(id: ids[0]) == nil)
    }

    /// As MPD: removing the current entry while stopped leaves no current entry, and the player
    /// shows none (status, stream and queue agree); `play` and `resume` then start at the first
    /// entry, not at the one that followed the removed one.
    @Test(arguments: ["play", "resume"])
    func removingTheCurrentEntryWhileStoppedLeavesNoneAndPlayStartsAtTheFirst(command: String) throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        for path in try files(directory, count: 4) { _ = try add(core, .file(path)).get() }
        let ids = try core.player.listQueue().entries.map(\.id)
        _ = try run { core.player.load(entry: ids[1], position: 0, playing: false, reply: $0) }.get()
        let stopped = try run { core.player.stop(reply: $0) }.get()
        #expect(stopped.state == .stopped && stopped.entry == ids[1] && stopped.source != nil)
        #expect(core.player.queueSummary.current == ids[1])

        // Another entry goes: the current one stays, and so does the player's.
        #expect(try core.player.removeEntries(ids: [ids[3]]).current == ids[1])
        #expect(core.player.state.entry == ids[1])

        let removed = try core.player.removeEntries(ids: [ids[1]])
        #expect(removed.current == nil && removed.next == nil && removed.length == 2)
        #expect(core.player.queueSummary.current == nil)
        let state = core.player.state
        #expect(state.state == .stopped)
        #expect(state.entry == nil && state.source == nil && state.duration == nil && state.format == nil)
        let pushed = core.player.changes.latest.value
        #expect(pushed.entry == nil && pushed.source == nil, "the player's stream still shows the removed entry")

        let started = try run { command == "play" ? core.player.play(reply: $0) : core.player.resume(reply: $0) }.get()
        #expect(started.entry == ids[0], "\(command) starts at the first entry")
    }

    /// Removing the paused entry stops with the next one current, never loaded: the stopped
    /// player shows that entry (status and stream agree with the queue), and resume plays it.
    @Test func removingThePausedEntryStopsShowingTheNextOne() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        try writeWAV(directory + "/long.wav", frames: 16000)
        for path in try files(directory, count: 2) + [directory + "/long.wav"] { _ = try add(core, .file(path)).get() }
        let entries = try core.player.listQueue().entries
        let ids = entries.map(\.id)
        _ = try run { core.player.load(entry: ids[1], position: 0, playing: false, reply: $0) }.get()
        let removed = try core.player.removeEntries(ids: [ids[1]])
        #expect(removed.current == ids[2])
        #expect(waitUntil { core.player.changes.latest.value.state == .stopped })
        for (what, state) in [("status", core.player.state), ("stream", core.player.changes.latest.value)] {
            #expect(state.state == .stopped, "\(what)")
            #expect(state.entry == ids[2], "\(what)")
            #expect(state.source == entries[2].source, "\(what)")
            #expect(state.duration == 2 && state.format == entries[2].format, "\(what): \(state)")
        }
        #expect(entries[2].format != nil)
        let resumed = try run { core.player.resume(reply: $0) }.get()
        #expect(resumed.entry == ids[2])
    }

    // MARK: Swapping, moving a range, shuffling

    @Test func swapMoveAndShufflePublishTheQueueAndReportTheirChanges() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        let player = core.player
        for path in try files(directory, count: 6) { _ = try add(core, .file(path)).get() }
        let ids = try player.listQueue().entries.map(\.id)
        var last = player.queueChanges.latest
        /// The command's summary is the one published, once, and both versions went up.
        func expectPublished(_ summary: QueueSummary, _ what: String) {
            let latest = player.queueChanges.latest
            #expect(latest.value == summary, "\(what)")
            #expect(latest.version == last.version + 1, "\(what)")
            #expect(summary.version > last.value.version, "\(what)")
            #expect(summary.entriesVersion > last.value.entriesVersion, "\(what)")
            last = latest
        }

        let swapped = try player.swapEntries(id: ids[0], with: ids[5])
        expectPublished(swapped, "swap")
        #expect(player.changedEntries(since: swapped.entriesVersion - 1).map(\.id) == [ids[5], ids[0]])
        #expect(player.entry(at: 0)?.id == ids[5])
        #expect(player.entry(id: ids[0])?.position == 5)

        let moved = try player.moveEntries(range: 1..<3, to: 3)
        expectPublished(moved, "move")
        #expect(try player.listQueue().entries.map(\.id) == [ids[5], ids[3], ids[4], ids[1], ids[2], ids[0]])
        #expect(player.changedEntries(since: moved.entriesVersion - 1).map(\.position) == [1, 2, 3, 4])

        let shuffled = try player.shuffleQueue(range: 2..<6)
        expectPublished(shuffled, "shuffle")
        #expect(player.changedEntries(since: shuffled.entriesVersion - 1).map(\.position) == [2, 3, 4, 5])
        #expect(player.changedEntries(since: 0).count == 6)
        #expect(shuffled.length == 6)

        // Refused: nothing changes and nothing is published.
        #expect(throws: ReelError(.notFound, "no queue entry with id 999")) {
            try player.swapEntries(id: ids[1], with: 999)
        }
        #expect(throws: ReelError(.outOfRange, "cannot move positions 4 to 6: the queue has 6 entries")) {
            try player.moveEntries(range: 4..<7, to: 0)
        }
        #expect(throws: ReelError.self) { try player.shuffleQueue(range: 7..<8) }
        #expect(player.queueChanges.latest.version == last.version)
        #expect(player.entry(id: 999) == nil && player.entry(at: 6) == nil)
    }

    @Test func shufflingWhilePausedKeepsTheCurrentEntryAndWhileStoppedLeavesNone() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        for path in try files(directory, count: 5) { _ = try add(core, .file(path)).get() }
        let ids = try core.player.listQueue().entries.map(\.id)
        _ = try run { core.player.load(entry: ids[3], position: 0, playing: false, reply: $0) }.get()
        #expect(core.player.state.state == .paused)
        let paused = try core.player.shuffleQueue()
        #expect(paused.current == ids[3])
        #expect(core.player.entry(at: 0)?.id == ids[3])
        #expect(core.player.state.entry == ids[3])
        _ = try run { core.player.stop(reply: $0) }.get()
        #expect(core.player.queueSummary.current == ids[3])
        let stopped = try core.player.shuffleQueue(range: 1..<5)
        #expect(stopped.current == nil)
        #expect(core.player.changes.latest.value.entry == nil, "the player's stream still shows the entry")
    }

    /// Records every queue summary published: each is taken on the publishing thread, under the
    /// player's lock, before the next change can be published, so none is missed.
    final class QueueLog: @unchecked Sendable {
        private let lock = NSLock()
        private let feed: StateFeed<QueueSummary>
        private var consumer: StateFeed<QueueSummary>.Consumer?
        private var seen: [QueueSummary] = []

        init(_ feed: StateFeed<QueueSummary>) {
            self.feed = feed
            let consumer = feed.addConsumer { [weak self] in self?.record() }
            lock.withLock { self.consumer = consumer }
            _ = feed.take(for: consumer)
        }

        /// On the publishing thread: take the summary, so the next publish wakes this again.
        private func record() {
            lock.withLock {
                guard let consumer else { return }
                seen.append(feed.take(for: consumer).value)
            }
        }

        /// The summaries published since this log was made, in order.
        var summaries: [QueueSummary] { lock.withLock { seen } }

        /// The entries that were current, in order, each once per stretch.
        var played: [Int] {
            summaries.reduce(into: []) { played, summary in
                if let current = summary.current, played.last != current { played.append(current) }
            }
        }
    }

    /// An edit while the first entry is paused, with the next already lined up: playback
    /// follows the queue as edited (the chain is brought in line).
    @Test(arguments: ["swap", "move", "shuffle"])
    func anEditWhilePausedChangesWhatPlaysNext(edit: String) throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        try writeWAV(directory + "/long.wav", frames: 8000 * 20)
        _ = try add(core, .file(directory + "/long.wav")).get()
        for path in try files(directory, count: 4) { _ = try add(core, .file(path)).get() }
        let ids = try core.player.listQueue().entries.map(\.id)
        let log = QueueLog(core.player.queueChanges)
        _ = try run { core.player.load(entry: ids[0], position: 0, playing: false, reply: $0) }.get()
        #expect(waitUntil { core.player.engine.snapshot.lined.count == 2 }, "the entry after it is lined up")
        switch edit {
        case "swap": _ = try core.player.swapEntries(id: ids[1], with: ids[4])
        case "move": _ = try core.player.moveEntries(range: 3..<5, to: 1)
        default:
            // Unseeded: a shuffle of four entries leaves them as they were once in 24 times.
            for _ in 0..<20 {
                _ = try core.player.shuffleQueue()
                if try core.player.listQueue().entries.map(\.id) != ids { break }
            }
        }
        let order = try core.player.listQueue().entries.map(\.id)
        #expect(order.first == ids[0])
        #expect(order != ids)
        // The chain is brought in line on the player's queue, which sends the engine the new
        // line-up before the resume below.
        core.player.work.sync {}
        _ = try run { core.player.resume(reply: $0) }.get()
        #expect(waitUntil { core.player.state.state == .stopped && core.player.queueSummary.current == nil })
        #expect(log.played == order, "played \(log.played), the queue is \(order)")
    }

    /// A regression: an offset near Int.max overflowed and killed the daemon.
    @Test func aVolumeOffsetOfAnySizeIsClamped() throws {
        let (core, _) = try makeCore()
        defer { core.shutdown() }
        for (offset, expected) in [(Int.max, 100), (Int.min, 0), (-30, 0), (45, 45)] {
            let set = Awaited<Result<MixerState, ReelError>>()
            core.mixer.setVolume(offset: offset) { set.put($0) }
            #expect((try set.get()?.get())?.volume == expected, "offset \(offset)")
        }
    }

    @Test func badInputIsRefusedAndChangesNothing() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        for path in try files(directory, count: 2) { _ = try add(core, .file(path)).get() }
        let before = core.player.queueSummary

        #expect(throws: ReelError.self) { try core.player.removeEntries(ids: [999]) }
        #expect(throws: ReelError.self) { try core.player.moveEntry(id: 1, to: 5) }
        #expect(throws: ReelError.self) { try core.player.moveEntry(id: 999, to: 0) }
        if case .failure(let error) = add(core, .file(directory + "/t1.wav"), at: 7) {
            #expect(error.reason == .outOfRange)
        } else {
            Issue.record("adding at position 7 of 2 succeeded")
        }
        // A file that does not decode, and one that is not there.
        FileManager.default.createFile(atPath: directory + "/noise.wav", contents: Data(repeating: 7, count: 4096))
        if case .failure(let error) = add(core, .file(directory + "/noise.wav")) {
            #expect(error.reason == .unsupportedFormat || error.reason == .corruptFile, "\(error)")
        } else {
            Issue.record("a file that does not decode was added")
        }
        if case .failure(let error) = add(core, .file(directory + "/absent.wav")) {
            #expect(error.reason == .notFound)
        } else {
            Issue.record("a missing file was added")
        }
        // A folder with no recordings.
        let folder = Awaited<Result<Item, ReelError>>()
        core.library.write({ store throws(ReelError) in try store.createFolder(name: "Empty") }) { folder.put($0) }
        _ = try #require(try folder.get()?.get())
        if case .failure(let error) = add(core, .recording(.path("/Empty"))) {
            #expect(error.reason == .notFound)
            #expect(error.message.contains("/Empty"))
        } else {
            Issue.record("an empty folder was added")
        }
        if case .failure(let error) = run({ core.player.play(entry: 999, reply: $0) }) {
            #expect(error.reason == .notFound)
        } else {
            Issue.record("playing entry 999 succeeded")
        }
        if case .failure(let error) = run({ core.player.next(reply: $0) }) {
            #expect(error.reason == .notPlaying)
        } else {
            Issue.record("next while stopped succeeded")
        }
        let setVolume = Awaited<Result<MixerState, ReelError>>()
        core.mixer.setVolume(101) { setVolume.put($0) }
        #expect((try? setVolume.get()?.get()) == nil)
        #expect(core.mixer.state.volume == 100)
        #expect(core.player.queueSummary == before, "a refused command changed the queue")
    }

    @Test func aFolderAddsItsRecordingsByNameThenItsSubfoldersAndADeletedRecordingLeaves() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        let made = Awaited<Result<[Item], ReelError>>()
        core.library.write({ store throws(ReelError) in
            let album = try store.createFolder(name: "Album")
            let disc = try store.createFolder(parent: .id(album.id), name: "Disc 2")
            return [album, disc]
        }) { made.put($0) }
        _ = try #require(try made.get()?.get())
        for (name, folder) in [("b", "/Album"), ("a", "/Album"), ("c", "/Album/Disc 2")] {
            let path = directory + "/\(name).wav"
            try writeWAV(path)
            let imported = Awaited<Result<Item, ReelError>>()
            core.library.importFile(path: path, folder: .path(folder), name: name) { imported.put($0) }
            _ = try #require(try imported.get()?.get())
        }
        let added = try add(core, .recording(.path("/Album"))).get()
        #expect(added.map { entryPath($0) } == ["/Album/a", "/Album/b", "/Album/Disc 2/c"])
        // A rename is followed; a deletion removes the entry.
        let renamed = Awaited<Result<Item, ReelError>>()
        core.library.write({ store throws(ReelError) in try store.rename(.path("/Album"), to: "LP") }) { renamed.put($0) }
        _ = try #require(try renamed.get()?.get())
        #expect(waitUntil { (try? core.player.listQueue().entries.map { entryPath($0) }) == ["/LP/a", "/LP/b", "/LP/Disc 2/c"] },
                "\(String(describing: try? core.player.listQueue().entries.map { entryPath($0) }))")
        let deleted = Awaited<Result<Int, ReelError>>()
        core.library.write({ store throws(ReelError) in try store.delete(.path("/LP/b")) }) { deleted.put($0) }
        _ = try #require(try deleted.get()?.get())
        #expect(waitUntil { core.player.queueSummary.length == 2 })
    }

    func entryPath(_ entry: QueueEntry) -> String {
        switch entry.source {
        case .file(let path): path
        case .item(_, let path, _): path
        case .url(let url, _, _): url
        }
    }

    @Test func theQueueAndVolumeSurviveARestartOfTheCore() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try writeWAV(directory + "/long.wav", frames: 8000 * 60)
        try writeWAV(directory + "/short.wav", frames: 800)
        do {
            let core = try makeCore(at: directory)
            _ = try add(core, .file(directory + "/short.wav")).get()
            let long = try add(core, .file(directory + "/long.wav")).get()[0]
            _ = core.player.setQueueOptions(repeats: true, single: .on)
            _ = try run { core.player.load(entry: long.id, position: 12.5, playing: false, reply: $0) }.get()
            let volume = Awaited<Result<MixerState, ReelError>>()
            core.mixer.setVolume(35) { volume.put($0) }
            _ = try #require(try volume.get()?.get())
            core.shutdown()
        }
        let core = try makeCore(at: directory)
        defer { core.shutdown() }
        core.start(resume: .paused)
        #expect(waitUntil { core.player.state.state == .paused })
        let state = core.player.state
        let listing = try core.player.listQueue()
        #expect(listing.entries.map { entryPath($0) } == [directory + "/short.wav", directory + "/long.wav"])
        #expect(state.entry == listing.entries[1].id)
        #expect(abs(state.position - 12.5) < 0.01)
        #expect(listing.summary.options == QueueOptions(repeats: true, single: .on))
        #expect(core.mixer.state.volume == 35)
    }
}

extension QueuePlaybackTests {
    /// A player saved stopped comes back stopped at its current entry, not loaded: it shows that
    /// entry as the queue knows it, as after `stop`; resume plays it.
    @Test func aPlayerSavedStoppedShowsItsCurrentEntryAfterARestart() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try writeWAV(directory + "/a.wav", frames: 800)
        try writeWAV(directory + "/b.wav", frames: 16000)
        let before: PlayerState
        do {
            let core = try makeCore(at: directory)
            _ = try add(core, .file(directory + "/a.wav")).get()
            let b = try add(core, .file(directory + "/b.wav")).get()[0]
            _ = try run { core.player.load(entry: b.id, position: 1, playing: false, reply: $0) }.get()
            before = try run { core.player.stop(reply: $0) }.get()
            #expect(before.entry == b.id)
            core.shutdown()
        }
        let core = try makeCore(at: directory)
        defer { core.shutdown() }
        core.start(resume: .paused)
        let listing = try core.player.listQueue()
        let current = try #require(listing.summary.current)
        #expect(current == listing.entries[1].id)
        for (what, state) in [("status", core.player.state), ("stream", core.player.changes.latest.value)] {
            #expect(state.state == .stopped, "\(what)")
            #expect(state.entry == current, "\(what)")
            #expect(state.source == before.source && state.source == listing.entries[1].source, "\(what)")
            #expect(state.duration == before.duration && state.format == before.format, "\(what): \(state)")
            #expect(state.position == 0, "\(what)")
        }
        let resumed = try run { core.player.resume(reply: $0) }.get()
        #expect(resumed.entry == current)
    }
}

/// The hardware mixer through the core, on ALSA's `pulse` control device: its `Master` is the
/// PulseAudio sink's volume (no dB range: the raw path), checked with `pactl`.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"] != nil,
                             "needs the PulseAudio null sink that scripts/test starts"))
struct HardwareMixerTests {
    func pactl(_ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test func aSettingReachesTheSinkAndAChangeMadeElsewhereIsPublished() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try pactl("set-sink-volume", "@DEFAULT_SINK@", "100%")
        let core = try ReelCore(
            dataDirectory: directory + "/data", output: ALSAOutput(name: "null"), timing: PCMTiming(),
            input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(), mediaRoots: [],
            mixer: MixerSettings(kind: .hardware, device: "pulse"), logger: Logger(label: "test"))
        defer { core.shutdown() }
        #expect(core.mixer.state.kind == .hardware)
        #expect(core.mixer.state.control == "Master")
        let set = Awaited<Result<MixerState, ReelError>>()
        core.mixer.setVolume(37) { set.put($0) }
        #expect((try set.get()?.get())?.volume == 37)
        #expect(try pactl("get-sink-volume", "@DEFAULT_SINK@").contains(" 37%"))
        _ = try pactl("set-sink-volume", "@DEFAULT_SINK@", "60%")
        let deadline = Date().addingTimeInterval(5)
        while core.mixer.changes.latest.value.volume != 60 && Date() < deadline { usleep(20_000) }
        #expect(core.mixer.changes.latest.value.volume == 60, "a change made with pactl was not published")
        _ = try pactl("set-sink-volume", "@DEFAULT_SINK@", "100%")
    }

    /// With the hardware mixer, the volume is the sink's and ReplayGain stays in software: in
    /// `track` mode at volume 40, each file comes out at its level moved by its own track gain,
    /// and no more (the samples are not scaled by the volume). In this suite, which owns the
    /// sink's volume.
    @Test func replayGainStaysInSoftwareWithTheHardwareMixer() throws {
        let directory = NSTemporaryDirectory() + "reel-rg-hw-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rg = ReplayGainCaptureTests()
        let fixture = try rg.fixture(in: directory)
        let frames = ReplayGainCaptureTests.seconds * ReplayGainCaptureTests.rate
        let captured = try rg.capture(
            fixture, mode: .track, directory: directory, mixer: MixerSettings(kind: .hardware, device: "pulse"), volume: 40)
        defer { _ = try? pactl("set-sink-volume", "@DEFAULT_SINK@", "100%") }
        #expect(try pactl("get-sink-volume", "@DEFAULT_SINK@").contains(" 40%"))
        #expect(captured.count == 2 * frames * 2, "the join lost or added frames: \(captured.count / 2) of \(2 * frames)")
        guard captured.count == 2 * frames * 2 else { return }
        let levels = [rg.rms(captured[0..<(frames * 2)]), rg.rms(captured[(frames * 2)...])]
        for index in 0..<2 {
            let expected = rg.rms(fixture.sources[index][...]) + (try rg.tagged(fixture.files[index], "track"))
            #expect(abs(levels[index] - expected) < 0.05, "file \(index): \(levels[index]) dBFS, its track gain gives \(expected)")
        }
    }
}

extension QueuePlaybackTests {
    /// An MP3 without a Xing/Info tag longer than a small file: 10 s of 8 kHz mono at a constant
    /// 64 kb/s, 30 times over (300 s, 2.4 MB).
    func writeUntaggedMP3(_ path: String) throws {
        try writeWAV(path + ".wav", frames: 8000 * 10)
        let lame = Process()
        lame.executableURL = URL(fileURLWithPath: "/usr/bin/lame")
        lame.arguments = ["--quiet", "-t", "-b", "64", path + ".wav", path + ".part"]
        try lame.run()
        lame.waitUntilExit()
        #expect(lame.terminationStatus == 0)
        let segment = try Data(contentsOf: URL(fileURLWithPath: path + ".part"))
        try Data((0..<30).flatMap { _ in segment }).write(to: URL(fileURLWithPath: path))
    }

    /// Added to the queue, the file's entry shows an estimate, marked so; the estimate is not
    /// saved as a length (after a restart the entry has none until it is opened); loaded, the
    /// player and the entry show the count once it ends, with no estimate left, paused as it is.
    @Test func anUntaggedMP3ShowsAnEstimateUntilItIsCountedAndNoEstimateIsSaved() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/long.mp3"
        try writeUntaggedMP3(path)
        let estimate: Double
        do {
            let core = try makeCore(at: directory)
            let entry = try add(core, .file(path)).get()[0]
            #expect(entry.durationEstimated)
            estimate = try #require(entry.duration)
            #expect(try core.player.listQueue().entries.first?.durationEstimated == true)
            core.shutdown()
        }
        let core = try makeCore(at: directory)
        defer { core.shutdown() }
        core.start(resume: .paused)
        let restored = try #require(try core.player.listQueue().entries.first)
        #expect(restored.duration == nil)
        #expect(!restored.durationEstimated)
        _ = try run { core.player.load(entry: restored.id, position: 0, playing: false, reply: $0) }.get()
        #expect(waitUntil { !core.player.state.durationEstimated && core.player.state.duration != nil })
        let state = core.player.state
        #expect(state.state == .paused)
        let exact = try #require(state.duration)
        // Each copy decodes to a little more than 10 s (LAME's delay and padding, untrimmed
        // without its tag); at a constant bitrate the estimate is right to a frame (72 ms).
        #expect(exact > 300)
        #expect(abs(estimate - exact) < 0.08, "estimate \(estimate) s, counted \(exact) s")
        #expect(waitUntil { (try? core.player.listQueue().entries.first?.durationEstimated) == false })
        #expect(try core.player.listQueue().entries.first?.duration == exact)
    }
}
