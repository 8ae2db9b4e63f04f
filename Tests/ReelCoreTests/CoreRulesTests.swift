import Foundation
import ReelCore
import ReelLibrary
import ReelModel
import Testing

/// The rules live in the core, so every front end gets them: no socket here.
@Suite struct CoreRulesTests {
    @Test func aFileOutsideTheMediaRootsIsForbiddenToPlayAndToImport() throws {
        let root = NSTemporaryDirectory() + "reel-roots-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/music", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/elsewhere", withIntermediateDirectories: true)
        try writeWAV(root + "/music/in.wav")
        try writeWAV(root + "/elsewhere/out.wav")
        // A link inside the root that points outside it is outside.
        try FileManager.default.createSymbolicLink(atPath: root + "/music/link.wav", withDestinationPath: root + "/elsewhere/out.wav")
        let (core, _) = try makeCore(mediaRoots: [root + "/music"])
        defer { core.shutdown() }

        for path in [root + "/elsewhere/out.wav", root + "/music/link.wav", root + "/music/../elsewhere/out.wav"] {
            let played = Awaited<Result<PlayerState, ReelError>>()
            core.player.play(.file(path)) { played.put($0) }
            #expect(played.get().flatMap { try? $0.get() } == nil)
            if case .failure(let error)? = played.get() { #expect(error.reason == .forbidden, "\(path): \(error)") }

            let imported = Awaited<Result<Item, ReelError>>()
            core.library.importFile(path: path, folder: .root, name: nil) { imported.put($0) }
            if case .failure(let error)? = imported.get() {
                #expect(error.reason == .forbidden, "\(path): \(error)")
            } else {
                Issue.record("importing \(path) was not refused")
            }
        }
        let played = Awaited<Result<PlayerState, ReelError>>()
        core.player.play(.file(root + "/music/in.wav")) { played.put($0) }
        #expect((try? played.get()?.get()) != nil)
        let imported = Awaited<Result<Item, ReelError>>()
        core.library.importFile(path: root + "/music/in.wav", folder: .root, name: "in") { imported.put($0) }
        #expect((try? imported.get()?.get())?.path == "/in")
    }

    @Test func musicFoldersAreAlwaysPlayableAndNeverNarrowWhatPlays() throws {
        let root = NSTemporaryDirectory() + "reel-music-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for directory in ["/roots", "/music", "/elsewhere"] {
            try FileManager.default.createDirectory(atPath: root + directory, withIntermediateDirectories: true)
        }
        try writeWAV(root + "/music/song.wav")
        try writeWAV(root + "/elsewhere/out.wav")
        try writeWAV(root + "/roots/in.wav")
        let withRoots = MediaRoots([root + "/roots"], musicDirectories: [root + "/music"])
        try withRoots.check(root + "/music/song.wav")
        try withRoots.check(root + "/roots/in.wav")
        #expect(throws: ReelError.self) { try withRoots.check(root + "/elsewhere/out.wav") }
        #expect(throws: ReelError.self) { try withRoots.check(root + "/music/../elsewhere/out.wav") }
        // No media root: any file, music folders or not.
        let open = MediaRoots([], musicDirectories: [root + "/music"])
        try open.check(root + "/elsewhere/out.wav")
        try open.check(root + "/music/song.wav")
    }

    /// Regression: the message named the library's internal audio file instead of the recording.
    @Test func startingARecordingPastItsEndNamesTheRecording() throws {
        let (core, root) = try makeCore()
        defer { core.shutdown() }
        try writeWAV(root + "/in.wav", frames: 8000)
        let imported = Awaited<Result<Item, ReelError>>()
        core.library.importFile(path: root + "/in.wav", folder: .root, name: "Take") { imported.put($0) }
        guard case .success(let item)? = imported.get() else { Issue.record("import failed"); return }
        let played = Awaited<Result<PlayerState, ReelError>>()
        core.player.play(.recording(.id(item.id)), position: 30) { played.put($0) }
        guard case .failure(let error)? = played.get() else { Issue.record("played past the end"); return }
        #expect(error.reason == .outOfRange)
        #expect(error.message == "cannot start /Take at 0:30: it is 0:01 long", "\(error.message)")
    }

    @Test func aRecordingThatIsNotThereIsNotFound() throws {
        let (core, _) = try makeCore()
        defer { core.shutdown() }
        let played = Awaited<Result<PlayerState, ReelError>>()
        core.player.play(.recording(.path("/No/Such"))) { played.put($0) }
        if case .failure(let error)? = played.get() {
            #expect(error.reason == .notFound)
        } else {
            Issue.record("playing a missing recording did not fail")
        }
    }

    @Test func aCommandPublishesItsChangeOnceAndRepliesWithTheSameState() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        try writeWAV(directory + "/a.wav", frames: 8000 * 600)
        let woken = StateFeedTests.Counter()
        let consumer = core.player.changes.addConsumer { woken.bump() }
        // Loaded paused (the `null` device would play it out at once).
        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(.file(directory + "/a.wav"), at: nil, afterCurrent: false) { added.put($0) }
        let entry = try #require(try added.get()?.get().first)
        let loaded = Awaited<Result<PlayerState, ReelError>>()
        core.player.load(entry: entry.id, position: 0, playing: false) { loaded.put($0) }
        #expect((try? loaded.get()?.get())?.state == .paused)
        _ = core.player.changes.take(for: consumer)
        let before = core.player.changes.latest.version
        let sought = Awaited<Result<PlayerState, ReelError>>()
        core.player.seek(.absolute(90)) { sought.put($0) }
        let reply = try #require(try sought.get()?.get())
        let published = core.player.changes.latest
        #expect(published.version == before + 1, "one seek, one published state")
        #expect(published.value == reply, "the reply is the state that was pushed")
        #expect(reply.position == 90)
        #expect(woken.value >= 1)
    }

    @Test func aWatchedFolderComesWithEveryUpdateThatChangesIt() throws {
        let (core, _) = try makeCore()
        defer { core.shutdown() }
        let created = Awaited<Result<Item, ReelError>>()
        core.library.createFolder(parent: .root, name: "Inbox") { created.put($0) }
        let inbox = try #require(try created.get()?.get())
        let consumer = core.library.updates.addConsumer {}
        let watched = Awaited<Result<Watched<FolderListing>, ReelError>>()
        core.library.watchFolder(.path("/Inbox")) { watched.put($0) }
        let first = try #require(try watched.get()?.get())
        #expect(first.value.items.isEmpty)
        let renamed = Awaited<Result<Item, ReelError>>()
        core.library.createFolder(parent: .id(inbox.id), name: "Sub") { renamed.put($0) }
        _ = renamed.get()
        let batch = core.library.updates.take(for: consumer)
        #expect(batch.firstSequence >= first.sequence)
        let update = try #require(batch.events.last)
        guard case .contents(_, let items)? = update.folders[inbox.id] else {
            Issue.record("the watched folder's new contents were not in the update: \(update.folders)")
            return
        }
        #expect(items.map(\.name) == ["Sub"])
        core.library.unwatchFolder(inbox.id)
    }
}
