// Stored playlists' files and lines, without a core: names, the lines' meaning, and the
// atomic write stopped after each of its steps (as a kill or a power cut would stop it).
import Foundation
import ReelModel
import ReelStreamFormats
import Testing

@testable import ReelCore

@Suite struct PlaylistFilesTests {
    final class Directory {
        let path = NSTemporaryDirectory() + "reel-playlists-\(UUID().uuidString)"
        deinit { try? FileManager.default.removeItem(atPath: path) }
        var files: PlaylistFiles { PlaylistFiles(directory: path) }
        func bytes(_ name: String) -> [UInt8]? {
            FileManager.default.contents(atPath: path + "/" + name + ".m3u").map { Array($0) }
        }
        var listing: [String] { (try? FileManager.default.contentsOfDirectory(atPath: path).sorted()) ?? [] }
    }

    struct Stop: Error {}

    @Test func namesAreCheckedWithAReasonEach() throws {
        for good in ["Morning", "Morning Radio", "ünï", "a.b", "x" + String(repeating: "y", count: 250)] {
            try PlaylistFiles.check(name: good)
        }
        for (bad, says) in [("", "empty"), ("a/b", "\"/\""), (".hidden", "start with"), ("a\nb", "line break"),
                            (String(repeating: "z", count: 252), "too long")] {
            #expect(throws: ReelError.self) { try PlaylistFiles.check(name: bad) }
            do {
                try PlaylistFiles.check(name: bad)
            } catch {
                #expect(error.reason == .invalidName)
                #expect(error.message.contains(says), "\(bad.debugDescription): \(error.message)")
            }
        }
    }

    @Test func aWriteMakesTheDirectoryAndReadsBack() throws {
        let directory = Directory()
        let playlist = StoredPlaylist(entries: ["A/01.flac", "http://radio.example/x", "Recordings/N/idea.flac"])
        try directory.files.write("Mine", playlist)
        #expect(directory.bytes("Mine") == Array("A/01.flac\nhttp://radio.example/x\nRecordings/N/idea.flac\n".utf8))
        #expect(try directory.files.read("Mine") == playlist)
        #expect(try directory.files.list().map(\.name) == ["Mine"])
        #expect(directory.listing == ["Mine.m3u"])
    }

    /// A write stopped after any of its steps leaves the old file whole or the new one whole;
    /// the temporary file it may leave is never listed, and goes when the store opens.
    /// Both readings (to edit: `read`, to load or list: `entries(of:)`) take the whole file,
    /// and both refuse one larger than the limit (not cut), each with the reason.
    @Test func aFileIsReadWholeAndALargerOneThanTheLimitIsRefused() throws {
        let directory = Directory()
        try directory.files.write("Small", StoredPlaylist(entries: ["A/01.flac"]))
        // One line of all the bytes but the last line's (too long: broken, no entry): only the size limit applies.
        let last = Array("\nA/02.flac".utf8)  // the last line, without a break
        var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: PlaylistLimits.stored.maximumBytes - last.count)
        bytes[0] = UInt8(ascii: "#")
        bytes += last
        #expect(bytes.count <= PlaylistLimits.stored.maximumBytes)
        #expect(FileManager.default.createFile(atPath: directory.path + "/Large.m3u", contents: Data(bytes)))
        #expect(try directory.files.read("Large").entries == ["A/02.flac"])
        #expect(try directory.files.entries(of: "Large", unlessStamped: nil).entries?.entries == ["A/02.flac"])

        bytes += Array(repeating: UInt8(ascii: "x"), count: PlaylistLimits.stored.maximumBytes + 1 - bytes.count)
        #expect(FileManager.default.createFile(atPath: directory.path + "/Large.m3u", contents: Data(bytes)))
        for read in [{ _ = try directory.files.read("Large") }, { _ = try directory.files.entries(of: "Large", unlessStamped: nil) }] {
            do {
                try read()
                Issue.record("a file larger than the limit was read")
            } catch let error as ReelError {
                #expect(error.reason == .outOfRange)
                #expect(error.message.contains("larger than"), "\(error.message)")
            }
        }
        #expect(try directory.files.entries(of: "Small", unlessStamped: nil).entries?.entries == ["A/01.flac"])
    }

    @Test func aWriteStoppedAtAnyStepLeavesTheOldFileOrTheNewOne() throws {
        let old = StoredPlaylist(entries: (0..<500).map { "Old/\($0).flac" })
        let new = StoredPlaylist(entries: (0..<900).map { "New/\($0).flac" })
        let oldBytes = try old.encoded()
        let newBytes = try new.encoded()
        for step in PlaylistFiles.WriteStep.allCases {
            let directory = Directory()
            try directory.files.write("P", old)
            var files = directory.files
            files.afterStep = { done throws(ReelError) in
                if done == step { throw ReelError(.busy, "stopped after \(done)") }
            }
            #expect(throws: ReelError.self) { try files.write("P", new) }
            let now = try #require(directory.bytes("P"))
            let renamed = step.rawValue >= PlaylistFiles.WriteStep.renamed.rawValue
            #expect(now == (renamed ? newBytes : oldBytes), "stopped after \(step)")
            #expect(try directory.files.list().map(\.name) == ["P"], "stopped after \(step)")
            directory.files.removeLeftovers()
            #expect(directory.listing == ["P.m3u"], "stopped after \(step)")
        }
    }

    @Test func aFailedWriteLeavesTheOldFileAndNoTemporary() throws {
        let directory = Directory()
        try directory.files.write("P", StoredPlaylist(entries: ["a.flac"]))
        // An entry that would read back as two lines is refused before anything is written.
        #expect(throws: ReelError.self) { try directory.files.write("P", StoredPlaylist(entries: ["a\nb"])) }
        #expect(directory.bytes("P") == Array("a.flac\n".utf8))
        #expect(directory.listing == ["P.m3u"])
    }

    @Test func brokenLinesAndCommentsSurviveARewrite() throws {
        let directory = Directory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let original: [UInt8] = Array("#EXTM3U\nA/1.flac\n".utf8) + [0x62, 0xFF, 0x0A] + Array("B/2.flac\n".utf8)
        _ = FileManager.default.createFile(atPath: directory.path + "/P.m3u", contents: Data(original))
        let read = try directory.files.read("P")
        #expect(read.entries == ["A/1.flac", "B/2.flac"])
        #expect(read.brokenLines.map(\.line) == [3])
        try directory.files.write("P", read)
        #expect(directory.bytes("P") == original)
    }

    @Test func readsAndRemovalsOfNoPlaylistAreNotFound() throws {
        let directory = Directory()
        #expect(try directory.files.list().isEmpty)
        for body in [{ _ = try directory.files.read("None") }, { try directory.files.remove("None") },
                     { try directory.files.rename("None", to: "Other") }] as [() throws -> Void] {
            do {
                try body()
                Issue.record("expected not_found")
            } catch let error as ReelError {
                #expect(error.reason == .notFound)
            }
        }
        try directory.files.write("A", StoredPlaylist())
        try directory.files.write("B", StoredPlaylist())
        do {
            try directory.files.rename("A", to: "B")
            Issue.record("expected name_taken")
        } catch {
            #expect(error.reason == .nameTaken)
        }
    }

    // MARK: Lines

    @Test func linesNameMusicRecordingsURLsAndFiles() {
        let one = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: ["/srv/music"])
        #expect(one.location(of: "A/B/01.flac") == .music(root: "/srv/music", path: "A/B/01.flac"))
        #expect(one.location(of: "Recordings/Notes/idea.flac") == .recording(treePath: "/Notes/idea.flac"))
        #expect(one.location(of: "https://radio.example/live") == .url("https://radio.example/live"))
        #expect(one.location(of: "/srv/music/A/01.flac") == .music(root: "/srv/music", path: "A/01.flac"))
        #expect(one.location(of: "/tmp/x.wav") == .file("/tmp/x.wav"))
        #expect(one.location(of: "file:///tmp/x.wav") == .file("/tmp/x.wav"))
        if case .invalid = one.location(of: "A/../B.flac") {} else { Issue.record("a .. part names nothing") }
        if case .invalid = one.location(of: "Recordings") {} else { Issue.record("the recordings directory is no entry") }

        let two = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: ["/a/Music", "/b/Music"])
        #expect(two.location(of: "Music (2)/x.flac") == .music(root: "/b/Music", path: "x.flac"))
        if case .invalid = two.location(of: "Other/x.flac") {} else { Issue.record("no such music folder") }
        #expect(two.line(root: "/b/Music", path: "x.flac") == "Music (2)/x.flac")

        let none = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: [])
        if case .invalid = none.location(of: "A/01.flac") {} else { Issue.record("no music folder") }
    }

    @Test func theQueuesSourcesBecomeLines() {
        let paths = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: ["/srv/music"])
        func entry(_ source: PlayerSource, _ codec: String? = nil) -> QueueEntry {
            QueueEntry(id: 1, position: 0, source: source, format: codec.map { AudioFormat(codec: $0, sampleRate: 44100, channels: 2) })
        }
        #expect(paths.line(of: entry(.file(path: "/srv/music/A/01.flac"))) == "A/01.flac")
        #expect(paths.line(of: entry(.file(path: "/tmp/x.wav"))) == "/tmp/x.wav")
        #expect(paths.line(of: entry(.item(id: "i", path: "/Notes/idea", name: "idea"), "flac")) == "Recordings/Notes/idea.flac")
        #expect(paths.line(of: entry(.url("http://r.example/s", name: "R", title: nil))) == "http://r.example/s")
    }
}
