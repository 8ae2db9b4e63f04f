// MPD's database read from a real music index and recordings tree: the root with Recordings
// beside the music folder's folders, a hidden Recordings subfolder, listall order, tag search.
import Foundation
import ReelLibrary
import ReelModel
import Testing

@testable import ReelCore
@testable import ReelDaemon

@Suite struct MPDDatabaseTests {
    final class Fixture {
        let directory = NSTemporaryDirectory() + "reel-mpd-db-\(UUID().uuidString)"
        let index: MusicIndex

        init() throws {
            index = MusicIndex(store: try LibraryStore(directory: directory + "/data"))
            _ = try index.store.createFolder(name: "Notes")
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func write(_ root: String, _ paths: [String]) throws {
            try index.write(
                files: paths.map { path in
                    ScannedMusicFile(
                        root: root, relativePath: path, stamp: MusicFileStamp(size: 1, modifiedNanoseconds: 1_000_000_000),
                        audio: ScannedAudio(
                            tags: TrackTags(title: path, artist: "Artist of \(path.split(separator: "/")[0])"),
                            codec: "flac", sampleRate: 44100, channels: 2, duration: 1, hasEmbeddedCover: false))
                })
        }

        func lines(_ view: MPDLibraryView, _ body: (MPDDatabase, inout MPDResponse) throws -> Void) throws -> [String] {
            var response = MPDResponse()
            try body(MPDDatabase(view: view, catalog: MusicCatalog(index: index)), &response)
            return response.text.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("Last-Modified") }
        }
    }

    @Test func oneMusicFolderIsTheRootWithRecordingsBesideItsFolders() throws {
        let fixture = try Fixture()
        try fixture.write("/music", ["b.flac", "A.flac", "Zed/1.flac", "alpha/2.flac", "Recordings/hidden.flac"])
        let view = MPDLibraryView(recordingsDirectory: "Recordings", musicRoots: ["/music"])
        let lsinfo = try fixture.lines(view) { database, response in
            try database.write(.root, recursive: false, songInfo: false, tags: .all, into: &response)
        }
        // Songs first, then directories, collated; the music folder's own `Recordings` is hidden
        // by the recordings tree.
        #expect(lsinfo == ["file: A.flac", "file: b.flac", "directory: alpha", "directory: Recordings", "directory: Zed"])
        let listall = try fixture.lines(view) { database, response in
            try database.write(.root, recursive: true, songInfo: false, tags: .all, into: &response)
        }
        #expect(
            listall == [
                "file: A.flac", "file: b.flac", "directory: alpha", "file: alpha/2.flac", "directory: Recordings",
                "directory: Recordings/Notes", "directory: Zed", "file: Zed/1.flac",
            ])
        let database = MPDDatabase(view: view, catalog: MusicCatalog(index: fixture.index))
        #expect(try database.songs(under: .root).map(\.song.uri) == ["A.flac", "b.flac", "alpha/2.flac", "Zed/1.flac"])
        // With a query whose conditions narrow the index: the same order, only the candidates.
        let query = try MPDFilter.parse(["Artist", "Artist of Zed"], foldCase: false).filter
        #expect(query.indexConditions == [.equals(.artist, "Artist of Zed")])
        #expect(try database.songs(under: .root, query: query).map(\.song.uri) == ["Zed/1.flac"])
        guard case .directory(.music(_, "alpha")) = try database.entry(.music(root: "/music", path: "alpha")) else {
            Issue.record("alpha is a directory")
            return
        }
        guard case .music(let track) = try database.entry(.music(root: "/music", path: "Zed/1.flac")) else {
            Issue.record("Zed/1.flac is a song")
            return
        }
        #expect(track.relativePath == "Zed/1.flac")
        #expect(throws: ReelError.self) { try database.entry(.music(root: "/music", path: "nothing")) }
        #expect(throws: ReelError.self) { try database.entry(.music(root: "/music", path: "Zed/1")) }
    }

    @Test func severalMusicFoldersAreADirectoryEach() throws {
        let fixture = try Fixture()
        try fixture.write("/a/Music", ["x/1.flac"])
        try fixture.write("/b/Music", ["y.flac"])
        let view = MPDLibraryView(recordingsDirectory: "Recordings", musicRoots: ["/a/Music", "/b/Music"])
        let listall = try fixture.lines(view) { database, response in
            try database.write(.root, recursive: true, songInfo: false, tags: .all, into: &response)
        }
        #expect(
            listall == [
                "directory: Music", "directory: Music/x", "file: Music/x/1.flac", "directory: Music (2)",
                "file: Music (2)/y.flac", "directory: Recordings", "directory: Recordings/Notes",
            ])
        let header = try fixture.lines(view) { database, response in
            try database.write(.music(root: "/b/Music", path: ""), recursive: true, songInfo: false, tags: .all, into: &response, header: true)
        }
        #expect(header == ["directory: Music (2)", "file: Music (2)/y.flac"])
    }
}
