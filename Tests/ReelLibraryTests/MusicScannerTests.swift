// The scan of the music folders: first index, restarts, changes, moves, missing disks, links, failures.
import Foundation
import ReelModel
import Synchronization
import Testing

@testable import ReelLibrary

@Suite struct MusicScannerTests {
    @Test func aFirstScanIndexesEveryAudioFileAndASecondWithNothingChangedReadsNone() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Air/Moon Safari/01 La femme d'argent.flac", title: "La femme d'argent", artist: "Air", album: "Moon Safari", track: 1)
        tree.add("Air/Moon Safari/02 Sexy Boy.flac", title: "Sexy Boy", artist: "Air", album: "Moon Safari", track: 2)
        tree.add("Loose/song.MP3", title: "Loose")
        tree.add("Loose/take.ogg", title: "Take")
        tree.write("Air/Moon Safari/cover.jpg", "not audio")
        tree.write("Air/Moon Safari/notes.txt", "not audio")
        tree.write("Air/.hidden.flac", "title=hidden")
        tree.write("Air/._02 Sexy Boy.flac", "macOS resource fork")
        tree.write(".Trash-1000/files/deleted.flac", "title=deleted")

        let updates = Mutex<[MusicScanProgress]>([])
        let first = try music.scanner([tree.root]).scan { progress in updates.withLock { $0.append(progress) } }
        #expect(first.progress == MusicScanProgress(running: false, seen: 4, indexed: 4, unchanged: 0, failed: 0, removed: 0))
        #expect(first.missingRoots.isEmpty && !first.cancelled)
        #expect(music.reader.calls == 4)
        #expect(try music.paths(tree.root) == [
            "Air/Moon Safari/01 La femme d'argent.flac", "Air/Moon Safari/02 Sexy Boy.flac", "Loose/song.MP3",
            "Loose/take.ogg",
        ])
        let seen = updates.withLock { $0 }
        #expect(seen.first?.running == true)
        #expect(seen.last == first.progress)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.indexed <= $1.indexed && $0.seen <= $1.seen })

        let track = try #require(try music.index.track(root: tree.root, relativePath: "Air/Moon Safari/02 Sexy Boy.flac"))
        #expect(track.audio.tags.title == "Sexy Boy" && track.audio.tags.track == 2 && track.audio.codec == "flac")
        #expect(track.path == tree.root + "/Air/Moon Safari/02 Sexy Boy.flac")
        #expect(track.size > 0 && track.modified > 1_000_000_000 && !track.missing)
        #expect(try music.index.track(id: track.id) == track)

        music.reader.reset()
        let clock = ContinuousClock()
        let start = clock.now
        let second = try music.scan([tree.root])
        print("rescan of 4 unchanged files: \(clock.now - start)")
        #expect(music.reader.calls == 0, "unchanged files are not read again")
        #expect(second.progress == MusicScanProgress(running: false, seen: 4, indexed: 0, unchanged: 4, failed: 0, removed: 0))
        #expect(try music.index.track(id: track.id) == track)
    }

    @Test func aReopenedLibraryRescansWithoutReading() throws {
        let directory = TemporaryDirectory()
        let tree = MusicTree(directory.file("Music"))
        for n in 1...30 { tree.add("A/\(n).flac", title: "T\(n)", artist: "A", album: "B", track: n) }
        let reader = FakeTagReader()
        do {
            let store = try LibraryStore(directory: directory.file("data"))
            try MusicScanner(index: MusicIndex(store: store), roots: [tree.root], extensions: MusicTestSupport.audioExtensions, reader: reader.reader).scan()
        }
        #expect(reader.calls == 30)
        let store = try LibraryStore(directory: directory.file("data"))
        let outcome = try MusicScanner(index: MusicIndex(store: store), roots: [tree.root], extensions: MusicTestSupport.audioExtensions, reader: reader.reader).scan()
        #expect(reader.calls == 30)
        #expect(outcome.progress.unchanged == 30 && outcome.progress.indexed == 0)
    }

    @Test func aChangedFileIsReadAgainAndKeepsItsId() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("a.flac", title: "Old title")
        tree.add("b.flac", title: "Bee")
        tree.setModified("b.flac", 1_600_000_000)
        try music.scan([tree.root])
        let a = try #require(try music.index.track(root: tree.root, relativePath: "a.flac"))
        let b = try #require(try music.index.track(root: tree.root, relativePath: "b.flac"))
        #expect(b.modified == 1_600_000_000)

        music.reader.reset()
        tree.add("a.flac", title: "New, longer title")  // size changes
        tree.setModified("b.flac", 1_600_000_001)  // only mtime changes
        let outcome = try music.scan([tree.root])
        #expect(Set(music.reader.readPaths) == [tree.path("a.flac"), tree.path("b.flac")])
        #expect(outcome.progress.indexed == 2 && outcome.progress.unchanged == 0)
        let newA = try #require(try music.index.track(root: tree.root, relativePath: "a.flac"))
        #expect(newA.id == a.id && newA.audio.tags.title == "New, longer title" && newA.size > a.size)
        #expect(try music.index.track(id: b.id).modified == 1_600_000_001)
        #expect(try music.index.search(text: "old title").tracks.isEmpty)
        #expect(try music.index.search(text: "longer").tracks.map(\.id) == [a.id])
    }

    @Test func aRemovedFileLeavesTheIndex() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Album/1.flac", title: "One", artist: "X", album: "Album")
        tree.add("Album/2.flac", title: "Two", artist: "X", album: "Album")
        try music.scan([tree.root])
        let two = try #require(try music.index.track(root: tree.root, relativePath: "Album/2.flac"))
        tree.remove("Album/2.flac")
        let outcome = try music.scan([tree.root])
        #expect(outcome.progress.removed == 1 && outcome.progress.unchanged == 1)
        #expect(try music.paths(tree.root) == ["Album/1.flac"])
        expectReason(.notFound) { try music.index.track(id: two.id) }
        #expect(try music.index.albums().map(\.trackCount) == [1])
        #expect(try music.index.search(text: "two").tracks.isEmpty)

        // A new file never takes a removed file's id.
        tree.add("Album/3.flac", title: "Three", artist: "X", album: "Album")
        try music.scan([tree.root])
        let three = try #require(try music.index.track(root: tree.root, relativePath: "Album/3.flac"))
        #expect(three.id > two.id)
    }

    @Test func aFileMovedInOneScanKeepsItsIdWhenItsStampAndTagsMatch() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Inbox/song.flac", title: "Song", artist: "X", album: "Y", track: 1)
        tree.add("Inbox/other.flac", title: "Other", artist: "X", album: "Y", track: 2)
        tree.setModified("Inbox/other.flac", 1_500_000_000)
        try music.scan([tree.root])
        let song = try #require(try music.index.track(root: tree.root, relativePath: "Inbox/song.flac"))
        let other = try #require(try music.index.track(root: tree.root, relativePath: "Inbox/other.flac"))

        // A rename keeps the mtime: same stamp, same tags, so the same file.
        tree.move("Inbox/song.flac", "X/Y/01 Song.flac")
        // Retagged and moved, with the same size and mtime: other tags, so a new file.
        tree.write("Inbox/other.flac", "title=OTHER\nartist=X\nalbum=Y\ntrack=2")
        tree.move("Inbox/other.flac", "X/Y/02 Other.flac")
        tree.setModified("X/Y/02 Other.flac", 1_500_000_000)
        #expect(try FileManager.default.attributesOfItem(atPath: tree.path("X/Y/02 Other.flac"))[.size] as? Int == Int(other.size))
        let outcome = try music.scan([tree.root])
        #expect(outcome.progress.indexed == 2 && outcome.progress.removed == 1)
        let moved = try #require(try music.index.track(root: tree.root, relativePath: "X/Y/01 Song.flac"))
        #expect(moved.id == song.id)
        #expect(try music.index.track(root: tree.root, relativePath: "Inbox/song.flac") == nil)
        let retagged = try #require(try music.index.track(root: tree.root, relativePath: "X/Y/02 Other.flac"))
        #expect(retagged.id != other.id)
        #expect(try music.paths(tree.root) == ["X/Y/01 Song.flac", "X/Y/02 Other.flac"])
        #expect(try music.index.search(text: "song").tracks.map(\.id) == [song.id])
    }

    @Test func aMissingFolderMarksItsFilesMissingAndTheyComeBackWithTheirIds() throws {
        let music = try MusicFixture()
        let usb = music.tree("usb")
        let home = music.tree("home")
        usb.add("Band/Album/1.flac", title: "On the disk", artist: "Band", album: "Album", track: 1)
        usb.add("Band/Album/2.flac", title: "Also on it", artist: "Band", album: "Album", track: 2)
        home.add("Solo/1.flac", title: "At home", artist: "Solo", album: "Home")
        let scanner = music.scanner([usb.root, home.root])
        try scanner.scan()
        let ids = try music.index.tracks(inAlbum: "Album", albumArtist: "Band").map(\.id)
        #expect(ids.count == 2)

        // Unplugged: the folder is gone.
        try FileManager.default.moveItem(atPath: usb.root, toPath: usb.root + ".away")
        music.reader.reset()
        let away = try scanner.scan()
        #expect(away.missingRoots == [usb.root])
        #expect(away.progress.removed == 0 && away.progress.seen == 1)
        #expect(try music.index.count(root: usb.root) == (2, 2))
        #expect(try music.index.track(id: ids[0]).missing)
        #expect(try music.index.albums().map(\.name) == ["Home"])
        #expect(try music.index.artists().map(\.name) == ["Solo"])
        #expect(try music.index.tracks(inAlbum: "Album", albumArtist: "Band").isEmpty)
        #expect(try music.index.search(text: "disk").tracks.isEmpty)
        #expect(try music.index.stats().songs == 1)
        try expectAlbumTableMatchesFiles(music.store)

        // Plugged in again: the same files, the same ids, nothing read again.
        try FileManager.default.moveItem(atPath: usb.root + ".away", toPath: usb.root)
        let back = try scanner.scan()
        #expect(back.missingRoots.isEmpty && back.progress.unchanged == 3 && back.progress.indexed == 0)
        #expect(music.reader.calls == 0)
        #expect(try music.index.tracks(inAlbum: "Album", albumArtist: "Band").map(\.id) == ids)
        #expect(try !music.index.track(id: ids[0]).missing)
        #expect(try music.index.count(root: usb.root) == (2, 0))
        try expectAlbumTableMatchesFiles(music.store)
    }

    @Test func anEmptyMountPointCountsAsMissingButAnEmptyNewFolderDoesNot() throws {
        let music = try MusicFixture()
        let mount = music.tree("mnt")
        mount.add("a.flac", title: "A")
        let scanner = music.scanner([mount.root])
        try scanner.scan()
        try FileManager.default.moveItem(atPath: mount.path("a.flac"), toPath: music.directory.file("a.flac"))
        let unmounted = try scanner.scan()
        #expect(unmounted.missingRoots == [mount.root])
        #expect(try music.index.count(root: mount.root) == (1, 1))

        let fresh = music.tree("fresh")
        let freshScan = try music.scanner([fresh.root]).scan()
        #expect(freshScan.missingRoots.isEmpty)
    }

    @Test func aFolderTakenOutOfTheConfigurationLeavesTheIndex() throws {
        let music = try MusicFixture()
        let one = music.tree("one")
        let two = music.tree("two")
        one.add("a.flac", title: "A")
        two.add("b.flac", title: "B")
        try music.scan([one.root, two.root])
        try music.scan([one.root + "/"])
        #expect(try music.paths(one.root) == ["a.flac"])
        #expect(try music.paths(two.root) == [])
    }

    @Test func symbolicLinksAreFollowedOnlyInsideAMusicFolder() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        let outside = MusicTree(music.directory.file("elsewhere"))
        outside.add("Outside Album/1.flac", title: "Outside")
        tree.add(".stash/Hidden Album/1.flac", title: "Stashed")
        tree.add(".stash/single.flac", title: "Single")
        tree.add("Real/1.flac", title: "Real")
        tree.link("Linked Album", to: tree.path(".stash/Hidden Album"))  // inside: followed
        tree.link("Favourite.flac", to: "../Music/.stash/single.flac")  // relative, inside: followed
        tree.link("Again", to: tree.path("Real"))  // inside, already walked: not twice
        tree.link("Real Again.flac", to: "Real/1.flac")  // a file already found: not twice
        tree.link("Escape", to: outside.path("Outside Album"))  // outside: not followed
        tree.link("Escape.flac", to: outside.path("Outside Album/1.flac"))
        tree.link("Dangling.flac", to: tree.path("nothing here.flac"))
        let outcome = try music.scan([tree.root])
        #expect(try music.paths(tree.root) == ["Favourite.flac", "Linked Album/1.flac", "Real/1.flac"])
        #expect(outcome.progress.seen == 3 && outcome.progress.failed == 0)
        #expect(!music.reader.readPaths.contains { $0.contains("elsewhere") || $0.contains("Escape") })
        // A rescan finds the same, reads nothing.
        music.reader.reset()
        #expect(try music.scan([tree.root]).progress.unchanged == 3)
        #expect(music.reader.calls == 0)
    }

    @Test func aLinkIntoAnotherMusicFolderIsInsideAndStillIndexedOnce() throws {
        let music = try MusicFixture()
        let one = music.tree("one")
        let two = music.tree("two")
        two.add("Album/1.flac", title: "In two")
        one.link("From two", to: two.path("Album"))
        try music.scan([one.root, two.root])
        #expect(try music.paths(one.root) == [])
        #expect(try music.paths(two.root) == ["Album/1.flac"])
    }

    @Test func loopsOfLinksEnd() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("A/B/1.flac", title: "One")
        tree.link("A/B/up", to: "..")  // to an ancestor
        tree.link("A/B/root", to: tree.root)
        tree.link("l1", to: "l2")  // a cycle of links
        tree.link("l2", to: "l1")
        tree.link("self.flac", to: "self.flac")
        tree.link("C", to: "D")
        tree.link("D", to: "C")
        let outcome = try music.scan([tree.root])
        #expect(try music.paths(tree.root) == ["A/B/1.flac"])
        #expect(outcome.progress.seen == 1)
    }

    @Test func unreadableFilesAreListedWithTheirReasonAndTheScanGoesOn() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("good/1.flac", title: "Good")
        tree.write("bad/broken.flac", "CORRUPT")
        tree.add("good/2.flac", title: "Good too")
        let outcome = try music.scan([tree.root])
        #expect(outcome.progress.indexed == 2 && outcome.progress.failed == 1 && outcome.progress.seen == 3)
        #expect(try music.index.failures() == [
            MusicScanFailure(
                path: tree.path("bad/broken.flac"),
                reason: "\(tree.path("bad/broken.flac")) is not a valid audio file: no FLAC stream marker")
        ])
        #expect(try music.paths(tree.root) == ["good/1.flac", "good/2.flac"])

        // Unchanged, it is not read again, and stays listed.
        music.reader.reset()
        let again = try music.scan([tree.root])
        #expect(music.reader.calls == 0)
        #expect(again.progress.failed == 1 && again.progress.unchanged == 2)
        #expect(try music.index.failures().count == 1)

        // Repaired, it is read and indexed, and leaves the failures.
        tree.add("bad/broken.flac", title: "Repaired")
        let repaired = try music.scan([tree.root])
        #expect(repaired.progress.indexed == 1 && repaired.progress.failed == 0)
        #expect(try music.index.failures().isEmpty)
        #expect(try music.index.search(text: "repaired").tracks.count == 1)

        // A failing file that is deleted leaves the failures too.
        tree.write("bad/worse.flac", "CORRUPT, longer")
        try music.scan([tree.root])
        #expect(try music.index.failures().map(\.path) == [tree.path("bad/worse.flac")])
        tree.remove("bad/worse.flac")
        try music.scan([tree.root])
        #expect(try music.index.failures().isEmpty)
    }

    @Test func anIndexedFileThatNowFailsLeavesTheIndexForTheFailures() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("x.flac", title: "Fine")
        try music.scan([tree.root])
        tree.write("x.flac", "CORRUPT now")
        let outcome = try music.scan([tree.root])
        #expect(outcome.progress.failed == 1)
        #expect(try music.index.failures().map(\.path) == [tree.path("x.flac")])
        // The row stays as last read (with its id: a file caught while being copied comes back).
        #expect(try music.index.track(root: tree.root, relativePath: "x.flac")?.audio.tags.title == "Fine")
        // Unchanged since it failed: not read again.
        music.reader.reset()
        #expect(try music.scan([tree.root]).progress.failed == 1)
        #expect(music.reader.calls == 0)
    }

    @Test func namesOutsideASCIIAreKeptExactly() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Björk/Homogenic/01 Jóga.flac", title: "Jóga", artist: "Björk", album: "Homogenic", track: 1)
        tree.add("坂本龍一/音楽図鑑/01 Tibetan Dance.flac", title: "チベタン・ダンス", artist: "坂本龍一", album: "音楽図鑑")
        tree.add("Ελληνικά/ΣΟΦΙΑ.opus", title: "ΣΟΦΙΑ")
        try music.scan([tree.root])
        #expect(try music.paths(tree.root) == [
            "Björk/Homogenic/01 Jóga.flac", "Ελληνικά/ΣΟΦΙΑ.opus", "坂本龍一/音楽図鑑/01 Tibetan Dance.flac",
        ])
        #expect(try music.index.search(text: "JÓGA").tracks.map(\.relativePath) == ["Björk/Homogenic/01 Jóga.flac"])
        #expect(try music.index.search(text: "σοφια").tracks.count == 1)
        #expect(try music.index.search(text: "音楽").tracks.map(\.audio.tags.artist) == ["坂本龍一"])
        #expect(try music.index.artists().map(\.name) == ["Björk", "坂本龍一"])
        music.reader.reset()
        try music.scan([tree.root])
        #expect(music.reader.calls == 0)
    }

    @Test func manyFilesAreWrittenInBatchesOnSeveralReaders() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        for n in 0..<1234 { tree.add("D\(n % 7)/\(n).mp3", title: "Song \(n)", artist: "Artist \(n % 13)", album: "Album \(n % 50)") }
        let updates = Mutex<[MusicScanProgress]>([])
        let outcome = try music.scanner([tree.root], readerCount: 4, batchSize: 100).scan { progress in
            updates.withLock { $0.append(progress) }
        }
        #expect(outcome.progress.indexed == 1234 && music.reader.calls == 1234)
        #expect(Set(music.reader.readPaths).count == 1234)
        let all = updates.withLock { $0 }
        #expect(all.count >= 14, "a progress report per batch of 100")
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.indexed <= $1.indexed })
        #expect(try music.index.stats() == MusicStats(artists: 13, albums: 50, songs: 1234, totalDuration: 1234 * 180))
        try expectAlbumTableMatchesFiles(music.store)
    }

    @Test func aCancelledScanKeepsWhatItReadAndRemovesNothing() throws {
        let holder = Mutex<MusicScanner?>(nil)
        let reader = FakeTagReader(afterRead: { count in
            if count == 50 { holder.withLock { $0?.cancel() } }
        })
        let music = try MusicFixture(reader: reader)
        let tree = music.tree()
        tree.add("gone.flac", title: "Gone")
        let scanner = music.scanner([tree.root], readerCount: 1, batchSize: 10)
        holder.withLock { $0 = scanner }
        try music.scan([tree.root])
        tree.remove("gone.flac")
        reader.reset()
        for n in 0..<300 { tree.add("\(n).flac", title: "\(n)") }
        let outcome = try scanner.scan()
        #expect(outcome.cancelled)
        #expect(reader.calls == 50)
        #expect(outcome.progress.indexed == 50 && outcome.progress.removed == 0)
        #expect(try music.paths(tree.root).count == 51, "the 50 read, and the file gone not yet removed")
        // The next scan finishes the work.
        let next = try scanner.scan()
        #expect(!next.cancelled && next.progress.indexed == 250 && next.progress.removed == 1)
    }

    @Test func oneScanAtATime() throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let reader = FakeTagReader(afterRead: { count in
            if count == 1 {
                entered.signal()
                release.wait()
            }
        })
        let music = try MusicFixture(reader: reader)
        let tree = music.tree()
        tree.add("a.flac", title: "A")
        let scanner = music.scanner([tree.root])
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = try? scanner.scan()
            done.signal()
        }.start()
        entered.wait()
        expectReason(.busy) { try scanner.scan() }
        release.signal()
        done.wait()
        #expect(try scanner.scan().progress.unchanged == 1)
    }
}

extension MusicScannerTests {
    @Test func aNameThatIsNotUTF8IsAFailureAndTheScanGoesOn() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("fine.flac", title: "Fine")
        // "caf\xe9.flac": Latin-1, not UTF-8.
        var bytes = Array((tree.root + "/caf").utf8CString.dropLast())
        bytes += [CChar(bitPattern: 0xE9)] + Array(".flac".utf8CString)
        let descriptor = open(bytes, O_CREAT | O_WRONLY, 0o644)
        #expect(descriptor >= 0)
        close(descriptor)
        let outcome = try music.scan([tree.root])
        #expect(outcome.progress.indexed == 1 && outcome.progress.failed == 1)
        let failures = try music.index.failures()
        #expect(failures.count == 1)
        #expect(failures.first?.reason == "the name is not valid UTF-8; rename it to read it")
        #expect(failures.first?.path == tree.root + "/caf\u{FFFD}.flac")
        #expect(try music.paths(tree.root) == ["fine.flac"])
    }

    @Test func aMusicFolderThatIsALinkIsWalked() throws {
        let music = try MusicFixture()
        let real = music.tree("real")
        real.add("Album/1.flac", title: "One")
        real.link("Album again", to: real.path("Album"))
        let link = music.directory.file("Music")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real.root)
        try music.scan([link])
        #expect(try music.paths(link) == ["Album/1.flac"])
        #expect(try music.index.track(root: link, relativePath: "Album/1.flac")?.path == link + "/Album/1.flac")
    }
}
