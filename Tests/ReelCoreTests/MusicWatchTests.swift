// The music index following the disk while the core runs: real inotify on temporary folders,
// real SQLite, real WAV files read by the real tag reader, the queue following a moved file.
import Foundation
import Glibc
import Logging
import ReelAudio
import ReelLibrary
import ReelModel
import ReelTestSupport
import Testing

@testable import ReelCore

/// A core with one music folder, started; helpers to change the folder and wait for the index.
final class WatchedMusic {
    let directory: String
    let root: String
    let core: ReelCore

    /// A core on a new temporary folder whose music folder holds `files`.
    convenience init(startWith files: [String] = []) throws {
        let directory = NSTemporaryDirectory() + "reel-watch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/Music", withIntermediateDirectories: true)
        for file in files { try Self.wav(directory + "/Music/" + file) }
        try self.init(existing: directory)
    }

    /// A core on `directory`, whose music folder `Music` is there already.
    init(existing directory: String) throws {
        self.directory = directory
        root = directory + "/Music"
        core = try ReelCore(
            dataDirectory: directory + "/data", output: ALSAOutput(name: "null"), timing: PCMTiming(),
            input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
            mediaRoots: [], musicDirectories: [root], logger: Logger(label: "test"))
        core.start(resume: .no)
        let scanned = waitUntil("the first scan") { self.core.music.progress.latest.value.scan >= 1 && !self.core.music.progress.latest.value.running }
        if scanned == nil { throw TestFailure("the first scan did not end") }
    }

    deinit {
        core.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    var music: MusicController { core.music }
    var index: MusicIndex { core.music.index }

    /// A WAV file (creating its folder), `frames` frames at 8 kHz.
    static func wav(_ path: String, frames: Int = 800) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try writeWAV(path, frames: frames)
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    /// The indexed files by relative path: id and whether missing.
    func indexed() throws -> [String: MusicIndexedFile] { try index.indexedFiles(root: root) }

    func id(_ relative: String) throws -> Int64? { try index.track(root: root, relativePath: relative)?.id }

    /// The latest scan's progress.
    var latest: MusicScanProgress { music.progress.latest.value }

    /// Polls `condition` every 10 ms for up to `timeout` seconds; returns how long it took
    /// (printed), nil (and an issue recorded) if it never held.
    @discardableResult
    func waitUntil(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) -> Double? {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(timeout * 1000))
        while ContinuousClock.now < deadline {
            if (try? condition()) == true {
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print("music watch: \(what) in \(String(format: "%.3f", seconds)) s")
                return seconds
            }
            usleep(10_000)
        }
        Issue.record("\(what): not within \(timeout) s")
        return nil
    }

}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// CPU seconds (user + system) a thread of this process has used, from /proc.
func threadCPUSeconds(_ tid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the name: state is field 3; utime and stime are fields 14 and 15 (1-based).
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Voluntary context switches of a thread of this process (each a wake-up from a wait).
func threadWakeUps(_ tid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
        return Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces))
    }
    return nil
}

@Suite struct MusicWatchTests {
    @Test func addedRemovedAndRenamedFilesAreFollowedAndARenameKeepsTheId() throws {
        let music = try WatchedMusic(startWith: ["a.wav", "b.wav"])
        #expect(try music.indexed().keys.sorted() == ["a.wav", "b.wav"])

        try WatchedMusic.wav(music.path("Album/c.wav"))
        music.waitUntil("a file added") { try music.indexed()["Album/c.wav"] != nil }
        let c = try #require(try music.index.track(root: music.root, relativePath: "Album/c.wav"))
        #expect(c.audio.codec == "wav" && abs((c.audio.duration ?? 0) - 0.1) < 0.01)

        try FileManager.default.removeItem(atPath: music.path("a.wav"))
        music.waitUntil("a file removed") { try music.indexed()["a.wav"] == nil }

        let b = try #require(try music.id("b.wav"))
        try FileManager.default.moveItem(atPath: music.path("b.wav"), toPath: music.path("Album/b renamed.wav"))
        music.waitUntil("a file renamed") {
            try music.indexed()["Album/b renamed.wav"] != nil && music.latest.moved == 1 && !music.latest.running
        }
        #expect(try music.id("Album/b renamed.wav") == b, "a renamed file keeps its id")
        #expect(try music.indexed().keys.sorted() == ["Album/b renamed.wav", "Album/c.wav"])

        // Not audio, hidden: not indexed.
        try Data("x".utf8).write(to: URL(fileURLWithPath: music.path("Album/notes.txt")))
        try WatchedMusic.wav(music.path(".hidden/d.wav"))
        try WatchedMusic.wav(music.path("Album/e.wav"))
        music.waitUntil("a file added after others ignored") { try music.indexed()["Album/e.wav"] != nil }
        #expect(try music.indexed().keys.sorted() == ["Album/b renamed.wav", "Album/c.wav", "Album/e.wav"])
    }

    @Test func aMovedFolderKeepsItsFilesIds() throws {
        let music = try WatchedMusic(startWith: ["Album/1.wav", "Album/2.wav", "Album/CD2/3.wav"])
        let before = try music.indexed().mapValues(\.id)
        try FileManager.default.createDirectory(atPath: music.path("Artist"), withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: music.path("Album"), toPath: music.path("Artist/Renamed"))
        music.waitUntil("a folder moved") { try music.indexed()["Artist/Renamed/CD2/3.wav"] != nil }
        let after = try music.indexed().mapValues(\.id)
        #expect(after.keys.sorted() == ["Artist/Renamed/1.wav", "Artist/Renamed/2.wav", "Artist/Renamed/CD2/3.wav"])
        #expect(after["Artist/Renamed/1.wav"] == before["Album/1.wav"])
        #expect(after["Artist/Renamed/CD2/3.wav"] == before["Album/CD2/3.wav"])

        // The moved folder is still watched, under its new path.
        try WatchedMusic.wav(music.path("Artist/Renamed/CD2/4.wav"))
        music.waitUntil("a file added in the moved folder") { try music.indexed()["Artist/Renamed/CD2/4.wav"] != nil }
        // And a folder moved out of the music folder leaves the index.
        let outside = music.directory + "/Elsewhere"
        try FileManager.default.moveItem(atPath: music.path("Artist"), toPath: outside)
        music.waitUntil("a folder moved out") { try music.indexed().isEmpty }
        try WatchedMusic.wav(outside + "/Renamed/5.wav")
        try WatchedMusic.wav(music.path("back.wav"))
        music.waitUntil("a file added after") { try music.indexed()["back.wav"] != nil }
        #expect(try music.indexed().keys.sorted() == ["back.wav"], "a folder moved away is no longer watched")
    }

    @Test func anAlbumCopiedInIsAppliedAsOneBatchAndADeletedOneLeaves() throws {
        let music = try WatchedMusic(startWith: ["other.wav"])
        let staging = music.directory + "/Staging/New Album"
        for track in 1...12 { try WatchedMusic.wav(staging + "/\(track).wav", frames: 4000) }
        try WatchedMusic.wav(staging + "/Bonus/13.wav")
        let before = music.latest.scan
        try TestTool.run("cp", ["-r", staging, music.root + "/"])
        music.waitUntil("an album copied in") { try music.indexed().count == 14 && !music.latest.running }
        // Quiet for longer than a batch takes: nothing more comes.
        usleep(1_500_000)
        let applied = music.latest
        #expect(applied.scan == before + 1, "the album came in one batch, not file by file")
        #expect(applied.indexed == 13 && applied.removed == 0)

        try FileManager.default.removeItem(atPath: music.path("New Album"))
        music.waitUntil("an album deleted") {
            try music.indexed().keys.sorted() == ["other.wav"] && music.latest.removed == 13 && !music.latest.running
        }
    }

    @Test func aFileBeingWrittenIsReadOnlyAfterItIsClosed() throws {
        let music = try WatchedMusic(startWith: ["other.wav"])
        // A whole WAV, written in two halves with a pause longer than the quiet time between.
        let staging = music.directory + "/whole.wav"
        try writeWAV(staging, frames: 16000)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: staging))
        let target = music.path("slow.wav")
        let descriptor = open(target, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        #expect(descriptor >= 0)
        let half = bytes.count / 2
        bytes.withUnsafeBytes { _ = write(descriptor, $0.baseAddress, half) }
        let scanBefore = music.latest.scan
        usleep(1_500_000)
        #expect(try music.indexed()["slow.wav"] == nil, "not read while being written")
        #expect(try music.index.failures().isEmpty)
        #expect(music.latest.scan == scanBefore, "nothing to apply while the file is open")
        bytes.withUnsafeBytes { _ = write(descriptor, $0.baseAddress! + half, bytes.count - half) }
        close(descriptor)
        music.waitUntil("a file read after its close") { try music.indexed()["slow.wav"] != nil }
        let track = try #require(try music.index.track(root: music.root, relativePath: "slow.wav"))
        #expect(abs((track.audio.duration ?? 0) - 2.0) < 0.01, "read whole")
        #expect(track.size == Int64(bytes.count))
    }

    @Test func aMusicFolderMovedAwayIsMarkedMissingAndComesBackWithItsIds() throws {
        let music = try WatchedMusic(startWith: ["Album/1.wav", "Album/2.wav"])
        let ids = try music.indexed().mapValues(\.id)
        let away = music.directory + "/Music.away"
        try FileManager.default.moveItem(atPath: music.root, toPath: away)
        music.waitUntil("a music folder gone: files missing") {
            try music.indexed().values.allSatisfy(\.missing) && music.latest.missing == 2 && !music.latest.running
        }
        #expect(try music.indexed().count == 2, "its files are kept")
        #expect(try music.index.albums().isEmpty && music.index.stats().songs == 0)

        try FileManager.default.moveItem(atPath: away, toPath: music.root)
        music.waitUntil("a music folder back") {
            try music.indexed().values.allSatisfy { !$0.missing } && music.latest.restored == 2 && !music.latest.running
        }
        #expect(try music.indexed().mapValues(\.id) == ids, "ids kept")
        // Watched again.
        try WatchedMusic.wav(music.path("Album/3.wav"))
        music.waitUntil("a file added to the folder back") { try music.indexed()["Album/3.wav"] != nil }
    }

    @Test func aMusicFolderDeletedAndMadeAgainComesBack() throws {
        let music = try WatchedMusic(startWith: ["Album/1.wav", "Album/2.wav"])
        let ids = try music.indexed().mapValues(\.id)
        try FileManager.default.removeItem(atPath: music.root)
        music.waitUntil("a music folder deleted: files missing") {
            let files = try music.indexed()
            return files.count == 2 && files.values.allSatisfy(\.missing)
        }
        // Made again, deeper than its parent: with the same files.
        try WatchedMusic.wav(music.path("Album/1.wav"))
        try WatchedMusic.wav(music.path("Album/2.wav"))
        music.waitUntil("a music folder made again") {
            let files = try music.indexed()
            return files.count == 2 && files.values.allSatisfy { !$0.missing }
        }
        #expect(try music.indexed().mapValues(\.id) == ids, "the same paths keep their ids")
        try FileManager.default.moveItem(atPath: music.path("Album/2.wav"), toPath: music.path("Album/two.wav"))
        music.waitUntil("a rename in the folder made again") { try music.indexed()["Album/two.wav"] != nil }
        #expect(try music.id("Album/two.wav") == ids["Album/2.wav"])
    }

    /// Whether this process may mount a tmpfs (root in a namespace that allows it).
    static let canMount: Bool = {
        guard getuid() == 0 else { return false }
        let probe = NSTemporaryDirectory() + "reel-mount-probe-\(UUID().uuidString)"
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { rmdir(probe) }
        guard (try? TestTool.run("mount", ["-t", "tmpfs", "tmpfs", probe])) != nil else { return false }
        return (try? TestTool.run("umount", [probe])) != nil
    }()

    @Test(.enabled(if: canMount, "needs root and mount(2) to put a disk (tmpfs) on the music folder"))
    func aDiskUnmountedMarksItsFilesMissingAndMountedAgainBringsThemBack() throws {
        // The music folder is a mount point with a disk (tmpfs) on it before reeld starts.
        let directory = NSTemporaryDirectory() + "reel-watch-mount-\(UUID().uuidString)"
        let root = directory + "/Music"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try TestTool.run("mount", ["-t", "tmpfs", "tmpfs", root])
        defer {
            _ = try? TestTool.run("umount", [root])
            try? FileManager.default.removeItem(atPath: directory)
        }
        try WatchedMusic.wav(root + "/Album/1.wav")
        try WatchedMusic.wav(root + "/Album/2.wav")
        let music = try WatchedMusic(existing: directory)
        let ids = try music.indexed().mapValues(\.id)
        #expect(ids.count == 2)

        try TestTool.run("umount", [root])
        music.waitUntil("a disk unmounted: files missing") {
            try music.indexed().values.allSatisfy(\.missing) && music.latest.missing == 2 && !music.latest.running
        }
        #expect(try music.indexed().count == 2, "kept")

        // Mounted again (empty at first, as a disk whose files are then written).
        try TestTool.run("mount", ["-t", "tmpfs", "tmpfs", root])
        usleep(500_000)
        #expect(try music.indexed().values.allSatisfy(\.missing), "an empty disk is not the music folder back")
        try WatchedMusic.wav(root + "/Album/1.wav")
        try WatchedMusic.wav(root + "/Album/2.wav")
        music.waitUntil("a disk mounted again: files back") {
            try music.indexed().values.allSatisfy { !$0.missing } && music.latest.restored == 2 && !music.latest.running
        }
        #expect(try music.indexed().mapValues(\.id) == ids, "ids kept")
        try WatchedMusic.wav(root + "/Album/3.wav")
        music.waitUntil("a file added to the disk mounted again") { try music.indexed()["Album/3.wav"] != nil }
        music.core.shutdown()
    }

    @Test func theQueueFollowsAMovedFileAndFolder() throws {
        let music = try WatchedMusic(startWith: ["Album/1.wav", "Album/2.wav", "loose.wav"])
        let tracks = try ["Album/1.wav", "Album/2.wav", "loose.wav"].map {
            try #require(try music.index.track(root: music.root, relativePath: $0))
        }
        let added = Awaited<Result<[QueueEntry], ReelError>>()
        music.core.player.add(.musicTracks(tracks), at: nil, afterCurrent: false) { added.put($0) }
        #expect((try? added.get()?.get())?.count == 3)
        let versionBefore = music.core.player.queueSummary.version

        try FileManager.default.moveItem(atPath: music.path("loose.wav"), toPath: music.path("Album/3.wav"))
        try FileManager.default.moveItem(atPath: music.path("Album"), toPath: music.path("Renamed"))
        func paths() throws -> [String] {
            try music.core.player.listQueue().entries.map { entry in
                guard case .file(let path) = entry.source else { return "" }
                return path
            }
        }
        music.waitUntil("queue entries follow their moved files") {
            try paths() == ["1.wav", "2.wav", "3.wav"].map { music.path("Renamed/" + $0) }
        }
        #expect(music.core.player.queueSummary.version > versionBefore)
        // A file deleted: its entry stays (skipped when reached).
        try FileManager.default.removeItem(atPath: music.path("Renamed/2.wav"))
        music.waitUntil("the deleted file leaves the index") { try music.indexed()["Renamed/2.wav"] == nil }
        #expect(try paths().count == 3)
    }

    @Test func aLongBurstOfChangesCostsLittleAndAnIdleWatcherSleeps() throws {
        let music = try WatchedMusic()
        let watcher = try #require(music.music.watcher)
        let tid = try #require(watcher.threadID)
        let cpuBefore = threadCPUSeconds(tid) ?? 0
        // About two seconds of files written one after another, as a long copy does.
        let start = ContinuousClock.now
        var written = 0
        while ContinuousClock.now - start < .seconds(2) {
            try WatchedMusic.wav(music.path("Burst/\(written / 50)/\(written).wav"), frames: 200)
            written += 1
            usleep(2_000)
        }
        music.waitUntil("a burst of \(written) files") { try music.indexed().count == written && !music.latest.running }
        let cpu = (threadCPUSeconds(tid) ?? 0) - cpuBefore
        print("music watch: \(written) files over 2 s: the watcher thread used \(String(format: "%.3f", cpu)) s of CPU, scans \(music.latest.scan - 1)")
        #expect(cpu >= 0)

        // Idle: the thread blocks in poll without a timeout.
        usleep(1_000_000)
        let wakeUps = threadWakeUps(tid)
        usleep(2_000_000)
        let idleWakeUps = (threadWakeUps(tid) ?? 0) - (wakeUps ?? 0)
        print("music watch: idle for 2 s: \(idleWakeUps) wake-ups of the watcher thread")
        #expect(wakeUps != nil && idleWakeUps == 0, "an idle watcher stays asleep")
    }

    @Test func withoutMusicFoldersThereIsNoWatcher() throws {
        let (core, directory) = try makeCore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        core.start(resume: .no)
        defer { core.shutdown() }
        #expect(core.music.watcher == nil, "no thread, no inotify descriptor without music folders")
    }
}
