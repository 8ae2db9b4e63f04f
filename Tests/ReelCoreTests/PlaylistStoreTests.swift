// The stored playlists on a real core (files, recordings, the queue): save, load through the one
// atomic add with missing entries skipped and kept, edits, and recordings renamed or moved.
import Foundation
import ReelModel
import Testing

@testable import ReelCore

@Suite struct PlaylistStoreTests {
    final class Fixture {
        let core: ReelCore
        let directory: String
        let a: String, b: String
        var playlists: PlaylistStore { core.playlists }
        var playlistDirectory: String { core.playlists.directory }

        init() throws {
            (core, directory) = try makeCore()
            core.start(resume: .paused)
            a = directory + "/a.wav"
            b = directory + "/b.wav"
            try writeWAV(a)
            try writeWAV(b)
        }

        deinit {
            core.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func wait<Value: Sendable>(_ call: (@escaping @Sendable (Result<Value, ReelError>) -> Void) -> Void) throws -> Result<Value, ReelError> {
            let done = Awaited<Result<Value, ReelError>>()
            call { done.put($0) }
            return try #require(done.get(timeout: 20))
        }

        func value<Value: Sendable>(_ call: (@escaping @Sendable (Result<Value, ReelError>) -> Void) -> Void) throws -> Value {
            try wait(call).get()
        }

        func add(_ additions: [QueueAddition]) throws {
            _ = try value { core.player.add(additions, at: nil, afterCurrent: false, reply: $0) }
        }

        func importRecording(_ path: String, folder: String, name: String) throws -> Item {
            try value { core.library.importFile(path: path, folder: .path(folder), name: name, reply: $0) }
        }

        func text(_ name: String) -> String? {
            FileManager.default.contents(atPath: playlistDirectory + "/" + name + ".m3u").map { String(decoding: $0, as: UTF8.self) }
        }

        var queueSources: [PlayerSource] { (try? core.player.listQueue().entries.map(\.source)) ?? [] }
    }

    @Test func theQueueIsSavedAsLinesAndListed() throws {
        let f = try Fixture()
        _ = try f.value { f.core.library.createFolder(parent: .root, name: "Notes", reply: $0) }
        let take = try f.importRecording(f.a, folder: "/Notes", name: "idea")
        try f.add([.file(f.b), .recording(.id(take.id)), .url("http://radio.example/live")])
        let saved = try f.value { f.playlists.save("Mine", reply: $0) }
        #expect(saved.name == "Mine" && saved.length == 3)
        #expect(f.text("Mine") == "\(f.b)\nRecordings/Notes/idea.wav\nhttp://radio.example/live\n")
        // `create` refuses a name taken; `append` adds the queue after its entries.
        let again = try f.wait { f.playlists.save("Mine", reply: $0) }
        #expect(throws: ReelError.self) { try again.get() }
        if case .failure(let error) = again { #expect(error.reason == .nameTaken) }
        let appended = try f.value { f.playlists.save("Mine", mode: .append, reply: $0) }
        #expect(appended.length == 6)
        let list = try f.value { f.playlists.list(reply: $0) }
        #expect(list.map(\.name) == ["Mine"] && list.map(\.length) == [6])
        let listing = try f.value { f.playlists.get("Mine", start: 1, count: 2, reply: $0) }
        #expect(listing.length == 6)
        #expect(listing.entries.map(\.position) == [1, 2])
        #expect(listing.entries.map(\.target) == [.recording(take), .url("http://radio.example/live")])
    }

    /// Missing entries are skipped as MPD does, named in the outcome, and stay in the file; the
    /// rest is one change of the queue.
    @Test func aLoadSkipsWhatIsGoneKeepsItInTheFileAndIsOneQueueVersion() throws {
        let f = try Fixture()
        try FileManager.default.createDirectory(atPath: f.playlistDirectory, withIntermediateDirectories: true)
        let file = "#EXTM3U\n\(f.a)\n\(f.directory)/gone.wav\nRecordings/Nowhere/x.flac\n\(f.b)\nftp://no.example/x\n"
        _ = FileManager.default.createFile(atPath: f.playlistDirectory + "/Mixed.m3u", contents: Data(file.utf8))
        let before = f.core.player.queueChanges.latest.value.version
        let outcome = try f.value { f.playlists.load("Mixed", reply: $0) }
        #expect(outcome.entries.map(\.source) == [.file(path: f.a), .file(path: f.b)])
        #expect(outcome.skipped.map(\.position) == [1, 2, 4])
        #expect(outcome.skipped.map(\.uri) == ["\(f.directory)/gone.wav", "Recordings/Nowhere/x.flac", "ftp://no.example/x"])
        #expect(f.core.player.queueChanges.latest.value.version == before + 1)
        #expect(f.text("Mixed") == file)
        let listing = try f.value { f.playlists.get("Mixed", reply: $0) }
        #expect(listing.entries.map(\.missing) == [false, true, true, false, true])
        // A range and a position.
        let part = try f.value { f.playlists.load("Mixed", start: 3, end: 4, at: 0, reply: $0) }
        #expect(part.entries.map(\.position) == [0])
        #expect(f.queueSources.first == .file(path: f.b))
        // Nothing left to add: no change at all.
        let version = f.core.player.queueChanges.latest.value.version
        let none = try f.value { f.playlists.load("Mixed", start: 1, end: 3, reply: $0) }
        #expect(none.entries.isEmpty && none.skipped.count == 2)
        #expect(f.core.player.queueChanges.latest.value.version == version)
        let unknown = try f.wait { f.playlists.load("Unknown", reply: $0) }
        if case .failure(let error) = unknown { #expect(error.reason == .notFound) } else { Issue.record("loaded nothing") }
    }

    /// `load` and `get` keep the last playlist they read while its file does not change: one
    /// changed outside Reel — rewritten in place (even at once and to the same size, within one
    /// step of the file system's clock) or replaced by a rename — is read again.
    @Test func aPlaylistFileChangedOutsideIsReadAgain() throws {
        let f = try Fixture()
        try FileManager.default.createDirectory(atPath: f.playlistDirectory, withIntermediateDirectories: true)
        let path = f.playlistDirectory + "/Outside.m3u"
        func rewrite(_ text: String, at target: String) throws {
            let fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            try #require(fd >= 0)
            let bytes = Array(text.utf8)
            #expect(write(fd, bytes, bytes.count) == bytes.count)
            close(fd)
        }
        func targets() throws -> [PlaylistEntry.Target] {
            try f.value { f.playlists.get("Outside", reply: $0) }.entries.map(\.target)
        }
        // Changed at once, in place, to the same size: a file this new is always read.
        #expect(f.a.utf8.count == f.b.utf8.count)
        try rewrite("\(f.a)\n", at: path)
        #expect(try targets() == [.file(f.a)])
        try rewrite("\(f.b)\n", at: path)
        #expect(try targets() == [.file(f.b)])
        let loaded = try f.value { f.playlists.load("Outside", reply: $0) }
        #expect(loaded.entries.map(\.source) == [.file(path: f.b)])
        // Stamps compared at once: the read is kept, and a change of size or of file is seen.
        f.playlists.queue.sync { f.playlists.files.settle = 0 }
        #expect(try targets() == [.file(f.b)])
        #expect(f.playlists.queue.sync { f.playlists.lastRead?.name } == "Outside")
        try rewrite("\(f.a)\n\(f.b)\n", at: path)
        #expect(try targets() == [.file(f.a), .file(f.b)])
        try rewrite("\(f.b)\n\(f.a)\n", at: path + ".new")
        #expect(rename(path + ".new", path) == 0)
        #expect(try targets() == [.file(f.b), .file(f.a)])
        // Reel's own edits are seen at once.
        _ = try f.value { f.playlists.remove("Outside", positions: [0], reply: $0) }
        #expect(try targets() == [.file(f.a)])
        let again = try f.value { f.playlists.load("Outside", reply: $0) }
        #expect(again.entries.map(\.source) == [.file(path: f.a)])
    }

    @Test func editsAddRemoveMoveRenameClearDeleteAndPublishEachChange() throws {
        let f = try Fixture()
        let consumer = f.playlists.changes.addConsumer {}
        defer { f.playlists.changes.removeConsumer(consumer) }
        _ = try f.value { f.playlists.add("E", lines: ["x/1.flac", "x/2.flac"], reply: $0) }
        _ = try f.value { f.playlists.add("E", .file(f.a), at: 1, reply: $0) }
        #expect(f.text("E") == "x/1.flac\n\(f.a)\nx/2.flac\n")
        _ = try f.value { f.playlists.move("E", from: 0, to: 2, reply: $0) }
        #expect(f.text("E") == "\(f.a)\nx/2.flac\nx/1.flac\n")
        _ = try f.value { f.playlists.remove("E", positions: [0, 2], reply: $0) }
        #expect(f.text("E") == "x/2.flac\n")
        let bad = try f.wait { f.playlists.remove("E", positions: [5], reply: $0) }
        if case .failure(let error) = bad { #expect(error.reason == .outOfRange) } else { Issue.record("removed nothing") }
        #expect(f.text("E") == "x/2.flac\n")
        _ = try f.value { f.playlists.rename("E", to: "F", reply: $0) }
        #expect(f.text("E") == nil && f.text("F") == "x/2.flac\n")
        _ = try f.value { f.playlists.clear("F", reply: $0) }
        #expect(f.text("F") == "")
        try f.value { f.playlists.delete("F", reply: $0) }
        #expect(f.text("F") == nil)
        let events = f.playlists.changes.take(for: consumer).events
        // A rename is one change naming both.
        #expect(events == [["E"], ["E"], ["E"], ["E"], ["E", "F"], ["F"], ["F"]])
        let badName = try f.wait { f.playlists.save("../x", reply: $0) }
        if case .failure(let error) = badName { #expect(error.reason == .invalidName) } else { Issue.record("saved ../x") }
    }

    /// Renaming a recording, or moving the folder it is in, rewrites the playlists naming it.
    @Test func renamedAndMovedRecordingsAreRenamedInThePlaylists() throws {
        let f = try Fixture()
        _ = try f.value { f.core.library.createFolder(parent: .root, name: "Notes", reply: $0) }
        _ = try f.value { f.core.library.createFolder(parent: .root, name: "Archive", reply: $0) }
        let take = try f.importRecording(f.a, folder: "/Notes", name: "idea")
        _ = try f.value { f.playlists.add("R", lines: ["Recordings/Notes/idea.wav", "Recordings/Notes/other.wav", "x.flac"], reply: $0) }
        let consumer = f.playlists.changes.addConsumer {}
        defer { f.playlists.changes.removeConsumer(consumer) }
        _ = try f.value { f.core.library.rename(.id(take.id), to: "Idea 2", reply: $0) }
        let renamed = "Recordings/Notes/Idea 2.wav\nRecordings/Notes/other.wav\nx.flac\n"
        try waitUntil { f.text("R") == renamed }
        _ = try f.value { f.core.library.move(.path("/Notes"), to: .path("/Archive"), reply: $0) }
        try waitUntil { f.text("R") == "Recordings/Archive/Notes/Idea 2.wav\nRecordings/Archive/Notes/other.wav\nx.flac\n" }
        // The change is published once the file is written and its directory synced, a moment
        // after the new text can be read.
        var events: [[String]] = []
        try waitUntil {
            events += f.playlists.changes.take(for: consumer).events
            return events.count >= 2
        }
        #expect(events == [["R"], ["R"]])
    }

    private func waitUntil(_ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("the condition did not hold within 20 s")
                return
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
