// The `reel` binary against a real reeld (device "null") and, where the exact request matters,
// against a fake daemon that records what was sent.

import Foundation
import Glibc
import ReelModel
import ReelProtocol
import Testing

@Suite(.serialized)
struct CLITests {
    // MARK: status

    @Test func statusJSONIsThePlayerStateTheDaemonSent() throws {
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(["status", "--json", "--socket", daemon.socketPath])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let state = try PlayerState(json: try JSONValue.parse(Array(result.stdout.utf8.dropLast())))
        #expect(state.state == .stopped)
        #expect(state.source == nil)
    }

    @Test func statusPrintsOneHumanLine() throws {
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(["status", "--socket", daemon.socketPath])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "stopped\n")
        #expect(result.stderr.isEmpty)
    }

    @Test func statusShowsPositionPathAndFormatOfWhatIsLoaded() throws {
        let fake = try CLIFakeDaemon { _ in
            .success([
                "state": "playing", "position": 42.7, "duration": 190.0, "source": ["path": "/music/a.flac"],
                "format": ["codec": "flac", "sampleRate": 44100, "channels": 2], "timestamp": 1.0,
                "underruns": 0, "error": .null,
            ])
        }
        let result = try CLI.run(["status", "--socket", fake.socketPath])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "playing  0:42 / 3:10  /music/a.flac  (flac 44100 Hz 2 ch)\n")
    }

    /// An MP3 whose length is still being counted shows its estimate as such.
    @Test func statusAndQueueMarkAnEstimatedDuration() throws {
        let fake = try CLIFakeDaemon { request in
            if request.method == "queue.list" {
                let entries: [JSONValue] = request.params["count"] == 0 ? [] : [
                    ["id": 1, "position": 0, "source": ["path": "/music/long.mp3"], "duration": 3598.4,
                     "durationEstimated": true, "format": ["codec": "mp3", "sampleRate": 44100, "channels": 2]],
                    ["id": 2, "position": 1, "source": ["path": "/music/a.flac"], "duration": 190.0, "format": .null],
                ]
                return .success([
                    "version": 3, "length": 2, "current": 1, "next": 2, "entries": .array(entries),
                    "options": ["repeat": false, "random": false, "single": false, "consume": false],
                ])
            }
            return .success([
                "state": "playing", "position": 42.7, "duration": 3598.4, "durationEstimated": true,
                "source": ["path": "/music/long.mp3"], "format": ["codec": "mp3", "sampleRate": 44100, "channels": 2],
                "timestamp": 1.0, "underruns": 0, "error": .null,
            ])
        }
        let status = try CLI.run(["status", "--socket", fake.socketPath])
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout == "playing  0:42 / ~59:58  /music/long.mp3  (mp3 44100 Hz 2 ch)\n")
        let queue = try CLI.run(["queue", "--socket", fake.socketPath])
        #expect(queue.status == 0, "\(queue)")
        #expect(queue.stdout.contains("> 1  long.mp3  ~59:58\n  2  a.flac      3:10\n"), "\(queue.stdout)")
        #expect(queue.stdout.contains("2 entries (~1:03:08)"), "\(queue.stdout)")
    }

    @Test func socketComesFromREEL_SOCKETWhenNoOptionIsGiven() throws {
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(["status"], environment: ["REEL_SOCKET": daemon.socketPath])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "stopped\n")
    }

    @Test func socketOptionWinsOverREEL_SOCKET() throws {
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(
            ["status", "--socket", daemon.socketPath], environment: ["REEL_SOCKET": "/nonexistent/reel.sock"])
        #expect(result.status == 0, "\(result)")
    }

    @Test func socketOptionMayComeBeforeTheSubcommand() throws {
        let daemon = try DaemonProcess(device: "null")
        let before = try CLI.run(["--socket", daemon.socketPath, "status"])
        #expect(before.status == 0, "\(before)")
        #expect(before.stdout == "stopped\n")
        let joined = try CLI.run(["--socket=\(daemon.socketPath)", "seek", "-5"])
        #expect(joined.status == 1, "\(joined)")
        #expect(joined.stderr.contains("nothing is playing"))
    }

    // MARK: play

    @Test func playResolvesARelativePathAgainstTheCurrentDirectory() throws {
        let scratch = try CLIScratch()
        let tone = try scratch.tone("tone.wav")
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(["play", "tone.wav", "--socket", daemon.socketPath], in: scratch.directory)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.split(separator: "\n").count == 1)
        // The null device is not paced: the track may already be over, but it stays loaded.
        let status = try CLI.run(["status", "--json", "--socket", daemon.socketPath])
        let state = try PlayerState(json: try JSONValue.parse(Array(status.stdout.utf8.dropLast())))
        #expect(state.source == .file(path: tone.path))
        #expect(state.format == AudioFormat(codec: "wav", sampleRate: 44100, channels: 2))
    }

    @Test func playOfAMissingFileExitsOneNamingTheAbsolutePath() throws {
        let scratch = try CLIScratch()
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(["play", "./missing.wav", "--socket", daemon.socketPath], in: scratch.directory)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.hasPrefix("reel: "))
        #expect(result.stderr.contains(scratch.directory.appendingPathComponent("missing.wav").path))
        #expect(result.stdout.isEmpty)
    }

    @Test func playAtSendsTheStartPosition() throws {
        let scratch = try CLIScratch()
        let tone = try scratch.tone("a.wav").path
        let fake = try CLIFakeDaemon { _ in .success(Self.pausedState) }
        let result = try CLI.run(["play", tone, "--at", "1:30", "--socket", fake.socketPath])
        #expect(result.status == 0, "\(result)")
        #expect(fake.requests.map(\.method) == ["player.play"])
        #expect(fake.requests.first?.params == ["file": .string(tone), "position": 90.0])
    }

    @Test(arguments: ["-5", "abc", "1:75"])
    func playAtRejectsWhatIsNotAPositionFromTheStart(_ at: String) throws {
        let result = try CLI.run(["play", "/music/a.flac", "--at", at, "--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("'\(at)'"))
    }

    // MARK: seek

    static let pausedState: JSONValue = [
        "state": "paused", "position": 90.0, "duration": 190.0, "source": ["path": "/music/a.flac"],
        "format": ["codec": "flac", "sampleRate": 44100, "channels": 2], "timestamp": 1.0, "underruns": 0,
        "error": .null,
    ]

    static let seekForms: [(String, JSONObject)] = [
        ("-5", ["offset": -5.0]), ("+10", ["offset": 10.0]), ("-1:00", ["offset": -60.0]),
        ("90", ["position": 90.0]), ("1:30", ["position": 90.0]), ("1:02:03", ["position": 3723.0]),
        ("12.5", ["position": 12.5]),
    ]

    @Test(arguments: seekForms)
    func seekSendsAnAbsolutePositionOrARelativeOffset(_ text: String, _ params: JSONObject) throws {
        let fake = try CLIFakeDaemon { _ in .success(Self.pausedState) }
        let result = try CLI.run(["seek", text, "--socket", fake.socketPath])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout == "paused at 1:30 / 3:10\n")
        #expect(fake.requests.map(\.method) == ["player.seek"])
        #expect(fake.requests.first?.params == params)
    }

    @Test func seekAcceptsANegativeOffsetBeforeTheSocketOptionAndAfterADoubleDash() throws {
        let fake = try CLIFakeDaemon { _ in .success(Self.pausedState) }
        let first = try CLI.run(["seek", "--socket", fake.socketPath, "-5"])
        let second = try CLI.run(["seek", "--socket", fake.socketPath, "--", "-5"])
        #expect(first.status == 0, "\(first)")
        #expect(second.status == 0, "\(second)")
        #expect(fake.requests.map(\.params) == [["offset": -5.0], ["offset": -5.0]])
    }

    @Test func seekFormsReachTheRealDaemonWhichRefusesWhenNothingPlays() throws {
        let daemon = try DaemonProcess(device: "null")
        for text in ["-5", "1:30", "+10", "90"] {
            let result = try CLI.run(["seek", text, "--socket", daemon.socketPath])
            #expect(result.status == 1, "\(text): \(result)")
            #expect(result.stderr.hasPrefix("reel: nothing is playing"), "\(text): \(result)")
        }
    }

    @Test(arguments: ["1:75", "abc", "1:2:3:4", "+", "--5"])
    func aBadSeekPositionExitsTwoNamingIt(_ text: String) throws {
        let result = try CLI.run(["seek", text, "--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("'\(text)'"), "\(result)")
    }

    @Test func seekWithoutAPositionExitsTwo() throws {
        let result = try CLI.run(["seek", "--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.contains("position"))
    }

    // MARK: errors and exit codes

    @Test func theDaemonsRefusalExitsOneWithItsMessage() throws {
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(["pause", "--socket", daemon.socketPath])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "reel: nothing is playing\n")
        #expect(result.stdout.isEmpty)
    }

    @Test func noDaemonExitsThreeNamingTheSocketWithAHint() throws {
        let scratch = try CLIScratch()
        let socket = scratch.directory.appendingPathComponent("absent.sock").path
        let result = try CLI.run(["status", "--socket", socket])
        #expect(result.status == 3, "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first == "reel: cannot reach reeld at \(socket): No such file or directory"[...])
        #expect(lines.count == 2)
        #expect(result.stderr.contains("systemctl --user start reeld"))
        #expect(result.stderr.contains("REEL_SOCKET"))
    }

    @Test func noDaemonAtTheDefaultPathNamesThatPath() throws {
        let scratch = try CLIScratch()
        let result = try CLI.run(["info"], environment: ["XDG_RUNTIME_DIR": scratch.directory.path])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains(scratch.directory.appendingPathComponent("reel/reel.sock").path))
    }

    @Test func aSocketThatNobodyListensOnExitsThree() throws {
        let daemon = try DaemonProcess(device: "null")
        let socket = daemon.socketPath
        daemon.stop()
        let result = try CLI.run(["toggle", "--socket", socket])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains(socket))
    }

    @Test func anUnknownSubcommandExitsTwo() throws {
        let result = try CLI.run(["frobnicate"])
        #expect(result.status == 2, "\(result)")
        #expect(!result.stderr.isEmpty)
    }

    @Test func anUnknownOptionExitsTwo() throws {
        let result = try CLI.run(["status", "--frobnicate"])
        #expect(result.status == 2, "\(result)")
    }

    @Test func helpExitsZero() throws {
        let result = try CLI.run(["--help"])
        #expect(result.status == 0, "\(result)")
        for command in ["play", "pause", "resume", "toggle", "stop", "seek", "status", "watch", "info"] {
            #expect(result.stdout.contains(command))
        }
    }

    // MARK: watch

    @Test func watchOnAPipePrintsLinesAndExitsZeroOnSIGINT() throws {
        let scratch = try CLIScratch()
        let tone = try scratch.tone("watched.wav")
        let daemon = try DaemonProcess(device: "null")
        let watch = try CLIBackgroundProcess(["watch", "--interval", "0.05", "--socket", daemon.socketPath])
        // The current value comes right after subscribing.
        let first = try watch.readLine()
        #expect(first == "stopped")
        let played = try CLI.run(["play", tone.path, "--socket", daemon.socketPath])
        #expect(played.status == 0, "\(played)")
        // Playing on the null device ends at once; the line names the file either way.
        let line = try watch.readLine { $0.contains(tone.path) }
        #expect(line.contains("0:05"))
        #expect(line.contains("(wav 44100 Hz 2 ch)"))
        watch.signal(SIGINT)
        #expect(watch.waitForExit() == 0)
        #expect(watch.stderr.isEmpty)
    }

    @Test func watchOnATerminalShowsWhatIsPlayingOnItsOneLine() throws {
        let scratch = try CLIScratch()
        let tone = try scratch.tone("watched on a terminal.wav")
        let daemon = try DaemonProcess(device: "null")
        // `script` gives reel a terminal (a pty): the line is redrawn in place, with the bar.
        let command = [CLI.path, "watch", "--socket", daemon.socketPath].map { "'\($0)'" }.joined(separator: " ")
        let watch = try CLIBackgroundProcess(["-q", "-f", "-e", "-c", command, "/dev/null"], executable: "/usr/bin/script")
        _ = try watch.readOutput { $0.contains("stopped") }
        let played = try CLI.run(["play", tone.path, "--socket", daemon.socketPath])
        #expect(played.status == 0, "\(played)")
        // The file's name follows the bar and the clock on the same line (the null device plays
        // it out at once: the entry stays, stopped at its end).
        let output = try watch.readOutput { $0.contains("watched on a terminal.wav") }
        let drawn = try #require(output.components(separatedBy: "\r").last { $0.contains("watched on a terminal.wav") })
        let line = drawn.replacingOccurrences(of: "\u{1B}[K", with: "")
        #expect(line.contains("[") && line.contains("0:05"), "\(line.debugDescription)")
        #expect(line.contains("(1/1)"), "\(line.debugDescription)")
        #expect(line.count < 80, "\(line.debugDescription)")
        watch.signal(SIGINT)
        _ = watch.waitForExit()
    }

    @Test func watchExitsThreeWhenTheDaemonGoesAway() throws {
        let daemon = try DaemonProcess(device: "null")
        let watch = try CLIBackgroundProcess(["watch", "--socket", daemon.socketPath])
        _ = try watch.readLine()
        daemon.stop()
        #expect(watch.waitForExit() == 3)
        #expect(watch.stderr.contains("reel: reeld at \(daemon.socketPath) went away"))
    }

    @Test func watchWithoutADaemonExitsThree() throws {
        let result = try CLI.run(["watch", "--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 3, "\(result)")
    }

    @Test func watchRejectsATooShortInterval() throws {
        let result = try CLI.run(["watch", "--interval", "0.001", "--socket", "/nonexistent/reel.sock"])
        #expect(result.status == 2, "\(result)")
    }

    // MARK: info

    @Test func infoPrintsTheDevice() throws {
        let daemon = try DaemonProcess(device: "null")
        let result = try CLI.run(["info", "--socket", daemon.socketPath])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("device:         null\n"), "\(result)")
        #expect(result.stdout.contains(daemon.socketPath))
        let json = try CLI.run(["info", "--json", "--socket", daemon.socketPath])
        #expect(json.status == 0, "\(json)")
        let info = try DaemonInfo(json: try JSONValue.parse(Array(json.stdout.utf8.dropLast())))
        #expect(info.device == "null")
        #expect(info.protocolVersion == 3)
    }
}
