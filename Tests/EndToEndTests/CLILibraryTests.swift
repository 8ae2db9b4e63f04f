// The library commands of `reel` (ls, tree, mkdir, mv, rename, rm, search, import) and
// `reel play` of a tree path, against a real reeld on the null device.

import Foundation
import Glibc
import ReelModel
import ReelProtocol
import Testing

/// A daemon, a folder for audio, and `reel` run against that daemon in UTC.
private final class LibraryCLI {
    let daemon: DaemonProcess
    let scratch: CLIScratch

    init() throws {
        daemon = try DaemonProcess(device: "null")
        scratch = try CLIScratch()
    }

    /// `reel arguments... --socket <daemon>`, from the scratch folder, with TZ=UTC.
    func run(_ arguments: String...) throws -> CLIResult {
        try CLI.run(arguments + ["--socket", daemon.socketPath], environment: ["TZ": "UTC"], in: scratch.directory)
    }

    /// Runs and requires exit 0.
    @discardableResult
    func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIResult {
        let result = try CLI.run(
            arguments + ["--socket", daemon.socketPath], environment: ["TZ": "UTC"], in: scratch.directory)
        try #require(result.status == 0, "reel \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// The daemon's Item at `path`, straight over the protocol.
    func item(_ path: String) throws -> Item {
        try Item(json: try daemon.client().result("library.get", ["path": .string(path)]))
    }

    /// /Meetings/2026/Standup (3 s), /Meetings/Weekly (75 s), /Talks/Keynote (5 s), /Archive,
    /// /Meetings/Notes (empty folder).
    func buildSampleTree() throws {
        let short = try scratch.tone("short.wav", seconds: 3)
        _ = try scratch.tone("weekly.wav", seconds: 75)
        _ = try scratch.tone("keynote.wav", seconds: 5)
        try ok("mkdir", "/Meetings")
        try ok("mkdir", "/Meetings/2026")
        try ok("mkdir", "/Meetings/Notes")
        try ok("mkdir", "/Talks")
        try ok("mkdir", "/Archive")
        try ok("import", short.path, "/Meetings/2026", "--name", "Standup")
        try ok("import", "weekly.wav", "/Meetings", "--name", "Weekly")
        try ok("import", "keynote.wav", "/Talks", "--name", "Keynote")
    }
}

/// The lines of `text`, without the newline that ends the last one.
private func lines(_ text: String) -> [String] {
    var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if text.hasSuffix("\n") { parts.removeLast() }
    return parts
}

/// `2026-11-22T14:03:05Z` as `reel ls` shows it in UTC.
private func minuteUTC(_ iso: String) -> String {
    String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(5))
}

@Suite(.serialized)
struct CLILibraryTests {
    // MARK: building and listing

    @Test func mkdirAndImportPrintTheNewPaths() throws {
        let cli = try LibraryCLI()
        _ = try cli.scratch.tone("take one.wav", seconds: 3)
        #expect(try cli.ok("mkdir", "/Meetings").stdout == "created /Meetings\n")
        #expect(try cli.ok("mkdir", "/Meetings/2026").stdout == "created /Meetings/2026\n")
        // A relative FILE is taken from the current directory; the name defaults to the file's.
        let imported = try cli.ok("import", "take one.wav", "/Meetings/2026")
        #expect(imported.stdout == "imported /Meetings/2026/take one (0:03, wav 44100 Hz 2 ch)\n")
        let named = try cli.ok("import", "./take one.wav", "--name", "Standup")
        #expect(named.stdout == "imported /Standup (0:03, wav 44100 Hz 2 ch)\n")
        let item = try cli.item("/Meetings/2026/take one")
        #expect(item.kind == .recording)
        #expect(item.duration == 3)
    }

    @Test func lsPrintsAnAlignedTableWithFoldersFirst() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let root = try cli.ok("ls")
        let rootRows = lines(root.stdout)
        #expect(rootRows.map { $0.split(separator: " ").dropFirst().first.map(String.init) } == ["Archive", "Meetings", "Talks"])
        #expect(rootRows.allSatisfy { $0.hasPrefix("folder     ") })

        let meetings = try cli.ok("ls", "/Meetings")
        let rows = lines(meetings.stdout)
        let standupFolder = try cli.item("/Meetings/2026")
        let notes = try cli.item("/Meetings/Notes")
        let weekly = try cli.item("/Meetings/Weekly")
        #expect(rows == [
            "folder     2026          \(minuteUTC(standupFolder.created))",
            "folder     Notes         \(minuteUTC(notes.created))",
            "recording  Weekly  1:15  \(minuteUTC(weekly.created))",
        ])
        #expect(meetings.stderr.isEmpty)
        // An empty folder lists nothing; a recording is not a folder.
        #expect(try cli.ok("ls", "/Meetings/Notes").stdout == "")
        let notAFolder = try cli.run("ls", "/Talks/Keynote")
        #expect(notAFolder.status == 1, "\(notAFolder)")
        #expect(notAFolder.stderr.contains("/Talks/Keynote"))
    }

    @Test func lsJSONIsOneLineThatDecodesAsTheFolderAndItsItems() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let result = try cli.ok("ls", "/Meetings", "--json")
        #expect(lines(result.stdout).count == 1)
        let value = try JSONValue.parse(Array(result.stdout.utf8.dropLast()))
        let folder = try Item(json: try #require(value["folder"]))
        #expect(folder.path == "/Meetings")
        let items = try #require(value["items"]?.arrayValue).map { try Item(json: $0) }
        #expect(items.map(\.path) == ["/Meetings/2026", "/Meetings/Notes", "/Meetings/Weekly"])
        #expect(items.map(\.kind) == [.folder, .folder, .recording])
        #expect(items.last?.duration == 75)
        #expect(items.last?.format == AudioFormat(codec: "wav", sampleRate: 44100, channels: 2))
    }

    @Test func lsOfAMissingFolderExitsOneNamingIt() throws {
        let cli = try LibraryCLI()
        let result = try cli.run("ls", "/Nowhere")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "reel: no item at /Nowhere\n")
        #expect(result.stdout.isEmpty)
    }

    @Test func treeDrawsTheSubtreeWithBoxCharactersAndDurations() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let whole = try cli.ok("tree")
        #expect(whole.stdout == """
            /
            ├── Archive/
            ├── Meetings/
            │   ├── 2026/
            │   │   └── Standup  0:03
            │   ├── Notes/
            │   └── Weekly  1:15
            └── Talks/
                └── Keynote  0:05

            5 folders, 3 recordings

            """)
        let part = try cli.ok("tree", "/Meetings")
        #expect(part.stdout == """
            /Meetings
            ├── 2026/
            │   └── Standup  0:03
            ├── Notes/
            └── Weekly  1:15

            2 folders, 2 recordings

            """)
    }

    // MARK: changing the tree

    @Test func mvMovesAnItemIntoAFolderKeepingItsName() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let moved = try cli.ok("mv", "/Talks/Keynote", "/Archive")
        #expect(moved.stdout == "moved /Talks/Keynote to /Archive/Keynote\n")
        let folder = try cli.ok("mv", "/Meetings/2026", "/Archive")
        #expect(folder.stdout == "moved /Meetings/2026 to /Archive/2026\n")
        #expect(try cli.item("/Archive/2026/Standup").duration == 3)
    }

    @Test func movingAFolderIntoItselfExitsOneMentioningTheCycle() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        for destination in ["/Meetings", "/Meetings/2026"] {
            let result = try cli.run("mv", "/Meetings", destination)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.hasPrefix("reel: cannot move /Meetings into \(destination)"), "\(result)")
            #expect(result.stderr.contains("inside itself"), "\(result)")
        }
        #expect(try cli.item("/Meetings").parent == (try cli.item("/")).id)
    }

    @Test func renameChangesTheNameInPlace() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let result = try cli.ok("rename", "/Meetings/Weekly", "Weekly sync")
        #expect(result.stdout == "renamed /Meetings/Weekly to /Meetings/Weekly sync\n")
        #expect(try cli.item("/Meetings/Weekly sync").duration == 75)
    }

    @Test func aTakenNameExitsOneWithTheDaemonsMessage() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let expected = try #require(
            refusal(try cli.daemon.client().call("library.rename", ["path": "/Talks", "name": "Meetings"]))?.message)
        let renamed = try cli.run("rename", "/Talks", "Meetings")
        #expect(renamed.status == 1, "\(renamed)")
        #expect(renamed.stderr == "reel: \(expected)\n")
        #expect(expected.contains("/Meetings"))
        let made = try cli.run("mkdir", "/Meetings/2026")
        #expect(made.status == 1, "\(made)")
        #expect(made.stderr.contains("already"), "\(made)")
        _ = try cli.scratch.tone("Weekly.wav", seconds: 1)
        let imported = try cli.run("import", "Weekly.wav", "/Meetings")
        #expect(imported.status == 1, "\(imported)")
        #expect(imported.stderr.contains("/Meetings/Weekly"), "\(imported)")
    }

    @Test func anInvalidNewNameExitsOne() throws {
        let cli = try LibraryCLI()
        try cli.ok("mkdir", "/A")
        for name in ["a/b", "..", ""] {
            let result = try cli.run("rename", "/A", name)
            #expect(result.status == 1, "\(name): \(result)")
            #expect(result.stderr.hasPrefix("reel: "), "\(result)")
        }
    }

    @Test func rmOfAFolderDeletesItsContentsAndCountsThem() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        // /Meetings, 2026, Standup, Notes, Weekly.
        #expect(try cli.ok("rm", "/Meetings").stdout == "deleted 5 items\n")
        #expect(try cli.ok("rm", "/Talks/Keynote").stdout == "deleted 1 item\n")
        #expect(try cli.ok("tree").stdout == "/\n├── Archive/\n└── Talks/\n\n2 folders, 0 recordings\n")
        let again = try cli.run("rm", "/Meetings")
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr == "reel: no item at /Meetings\n")
    }

    @Test func rmOfTheRootIsRefused() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let result = try cli.run("rm", "/")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "reel: the root folder cannot be deleted\n")
        #expect(try cli.ok("ls").stdout.split(separator: "\n").count == 3)
    }

    @Test func rmHelpSaysThatAFolderGoesWithItsContentsAndAudio() throws {
        let result = try CLI.run(["rm", "--help"])
        #expect(result.status == 0, "\(result)")
        let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("Deleting a folder deletes everything in it"))
        #expect(text.contains("audio files"))
    }

    // MARK: search

    @Test func searchPrintsPathsWithDurationsAndPagesWithACursorHint() throws {
        let cli = try LibraryCLI()
        _ = try cli.scratch.tone("t.wav", seconds: 2)
        try cli.ok("mkdir", "/Takes")
        for index in 1...5 { try cli.ok("import", "t.wav", "/Takes", "--name", "take \(index)") }
        try cli.ok("import", "t.wav", "--name", "other")

        let all = try cli.ok("search", "TAKE", "--all")
        let allRows = lines(all.stdout)
        #expect(allRows.count == 6)  // the folder /Takes and the five takes
        #expect(allRows.contains("/Takes/"))
        #expect(allRows.contains("/Takes/take 3  0:02"))
        #expect(all.stderr.isEmpty)

        // Page by page: two rows, and a hint on stderr with the cursor of the next page.
        var seen: [String] = []
        var arguments = ["search", "take", "--limit", "2"]
        for page in 0..<4 {
            let result = try CLI.run(arguments + ["--socket", cli.daemon.socketPath], in: cli.scratch.directory)
            #expect(result.status == 0, "\(result)")
            seen += lines(result.stdout)
            if page < 2 {
                #expect(lines(result.stdout).count == 2)
                let hint = try #require(lines(result.stderr).first, "\(result)")
                #expect(hint.hasPrefix("more results: reel search take --limit 2 --cursor "))
                let words = hint.split(separator: " ")
                let cursor = try #require(words.firstIndex(of: "--cursor").map { String(words[$0 + 1]) })
                arguments = ["search", "take", "--limit", "2", "--cursor", cursor]
            } else {
                #expect(result.stderr.isEmpty, "\(result)")
                break
            }
        }
        #expect(Set(seen) == Set(allRows))
        #expect(seen.count == 6)
    }

    @Test func searchJSONIsTheDaemonsPageOrEveryItemWithAll() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let page = try cli.ok("search", "e", "--limit", "1", "--json")
        let value = try JSONValue.parse(Array(page.stdout.utf8.dropLast()))
        #expect(value["items"]?.arrayValue?.count == 1)
        #expect(value["nextCursor"]?.stringValue != nil)
        let every = try cli.ok("search", "e", "--limit", "1", "--all", "--json")
        let all = try JSONValue.parse(Array(every.stdout.utf8.dropLast()))
        let items = try #require(all["items"]?.arrayValue).map { try Item(json: $0) }
        // The names that contain "e".
        #expect(Set(items.map(\.path)) == ["/Archive", "/Meetings", "/Meetings/Notes", "/Meetings/Weekly", "/Talks/Keynote"])
        #expect(all["nextCursor"] == .null)
    }

    @Test func searchWithNoMatchPrintsNothingOnStdout() throws {
        let cli = try LibraryCLI()
        let result = try cli.ok("search", "nothing like this")
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("nothing like this"))
    }

    @Test(arguments: ["0", "501"])
    func searchRejectsALimitOutOfRange(_ limit: String) throws {
        let result = try CLI.run(["search", "x", "--limit", limit, "--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("--limit"))
    }

    // MARK: import

    @Test func importOfANonAudioFileIsRefusedWithExitOne() throws {
        let cli = try LibraryCLI()
        let text = cli.scratch.directory.appendingPathComponent("notes.txt")
        try "not audio\n".write(to: text, atomically: true, encoding: .utf8)
        let result = try cli.run("import", "notes.txt")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("reel: \(text.path)"), "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(try cli.ok("ls").stdout.isEmpty)
    }

    @Test func importIntoAMissingFolderExitsOne() throws {
        let cli = try LibraryCLI()
        _ = try cli.scratch.tone("a.wav", seconds: 1)
        let result = try cli.run("import", "a.wav", "/Nowhere")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("/Nowhere"), "\(result)")
    }

    // MARK: tree paths

    @Test(arguments: [
        ["ls", "Meetings"], ["tree", "Meetings"], ["mkdir", "Meetings"], ["mv", "a", "/b"], ["mv", "/a", "b"],
        ["rename", "a", "b"], ["rm", "a"], ["import", "a.wav", "Meetings"],
    ])
    func aTreePathWithoutALeadingSlashIsAUsageError(_ arguments: [String]) throws {
        let result = try CLI.run(arguments + ["--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("tree paths start with '/'"), "\(result)")
    }

    @Test func mkdirOfTheRootIsAUsageError() throws {
        let result = try CLI.run(["mkdir", "/", "--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("always exists"))
    }

    // MARK: play

    @Test func playOfATreePathPlaysTheRecording() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        let played = try cli.ok("play", "/Meetings/Weekly")
        #expect(played.stdout.hasPrefix("playing /Meetings/Weekly at "), "\(played)")
        let status = try cli.ok("status", "--json")
        let state = try PlayerState(json: try JSONValue.parse(Array(status.stdout.utf8.dropLast())))
        let weekly = try cli.item("/Meetings/Weekly")
        #expect(state.source == .item(id: weekly.id, path: "/Meetings/Weekly", name: "Weekly"))
        #expect(state.duration == 75)
    }

    @Test func playOfAnEmptyFolderOrAMissingTreePathExitsOne() throws {
        let cli = try LibraryCLI()
        try cli.buildSampleTree()
        _ = try cli.ok("mkdir", "/Empty")
        let folder = try cli.run("play", "/Empty")
        #expect(folder.status == 1, "\(folder)")
        #expect(folder.stderr.contains("/Empty holds no recordings"), "\(folder)")
        // Neither a local file nor a library item: the message names both.
        let missing = try cli.run("play", "/Meetings/Nope")
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr == "reel: no file or library item at /Meetings/Nope\n")
        let file = try cli.run("play", "/nonexistent/file.flac")
        #expect(file.status == 1, "\(file)")
        #expect(file.stderr == "reel: no file or library item at /nonexistent/file.flac\n")
    }

    @Test func aLocalFileThatStartsWithASlashWinsOverATreePath() throws {
        let cli = try LibraryCLI()
        let tone = try cli.scratch.tone("same.wav", seconds: 2)
        // A recording whose tree path is the very same text as the local file's path.
        var folder = ""
        for name in tone.deletingLastPathComponent().path.split(separator: "/") {
            folder += "/" + name
            try cli.ok("mkdir", folder)
        }
        try cli.ok("import", tone.path, folder, "--name", "same.wav")
        #expect(try cli.item(tone.path).kind == .recording)

        try cli.ok("play", tone.path)
        let status = try cli.ok("status", "--json")
        let state = try PlayerState(json: try JSONValue.parse(Array(status.stdout.utf8.dropLast())))
        #expect(state.source == .file(path: tone.path))

        // Once the file is gone, the same text is the recording's tree path.
        try FileManager.default.removeItem(at: tone)
        try cli.ok("play", tone.path)
        let after = try cli.ok("status", "--json")
        let recording = try cli.item(tone.path)
        let afterState = try PlayerState(json: try JSONValue.parse(Array(after.stdout.utf8.dropLast())))
        #expect(afterState.source == .item(id: recording.id, path: tone.path, name: "same.wav"))
    }

    @Test func aMissingRelativeNameIsAnErrorNamingItsAbsolutePath() throws {
        let cli = try LibraryCLI()
        let result = try cli.run("play", "Meetings/Weekly")
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains(cli.scratch.directory.appendingPathComponent("Meetings/Weekly").path))
        #expect(result.stderr.contains("tree path"))
    }

    @Test func playHelpDocumentsHowTheArgumentIsRead() throws {
        let result = try CLI.run(["play", "--help"])
        #expect(result.status == 0, "\(result)")
        let text = result.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("an existing local file (not a directory) is played as a file"))
        #expect(text.contains("starts with '/' is a recording's tree path"))
        #expect(text.contains("A local file wins over a recording with the same path"))
    }
}

/// The error of a failed call, nil for a result.
private func refusal(_ result: Result<JSONValue, RPCError>) -> RPCError? {
    if case .failure(let error) = result { return error }
    return nil
}
