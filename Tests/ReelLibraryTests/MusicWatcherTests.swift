// MusicWatcher on real inotify: the batches it hands over for renames, moves in and out, files
// being written, and a queue overflow.
import Foundation
import Logging
import Synchronization
import Testing

@testable import ReelLibrary

/// What a watcher reported, and a gate its handler waits at while one is set (the watcher's
/// thread stalls, as behind a slow consumer).
final class ReportLog: Sendable {
    let reports = Mutex<[MusicWatcher.Report]>([])
    let gate = Mutex<DispatchSemaphore?>(nil)
}

/// A watcher over a temporary music folder, collecting its reports.
final class WatcherProbe: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let tree: MusicTree
    let watcher: MusicWatcher
    let log = ReportLog()

    init() {
        tree = MusicTree(directory.file("Music"))
        let log = self.log
        watcher = MusicWatcher(
            roots: [tree.root], extensions: MusicTestSupport.audioExtensions, logger: Logger(label: "test"), isPresent: { root in FileManager.default.fileExists(atPath: root) },
            handler: { report in
                log.reports.withLock { $0.append(report) }
                log.gate.withLock { $0 }?.wait()
            })
        watcher.start()
    }

    deinit { watcher.stop() }

    var batches: [MusicWatchBatch] {
        log.reports.withLock { reports in
            reports.compactMap { report in
                if case .changes(let batch) = report { return batch }
                return nil
            }
        }
    }

    func path(_ relative: String) -> MusicPath { MusicPath(root: tree.root, relativePath: relative) }

    /// Waits up to 20 s for `count` batches in all.
    func waitForBatches(_ count: Int) -> [MusicWatchBatch] {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let batches = self.batches
            if batches.count >= count { return batches }
            usleep(10_000)
        }
        Issue.record("fewer than \(count) batches in 20 s")
        return batches
    }
}

@Suite struct MusicWatcherTests {
    @Test func aRenameIsAMoveAndAMoveOutIsARemoval() throws {
        let probe = WatcherProbe()
        probe.tree.add("Album/a.flac", title: "A")
        let first = probe.waitForBatches(1)
        #expect(first.last?.changed == [probe.path("Album")])

        probe.tree.move("Album/a.flac", "Album/b.flac")
        let second = probe.waitForBatches(2).last
        #expect(second?.moves == [MusicMove(from: probe.path("Album/a.flac"), to: probe.path("Album/b.flac"))])
        #expect(second?.changed == [probe.path("Album/b.flac")])

        try FileManager.default.moveItem(atPath: probe.tree.path("Album"), toPath: probe.directory.file("Away"))
        let third = probe.waitForBatches(3).last
        #expect(third?.moves == [] && third?.changed == [probe.path("Album")])

        // Renamed to a name that is not audio: gone. From a hidden name: new.
        probe.tree.add("c.flac")
        _ = probe.waitForBatches(4)
        probe.tree.move("c.flac", "c.flac.bak")
        let fifth = probe.waitForBatches(5).last
        #expect(fifth?.moves == [] && fifth?.changed == [probe.path("c.flac")])
        probe.tree.add(".incoming/d.flac")
        probe.tree.move(".incoming/d.flac", "d.flac")
        let sixth = probe.waitForBatches(6).last
        #expect(sixth?.moves == [] && sixth?.changed == [probe.path("d.flac")])
    }

    @Test func aMoveFromOneMusicFolderToAnotherIsAMove() throws {
        let directory = TemporaryDirectory()
        let first = MusicTree(directory.file("One"))
        let second = MusicTree(directory.file("Two"))
        first.add("Album/a.flac")
        let log = ReportLog()
        let watcher = MusicWatcher(
            roots: [first.root, second.root], extensions: MusicTestSupport.audioExtensions, logger: Logger(label: "test"), isPresent: { _ in true },
            handler: { report in log.reports.withLock { $0.append(report) } })
        watcher.start()
        defer { watcher.stop() }
        try FileManager.default.moveItem(atPath: first.path("Album"), toPath: second.path("Moved"))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, log.reports.withLock({ $0.isEmpty }) { usleep(10_000) }
        let from = MusicPath(root: first.root, relativePath: "Album")
        let to = MusicPath(root: second.root, relativePath: "Moved")
        #expect(log.reports.withLock { $0 } == [.changes(MusicWatchBatch(moves: [MusicMove(from: from, to: to)], changed: [to]))])
        // The folder's watch follows it into the other music folder.
        second.add("Moved/b.flac")
        let later = Date().addingTimeInterval(20)
        while Date() < later, log.reports.withLock({ $0.count < 2 }) { usleep(10_000) }
        #expect(log.reports.withLock { $0.last } == .changes(MusicWatchBatch(changed: [to.appending("b.flac")])))
    }

    @Test func aFileOpenForWritingIsHeldBackUntilItsClose() throws {
        let probe = WatcherProbe()
        let handle = open(probe.tree.path("slow.flac"), O_CREAT | O_WRONLY, 0o644)
        #expect(handle >= 0)
        probe.tree.add("other.flac")
        let first = probe.waitForBatches(1).last
        #expect(first?.changed == [probe.path("other.flac")])
        #expect(first?.writing == [probe.path("slow.flac")])
        close(handle)
        let second = probe.waitForBatches(2).last
        #expect(second?.changed == [probe.path("slow.flac")] && second?.writing == [])
    }

    @Test func anOverflowedQueueAsksForARescan() throws {
        let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16384
        let probe = WatcherProbe()
        let release = DispatchSemaphore(value: 0)
        probe.log.gate.withLock { $0 = release }
        probe.tree.add("first.flac")
        _ = probe.waitForBatches(1)
        // The watcher's thread now waits in the handler; fill its queue past the limit (two
        // events a file: created, closed), in the watched folder itself.
        let folder = probe.tree.root
        for number in 0..<(limit / 2 + 100) {
            _ = FileManager.default.createFile(atPath: folder + "/\(number).flac", contents: nil)
        }
        probe.log.gate.withLock { $0 = nil }
        release.signal()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !probe.batches.contains { $0.rescan } { usleep(10_000) }
        #expect(probe.batches.contains { $0.rescan }, "an overflow asks for a full rescan")
    }

    /// What watching costs on 20,000 files in 2,000 album folders: the time to watch every
    /// folder at start, and a folder copied in. Opt-in: `REEL_LIBRARY_MEASURE=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_LIBRARY_MEASURE"] == "1"))
    func measureWatchingTwentyThousandFiles() throws {
        let directory = TemporaryDirectory()
        let tree = MusicTree(directory.file("Music"))
        for artist in 0..<200 {
            for album in 0..<10 {
                let folder = tree.path("Artist \(artist)/Album \(album)")
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for track in 0..<10 { _ = FileManager.default.createFile(atPath: folder + "/\(track).flac", contents: nil) }
            }
        }
        let log = ReportLog()
        let watcher = MusicWatcher(
            roots: [tree.root], extensions: MusicTestSupport.audioExtensions, logger: Logger(label: "test"), isPresent: { _ in true },
            handler: { report in log.reports.withLock { $0.append(report) } })
        let clock = ContinuousClock()
        let started = clock.now
        watcher.start()
        print("watching 2,200 folders (20,000 files) took \(clock.now - started) to start")
        defer { watcher.stop() }
        let cpuBefore = Self.threadCPU(watcher.threadID!)
        for album in 0..<50 {
            let folder = tree.path("New/Album \(album)")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for track in 0..<12 { _ = FileManager.default.createFile(atPath: folder + "/\(track).flac", contents: Data(count: 4096)) }
        }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, log.reports.withLock({ $0.isEmpty }) { usleep(10_000) }
        usleep(1_500_000)
        print("50 albums of 12 files written: \(log.reports.withLock { $0.count }) batches, the watcher thread used \(Self.threadCPU(watcher.threadID!) - cpuBefore) s of CPU")
    }

    static func threadCPU(_ tid: Int32) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A music folder made again with a folder inside made between the watcher's look at it
    /// (empty: not back) and its watch on it: no event will tell, so the watcher must look once
    /// more after watching. Here the look itself makes the folder inside, every time, so the
    /// interleaving is not left to the scheduler. (Regression: the music folder stayed missing
    /// until a rescan; seen once in a full run of the suite.)
    @Test func aFolderMadeBetweenTheLookAndTheWatchIsSeen() throws {
        let directory = TemporaryDirectory()
        let root = directory.file("Music")
        try FileManager.default.createDirectory(atPath: root + "/Album", withIntermediateDirectories: true)
        let log = ReportLog()
        let armed = Mutex(false)
        let watcher = MusicWatcher(
            roots: [root], extensions: MusicTestSupport.audioExtensions, logger: Logger(label: "test"),
            isPresent: { root in
                let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
                guard FileManager.default.fileExists(atPath: root), names.isEmpty else { return !names.isEmpty }
                // Empty: not back. Just after this look, something is made in it.
                if armed.withLock({ $0 }) {
                    try? FileManager.default.createDirectory(atPath: root + "/Album", withIntermediateDirectories: true)
                }
                return false
            },
            handler: { report in log.reports.withLock { $0.append(report) } })
        watcher.start()
        defer { watcher.stop() }

        try FileManager.default.removeItem(atPath: root)
        armed.withLock { $0 = true }
        let gone = Date().addingTimeInterval(20)
        while Date() < gone, !log.reports.withLock({ $0.contains(.folderGone(root)) }) { usleep(10_000) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: false)
        let deadline = Date().addingTimeInterval(20)
        func returned() -> Bool {
            log.reports.withLock { reports in
                reports.contains { report in
                    if case .changes(let batch) = report { return batch.returned == [root] }
                    return false
                }
            }
        }
        while Date() < deadline, !returned() { usleep(10_000) }
        #expect(returned(), "the music folder made again was not seen: \(log.reports.withLock { $0 })")
    }
}
