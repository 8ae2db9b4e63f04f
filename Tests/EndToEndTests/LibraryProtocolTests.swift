import Foundation
import Glibc
import Logging
import ReelLibrary
import ReelModel
import ReelProtocol
import Testing

/// The library over the real socket: streams seen by a second client while a first changes the
/// tree, the until-deleted endings, the player following its recording, and what a restart
/// finds after files went missing or the daemon was killed in the middle of a delete.
@Suite(.serialized) struct LibraryProtocolTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]


    func reason(_ result: Result<JSONValue, RPCError>) -> String? {
        if case .failure(let error) = result { return error.reason }
        return nil
    }

    /// Notifications for `subscription` until `count` have arrived.
    func pushes(_ client: RPCTestClient, _ count: Int) throws -> [(method: String, params: JSONObject)] {
        var result: [(method: String, params: JSONObject)] = []
        while result.count < count { result.append(try client.nextNotification()) }
        return result
    }

    @Test func everyErrorReasonOfTheTree() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        _ = try client.result("library.createFolder", ["name": "A"])
        _ = try client.result("library.createFolder", ["parentPath": "/A", "name": "B"])
        let file = try daemon.tone("t.wav", seconds: 0.5)
        _ = try client.result("library.import", ["file": .string(file), "folderPath": "/A", "name": "rec"])
        #expect(reason(try client.call("library.createFolder", ["name": "A"])) == "name_taken")
        #expect(reason(try client.call("library.createFolder", ["name": "a/b"])) == "invalid_name")
        #expect(reason(try client.call("library.createFolder", ["name": ".."])) == "invalid_name")
        #expect(reason(try client.call("library.createFolder", ["parentPath": "/A/rec", "name": "x"])) == "not_a_folder")
        #expect(reason(try client.call("library.list", ["path": "/A/rec"])) == "not_a_folder")
        #expect(reason(try client.call("library.get", ["path": "/nope"])) == "not_found")
        #expect(reason(try client.call("library.get", ["item": "1b3e0a57-0000-0000-0000-000000000000"])) == "not_found")
        #expect(reason(try client.call("library.move", ["path": "/A", "toPath": "/A/B"])) == "cycle")
        #expect(reason(try client.call("library.move", ["path": "/A", "toPath": "/A"])) == "cycle")
        #expect(reason(try client.call("library.rename", ["path": "/", "name": "x"])) == "root")
        #expect(reason(try client.call("library.delete", ["path": "/"])) == "root")
        #expect(reason(try client.call("library.move", ["path": "/", "toPath": "/A"])) == "root")
        // A folder plays its recordings (protocol 2); one that holds none is not found.
        #expect(reason(try client.call("player.play", ["path": "/A/B"])) == "not_found")
        #expect(reason(try client.call("queue.add", ["path": "/A/B"])) == "not_found")
        if case .failure(let error) = try client.call("library.search", ["query": "x", "limit": 501]) {
            #expect(error.code == -32602)
        } else {
            Issue.record("a limit of 501 was accepted")
        }
        let text = daemon.directory.appendingPathComponent("notes.txt").path
        try "not audio".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(reason(try client.call("library.import", ["file": .string(text)])) == "unsupported_format")
        #expect(reason(try client.call("library.import", ["file": "/no/such.wav"])) == "not_found")
        // Nothing half-done: the failed import left no item and no file.
        let root = try client.result("library.list")
        #expect(root["items"]?.arrayValue?.map { $0["name"] } == [.string("A")])
        let audio = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path + "/data/audio")
        #expect(audio.count == 1)
    }

    @Test func listPutsFoldersFirstThenNames() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let file = try daemon.tone("t.wav", seconds: 0.2)
        for name in ["b-rec", "A-rec"] {
            _ = try client.result("library.import", ["file": .string(file), "name": .string(name)])
        }
        for name in ["zeta", "Alpha"] { _ = try client.result("library.createFolder", ["name": .string(name)]) }
        let listing = try client.result("library.list", ["path": "/"])
        #expect(listing["folder"]?["path"] == .string("/"))
        #expect(listing["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["Alpha", "zeta", "A-rec", "b-rec"])
        let recording = try #require(listing["items"]?.arrayValue?.last)
        #expect(recording["kind"] == .string("recording"))
        #expect(recording["duration"]?.doubleValue.map { abs($0 - 0.2) < 0.01 } == true)
        #expect(recording["format"]?["codec"] == .string("wav"))
        #expect((recording["size"]?.intValue ?? 0) > 0)
    }

    @Test func aSecondClientSeesEveryChangeOnceInOrder() throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.client()
        let watcher = try daemon.client()
        _ = try writer.result("library.createFolder", ["name": "Meetings"])
        let folderSubscription = try watcher.result("subscribe", ["stream": "folder", "path": "/Meetings"])["subscription"]
        let first = try watcher.nextNotification()
        #expect(first.method == "folder.contents")
        #expect(first.params["items"]?.arrayValue?.isEmpty == true)
        let librarySubscription = try watcher.result("subscribe", ["stream": "library"])["subscription"]

        let file = try daemon.tone("t.wav", seconds: 0.2)
        _ = try writer.result("library.import", ["file": .string(file), "folderPath": "/Meetings", "name": "Standup"])
        _ = try writer.result("library.rename", ["path": "/Meetings/Standup", "name": "Daily"])
        _ = try writer.result("library.createFolder", ["name": "Elsewhere"])  // not in /Meetings
        _ = try writer.result("library.move", ["path": "/Meetings/Daily", "toPath": "/Elsewhere"])

        // The folder stream: one push per change to its children (not for /Elsewhere's creation).
        // The library stream: one event per change, in commit order.
        let all = try pushes(watcher, 3 + 4)
        let contents = all.filter { $0.method == "folder.contents" }
        let events = all.filter { $0.method == "library.changed" }
        #expect(contents.allSatisfy { $0.params["subscription"] == folderSubscription })
        #expect(contents.map { $0.params["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [] }
            == [["Standup"], ["Daily"], []])
        #expect(events.allSatisfy { $0.params["subscription"] == librarySubscription })
        #expect(events.compactMap { $0.params["change"]?.stringValue } == ["added", "renamed", "added", "moved"])
        #expect(events.last?.params["item"]?["path"] == .string("/Elsewhere/Daily"))
        // Nothing more is pending.
        _ = try watcher.result("player.status")
        #expect(watcher.notifications.isEmpty)
    }

    @Test func folderAndItemStreamsEndWhenDeleted() throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.client()
        let watcher = try daemon.client()
        _ = try writer.result("library.createFolder", ["name": "Old"])
        let file = try daemon.tone("t.wav", seconds: 0.2)
        let item = try writer.result("library.import", ["file": .string(file), "folderPath": "/Old", "name": "take"])
        let folderID = try #require(try watcher.result("subscribe", ["stream": "folder", "path": "/Old"])["subscription"]?.intValue)
        let itemID = try #require(try watcher.result("subscribe", ["stream": "item", "item": item["id"]!])["subscription"]?.intValue)
        let initial = try pushes(watcher, 2)
        #expect(initial.map(\.method) == ["folder.contents", "item.changed"])

        _ = try writer.result("library.rename", ["path": "/Old/take", "name": "take 2"])
        let renamed = try pushes(watcher, 2)
        #expect(Set(renamed.map(\.method)) == ["folder.contents", "item.changed"])

        // Renaming the folder above it changes the item's path: the item stream says so too.
        _ = try writer.result("library.rename", ["path": "/Old", "name": "Older"])
        let moved = try pushes(watcher, 2)
        #expect(Set(moved.map(\.method)) == ["folder.contents", "item.changed"])
        #expect(moved.first { $0.method == "item.changed" }?.params["item"]?["path"] == .string("/Older/take 2"))

        #expect(try writer.result("library.delete", ["path": "/Older"])["deleted"] == .int(2))
        let endings = try pushes(watcher, 2)
        #expect(Set(endings.map(\.method)) == ["folder.deleted", "item.deleted"])
        #expect(endings.first { $0.method == "item.deleted" }?.params["item"]?["name"] == .string("take 2"))
        // Both subscriptions are over.
        #expect(reason(try watcher.call("unsubscribe", ["subscription": .int(Int64(folderID))])) == nil)
        let again = try watcher.call("unsubscribe", ["subscription": .int(Int64(itemID))])
        if case .failure(let error) = again { #expect(error.code == -32602) } else { Issue.record("still subscribed") }
        #expect(reason(try watcher.call("subscribe", ["stream": "folder", "path": "/Older"])) == "not_found")
    }

    @Test func folderStreamFollowsARenameAboveIt() throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.client()
        let watcher = try daemon.client()
        _ = try writer.result("library.createFolder", ["name": "A"])
        _ = try writer.result("library.createFolder", ["parentPath": "/A", "name": "B"])
        _ = try watcher.result("subscribe", ["stream": "folder", "path": "/A/B"])
        #expect(try watcher.nextNotification().params["folder"]?["path"] == .string("/A/B"))
        _ = try writer.result("library.rename", ["path": "/A", "name": "Z"])
        let push = try watcher.nextNotification()
        #expect(push.method == "folder.contents")
        #expect(push.params["folder"]?["path"] == .string("/Z/B"))
    }

    @Test func playingARecordingFollowsRenamesAndStopsWhenDeleted() throws {
        let device = Self.pulse == nil ? "null" : "pulse"
        let daemon = try DaemonProcess(device: device)
        let client = try daemon.client()
        let watcher = try daemon.client()
        _ = try client.result("library.createFolder", ["name": "Talks"])
        let file = try daemon.tone("t.wav", seconds: 5)
        _ = try client.result("library.import", ["file": .string(file), "folderPath": "/Talks", "name": "keynote"])
        let played = try client.result("player.play", ["path": "/Talks/keynote"])
        #expect(played["source"]?["path"] == .string("/Talks/keynote"))
        #expect(played["source"]?["name"] == .string("keynote"))
        _ = try watcher.result("subscribe", ["stream": "player", "interval": 10])
        _ = try watcher.nextNotification()

        // On the null device the file plays out at once: the pushes of its end may come first.
        func push(where matches: (JSONObject) -> Bool) throws -> JSONObject? {
            for _ in 0..<10 {
                let push = try watcher.nextNotification()
                if matches(push.params) { return push.params }
            }
            return nil
        }
        _ = try client.result("library.rename", ["path": "/Talks", "name": "Conferences"])
        let renamed = try push { $0["source"]?["path"]?.stringValue?.hasPrefix("/Talks") != true }
        #expect(renamed?["source"]?["path"] == .string("/Conferences/keynote"))
        _ = try client.result("library.rename", ["path": "/Conferences/keynote", "name": "opening"])
        let named = try push { $0["source"]?["name"] != .string("keynote") }
        #expect(named?["source"]?["name"] == .string("opening"))
        #expect(try client.result("player.status")["source"]?["path"] == .string("/Conferences/opening"))

        if device == "pulse" {
            #expect(try client.result("player.status")["state"] == .string("playing"))
        }
        _ = try client.result("library.delete", ["path": "/Conferences"])
        var state = try client.result("player.status")
        for _ in 0..<50 where state["state"] != .string("stopped") {
            usleep(20_000)
            state = try client.result("player.status")
        }
        #expect(state["state"] == .string("stopped"))
        #expect(state["source"] == .null)
    }

    @Test func searchPagesThroughMatches() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        for index in 0..<12 { _ = try client.result("library.createFolder", ["name": .string("Meeting \(index)")]) }
        _ = try client.result("library.createFolder", ["name": "Other"])
        var seen: [String] = []
        var cursor: JSONValue = .null
        repeat {
            var params: JSONObject = ["query": "meeting", "limit": 5]
            if cursor != .null { params["cursor"] = cursor }
            let page = try client.result("library.search", params)
            seen += page["items"]?.arrayValue?.compactMap { $0["path"]?.stringValue } ?? []
            cursor = page["nextCursor"] ?? .null
        } while cursor != .null
        #expect(seen.count == 12)
        #expect(Set(seen).count == 12)
        #expect(reason(try client.call("library.search", ["query": "x", "cursor": "garbage"])) != nil)
    }

    @Test func restartReconcilesAMissingFileAndAStrayFile() throws {
        let first = try DaemonProcess()
        let client = try first.client()
        let file = try first.tone("t.wav", seconds: 0.2)
        let item = try client.result("library.import", ["file": .string(file), "name": "kept"])
        let id = try #require(item["id"]?.stringValue)
        first.stop()
        let audio = first.directory.path + "/data/audio"
        try FileManager.default.removeItem(atPath: "\(audio)/\(id).wav")
        try Data("stray".utf8).write(to: URL(fileURLWithPath: "\(audio)/0badf00d-0000-0000-0000-000000000000.flac"))

        let second = try DaemonProcess(arguments: ["--data-dir", first.directory.path + "/data"])
        // Playing it says which recording has no audio.
        if case .failure(let error) = try second.client().call("player.play", ["item": .string(id)]) {
            #expect(error.reason == "not_found")
            #expect(error.message.hasPrefix("cannot play the recording /kept:"), "\(error.message)")
        } else {
            Issue.record("a recording without its file played")
        }
        let log = second.log()
        #expect(log.contains("0badf00d-0000-0000-0000-000000000000.flac"), "the stray file is logged")
        #expect(log.contains(id), "the missing recording is logged")
        #expect(!FileManager.default.fileExists(atPath: "\(audio)/0badf00d-0000-0000-0000-000000000000.flac"))
        // The recording's row is kept and reported, not silently dropped.
        #expect(try second.client().result("library.get", ["item": .string(id)])["name"] == .string("kept"))
    }

    @Test func killedInTheMiddleOfALargeDeleteLeavesAllOrNothing() throws {
        // Lay out 10,000 recordings with files before the daemon starts.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bigdelete-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        do {
            let store = try LibraryStore(directory: data, logger: Logger(label: "test"))
            let folder = try store.createFolder(name: "Archive")
            let format = AudioFormat(codec: "wav", sampleRate: 48000, channels: 1)
            let items = try store.insertRecordings(
                (0..<10_000).map { NewRecording(parent: folder.id, name: "take \($0)", format: format, duration: 1, size: 4) })
            for item in items {
                FileManager.default.createFile(atPath: try store.audioPath(for: item), contents: Data("RIFF".utf8))
            }
        }
        let daemon = try DaemonProcess(arguments: ["--data-dir", data])
        let client = try daemon.client()
        try client.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"library.delete\",\"params\":{\"path\":\"/Archive\"}}\n")
        usleep(30_000)
        kill(daemon.pid, SIGKILL)
        daemon.process.waitUntilExit()

        let restarted = try DaemonProcess(arguments: ["--data-dir", data])
        let check = try restarted.client()
        let audio = try FileManager.default.contentsOfDirectory(atPath: data + "/audio")
        switch try check.call("library.list", ["path": "/Archive"]) {
        case .success(let listing):
            // The delete had not committed: every row is there, with its file.
            #expect(listing["items"]?.arrayValue?.count == 10_000)
            #expect(audio.count == 10_000)
        case .failure(let error):
            // It had committed: no row is left, and no file is left in the audio directory.
            #expect(error.reason == "not_found")
            #expect(try check.result("library.search", ["query": "take"])["items"]?.arrayValue?.isEmpty == true)
            #expect(audio.isEmpty, "\(audio.count) files of deleted recordings are still in the audio directory")
        }
    }
}
