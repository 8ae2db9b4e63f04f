// The `/Music` branch's naming: paths, ids, and music folders with the same last name.

import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicBranchNamingTests {
    @Test func treePathsAndIdsOfTheBranch() {
        #expect(MusicBranch.subPath(ofTreePath: "/Music") == "")
        #expect(MusicBranch.subPath(ofTreePath: "/Music/") == "")
        #expect(MusicBranch.subPath(ofTreePath: "//Music//Trane/Blue Train/") == "Trane/Blue Train")
        #expect(MusicBranch.subPath(ofTreePath: "/Musical") == nil)
        #expect(MusicBranch.subPath(ofTreePath: "/Meetings/Music") == nil)
        #expect(MusicBranch.subPath(ofFolderID: "music:/") == "")
        #expect(MusicBranch.subPath(ofFolderID: "music:/Trane/Blue Train") == "Trane/Blue Train")
        #expect(MusicBranch.subPath(ofFolderID: "0190-ab") == nil)
        #expect(MusicBranch.trackID(of: "track:42") == 42)
        #expect(MusicBranch.trackID(of: "track:x") == nil)
        #expect(MusicBranch.contains(.id("music:/A")) && MusicBranch.contains(.id("track:1")))
        #expect(!MusicBranch.contains(.id(LibrarySchema.rootID)) && !MusicBranch.contains(.path("/")))
    }

    @Test func oneMusicFolderIsTheBranchItself() {
        let branch = MusicBranch(musicFolders: ["/home/pi/Music"])
        #expect(branch.place(ofSubPath: "") == .inFolder(branch.roots[0], relative: ""))
        #expect(branch.place(ofSubPath: "Trane/Blue Train") == .inFolder(branch.roots[0], relative: "Trane/Blue Train"))
        #expect(branch.subPath(of: branch.roots[0], relative: "Trane") == "Trane")
        let folder = branch.folderItem(subPath: "Trane/Blue Train")
        #expect(folder.id == "music:/Trane/Blue Train" && folder.parent == "music:/Trane" && folder.name == "Blue Train")
        #expect(folder.path == "/Music/Trane/Blue Train" && folder.readOnly)
        let top = branch.folderItem(subPath: "")
        #expect(top.id == MusicBranch.rootID && top.parent == LibrarySchema.rootID && top.name == "Music")
    }

    @Test func severalMusicFoldersAreOneFolderEachWithUniqueNames() {
        let branch = MusicBranch(musicFolders: ["/a/Music", "/b/Music", "/c/Jazz", "/d/Music"])
        #expect(branch.roots.map(\.name) == ["Music", "Music (2)", "Jazz", "Music (3)"])
        #expect(branch.place(ofSubPath: "") == .branch)
        #expect(branch.place(ofSubPath: "Music (2)/x/y") == .inFolder(branch.roots[1], relative: "x/y"))
        #expect(branch.place(ofSubPath: "Jazz") == .inFolder(branch.roots[2], relative: ""))
        #expect(branch.place(ofSubPath: "Rock/x") == nil)
        #expect(branch.subPath(of: branch.roots[3], relative: "a.flac") == "Music (3)/a.flac")
        let track = MusicTrack(
            id: 7, root: "/c/Jazz", relativePath: "Monk/a.flac", size: 10, modified: 0,
            audio: ScannedAudio(tags: TrackTags(title: "Blue Monk"), codec: "flac", sampleRate: 44100, channels: 2, duration: 3, hasEmbeddedCover: false))
        let item = branch.trackItem(track)
        #expect(item?.id == "track:7" && item?.parent == "music:/Jazz/Monk" && item?.path == "/Music/Jazz/Monk/a.flac")
        #expect(item?.file == "/c/Jazz/Monk/a.flac" && item?.tags?.title == "Blue Monk" && item?.kind == .track)
        // A folder whose own name looks like a numbered one: every name stays unique.
        #expect(MusicBranch(musicFolders: ["/a/Music", "/b/Music (2)", "/c/Music"]).roots.map(\.name) == [
            "Music", "Music (2)", "Music (3)",
        ])
        // A file of a folder no longer configured is not in the branch.
        #expect(branch.trackItem(MusicTrack(id: 8, root: "/gone", relativePath: "a.flac", size: 1, modified: 0, audio: track.audio)) == nil)
    }
}
