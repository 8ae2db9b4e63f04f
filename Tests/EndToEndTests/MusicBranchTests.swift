// The music folders as the read-only `/Music` branch of the tree, through the real reeld: listed
// beside the recordings, read, searched, queued and played by tree path, never changed.

import Foundation
import ReelProtocol
import ReelTestSupport
import Testing

@Suite struct MusicBranchTests {
    func reason(_ result: Result<JSONValue, RPCError>) -> String? {
        if case .failure(let error) = result { return error.reason }
        return nil
    }

    func names(_ listing: JSONValue) -> [String] {
        (listing["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
    }

    /// A daemon on `MusicFoldersTests.makeCollection`, its first scan ended; a client subscribed
    /// to `scan`.
    func daemon(music: URL) throws -> (DaemonProcess, RPCTestClient) {
        try MusicFoldersTests.makeCollection(at: music)
        let daemon = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try MusicFoldersTests.scanEnded(client, atLeast: 1)
        return (daemon, client)
    }

    @Test func theBranchIsListedBesideTheRecordingsAndReadLikeTheTree() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        let (daemon, client) = try daemon(music: music)
        _ = daemon
        _ = try client.result("library.createFolder", ["name": "Meetings"])
        _ = try client.result("library.createFolder", ["name": "Zebra"])

        // The root: its folders with the branch among them, by name.
        let root = try client.result("library.list")
        #expect(names(root) == ["Meetings", "Music", "Zebra"])
        let branch = try #require(root["items"]?.arrayValue?.first { $0["name"] == .string("Music") })
        #expect(branch["id"] == .string("music:/"))
        #expect(branch["kind"] == .string("folder"))
        #expect(branch["readOnly"] == .bool(true))

        // One music folder: its contents are the branch's (folders, then tracks, by name).
        let top = try client.result("library.list", ["path": "/Music"])
        #expect(names(top) == ["Trane", "Zoë", "loose.wav"])
        #expect(top["folder"]?["path"] == .string("/Music"))
        let album = try client.result("library.list", ["item": "music:/Trane/Blue Train"])
        #expect(names(album) == ["01 Moment.flac", "02 Locomotion.flac", "03 Lazy Bird.flac"])
        let track = try #require(album["items"]?.arrayValue?[1])
        #expect(track["kind"] == .string("track"))
        #expect(track["title"] == .string("Locomotion"))
        #expect(track["artist"] == .string("Trane"))
        #expect(track["parent"] == .string("music:/Trane/Blue Train"))
        #expect(track["path"] == .string("/Music/Trane/Blue Train/02 Locomotion.flac"))
        #expect(track["file"] == .string(music.path + "/Trane/Blue Train/02 Locomotion.flac"))
        #expect(track["format"]?["codec"] == .string("flac"))
        #expect((track["duration"]?.doubleValue ?? 0) > 0.9)
        let id = try #require(track["id"]?.stringValue)
        #expect(id.hasPrefix("track:"))
        #expect(try client.result("library.get", ["item": .string(id)]) == track)
        #expect(try client.result("library.get", ["path": "/Music/Trane/Blue Train/02 Locomotion.flac"]) == track)
        #expect(try client.result("library.get", ["path": "/Music//Trane/"])["id"] == .string("music:/Trane"))

        // What is not there, and what is not a folder.
        #expect(reason(try client.call("library.list", ["path": "/Music/Nobody"])) == "not_found")
        #expect(reason(try client.call("library.get", ["item": "track:999999"])) == "not_found")
        #expect(reason(try client.call("library.list", ["item": .string(id)])) == "not_a_folder")
        #expect(reason(try client.call("library.list", ["path": "/Music/notes.flac"])) == "not_found")

        // One search: recordings' names and tracks' titles, artists and albums.
        _ = try client.result("library.createFolder", ["name": "Locomotion notes"])
        let found = try client.result("library.search", ["query": "locomotion"])
        #expect((found["items"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue } == [
            "/Locomotion notes", "/Music/Trane/Blue Train/02 Locomotion.flac",
        ])
        // Paging across the two: one item per page.
        let first = try client.result("library.search", ["query": "locomotion", "limit": 1])
        #expect(first["items"]?.arrayValue?.first?["path"] == .string("/Locomotion notes"))
        let cursor = try #require(first["nextCursor"]?.stringValue)
        let second = try client.result("library.search", ["query": "locomotion", "limit": 1, "cursor": .string(cursor)])
        #expect(second["items"]?.arrayValue?.first?["path"] == .string("/Music/Trane/Blue Train/02 Locomotion.flac"))
        #expect(second["nextCursor"] == .null)
    }

    @Test func nothingInTheBranchChanges() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        let (daemon, client) = try daemon(music: music)
        let file = "/Music/Trane/Blue Train/01 Moment.flac"
        #expect(reason(try client.call("library.rename", ["path": .string(file), "name": "x.flac"])) == "read_only")
        #expect(reason(try client.call("library.rename", ["path": "/Music", "name": "Songs"])) == "read_only")
        #expect(reason(try client.call("library.delete", ["path": "/Music/Trane"])) == "read_only")
        #expect(reason(try client.call("library.delete", ["item": "music:/"])) == "read_only")
        #expect(reason(try client.call("library.createFolder", ["parentPath": "/Music/Trane", "name": "New"])) == "read_only")
        _ = try client.result("library.createFolder", ["name": "Mine"])
        #expect(reason(try client.call("library.move", ["path": .string(file), "toPath": "/Mine"])) == "read_only")
        #expect(reason(try client.call("library.move", ["path": "/Mine", "toPath": "/Music/Trane"])) == "read_only")
        let tone = try daemon.tone("t.wav", seconds: 1.0)
        #expect(reason(try client.call("library.import", ["file": .string(tone), "folderPath": "/Music"])) == "read_only")
        #expect(reason(try client.call("recorder.start", ["folderPath": "/Music/Trane"])) == "read_only")
        // The branch's name is taken at the root.
        #expect(reason(try client.call("library.createFolder", ["name": "Music"])) == "name_taken")
        #expect(reason(try client.call("library.rename", ["path": "/Mine", "name": "Music"])) == "name_taken")
        #expect(reason(try client.call("library.import", ["file": .string(tone), "name": "Music"])) == "name_taken")
        // The error says what to do.
        if case .failure(let error) = try client.call("library.delete", ["path": .string(file)]) {
            #expect(error.message.contains("only reads"), "\(error.message)")
        }
        // And the files are all still there.
        #expect(FileManager.default.fileExists(atPath: music.path + "/Trane/Blue Train/01 Moment.flac"))
        #expect(names(try client.result("library.list", ["path": "/Music/Trane/Blue Train"])).count == 3)
    }

    @Test func aBranchFolderIsQueuedAndPlayedByTreePathAndItsStreamFollowsTheIndex() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        let (daemon, client) = try daemon(music: music)
        _ = daemon

        // A folder adds its tracks by name, then each subfolder's (as MPD's add of a directory).
        let added = try client.result("queue.add", ["path": "/Music/Trane"])["entries"]?.arrayValue ?? []
        #expect(added.compactMap { $0["source"]?["path"]?.stringValue } == [
            music.path + "/Trane/Blue Train/01 Moment.flac", music.path + "/Trane/Blue Train/02 Locomotion.flac",
            music.path + "/Trane/Blue Train/03 Lazy Bird.flac",
        ])
        #expect(added.first?["title"] == .string("Moment"))
        let played = try client.result("player.play", ["path": "/Music/Zoë/Été/01 Première.flac"])
        #expect(played["source"]?["path"] == .string(music.path + "/Zoë/Été/01 Première.flac"))
        _ = try client.result("player.stop")

        // The folder stream of a branch folder: the contents at once, again once a scan changed them.
        let watcher = try daemon.client()
        _ = try watcher.result("subscribe", ["stream": "folder", "path": "/Music/Trane"])
        let (method, first) = try watcher.nextNotification(timeout: 10)
        #expect(method == "folder.contents")
        #expect((first["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue } == ["Blue Train"])
        let newAlbum = music.appendingPathComponent("Trane/Giant Steps")
        try FileManager.default.createDirectory(at: newAlbum, withIntermediateDirectories: true)
        let newFile = newAlbum.appendingPathComponent("01 Naima.flac").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", newFile, "synth", "1", "sine", "500"])
        _ = try client.result("library.rescan")
        var names: [String] = []
        let deadline = Date().addingTimeInterval(30)
        while names != ["Blue Train", "Giant Steps"], Date() < deadline {
            let (method, push) = try watcher.nextNotification(timeout: 30)
            guard method == "folder.contents" else { continue }
            names = (push["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        }
        #expect(names == ["Blue Train", "Giant Steps"])
    }

    /// A watched branch folder is pushed again when a scan changed it, not after every scan; a
    /// track of a music folder that went away is not in the tree, by id either.
    @Test func aBranchStreamPushesChangesOnlyAndAGoneTrackIsNotFound() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        let (daemon, client) = try daemon(music: music)
        let watcher = try daemon.client()
        _ = try watcher.result("subscribe", ["stream": "folder", "path": "/Music/Trane"])
        #expect(try watcher.nextNotification(timeout: 10).method == "folder.contents")
        // A rescan that changes nothing pushes nothing; the next change is the next push.
        let rescan = try client.result("library.rescan")
        _ = try MusicFoldersTests.scanEnded(client, atLeast: rescan["scan"]?.intValue ?? 2)
        // The change arrives whole — an album made in a folder beside, then moved in with one
        // rename — so it is one change on disk however slowly the machine runs. A file written
        // in place can be scanned while still being written, which is a change of its own (a
        // CI run on a loaded machine got a push of the folder without the new album first).
        let staging = music.deletingLastPathComponent().appendingPathComponent("staging-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: staging) }
        try FileManager.default.createDirectory(at: staging.appendingPathComponent("Giant Steps"), withIntermediateDirectories: true)
        try TestTool.run("sox", [
            "-n", "-r", "44100", "-c", "1", "-b", "16", staging.appendingPathComponent("Giant Steps/01.wav").path, "synth",
            "0.5", "sine", "440",
        ])
        try FileManager.default.moveItem(
            at: staging.appendingPathComponent("Giant Steps"), to: music.appendingPathComponent("Trane/Giant Steps"))
        let next = try watcher.nextNotification(timeout: 30)
        #expect((next.params["items"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue } == ["Blue Train", "Giant Steps"])

        let track = try #require(
            try client.result("library.list", ["path": "/Music/Trane/Blue Train"])["items"]?.arrayValue?.first?["id"]?.stringValue)
        let away = music.deletingLastPathComponent().appendingPathComponent("away-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: away) }
        try FileManager.default.moveItem(at: music, to: away)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, reason(try client.call("library.get", ["item": .string(track)])) == nil { usleep(20_000) }
        #expect(reason(try client.call("library.get", ["item": .string(track)])) == "not_found")
        #expect(reason(try client.call("queue.add", ["item": .string(track)])) == "not_found")
    }

    @Test func severalMusicFoldersAreOneFolderEachNamedByTheirLastComponent() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let first = base.appendingPathComponent("a/Music")
        let second = base.appendingPathComponent("b/Music")
        let third = base.appendingPathComponent("c/Jazz")
        for folder in [first, second, third] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try TestTool.run("sox", [
                "-n", "-r", "44100", "-c", "1", "-b", "16", folder.appendingPathComponent("tone.wav").path, "synth", "0.5",
                "sine", "440",
            ])
        }
        let daemon = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": [first, second, third].map(\.path).joined(separator: ":")])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try MusicFoldersTests.scanEnded(client, atLeast: 1)
        #expect(names(try client.result("library.list", ["path": "/Music"])) == ["Jazz", "Music", "Music (2)"])
        let track = try client.result("library.list", ["path": "/Music/Music (2)"])["items"]?.arrayValue?.first
        #expect(track?["file"] == .string(second.path + "/tone.wav"))
        #expect(track?["path"] == .string("/Music/Music (2)/tone.wav"))
        #expect(try client.result("library.get", ["path": "/Music/Jazz/tone.wav"])["file"] == .string(third.path + "/tone.wav"))
    }

    @Test func theCLIListsDrawsAndRefusesToChangeTheBranch() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        let (daemon, _) = try daemon(music: music)
        let env = ["REEL_SOCKET": daemon.socketPath]
        let ls = try CLI.run(["ls", "/Music/Trane/Blue Train"], environment: env)
        #expect(ls.status == 0, "\(ls)")
        let rows = ls.stdout.split(separator: "\n").filter { $0.hasPrefix("track") }
        #expect(rows.count == 3, "\(ls)")
        #expect(rows.first?.contains("01 Moment.flac") == true && rows.first?.contains("0:01") == true, "\(ls)")
        // `reel tree /` names the branch without walking it; `reel tree /Music` walks it.
        let whole = try CLI.run(["tree"], environment: env)
        #expect(whole.stdout.contains("Music/  (music folders: reel tree /Music)"), "\(whole)")
        #expect(!whole.stdout.contains("Moment"), "\(whole)")
        let branch = try CLI.run(["tree", "/Music"], environment: env)
        #expect(branch.stdout.contains("01 Moment.flac  0:01"), "\(branch)")
        #expect(branch.stdout.contains("5 tracks"), "\(branch)")
        let rm = try CLI.run(["rm", "/Music/Trane"], environment: env)
        #expect(rm.status != 0)
        #expect(rm.stderr.contains("only reads"), "\(rm)")
        #expect(FileManager.default.fileExists(atPath: music.path + "/Trane/Blue Train/01 Moment.flac"))
    }

    @Test func withoutMusicFoldersThereIsNoBranch() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        #expect(names(try client.result("library.list")) == [])
        #expect(reason(try client.call("library.list", ["path": "/Music"])) == "not_found")
        // The name is free: a recordings folder may have it.
        _ = try client.result("library.createFolder", ["name": "Music"])
        #expect(try client.result("library.get", ["path": "/Music"])["readOnly"] == nil)
    }
}
