// The queue and volume commands of `reel` (add, queue, play N, next, prev, del, move, clear,
// repeat, random, single, consume, vol, mute, and the queue place in `watch`) against a real
// reeld: on the null device, where a file plays out at once (single mode holds a current entry
// there), and on PulseAudio, in real time, for the restart scenario.

import Foundation
import Glibc
import ReelModel
import ReelProtocol
import Testing

/// A daemon, a folder for audio, and `reel` run against that daemon from that folder.
private final class QueueCLI {
    private(set) var daemon: DaemonProcess
    let scratch: CLIScratch

    init(device: String = "null", environment: [String: String] = [:]) throws {
        daemon = try DaemonProcess(device: device, environment: environment)
        scratch = try CLIScratch()
    }

    /// `reel arguments... --socket <daemon>`, from the scratch folder.
    func run(_ arguments: [String]) throws -> CLIResult {
        try CLI.run(arguments + ["--socket", daemon.socketPath], in: scratch.directory)
    }

    func run(_ arguments: String...) throws -> CLIResult { try run(arguments) }

    /// Runs and requires exit 0.
    @discardableResult
    func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> CLIResult {
        let result = try run(arguments)
        try #require(result.status == 0, "reel \(arguments.joined(separator: " ")): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `queue.list` straight over the protocol.
    func queue() throws -> JSONValue { try daemon.client().result("queue.list") }

    /// The queue's sources, in order: file paths and tree paths.
    func queuePaths() throws -> [String] {
        try (queue()["entries"]?.arrayValue ?? []).map { try #require($0["source"]?["path"]?.stringValue) }
    }

    func mixer() throws -> JSONValue { try daemon.client().result("mixer.status") }

    func player() throws -> PlayerState { try PlayerState(json: try daemon.client().result("player.status")) }

    /// Polls player.status until `condition` holds (at most `timeout` s).
    @discardableResult
    func waitForPlayer(timeout: Double = 20, _ what: String, _ condition: (PlayerState) -> Bool) throws -> PlayerState {
        let deadline = Date().addingTimeInterval(timeout)
        var state = try player()
        while !condition(state) {
            guard Date() < deadline else { throw TestFailure("the player never became \(what); it is \(state)") }
            usleep(50_000)
            state = try player()
        }
        return state
    }

    /// Kills reeld with SIGKILL and starts another on the same data directory and socket.
    func killAndRestart(device: String) throws {
        let old = daemon
        kill(old.pid, SIGKILL)
        old.process.waitUntilExit()
        daemon = try DaemonProcess(
            device: device, arguments: ["--data-dir", old.directory.path + "/data"], socketPath: old.socketPath)
        previous.append(old)
    }

    /// Killed daemons, kept so that their directory (the data dir in use) stays until the end.
    private var previous: [DaemonProcess] = []

    /// A tone in the scratch folder; `name` may contain folders, made as needed.
    @discardableResult
    func tone(_ name: String, seconds: Int = 3) throws -> String {
        let url = scratch.directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return try scratch.tone(name, seconds: seconds).path
    }

    func path(_ name: String) -> String { scratch.directory.appendingPathComponent(name).path }
}

/// What `reel play` prints on the null device, which is not paced: the entry started, or (on
/// a slow machine) already over.
private func startedOrOver(_ result: CLIResult, _ path: String) -> Bool {
    result.stdout.hasPrefix("playing \(path) at 0:00 / ") || result.stdout == "stopped\n"
}

/// The lines of `text`, without the newline that ends the last one.
private func lines(_ text: String) -> [String] {
    var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if text.hasSuffix("\n") { parts.removeLast() }
    return parts
}

@Suite(.serialized)
struct QueueCLITests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]

    // MARK: The scenario

    /// Queue a folder of recordings and two files, look at the queue, skip, turn the volume
    /// down, pause; after `kill -9` and a new start the queue, the entry, the position and the
    /// volume are what they were.
    @Test(.enabled(if: pulse != nil, "needs real-time playback: the PulseAudio null sink that scripts/test starts (REEL_TEST_PULSE_SERVER)"))
    func aQueueWithItsEntryPositionAndVolumeSurvivesKillDashNine() throws {
        let cli = try QueueCLI(device: "pulse")
        try cli.tone("standup.wav", seconds: 30)
        try cli.tone("weekly.wav", seconds: 30)
        let first = try cli.tone("first.wav", seconds: 30)
        let second = try cli.tone("second.wav", seconds: 30)
        try cli.ok("mkdir", "/Meetings")
        try cli.ok("import", "standup.wav", "/Meetings", "--name", "Standup")
        try cli.ok("import", "weekly.wav", "/Meetings", "--name", "Weekly")

        let added = try cli.ok("add", "/Meetings", "first.wav", "second.wav")
        #expect(lines(added.stdout) == ["added 2 recordings from /Meetings", "added \(first)", "added \(second)"])
        let listed = try cli.ok("queue")
        #expect(lines(listed.stdout) == [
            "  1  /Meetings/Standup  0:30",
            "  2  /Meetings/Weekly   0:30",
            "  3  first.wav          0:30",
            "  4  second.wav         0:30",
            "4 entries (2:00)  repeat: off  random: off  single: off  consume: off",
        ])

        let started = try cli.ok("play")
        #expect(started.stdout.hasPrefix("playing /Meetings/Standup at "), "\(started)")
        let skipped = try cli.ok("next")
        #expect(skipped.stdout.hasPrefix("playing /Meetings/Weekly at "), "\(skipped)")
        #expect(try cli.ok("vol", "30").stdout == "volume: 30%\n")
        try cli.ok("seek", "12")
        let paused = try cli.ok("pause")
        #expect(paused.stdout.hasPrefix("paused at 0:1"), "\(paused)")
        let before = try cli.player()
        #expect(before.state == .paused)
        let queueBefore = try cli.ok("queue").stdout
        #expect(queueBefore.contains("> 2  /Meetings/Weekly"), "\(queueBefore)")
        #expect(try cli.queuePaths() == ["/Meetings/Standup", "/Meetings/Weekly", first, second])

        // Every change was saved before its reply: killed at once, nothing is lost.
        try cli.killAndRestart(device: "pulse")

        let after = try cli.waitForPlayer("paused on an entry") { $0.state == .paused && $0.entry != nil }
        #expect(after.source == before.source)
        #expect(abs(after.position - before.position) <= 0.5, "paused at \(before.position), back at \(after.position)")
        #expect(try cli.ok("queue").stdout == queueBefore)
        #expect(try cli.queuePaths() == ["/Meetings/Standup", "/Meetings/Weekly", first, second])
        #expect(try cli.ok("vol").stdout == "volume: 30%\n")
        // The entry being played is the current one, the second.
        let queue = try cli.queue()
        #expect(queue["current"]?.intValue == after.entry)
        #expect(queue["entries"]?.arrayValue?[1]["id"]?.intValue == after.entry)
        // And it carries on from there.
        let resumed = try cli.ok("play")
        #expect(resumed.stdout.hasPrefix("playing /Meetings/Weekly at 0:1"), "\(resumed)")
    }

    // MARK: add

    @Test func addTakesFilesDirectoriesAndTreePathsInTheOrderGiven() throws {
        let cli = try QueueCLI()
        try cli.tone("standup.wav")
        try cli.tone("weekly.wav")
        try cli.ok("mkdir", "/Meetings")
        try cli.ok("mkdir", "/Meetings/Old")
        try cli.ok("import", "weekly.wav", "/Meetings", "--name", "Weekly")
        try cli.ok("import", "standup.wav", "/Meetings/Old", "--name", "Standup")
        // A directory: its audio files by name, then its subdirectories'; not the rest.
        try cli.tone("album/02 second.wav")
        try cli.tone("album/01 first.WAV")
        try cli.tone("album/disc 2/03 third.wav")
        try cli.tone("album/.hidden.wav")
        try "notes".write(toFile: cli.path("album/notes.txt"), atomically: true, encoding: .utf8)
        let single = try cli.tone("single.wav")

        let result = try cli.ok("add", "/Meetings", "album", "./single.wav", "/Meetings/Weekly")
        #expect(lines(result.stdout) == [
            "added 2 recordings from /Meetings",
            "added 3 files from \(cli.path("album"))",
            "added \(single)",
            "added /Meetings/Weekly",
        ])
        // The file left out is named, with why; hidden files are not.
        #expect(result.stderr == "reel: skipped \(cli.path("album/notes.txt")): reeld has no decoder for .txt files\n")
        #expect(try cli.queuePaths() == [
            "/Meetings/Weekly", "/Meetings/Old/Standup", cli.path("album/01 first.WAV"), cli.path("album/02 second.wav"),
            cli.path("album/disc 2/03 third.wav"), single, "/Meetings/Weekly",
        ])
        // Adding does not start playback.
        #expect(try cli.player().state == .stopped)
    }

    @Test func addChecksEveryArgumentBeforeAddingAnything() throws {
        let cli = try QueueCLI()
        try cli.tone("a.wav")
        try FileManager.default.createDirectory(atPath: cli.path("empty"), withIntermediateDirectories: true)
        let before = try cli.queue()

        let missing = try cli.run("add", "a.wav", "nope.wav")
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.hasPrefix("reel: no file or directory at \(cli.path("nope.wav"))"), "\(missing)")
        #expect(missing.stdout.isEmpty)
        let empty = try cli.run("add", "a.wav", "empty")
        #expect(empty.status == 1, "\(empty)")
        #expect(empty.stderr.hasPrefix("reel: no audio files in \(cli.path("empty"))"), "\(empty)")
        #expect(try cli.queue() == before)

        // A tree path that is not in the library is the daemon's refusal; the files before it
        // were added, and the output says so.
        let tree = try cli.run("add", "a.wav", "/Nowhere")
        #expect(tree.status == 1, "\(tree)")
        #expect(tree.stdout == "added \(cli.path("a.wav"))\n")
        #expect(tree.stderr == "reel: no file or library item at /Nowhere\n")
        #expect(try cli.queuePaths() == [cli.path("a.wav")])

        let nothing = try cli.run("add")
        #expect(nothing.status == 2, "\(nothing)")
    }

    @Test func aFileInADirectoryThatDoesNotPlayIsSkippedWithAWarning() throws {
        let cli = try QueueCLI()
        let good = try cli.tone("dir/a.wav")
        try "not audio".write(toFile: cli.path("dir/b.wav"), atomically: true, encoding: .utf8)
        let result = try cli.run("add", "dir")
        #expect(result.status == 1, "\(result)")
        #expect(result.stdout == "added 1 file from \(cli.path("dir"))\n")
        #expect(result.stderr.hasPrefix("reel: skipped \(cli.path("dir/b.wav")): "), "\(result)")
        #expect(result.stderr.hasSuffix("reel: 1 file was not added\n"), "\(result)")
        #expect(try cli.queuePaths() == [good])
    }

    @Test func addOfADirectoryIsOneChangeOfTheQueue() throws {
        let cli = try QueueCLI()
        for name in ["a", "b", "c"] { try cli.tone("album/\(name).wav") }
        let watcher = try cli.daemon.client()
        let subscription = try #require(try watcher.result("subscribe", ["stream": "queue"])["subscription"])
        let first = try watcher.nextNotification()
        #expect(first.method == "queue.changed")
        let before = try #require(first.params["version"]?.intValue)

        try cli.ok("add", "album")
        #expect(try cli.queue()["version"]?.intValue == before + 1, "one directory, one new version")
        let added = try watcher.nextNotification(timeout: 20)
        #expect(added.method == "queue.changed" && added.params["subscription"] == subscription)
        #expect(added.params["version"]?.intValue == before + 1 && added.params["length"]?.intValue == 3, "\(added)")
        // A marker change after it: the next push is the marker's, none of the add is left.
        try cli.ok("repeat", "on")
        let marker = try watcher.nextNotification(timeout: 20)
        #expect(marker.params["version"]?.intValue == before + 2, "\(marker)")
        #expect(try cli.queuePaths() == ["a", "b", "c"].map { cli.path("album/\($0).wav") })
    }

    @Test func aDirectoryNamesEveryFileItLeavesOutAndWhy() throws {
        let cli = try QueueCLI()
        let good = try cli.tone("dir/a.wav")
        // Suffixes no decoder of the daemon takes (daemon.info's decoders), one in a subdirectory.
        for name in ["dir/b.cue", "dir/cover.jpg", "dir/sub/c.log", "dir/README"] {
            try FileManager.default.createDirectory(
                atPath: (cli.path(name) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try "not for the queue".write(toFile: cli.path(name), atomically: true, encoding: .utf8)
        }
        let result = try cli.run("add", "dir")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "added 1 file from \(cli.path("dir"))\n")
        #expect(lines(result.stderr) == [
            "reel: skipped \(cli.path("dir/README")): no suffix to tell its format by",
            "reel: skipped \(cli.path("dir/b.cue")): reeld has no decoder for .cue files",
            "reel: skipped \(cli.path("dir/cover.jpg")): reeld has no decoder for .jpg files",
            "reel: skipped \(cli.path("dir/sub/c.log")): reeld has no decoder for .log files",
        ], "\(result)")
        #expect(try cli.queuePaths() == [good])
    }

    @Test func addNextPutsTheItemsRightAfterTheCurrentEntryFirstGivenFirst() throws {
        let cli = try QueueCLI()
        for name in ["a", "b", "c", "x", "y", "z"] { try cli.tone("\(name).wav") }
        try cli.ok("add", "a.wav", "b.wav", "c.wav")
        // Single mode stops after the entry, which stays current (the null device plays it out at once).
        try cli.ok("single", "on")
        try cli.ok("play", "2")
        try cli.waitForPlayer("stopped") { $0.state == .stopped }
        #expect(try cli.queue()["current"] == cli.queue()["entries"]?.arrayValue?[1]["id"])

        let result = try cli.ok("add", "--next", "x.wav", "y.wav")
        #expect(lines(result.stdout) == ["added \(cli.path("x.wav"))", "added \(cli.path("y.wav"))"])
        #expect(try cli.queuePaths() == ["a.wav", "b.wav", "x.wav", "y.wav", "c.wav"].map(cli.path))

        // With random on, "next" still means next in the order given.
        try cli.ok("random", "on")
        try cli.ok("add", "--next", "z.wav", "a.wav")
        #expect(try cli.queuePaths() == ["a.wav", "b.wav", "z.wav", "a.wav", "x.wav", "y.wav", "c.wav"].map(cli.path))

        // With no current entry, --next appends, in order.
        try cli.ok("clear")
        try cli.ok("add", "--next", "x.wav", "y.wav")
        #expect(try cli.queuePaths() == ["x.wav", "y.wav"].map(cli.path))
    }

    // MARK: queue

    @Test func queueNumbersTheEntriesMarksTheCurrentOneAndShowsTheOptions() throws {
        let cli = try QueueCLI()
        try cli.tone("a.wav", seconds: 3)
        try cli.tone("longer name.wav", seconds: 75)
        try cli.tone("c.wav", seconds: 5)
        try cli.ok("mkdir", "/Talks")
        try cli.ok("import", "c.wav", "/Talks", "--name", "Keynote")

        let empty = try cli.ok("queue")
        #expect(empty.stdout == "0 entries  repeat: off  random: off  single: off  consume: off\n")

        try cli.ok("add", "a.wav", "longer name.wav", "/Talks/Keynote")
        try cli.ok("single", "on")
        try cli.ok("consume", "on")
        try cli.ok("consume", "off")
        try cli.ok("play", "2")
        try cli.waitForPlayer("stopped") { $0.state == .stopped }
        let listed = try cli.ok("queue")
        #expect(lines(listed.stdout) == [
            "  1  a.wav            0:03",
            "> 2  longer name.wav  1:15",
            "  3  /Talks/Keynote   0:05",
            "3 entries (1:23)  repeat: off  random: off  single: on  consume: off",
        ])
        #expect(listed.stderr.isEmpty)
    }

    @Test func queueJSONIsTheDaemonsQueueList() throws {
        let cli = try QueueCLI()
        try cli.tone("a.wav")
        try cli.tone("b.wav")
        try cli.ok("add", "a.wav", "b.wav")
        let result = try cli.ok("queue", "--json")
        #expect(lines(result.stdout).count == 1)
        let printed = try JSONValue.parse(Array(result.stdout.utf8.dropLast()))
        #expect(printed == (try cli.queue()))
    }

    @Test func aLongQueueIsListedWhole() throws {
        let cli = try QueueCLI()
        try cli.tone("a.wav", seconds: 1)
        // More than one page of queue.list (500 entries), from one directory of links.
        for index in 0..<1203 {
            let name = cli.path("many/\(String(index + 10000)).wav")
            if index == 0 { try FileManager.default.createDirectory(atPath: cli.path("many"), withIntermediateDirectories: true) }
            try FileManager.default.linkItem(atPath: cli.path("a.wav"), toPath: name)
        }
        try cli.ok("add", "many")
        let result = try cli.ok("queue")
        let rows = lines(result.stdout)
        #expect(rows.count == 1204)
        #expect(rows.first == "     1  10000.wav  0:01")
        #expect(rows[1202] == "  1203  11202.wav  0:01")
        #expect(rows.last?.hasPrefix("1203 entries (20:03)") == true)
        let json = try cli.ok("queue", "--json")
        #expect(try JSONValue.parse(Array(json.stdout.utf8.dropLast())) == (try cli.queue()))
    }

    // MARK: play N, next, prev

    @Test func playNPlaysThatEntryAndKeepsTheQueue() throws {
        let cli = try QueueCLI()
        for name in ["a", "b", "c"] { try cli.tone("\(name).wav") }
        try cli.ok("add", "a.wav", "b.wav", "c.wav")
        try cli.ok("single", "on")
        let played = try cli.ok("play", "3")
        #expect(startedOrOver(played, cli.path("c.wav")), "\(played)")
        let state = try cli.waitForPlayer("stopped") { $0.state == .stopped }
        #expect(state.source == .file(path: cli.path("c.wav")))
        #expect(try cli.queue()["entries"]?.arrayValue?[2]["id"]?.intValue == state.entry)
        #expect(try cli.queuePaths() == ["a.wav", "b.wav", "c.wav"].map(cli.path))

        // `reel play` with nothing starts the current entry again.
        let again = try cli.ok("play")
        #expect(startedOrOver(again, cli.path("c.wav")), "\(again)")
        #expect(try cli.waitForPlayer("stopped") { $0.state == .stopped }.source == .file(path: cli.path("c.wav")))
    }

    @Test func aFileNamedLikeAPositionWinsAndReplacesTheQueue() throws {
        let cli = try QueueCLI()
        try cli.tone("a.wav")
        try cli.tone("b.wav")
        try cli.ok("add", "a.wav", "b.wav")
        let file = try cli.tone("2.wav")
        try FileManager.default.moveItem(atPath: file, toPath: cli.path("2"))
        let played = try cli.ok("play", "2")
        #expect(startedOrOver(played, cli.path("2")), "\(played)")
        #expect(try cli.queuePaths() == [cli.path("2")])
    }

    @Test func playOfAFolderPlaysItsRecordingsAsTheQueue() throws {
        let cli = try QueueCLI()
        try cli.tone("a.wav")
        try cli.ok("mkdir", "/Talks")
        try cli.ok("import", "a.wav", "/Talks", "--name", "One")
        try cli.ok("import", "a.wav", "/Talks", "--name", "Two")
        try cli.ok("add", "a.wav")
        let played = try cli.ok("play", "/Talks")
        #expect(startedOrOver(played, "/Talks/One"), "\(played)")
        #expect(try cli.queuePaths() == ["/Talks/One", "/Talks/Two"])
    }

    @Test func nextAndPrevNeedSomethingPlaying() throws {
        let cli = try QueueCLI()
        for command in ["next", "prev"] {
            let result = try cli.run(command)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr == "reel: nothing is playing; play an entry first\n")
            #expect(result.stdout.isEmpty)
        }
        let empty = try cli.run("play")
        #expect(empty.status == 1, "\(empty)")
        #expect(empty.stderr == "reel: the queue is empty; add something to play first\n")
        let at = try cli.run("play", "--at", "10")
        #expect(at.status == 2, "\(at)")
    }

    // MARK: del, move, clear

    @Test func delMoveAndClearChangeTheQueueByPosition() throws {
        let cli = try QueueCLI()
        for name in ["a", "b", "c", "d", "e"] { try cli.tone("\(name).wav") }
        try cli.ok("add", "a.wav", "b.wav", "c.wav", "d.wav", "e.wav")

        #expect(try cli.ok("del", "2").stdout == "removed 1 entry; 4 entries left\n")
        #expect(try cli.queuePaths() == ["a.wav", "c.wav", "d.wav", "e.wav"].map(cli.path))
        #expect(try cli.ok("move", "4", "1").stdout == "moved e.wav from 4 to 1\n")
        #expect(try cli.queuePaths() == ["e.wav", "a.wav", "c.wav", "d.wav"].map(cli.path))
        #expect(try cli.ok("move", "1", "3").stdout == "moved e.wav from 1 to 3\n")
        #expect(try cli.queuePaths() == ["a.wav", "c.wav", "e.wav", "d.wav"].map(cli.path))
        // Ranges, and a position given twice, remove each entry once.
        #expect(try cli.ok("del", "1-2", "2", "4").stdout == "removed 3 entries; 1 entry left\n")
        #expect(try cli.queuePaths() == [cli.path("e.wav")])
        #expect(try cli.ok("clear").stdout == "cleared the queue\n")
        #expect(try cli.queue()["length"] == 0)
    }

    // MARK: bad input

    @Test func badPositionsAndVolumesAreRefusedAndChangeNothing() throws {
        let cli = try QueueCLI()
        for name in ["a", "b", "c"] { try cli.tone("\(name).wav") }
        try cli.ok("add", "a.wav", "b.wav", "c.wav")
        try cli.ok("vol", "40")
        let queueBefore = try cli.queue()
        let mixerBefore = try cli.mixer()

        let cases: [(arguments: [String], status: Int32, stderr: String)] = [
            (["del", "99"], 1, "reel: no entry at position 99 (the queue has 3)\n"),
            (["del", "2", "99"], 1, "reel: no entry at position 99 (the queue has 3)\n"),
            (["del", "2-5"], 1, "reel: no entry at position 4 (the queue has 3)\n"),
            (["move", "1", "99"], 1, "reel: cannot move to position 99: the queue has 3\n"),
            (["move", "99", "1"], 1, "reel: no entry at position 99 (the queue has 3)\n"),
            (["play", "99"], 1, "reel: no entry at position 99 (the queue has 3)\n"),
            (["del", "0"], 2, "queue positions start at 1"),
            (["del", "abc"], 2, "'abc' is not a queue position"),
            (["del", "3-1"], 2, "'3-1' is not a range"),
            (["move", "1"], 2, "<to>"),
            (["play", "0"], 2, "positions start at 1"),
            (["vol", "101"], 2, "the volume goes from 0 to 100, not 101"),
            (["vol", "abc"], 2, "'abc' is not a volume"),
            (["vol", "30", "40"], 2, "vol takes one volume"),
            (["mute", "maybe"], 2, "maybe"),
            (["repeat", "maybe"], 2, "maybe"),
            (["single", "twice"], 2, "twice"),
        ]
        for (arguments, status, stderr) in cases {
            let result = try cli.run(arguments)
            #expect(result.status == status, "reel \(arguments.joined(separator: " ")): \(result)")
            if status == 1 {
                #expect(result.stderr == stderr, "reel \(arguments.joined(separator: " ")): \(result)")
            } else {
                #expect(result.stderr.contains(stderr), "reel \(arguments.joined(separator: " ")): \(result)")
            }
            #expect(result.stdout.isEmpty, "reel \(arguments.joined(separator: " ")): \(result)")
        }
        // Nothing changed, not even the queue's version.
        #expect(try cli.queue() == queueBefore)
        #expect(try cli.mixer() == mixerBefore)
        #expect(try cli.player().state == .stopped)
    }

    // MARK: options

    @Test func optionCommandsSetOrToggleAndPrintEveryOption() throws {
        let cli = try QueueCLI()
        let expectations: [([String], String)] = [
            (["repeat"], "repeat: on  random: off  single: off  consume: off"),
            (["repeat"], "repeat: off  random: off  single: off  consume: off"),
            (["random", "on"], "repeat: off  random: on  single: off  consume: off"),
            (["random", "on"], "repeat: off  random: on  single: off  consume: off"),
            (["single", "oneshot"], "repeat: off  random: on  single: oneshot  consume: off"),
            (["single"], "repeat: off  random: on  single: off  consume: off"),
            (["single"], "repeat: off  random: on  single: on  consume: off"),
            (["consume"], "repeat: off  random: on  single: on  consume: on"),
            (["consume", "off"], "repeat: off  random: on  single: on  consume: off"),
            (["random", "off"], "repeat: off  random: off  single: on  consume: off"),
        ]
        for (arguments, line) in expectations {
            let result = try cli.run(arguments)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout == line + "\n", "reel \(arguments.joined(separator: " "))")
        }
        let options = try cli.queue()["options"]
        #expect(options == ["repeat": false, "random": false, "single": true, "consume": false])
    }

    // MARK: vol, mute

    @Test func volShowsSetsAndChangesTheVolumeAndMuteToggles() throws {
        let cli = try QueueCLI()
        #expect(try cli.ok("vol").stdout == "volume: 100%\n")
        #expect(try cli.ok("vol", "30").stdout == "volume: 30%\n")
        #expect(try cli.ok("vol", "+5").stdout == "volume: 35%\n")
        #expect(try cli.ok("vol", "-10").stdout == "volume: 25%\n")
        let dashes = try CLI.run(["vol", "--socket", cli.daemon.socketPath, "--", "-5"])
        #expect(dashes.status == 0, "\(dashes)")
        #expect(dashes.stdout == "volume: 20%\n")
        #expect(try cli.ok("vol", "-50").stdout == "volume: 0%\n")
        #expect(try cli.ok("vol", "+200").stdout == "volume: 100%\n")
        #expect(try cli.ok("vol", "40%").stdout == "volume: 40%\n")
        #expect(try cli.ok("mute").stdout == "volume: 40% (muted)\n")
        #expect(try cli.ok("vol", "45").stdout == "volume: 45% (muted)\n")
        #expect(try cli.ok("mute").stdout == "volume: 45%\n")
        #expect(try cli.ok("mute", "on").stdout == "volume: 45% (muted)\n")
        #expect(try cli.ok("mute", "on").stdout == "volume: 45% (muted)\n")
        #expect(try cli.ok("mute", "off").stdout == "volume: 45%\n")
        #expect(try cli.mixer()["volume"] == 45)
    }

    @Test func withoutAMixerVolShowsThatAndSettingIsRefused() throws {
        let cli = try QueueCLI(environment: ["REEL_MIXER": "none"])
        #expect(try cli.ok("vol").stdout == "volume: none (mixer = \"none\")\n")
        for arguments in [["vol", "30"], ["vol", "+5"], ["mute"], ["mute", "off"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr == "reel: there is no mixer (mixer = \"none\"); the volume cannot be set\n", "\(result)")
        }
    }

    // MARK: watch

    @Test func watchShowsTheEntrysPlaceInTheQueueAndFollowsIt() throws {
        let cli = try QueueCLI()
        for name in ["a", "b", "c", "d"] { try cli.tone("\(name).wav") }
        try cli.ok("add", "a.wav", "b.wav", "c.wav")
        try cli.ok("single", "on")
        let watch = try CLIBackgroundProcess(["watch", "--socket", cli.daemon.socketPath])
        #expect(try watch.readLine() == "stopped")
        try cli.ok("play", "2")
        let playing = try watch.readLine { $0.contains(cli.path("b.wav")) && $0.hasPrefix("stopped") }
        #expect(playing.hasSuffix("  (2/3)"), "\(playing)")
        try cli.ok("add", "d.wav")
        #expect(try watch.readLine { $0.hasPrefix("stopped") }.hasSuffix("  (2/4)"))
        try cli.ok("move", "2", "4")
        #expect(try watch.readLine { $0.hasPrefix("stopped") }.hasSuffix("  (4/4)"))
        try cli.ok("del", "1")
        #expect(try watch.readLine { $0.hasPrefix("stopped") }.hasSuffix("  (3/3)"))
        watch.signal(SIGINT)
        #expect(watch.waitForExit() == 0)
        #expect(watch.stderr.isEmpty)
    }

    @Test(.enabled(if: pulse != nil, "needs real-time playback: the PulseAudio null sink that scripts/test starts (REEL_TEST_PULSE_SERVER)"))
    func watchFollowsNextWhilePlaying() throws {
        let cli = try QueueCLI(device: "pulse")
        for name in ["a", "b", "c"] { try cli.tone("\(name).wav", seconds: 30) }
        try cli.ok("add", "a.wav", "b.wav", "c.wav")
        let watch = try CLIBackgroundProcess(["watch", "--socket", cli.daemon.socketPath])
        #expect(try watch.readLine() == "stopped")
        try cli.ok("play", "1")
        let first = try watch.readLine { $0.hasPrefix("playing") && $0.contains(cli.path("a.wav")) }
        #expect(first.hasSuffix("  (1/3)"), "\(first)")
        try cli.ok("next")
        let second = try watch.readLine { $0.hasPrefix("playing") && $0.contains(cli.path("b.wav")) }
        #expect(second.hasSuffix("  (2/3)"), "\(second)")
        try cli.ok("stop")
        watch.signal(SIGINT)
        #expect(watch.waitForExit() == 0)
    }

    // MARK: help

    @Test func helpListsTheQueueAndVolumeCommands() throws {
        let result = try CLI.run(["--help"])
        #expect(result.status == 0, "\(result)")
        for command in ["add", "queue", "next", "prev", "del", "move", "clear", "repeat", "random", "single", "consume", "vol", "mute"] {
            #expect(result.stdout.contains("  \(command) "), "\(command) is not in reel --help")
        }
    }
}
