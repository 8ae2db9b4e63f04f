import Foundation
import ReelProtocol
import Testing

/// `playlists.*` and the `playlists` stream through a real reeld's socket, with `playlist_dir`
/// given by its environment variable; then the CLI's playlist commands on the same daemon.
@Suite struct PlaylistProtocolTests {
    @Test func saveGetLoadEditAndTheStreamOverTheSocket() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-playlists-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let daemon = try DaemonProcess(environment: ["REEL_PLAYLIST_DIR": scratch])
        defer { daemon.stop() }
        let a = try daemon.tone("a.wav", seconds: 1)
        let b = try daemon.tone("b.wav", seconds: 1)
        let client = try daemon.client()
        let watcher = try daemon.client()
        let subscribed = try watcher.result("subscribe", ["stream": "playlists"])
        #expect(subscribed["subscription"] != nil)

        _ = try client.result("queue.add", ["file": .string(a)])
        _ = try client.result("queue.add", ["file": .string(b)])
        let saved = try client.result("playlists.save", ["name": "Evening"])
        #expect(saved["name"] == "Evening" && saved["length"] == 2)
        #expect(saved["modified"]?.stringValue?.contains("T") == true)
        #expect(try String(contentsOfFile: scratch + "/Evening.m3u", encoding: .utf8) == "\(a)\n\(b)\n")
        let push = try watcher.nextNotification()
        #expect(push.method == "playlists.changed" && push.params["name"] == "Evening")

        // Taken name, bad name, unknown name: the reasons.
        func reason(_ method: String, _ params: JSONObject) throws -> String? {
            guard case .failure(let error) = try client.call(method, params) else { return nil }
            return error.data?["reason"]?.stringValue
        }
        #expect(try reason("playlists.save", ["name": "Evening"]) == "name_taken")
        #expect(try reason("playlists.save", ["name": "a/b"]) == "invalid_name")
        #expect(try reason("playlists.get", ["name": "Nothing"]) == "not_found")
        guard case .failure(let badMode) = try client.call("playlists.save", ["name": "X", "mode": "merge"]) else {
            Issue.record("an unknown mode was taken")
            return
        }
        #expect(badMode.code == -32602 && badMode.message.contains("merge"))

        // An entry that is gone stays, is shown missing and is skipped by a load.
        try FileManager.default.removeItem(atPath: b)
        let listing = try client.result("playlists.get", ["name": "Evening"])
        #expect(listing["length"] == 2)
        #expect(listing["entries"]?.arrayValue?[0]["source"]?["path"]?.stringValue == a)
        #expect(listing["entries"]?.arrayValue?[1]["missing"] == true && listing["entries"]?.arrayValue?[1]["source"] == .null)
        _ = try client.result("queue.clear")
        let loaded = try client.result("playlists.load", ["name": "Evening"])
        #expect(loaded["entries"]?.arrayValue?.count == 1)
        #expect(loaded["skipped"]?.arrayValue?[0]["position"] == 1 && loaded["skipped"]?.arrayValue?[0]["entry"]?.stringValue == b)
        #expect(loaded["skipped"]?.arrayValue?[0]["reason"] == "not_found")
        #expect(try client.result("queue.list")["length"] == 1)

        // Edits, each pushed; rename pushes both names; delete.
        _ = try client.result("playlists.add", ["name": "Evening", "url": "http://radio.example/live", "position": 0])
        _ = try client.result("playlists.move", ["name": "Evening", "from": 0, "to": 2])
        _ = try client.result("playlists.remove", ["name": "Evening", "positions": [1]])
        #expect(try String(contentsOfFile: scratch + "/Evening.m3u", encoding: .utf8) == "\(a)\nhttp://radio.example/live\n")
        _ = try client.result("playlists.rename", ["name": "Evening", "to": "Night"])
        _ = try client.result("playlists.delete", ["name": "Night"])
        #expect(try client.result("playlists.list")["playlists"] == .array([]))
        var names: [String] = []
        while names.count < 6 {
            let next = try watcher.nextNotification()
            if next.method == "playlists.changed", let name = next.params["name"]?.stringValue { names.append(name) }
        }
        #expect(names == ["Evening", "Evening", "Evening", "Evening", "Night", "Night"])

        // The CLI on the same daemon: save, list, show, load.
        let env = ["REEL_SOCKET": daemon.socketPath]
        let save = try CLI.run(["save", "Mine"], environment: env)
        #expect(save.status == 0 && save.stdout.contains("saved Mine: 1 entry"), "\(save)")
        let list = try CLI.run(["playlists"], environment: env)
        #expect(list.stdout.contains("Mine  (1 entry)"), "\(list)")
        let show = try CLI.run(["playlist", "Mine"], environment: env)
        #expect(show.stdout.contains("1. \(a)"), "\(show)")
        let load = try CLI.run(["load", "Mine"], environment: env)
        #expect(load.status == 0 && load.stdout.contains("added 1 entry from Mine"), "\(load)")
        let missing = try CLI.run(["load", "Nothing"], environment: env)
        #expect(missing.status != 0 && missing.stderr.contains("no playlist named Nothing"), "\(missing)")
    }
}
