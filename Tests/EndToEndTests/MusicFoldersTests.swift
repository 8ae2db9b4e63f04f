// Music folders through the real reeld: a generated, tagged collection scanned where it lies,
// browsed by artist and album over the socket, queued by album, rescanned after a change.

import Foundation
import ReelProtocol
import ReelTestSupport
import Testing

@Suite struct MusicFoldersTests {
    /// A small collection: two albums of FLAC files tagged with metaflac (one non-ASCII), an MP3
    /// without tags, and a file that is not audio.
    static func makeCollection(at root: URL) throws {
        let albums = [("Blue Train", "Trane", ["Moment", "Locomotion", "Lazy Bird"]), ("Été", "Zoë", ["Première"])]
        for (album, artist, titles) in albums {
            let folder = root.appendingPathComponent(artist).appendingPathComponent(album)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (number, title) in titles.enumerated() {
                let path = folder.appendingPathComponent(String(format: "%02d %@.flac", number + 1, title)).path
                try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "1", "sine", "440", "vol", "0.2"])
                // Track numbers in reverse of the file names: the album's order is the tags'.
                try TestTool.run("metaflac", [
                    "--set-tag=TITLE=\(title)", "--set-tag=ARTIST=\(artist)", "--set-tag=ALBUM=\(album)",
                    "--set-tag=TRACKNUMBER=\(titles.count - number)", "--set-tag=DATE=1958", path,
                ])
            }
        }
        let loose = root.appendingPathComponent("loose.wav").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "1", "-b", "16", loose, "synth", "0.5", "sine", "300"])
        try Data("not audio".utf8).write(to: root.appendingPathComponent("notes.flac"))
    }

    /// Waits for a scan numbered `number` or later to end; returns its progress.
    static func scanEnded(_ client: RPCTestClient, atLeast number: Int) throws -> JSONObject {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let (method, params) = try client.nextNotification(timeout: 30)
            guard method == "scan.progress" else { continue }
            if (params["scan"]?.intValue ?? 0) >= number && params["running"]?.boolValue == false { return params }
        }
        throw TestFailure("no end of scan \(number)")
    }

    @Test func aTaggedCollectionIsScannedBrowsedQueuedAndRescanned() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        try Self.makeCollection(at: music)
        let daemon = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        let first = try Self.scanEnded(client, atLeast: 1)
        #expect(first["seen"]?.intValue == 6)
        #expect(first["indexed"]?.intValue == 5)
        #expect(first["failed"]?.intValue == 1)

        let artists = try client.result("music.artists")["artists"]?.arrayValue ?? []
        #expect(artists.map { $0["name"]?.stringValue } == ["Trane", "Zoë"])
        #expect(artists.first?["tracks"]?.intValue == 3)
        let albums = try client.result("music.albums", ["artist": "Trane"])["albums"]?.arrayValue ?? []
        #expect(albums.map { $0["name"]?.stringValue } == ["Blue Train"])
        #expect(albums.first?["date"]?.stringValue == "1958")
        let tracks = try client.result("music.tracks", ["album": "Blue Train"])["tracks"]?.arrayValue ?? []
        // Disc/track order, whatever the file names say.
        #expect(tracks.map { $0["title"]?.stringValue } == ["Lazy Bird", "Locomotion", "Moment"])
        #expect(tracks.first?["artist"]?.stringValue == "Trane")
        #expect(tracks.first?["track"]?.intValue == 1)
        #expect(tracks.first?["format"]?["codec"]?.stringValue == "flac")
        let found = try client.result("music.search", ["text": "premiè"])["tracks"]?.arrayValue ?? []
        #expect(found.map { $0["name"]?.stringValue } == ["Première"])
        let failures = try client.result("music.failures")["failures"]?.arrayValue ?? []
        #expect(failures.count == 1 && failures.first?["path"]?.stringValue?.hasSuffix("notes.flac") == true)
        // A file without tags: no title of its own, found and shown by its file name.
        let untagged = try client.result("music.search", ["text": "loose"])["tracks"]?.arrayValue ?? []
        #expect(untagged.count == 1)
        #expect(untagged.first?["title"] == .null)
        #expect(untagged.first?["name"]?.stringValue == "loose")

        let added = try client.result("queue.add", ["album": "Blue Train"])["entries"]?.arrayValue ?? []
        #expect(added.count == 3)
        #expect(added.first?["source"]?["path"]?.stringValue?.hasSuffix("03 Lazy Bird.flac") == true)
        if case .failure(let error) = try client.call("queue.add", ["album": "No Such Album"]) {
            #expect(error.message.contains("no album \"No Such Album\""))
        } else {
            Issue.record("a missing album was added")
        }

        // A new album copied in shows up at the next scan; nothing unchanged is read again.
        let newAlbum = music.appendingPathComponent("Trane").appendingPathComponent("Giant Steps")
        try FileManager.default.createDirectory(at: newAlbum, withIntermediateDirectories: true)
        let newFile = newAlbum.appendingPathComponent("01.flac").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", newFile, "synth", "1", "sine", "500"])
        try TestTool.run("metaflac", ["--set-tag=TITLE=Naima", "--set-tag=ARTIST=Trane", "--set-tag=ALBUM=Giant Steps", newFile])
        let rescan = try client.result("library.rescan")
        let second = try Self.scanEnded(client, atLeast: rescan["scan"]?.intValue ?? 2)
        #expect(second["indexed"]?.intValue == 1)
        #expect(second["unchanged"]?.intValue == 5)
        let afterwards = try client.result("music.albums", ["artist": "Trane"])["albums"]?.arrayValue ?? []
        #expect(Set(afterwards.compactMap { $0["name"]?.stringValue }) == ["Blue Train", "Giant Steps"])
    }

    /// The names of a process's threads and whether it holds an inotify descriptor.
    static func threadsAndInotify(_ pid: Int32) -> (threads: [String], inotify: Bool) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let threads = tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let inotify = descriptors.contains { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)"))?
                .contains("inotify") == true
        }
        return (threads, inotify)
    }

    @Test func anAlbumCopiedInWhileRunningShowsUp() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let music = base.appendingPathComponent("Music")
        try Self.makeCollection(at: music)
        // A new album, made beside the music folder, then copied in.
        let staging = base.appendingPathComponent("Giant Steps")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        for (number, title) in ["Giant Steps", "Cousin Mary", "Naima"].enumerated() {
            let path = staging.appendingPathComponent("0\(number + 1) \(title).flac").path
            try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "1", "sine", "500", "vol", "0.2"])
            try TestTool.run("metaflac", [
                "--set-tag=TITLE=\(title)", "--set-tag=ARTIST=Trane", "--set-tag=ALBUM=Giant Steps",
                "--set-tag=TRACKNUMBER=\(number + 1)", path,
            ])
        }
        let daemon = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        let first = try Self.scanEnded(client, atLeast: 1)
        let (threads, inotify) = Self.threadsAndInotify(daemon.pid)
        #expect(threads.contains { $0.hasPrefix("reel.music.watc") } && inotify, "a watcher with music folders")

        try TestTool.run("cp", ["-r", staging.path, music.path + "/Trane/"])
        let started = Date()
        var albums: [String] = []
        while Date().timeIntervalSince(started) < 20 {
            albums = (try client.result("music.albums", ["artist": "Trane"])["albums"]?.arrayValue ?? [])
                .compactMap { $0["name"]?.stringValue }
            if albums.contains("Giant Steps") { break }
            usleep(20_000)
        }
        print("music watch (reeld): an album copied in shows in music.albums after \(String(format: "%.3f", Date().timeIntervalSince(started))) s")
        #expect(albums.sorted() == ["Blue Train", "Giant Steps"])
        let tracks = try client.result("music.tracks", ["album": "Giant Steps"])["tracks"]?.arrayValue ?? []
        #expect(tracks.map { $0["title"]?.stringValue } == ["Giant Steps", "Cousin Mary", "Naima"])
        // The batch was pushed as a scan of its own that read the three files.
        let batch = try Self.scanEnded(client, atLeast: (first["scan"]?.intValue ?? 1) + 1)
        #expect(batch["indexed"]?.intValue == 3 && batch["removed"]?.intValue == 0 && batch["moved"]?.intValue == 0)

        // A rename keeps the track's id.
        let naima = try #require(tracks.last?["id"]?.intValue)
        try FileManager.default.moveItem(
            atPath: music.path + "/Trane/Giant Steps/03 Naima.flac", toPath: music.path + "/Trane/Giant Steps/03 Naïma.flac")
        let renamed = try Self.scanEnded(client, atLeast: (batch["scan"]?.intValue ?? 2) + 1)
        #expect(renamed["moved"]?.intValue == 1)
        let after = try client.result("music.tracks", ["album": "Giant Steps"])["tracks"]?.arrayValue ?? []
        #expect(after.last?["id"]?.intValue == naima)
        #expect(after.last?["path"]?.stringValue?.hasSuffix("03 Naïma.flac") == true)
    }

    /// Queue entries of music folder files carry their title, artist and album (an album, and a
    /// file added by path, alike), shown by `reel queue`, and kept across a restart.
    @Test func queueEntriesOfMusicFilesShowTheirTagsAndKeepThemAcrossARestart() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        try Self.makeCollection(at: music)
        let first = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try first.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try Self.scanEnded(client, atLeast: 1)
        let album = try client.result("queue.add", ["album": "Été"])["entries"]?.arrayValue ?? []
        #expect(album.first?["title"]?.stringValue == "Première")
        #expect(album.first?["artist"]?.stringValue == "Zoë")
        #expect(album.first?["album"]?.stringValue == "Été")
        let byPath = music.appendingPathComponent("Trane/Blue Train/01 Moment.flac").path
        let file = try client.result("queue.add", ["file": .string(byPath)])["entries"]?.arrayValue ?? []
        #expect(file.first?["title"]?.stringValue == "Moment")
        #expect(file.first?["artist"]?.stringValue == "Trane")
        // An untagged file is shown by its file name; a file outside the music folders has no tags.
        let loose = try client.result("queue.add", ["file": .string(music.appendingPathComponent("loose.wav").path)])
        #expect(loose["entries"]?.arrayValue?.first?["title"]?.stringValue == "loose")
        #expect(loose["entries"]?.arrayValue?.first?["artist"] == nil)
        let outside: String = try first.tone("outside.wav", seconds: 1.0)
        let other = try client.result("queue.add", ["file": .string(outside)])
        #expect(other["entries"]?.arrayValue?.first?["title"] == nil)
        let table = try CLI.run(["queue"], environment: ["REEL_SOCKET": first.socketPath])
        #expect(table.stdout.contains("Zoë - Première"), "\(table)")
        #expect(table.stdout.contains("Trane - Moment"), "\(table)")

        usleep(1_500_000)  // the queue is saved within 1 s of a change
        #expect(first.stop() == 0)
        let second = try DaemonProcess(
            arguments: ["--data-dir", first.directory.path + "/data"], environment: ["REEL_MUSIC_DIRS": music.path])
        let entries = try second.client().result("queue.list")["entries"]?.arrayValue ?? []
        #expect(entries.map { $0["title"]?.stringValue } == ["Première", "Moment", "loose", nil])
        #expect(entries.first?["album"]?.stringValue == "Été")
    }

    /// Whether `unshare -Ur` can give reeld a user namespace of its own, where the limit of
    /// inotify watches can be set low without touching the machine's.
    static let canLimitWatches: Bool = {
        let (status, output) = (try? AudioAnalysis.run(
            "unshare", ["-Ur", "sh", "-c", "echo 4 > /proc/sys/user/max_inotify_watches && cat /proc/sys/user/max_inotify_watches"]))
            ?? (1, "")
        return status == 0 && output.contains("4")
    }()

    @Test(.enabled(if: canLimitWatches, "needs unshare -Ur (user namespaces) to lower the inotify watch limit for reeld alone"))
    func runningOutOfInotifyWatchesIsOneClearWarningAndRescansStillWork() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        for folder in 0..<8 {
            let path = music.appendingPathComponent("Folder \(folder)/old-\(folder).wav").path
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try TestTool.run("sox", ["-n", "-r", "8000", "-c", "1", "-b", "16", path, "synth", "0.1", "sine", "300"])
        }
        // reeld in a user namespace of its own whose limit is 3 watches (9 folders to watch).
        let daemon = try DaemonProcess(
            environment: ["REEL_MUSIC_DIRS": music.path],
            wrapper: ["/usr/bin/unshare", "-Ur", "sh", "-c", "echo 3 > /proc/sys/user/max_inotify_watches && exec \"$0\" \"$@\""])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        let first = try Self.scanEnded(client, atLeast: 1)
        #expect(first["indexed"]?.intValue == 8)
        let warnings = daemon.log().components(separatedBy: "\n").filter { $0.contains("fs.inotify.max_user_watches") }
        #expect(warnings.count == 1, "one warning naming the sysctl: \(warnings)")
        #expect(warnings.first?.contains("warning") == true)

        // A file in each folder; a rescan finds them all, watched or not.
        for folder in 0..<8 {
            let path = music.appendingPathComponent("Folder \(folder)/new-\(folder).wav").path
            try TestTool.run("sox", ["-n", "-r", "8000", "-c", "1", "-b", "16", path, "synth", "0.1", "sine", "400"])
        }
        let rescan = try client.result("library.rescan")
        _ = try Self.scanEnded(client, atLeast: rescan["scan"]?.intValue ?? 2)
        let found = try client.result("music.search", ["text": "new-"])["tracks"]?.arrayValue ?? []
        #expect(found.count == 8)
        #expect(daemon.stop() == 0)
    }

    /// A clean stop leaves the library in its database file: the write-ahead log, grown by the
    /// scan's writes, is emptied (it was left at its largest size).
    @Test func aCleanStopLeavesNoWriteAheadLog() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        try Self.makeCollection(at: music)
        let daemon = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try Self.scanEnded(client, atLeast: 1)
        let wal = daemon.directory.path + "/data/library.sqlite-wal"
        #expect(((try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0) > 0)
        #expect(daemon.stop() == 0)
        let size = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
        #expect(size == 0, "library.sqlite-wal is \(size) bytes after a clean stop")
    }

    /// An album without an artist whose name another artist's album has too: named with
    /// `albumArtist: ""`; without `albumArtist` the name is ambiguous.
    @Test func anAlbumWithoutAnArtistIsNamedWithAnEmptyArtist() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        for (folder, artist) in [("a", "Trane"), ("b", nil)] {
            let path = music.appendingPathComponent(folder).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            let file = path + "/1.flac"
            try TestTool.run("sox", ["-n", "-r", "44100", "-c", "1", "-b", "16", file, "synth", "0.5", "sine", "440"])
            try TestTool.run("metaflac", ["--set-tag=ALBUM=Demos", "--set-tag=TITLE=\(folder)"] + (artist.map { ["--set-tag=ARTIST=\($0)"] } ?? []) + [file])
        }
        let daemon = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try Self.scanEnded(client, atLeast: 1)
        if case .failure(let error) = try client.call("music.tracks", ["album": "Demos"]) {
            #expect(error.reason == "name_taken")
        } else {
            Issue.record("an ambiguous album name was answered")
        }
        let bare = try client.result("music.tracks", ["album": "Demos", "albumArtist": ""])["tracks"]?.arrayValue ?? []
        #expect(bare.map { $0["title"]?.stringValue } == ["b"])
        let trane = try client.result("music.tracks", ["album": "Demos", "albumArtist": "Trane"])["tracks"]?.arrayValue ?? []
        #expect(trane.map { $0["title"]?.stringValue } == ["a"])
        let added = try client.result("queue.add", ["album": "Demos", "albumArtist": ""])["entries"]?.arrayValue ?? []
        #expect(added.first?["title"] == .string("b"))
    }

    @Test func withoutMusicFoldersRescanSaysSo() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        guard case .failure(let error) = try client.call("library.rescan") else {
            Issue.record("rescan without music folders succeeded")
            return
        }
        #expect(error.message.contains("music_dirs"))
        #expect(try client.result("music.artists")["artists"]?.arrayValue?.isEmpty == true)
        let (threads, inotify) = Self.threadsAndInotify(daemon.pid)
        #expect(!threads.isEmpty && !threads.contains { $0.hasPrefix("reel.music") } && !inotify, "no music folders: no watcher")
    }
}
