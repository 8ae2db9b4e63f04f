// Playlist files in a music folder over JSON-RPC, through the real reeld: `playlists.get` and
// `playlists.load` take one by its path in the music folder, entries relative to its folder.

import Foundation
import ReelProtocol
import Testing

@Suite struct FolderPlaylistProtocolTests {
    @Test func aPlaylistFileOfTheMusicFolderIsReadAndLoadedByItsPath() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-music-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        try MusicFoldersTests.makeCollection(at: music)
        let list = music.appendingPathComponent("Trane/Blue Train/side.m3u")
        try "#EXTM3U\n02 Locomotion.flac\n../../loose.wav\ngone.flac\n../../../../etc/passwd\n"
            .write(to: list, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try MusicFoldersTests.scanEnded(client, atLeast: 1)

        let listing = try client.result("playlists.get", ["name": "Trane/Blue Train/side.m3u"])
        #expect(listing["length"] == 4)
        let entries = listing["entries"]?.arrayValue ?? []
        #expect(entries.count == 4)
        #expect(entries.first?["source"]?["path"]?.stringValue == music.path + "/Trane/Blue Train/02 Locomotion.flac")
        #expect(entries.map { $0["missing"] == true } == [false, false, true, true])

        let loaded = try client.result("playlists.load", ["name": "Trane/Blue Train/side.m3u"])
        #expect(loaded["entries"]?.arrayValue?.count == 2)
        let skipped = loaded["skipped"]?.arrayValue ?? []
        #expect(skipped.map { $0["position"]?.intValue } == [2, 3])
        #expect(skipped.map { $0["entry"]?.stringValue } == ["Trane/Blue Train/gone.flac", "etc/passwd"])
        #expect(skipped.last?["message"]?.stringValue?.contains("climbs out of the music folder") == true)
        #expect(try client.result("queue.list")["length"] == 2)

        // Not a playlist file of the music folder: not_found, the queue unchanged.
        guard case .failure(let error) = try client.call("playlists.load", ["name": "Trane/Blue Train/none.m3u"]) else {
            Issue.record("a playlist file that is not there loaded")
            return
        }
        #expect(error.reason == "not_found")
        #expect(try client.result("queue.list")["length"] == 2)

        // The `/Music` branch lists it as an item of kind `playlist`, after the folder's tracks;
        // adding or playing it adds its entries; adding its folder adds the tracks only.
        let album = try client.result("library.list", ["path": "/Music/Trane/Blue Train"])
        let items = album["items"]?.arrayValue ?? []
        #expect(items.compactMap { $0["name"]?.stringValue } == [
            "01 Moment.flac", "02 Locomotion.flac", "03 Lazy Bird.flac", "side.m3u",
        ])
        let item = try #require(items.last)
        #expect(item["kind"] == .string("playlist") && item["id"] == .string("music:/Trane/Blue Train/side.m3u"))
        #expect(item["readOnly"] == .bool(true) && item["file"]?.stringValue == list.path)
        #expect(try client.result("library.get", ["path": "/Music/Trane/Blue Train/side.m3u"])["kind"] == .string("playlist"))
        _ = try client.result("queue.clear")
        let added = try client.result("queue.add", ["item": "music:/Trane/Blue Train/side.m3u"])
        #expect(added["entries"]?.arrayValue?.compactMap { $0["source"]?["path"]?.stringValue } == [
            music.path + "/Trane/Blue Train/02 Locomotion.flac", music.path + "/loose.wav",
        ])
        _ = try client.result("queue.clear")
        _ = try client.result("queue.add", ["path": "/Music/Trane/Blue Train"])
        #expect(try client.result("queue.list")["length"] == 3, "a folder adds its tracks, not its playlist files")
        _ = try client.result("player.play", ["path": "/Music/Trane/Blue Train/side.m3u"])
        let queue = try client.result("queue.list")["entries"]?.arrayValue ?? []
        #expect(queue.contains { $0["source"]?["path"]?.stringValue == music.path + "/loose.wav" })
        guard case .failure(let gone) = try client.call("queue.add", ["path": "/Music/Trane/Blue Train/none.m3u"]) else {
            Issue.record("a playlist file that is not there was added")
            return
        }
        #expect(gone.reason == "not_found")

        // The CLI: `reel playlist PATH` shows it, `reel load PATH` loads it, naming what it skips.
        let env = ["REEL_SOCKET": daemon.socketPath]
        let show = try CLI.run(["playlist", "Trane/Blue Train/side.m3u"], environment: env)
        #expect(show.status == 0 && show.stdout.contains("1. Trane — Locomotion"), "\(show)")
        #expect(show.stdout.contains("4. etc/passwd  (missing)"), "\(show)")
        let load = try CLI.run(["load", "Trane/Blue Train/side.m3u"], environment: env)
        #expect(load.status == 0 && load.stdout.contains("added 2 entries"), "\(load)")
        #expect(load.stderr.contains("skipped 4. etc/passwd"), "\(load)")
    }
}
