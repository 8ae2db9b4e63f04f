// A stored playlist naming the files of several music folders: each folder's files are looked
// up in the index on their own (`PlaylistStore.byMusicFolder`), and each line finds its file.
import Foundation
import Logging
import ReelAudio
import ReelLibrary
import ReelModel
import ReelTestSupport
import Testing

@testable import ReelCore

@Suite struct PlaylistMusicFoldersTests {
    /// A listing and a load of lines of two music folders, in mixed order, with a line the
    /// index does not have: each line names its own folder's file, the missing one nothing.
    @Test func linesOfTwoMusicFoldersFindTheirOwnFolderFiles() throws {
        let directory = NSTemporaryDirectory() + "reel-folders-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let music = directory + "/Music"
        let other = directory + "/Other"
        for file in [music + "/a.wav", music + "/Sub/c.wav", other + "/b.wav", other + "/a.wav"] {
            try WatchedMusic.wav(file)
        }
        let core = try ReelCore(
            dataDirectory: directory + "/data", output: ALSAOutput(name: "null"), timing: PCMTiming(),
            input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
            mediaRoots: [], musicDirectories: [music, other], logger: Logger(label: "test"))
        core.start(resume: .no)
        defer { core.shutdown() }
        let scanned = waitUntil(seconds: 20) {
            core.music.progress.latest.value.scan >= 1 && !core.music.progress.latest.value.running
                && (try? core.music.index.track(root: other, relativePath: "a.wav")) != nil
        }
        #expect(scanned)
        try FileManager.default.createDirectory(atPath: core.playlists.directory, withIntermediateDirectories: true)
        let lines = ["Other/b.wav", "Music/a.wav", "Music/none.wav", "Other/a.wav", "Music/Sub/c.wav", "Other/b.wav"]
        try (lines.joined(separator: "\n") + "\n").write(
            toFile: core.playlists.directory + "/Both.m3u", atomically: true, encoding: .utf8)
        let expected: [String?] = [
            other + "/b.wav", music + "/a.wav", nil, other + "/a.wav", music + "/Sub/c.wav", other + "/b.wav",
        ]

        let listed = Awaited<Result<PlaylistListing, ReelError>>()
        core.playlists.get("Both") { listed.put($0) }
        let listing = try #require(listed.get(timeout: 20)).get()
        #expect(listing.entries.map { entry -> String? in
            if case .music(let track) = entry.target { return track.path }
            return nil
        } == expected)
        #expect(listing.entries[2].target == .missing)

        let loaded = Awaited<Result<PlaylistLoadOutcome, ReelError>>()
        core.playlists.load("Both") { loaded.put($0) }
        let outcome = try #require(loaded.get(timeout: 20)).get()
        #expect(outcome.skipped.map(\.position) == [2])
        #expect(try core.player.listQueue().entries.map(\.source) == expected.compactMap { $0 }.map { .file(path: $0) })
    }
}
