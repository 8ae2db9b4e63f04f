// MusicScanner.update: only some paths brought up to date (what a file watcher saw change).
import Foundation
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicUpdateTests {
    @Test func aFolderGoneLeavesTheIndexAndOneAddedComesIn() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("Artist/Album/1.flac", title: "One")
        tree.add("Artist/Album/2.flac", title: "Two")
        tree.add("Other/3.flac", title: "Three")
        let scanner = music.scanner([tree.root])
        try scanner.scan()
        music.reader.reset()
        try FileManager.default.moveItem(atPath: tree.path("Artist"), toPath: music.directory.file("Away"))
        tree.add("New/4.flac", title: "Four")
        let outcome = try scanner.update([MusicPath(root: tree.root, relativePath: "Artist"), MusicPath(root: tree.root, relativePath: "New")])
        #expect(outcome.progress.removed == 2 && outcome.progress.indexed == 1 && outcome.progress.seen == 1)
        #expect(try music.paths(tree.root) == ["New/4.flac", "Other/3.flac"])
        #expect(music.reader.readPaths == [tree.path("New/4.flac")], "only what changed is read")
    }

    @Test func aFileBeingWrittenIsLeftAloneAndAHiddenPathIsSkipped() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        tree.add("a.flac", title: "A")
        let scanner = music.scanner([tree.root])
        try scanner.scan()
        tree.add("b.flac", title: "B")
        tree.add(".hidden/c.flac", title: "C")
        tree.remove("a.flac")
        let outcome = try scanner.update(
            [MusicPath(root: tree.root, relativePath: ""), MusicPath(root: tree.root, relativePath: ".hidden/c.flac")],
            skipping: [MusicPath(root: tree.root, relativePath: "b.flac")])
        #expect(outcome.progress.indexed == 0 && outcome.progress.removed == 1)
        #expect(try music.paths(tree.root).isEmpty)
        try scanner.update([MusicPath(root: tree.root, relativePath: "b.flac")])
        #expect(try music.paths(tree.root) == ["b.flac"])
    }

    @Test func linksAreFollowedAsAFullScanFollowsThem() throws {
        let music = try MusicFixture()
        let tree = music.tree()
        let outside = MusicTree(music.directory.file("Outside"))
        tree.add("real.flac", title: "Real")
        tree.add(".stash/hidden.flac", title: "Hidden")
        outside.add("out.flac", title: "Out")
        let scanner = music.scanner([tree.root])
        try scanner.scan()
        #expect(try music.paths(tree.root) == ["real.flac"])
        // Links made while reeld runs, each brought up to date alone as a watcher reports it.
        tree.link("to-real.flac", to: tree.path("real.flac"))
        tree.link("to-hidden.flac", to: tree.path(".stash/hidden.flac"))
        tree.link("to-outside.flac", to: outside.path("out.flac"))
        for name in ["to-real.flac", "to-hidden.flac", "to-outside.flac"] {
            try scanner.update([MusicPath(root: tree.root, relativePath: name)])
        }
        let afterUpdates = try music.paths(tree.root)
        // The full scan decides the same.
        try scanner.scan()
        #expect(try music.paths(tree.root) == afterUpdates)
        #expect(afterUpdates == ["real.flac", "to-hidden.flac"])
        // A link to a hidden folder, alone: its files are indexed under the link.
        tree.remove("to-hidden.flac")
        tree.link("Linked", to: tree.path(".stash"))
        try scanner.update([MusicPath(root: tree.root, relativePath: "to-hidden.flac"), MusicPath(root: tree.root, relativePath: "Linked")])
        #expect(try music.paths(tree.root) == ["Linked/hidden.flac", "real.flac"])
    }

    @Test func outermostPathsCoverThoseUnderThem() {
        let paths = ["a", "a/b", "a b", "a/b/c", "c/d", "c/d/e", "c/dd"].map { MusicPath(root: "/m", relativePath: $0) }
        #expect(MusicPath.outermost(paths).map(\.relativePath) == ["a", "a b", "c/d", "c/dd"])
        #expect(MusicPath.outermost(paths + [MusicPath(root: "/m", relativePath: "")]).map(\.relativePath) == [""])
        #expect(MusicPath.rebase(MusicPath(root: "/m", relativePath: "a/b/c"), from: MusicPath(root: "/m", relativePath: "a/b"), to: MusicPath(root: "/n", relativePath: "x")) == MusicPath(root: "/n", relativePath: "x/c"))
    }
}
