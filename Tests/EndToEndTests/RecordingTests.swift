import Foundation
import Glibc
import ReelProtocol
import ReelTestSupport
import Testing

/// Recording through the real daemon and real ALSA devices: a tone looped back through the
/// PulseAudio null sink, known samples fed through the ALSA `file` plugin, `kill -9` and
/// SIGTERM mid-take, a really full filesystem, and the recorder's errors.
@Suite(.serialized) struct RecordingTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]
    static let formats = ["flac", "wav", "ogg", "opus"]

    /// The audio file of a recording item.
    func audioFile(_ daemon: DaemonProcess, _ item: JSONValue, dataDir: String? = nil) throws -> String {
        let id = try #require(item["id"]?.stringValue)
        let codec = try #require(item["format"]?["codec"]?.stringValue)
        let ext = codec == "vorbis" ? "ogg" : codec
        return "\(dataDir ?? daemon.directory.path + "/data")/audio/\(id).\(ext)"
    }

    /// Polls `recorder.status` until it is idle; returns that state.
    func waitUntilIdle(_ client: RPCTestClient, timeout: Double = 15) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let status = try client.result("recorder.status")
            if status["state"] == .string("idle") { return status }
            usleep(50_000)
        }
        throw TestFailure("the recorder was still recording after \(timeout) s")
    }

    /// Polls until the recording has captured `seconds`; returns the status then.
    func waitForElapsed(_ client: RPCTestClient, _ seconds: Double, timeout: Double = 15) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let status = try client.result("recorder.status")
            if (status["elapsed"]?.doubleValue ?? 0) >= seconds { return status }
            usleep(50_000)
        }
        throw TestFailure("the recording did not reach \(seconds) s within \(timeout) s")
    }

    /// Plays a 48 kHz mono tone at half scale (with quiet noise when `noise`) on `daemon` and
    /// waits until it is audible on the sink.
    func playTone(on daemon: DaemonProcess, seconds: Int = 40, noise: Bool = false) throws {
        let path = daemon.directory.appendingPathComponent("tone.wav").path
        var arguments = ["-n", "-r", "48000", "-c", "1", "-b", "16", path, "synth", "\(seconds)", "sine", "440"]
        if noise { arguments += ["whitenoise", "remix", "1v0.45,2v0.05"] } else { arguments += ["vol", "0.5"] }
        try TestTool.run("sox", arguments)
        let client = try daemon.client()
        _ = try client.result("player.play", ["file": .string(path)])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, (try client.result("player.status")["position"]?.doubleValue ?? 0) < 1 {
            usleep(50_000)
        }
    }

    /// An ALSA configuration (in a HOME of its own) with a capture device `feed` that reads
    /// `infile` through the `file` plugin.
    func alsaHome(feeding infile: String, in directory: URL) throws -> String {
        let home = directory.appendingPathComponent("home").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try """
            pcm.feed {
                type file
                slave.pcm null
                file "/dev/null"
                infile "\(infile)"
                format raw
            }
            """.write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
        return home
    }

    // MARK: Real devices

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func aToneOnTheSinkComesBackAtItsFrequencyLevelAndLengthInEveryFormat() throws {
        let sink = try PrivateSink()
        let daemon = try DaemonProcess(device: "pulse", arguments: ["--capture-device", "pulse"], environment: sink.environment)
        try playTone(on: daemon)
        let client = try daemon.client()
        for format in Self.formats {
            let started = try client.result(
                "recorder.start", ["format": .string(format), "name": .string("tone \(format)"), "maxDuration": 2])
            #expect(started["state"] == .string("recording"))
            let midway = try waitForElapsed(client, 1)
            let peak = try #require(midway["peak"]?.doubleValue, "no level while recording")
            #expect(abs(peak - -6.02) < 1, "\(format): peak \(peak) dBFS, a half-scale tone is -6 dBFS")
            let rms = try #require(midway["rms"]?.doubleValue)
            #expect(abs(rms - -9.03) < 1, "\(format): rms \(rms) dBFS")
            let done = try waitUntilIdle(client)
            let item = try #require(done["item"])
            #expect(item["duration"]?.doubleValue == 2.0, "\(format): \(item)")
            let file = try audioFile(daemon, item)
            let measured = try AudioAnalysis.measure(file, skip: 0.1)
            #expect(abs(measured.seconds - 1.9) < 0.01, "\(format): \(measured.seconds) s decoded")
            #expect(abs(measured.roughFrequency - 440) < 8, "\(format): \(measured.roughFrequency) Hz")
            #expect(done["overruns"]?.intValue == 0, "\(format): the capture overran: \(done)")
            let underruns = try client.result("player.status")["underruns"]?.intValue ?? -1
            print("tone on the sink, \(format): peak \(measured.maximumAmplitude), player underruns \(underruns), capture overruns \(done["overruns"]?.intValue ?? -1)")
            #expect(underruns == 0, "\(format): the tone's playback underran \(underruns) times")
            if format == "flac" || format == "wav" {
                #expect(abs(measured.maximumAmplitude - 0.5) < 0.02, "\(format): peak \(measured.maximumAmplitude)")
            } else {
                // Lossy codecs overshoot a sine's peaks a little, and ring for a moment at a
                // click; the level is measured where a click does not reach (`levelAmplitude`).
                let level = try AudioAnalysis.levelAmplitude(file, skip: 0.1)
                #expect(
                    abs(level - 0.5) < 0.08,
                    "\(format): level \(level) (peak \(measured.maximumAmplitude))")
            }
            #expect(abs(measured.rmsAmplitude - 0.3536) < 0.035, "\(format): rms \(measured.rmsAmplitude)")
        }
    }

    @Test(arguments: ["wav", "flac"])
    func captureFedFromAKnownFileIsSampleExact(format: String) throws {
        let scratch = try DaemonProcess()
        let input = scratch.directory.appendingPathComponent("input.raw").path
        // 1.5 s of a tone with noise: every sample differs, so any loss or reordering shows.
        try TestTool.run("sox", [
            "-n", "-r", "48000", "-c", "1", "-b", "16", "-e", "signed", "-t", "raw", input,
            "synth", "1.5", "sine", "440", "whitenoise", "remix", "1v0.3,2v0.1",
        ])
        let home = try alsaHome(feeding: input, in: scratch.directory)
        let daemon = try DaemonProcess(arguments: ["--capture-device", "feed"], environment: ["HOME": home])
        let client = try daemon.client()
        _ = try client.result("recorder.start", ["format": .string(format), "name": "fed", "maxDuration": 1.5])
        let done = try waitUntilIdle(client)
        let item = try #require(done["item"])
        #expect(item["duration"]?.doubleValue == 1.5)
        let recorded = try AudioAnalysis.rawSamples(try audioFile(daemon, item))
        let expected = try Data(contentsOf: URL(fileURLWithPath: input))
        #expect(recorded.count == expected.count)
        #expect(recorded == expected, "the \(format) recording differs from the samples fed to the device")
    }

    // MARK: Never lose a take

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"), arguments: formats)
    func aTakeKilledMidwayIsRepairedAndKeptOnRestart(format: String) throws {
        let sink = try PrivateSink()
        let first = try DaemonProcess(device: "pulse", arguments: ["--capture-device", "pulse"], environment: sink.environment)
        try playTone(on: first, noise: true)
        let client = try first.client()
        let started = try client.result("recorder.start", ["format": .string(format), "name": "take"])
        let id = try #require(started["item"]?["id"]?.stringValue)
        _ = try waitForElapsed(client, 3)
        usleep(UInt32.random(in: 0...700_000))
        let last = try client.result("recorder.status")
        let elapsed = try #require(last["elapsed"]?.doubleValue)
        kill(first.pid, SIGKILL)
        first.process.waitUntilExit()

        let dataDir = first.directory.path + "/data"
        let second = try DaemonProcess(arguments: ["--data-dir", dataDir])
        let item = try second.client().result("library.get", ["item": .string(id)])
        let duration = try #require(item["duration"]?.doubleValue)
        #expect(duration >= elapsed - 1.0, "\(format): kept \(duration) s of at least \(elapsed) s captured")
        #expect(duration <= elapsed + 1.0)
        #expect(second.log().contains("repaired an unfinished recording"), "\(second.log().suffix(800))")
        let file = try audioFile(second, item, dataDir: dataDir)
        let frames = try AudioAnalysis.decodedFrames(file)
        #expect(abs(Double(frames) / 48000 - duration) < 0.05, "\(format): decodes to \(frames) frames")
        #expect((item["size"]?.int64Value ?? 0) > 0)
        if format != "opus" {
            // sox reads it straight (it has no Opus handler).
            #expect(try AudioAnalysis.run("soxi", ["-D", file]).status == 0)
        }
        // It plays.
        let played = try second.client().call("player.play", ["item": .string(id)])
        if case .failure(let error) = played { Issue.record("the repaired \(format) take does not play: \(error)") }
    }

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func sigtermFinishesTheTakeCleanly() throws {
        let sink = try PrivateSink()
        let first = try DaemonProcess(device: "pulse", arguments: ["--capture-device", "pulse"], environment: sink.environment)
        let client = try first.client()
        let started = try client.result("recorder.start", ["name": "take"])
        let id = try #require(started["item"]?["id"]?.stringValue)
        _ = try waitForElapsed(client, 1)
        #expect(first.stop() == 0)
        #expect(first.log().contains("recording finished"), "\(first.log().suffix(800))")
        let second = try DaemonProcess(arguments: ["--data-dir", first.directory.path + "/data"])
        let item = try second.client().result("library.get", ["item": .string(id)])
        #expect((item["duration"]?.doubleValue ?? 0) >= 1)
        #expect(!second.log().contains("repaired an unfinished recording"), "a finished take needs no repair")
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small filesystem needs root (CI runs as root)"), arguments: formats)
    func aFullDiskStopsTheTakeAndKeepsWhatWasWritten(format: String) throws {
        let scratch = try DaemonProcess()
        let dataDir = scratch.directory.path + "/full-data"
        let audio = dataDir + "/audio"
        try FileManager.default.createDirectory(atPath: audio, withIntermediateDirectories: true)
        // A 256 KiB filesystem for the audio files; the database stays on the big one.
        let mount = try AudioAnalysis.run("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", audio])
        try #require(mount.status == 0, "cannot mount a tmpfs: \(mount.output)")
        defer { _ = try? AudioAnalysis.run("umount", ["-l", audio]) }
        // Noise from /dev/urandom through the file plugin: incompressible, unpaced.
        let home = try alsaHome(feeding: "/dev/urandom", in: scratch.directory)
        let daemon = try DaemonProcess(
            arguments: ["--data-dir", dataDir, "--capture-device", "feed"], environment: ["HOME": home])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "recorder"])
        let started = try client.result("recorder.start", ["format": .string(format), "name": "full"])
        let id = try #require(started["item"]?["id"]?.stringValue)
        var ended: JSONObject?
        let deadline = Date().addingTimeInterval(20)
        while ended == nil && Date() < deadline {
            let (method, params) = try client.nextNotification(timeout: 20)
            if method == "recorder.state", params["state"] == .string("idle"), params["item"]?["id"] == .string(id) {
                ended = params
            }
        }
        let state = try #require(ended, "the recording did not stop by itself")
        #expect(state["error"]?["reason"] == .string("disk_full"), "\(state)")
        let item = try client.result("library.get", ["item": .string(id)])
        let duration = try #require(item["duration"]?.doubleValue)
        #expect(duration > 0.5, "kept \(duration) s")
        let frames = try AudioAnalysis.decodedFrames(try audioFile(daemon, item, dataDir: dataDir))
        #expect(abs(Double(frames) / 48000 - duration) < 0.1, "the file decodes to \(frames) frames for \(duration) s")
        #expect(daemon.log().contains("disk_full"))
        // The daemon goes on: the recorder answers, and the next take fails cleanly or works.
        #expect(try client.result("recorder.status")["state"] == .string("idle"))
    }

    // MARK: The recorder's rules

    @Test func theRecorderRefusesWhatItCannotDoWithAReason() throws {
        let daemon = try DaemonProcess(arguments: ["--capture-device", "null"])
        let client = try daemon.client()
        func reason(_ method: String, _ params: JSONObject = [:]) throws -> String? {
            guard case .failure(let error) = try client.call(method, params) else { return nil }
            return error.data?["reason"]?.stringValue ?? "code \(error.code)"
        }
        #expect(try reason("recorder.stop") == "not_recording")
        #expect(try reason("recorder.cancel") == "not_recording")
        #expect(try reason("recorder.start", ["format": "mp3"]) == "unsupported_format")
        #expect(try reason("recorder.start", ["format": "opus", "sampleRate": 44100]) == "unsupported_format")
        #expect(try reason("recorder.start", ["channels": 0]) == "unsupported_format")
        #expect(try reason("recorder.start", ["maxDuration": -1]) == "out_of_range")
        // Regression: 1.5e308 s once trapped converting to a frame count and killed the daemon.
        #expect(try reason("recorder.start", ["maxDuration": 1.5e308]) == "out_of_range")
        #expect(try reason("player.play", ["file": "/etc/hostname", "position": 1.5e308]) == "out_of_range")
        #expect(try reason("recorder.start", ["folderPath": "/No/Such"]) == "not_found")
        #expect(try reason("recorder.start", ["name": "a/b"]) == "invalid_name")
        #expect(try reason("recorder.start", ["bogus": 1]) == "code -32602")
        // Nothing failed left an item behind.
        #expect(try client.result("library.list")["items"]?.arrayValue?.isEmpty == true)

        _ = try client.result("library.createFolder", ["name": "Notes"])
        let started = try client.result("recorder.start", ["folderPath": "/Notes", "name": "one"])
        #expect(started["item"]?["path"] == .string("/Notes/one"))
        #expect(try reason("recorder.start", ["name": "two"]) == "busy")
        let item = try client.result("recorder.stop")
        #expect(item["path"] == .string("/Notes/one"))
        #expect(item["format"]?["codec"] == .string("flac"))
        #expect(try reason("recorder.start", ["folderPath": "/Notes", "name": "one"]) == "name_taken")
        #expect(try reason("recorder.start", ["folderPath": "/Notes/one"]) == "not_a_folder")
    }

    @Test func cancelRemovesTheTakeAndItsFile() throws {
        let daemon = try DaemonProcess(arguments: ["--capture-device", "null"])
        let client = try daemon.client()
        let started = try client.result("recorder.start", ["name": "scrap"])
        let file = try audioFile(daemon, try #require(started["item"]))
        #expect(FileManager.default.fileExists(atPath: file))
        let state = try client.result("recorder.cancel")
        #expect(state["state"] == .string("idle"))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try client.result("library.list")["items"]?.arrayValue?.isEmpty == true)
    }

    @Test func theTakeIsInTheTreeAtOnceAndDeletingItEndsTheRecording() throws {
        let daemon = try DaemonProcess(arguments: ["--capture-device", "null"])
        let watcher = try daemon.client()
        _ = try watcher.result("subscribe", ["stream": "recorder"])
        let first = try watcher.nextNotification()
        #expect(first.params["state"] == .string("idle"))
        let client = try daemon.client()
        let started = try client.result("recorder.start", [:])
        let name = try #require(started["item"]?["name"]?.stringValue)
        #expect(name.hasPrefix("Recording 20"), "default name \(name)")
        #expect(name.count == "Recording 2026-11-22 14.03.05".count)
        let listed = try client.result("library.list")["items"]?.arrayValue ?? []
        #expect(listed.contains { $0["name"] == .string(name) })
        let pushed = try watcher.nextNotification()
        #expect(pushed.params["state"] == .string("recording"))
        _ = try client.result("library.delete", ["path": .string("/" + name)])
        var ended = false
        for _ in 0..<50 where !ended {
            let next = try watcher.nextNotification()
            ended = next.params["state"] == .string("idle")
        }
        #expect(ended)
        #expect(try client.result("recorder.status")["state"] == .string("idle"))
        #expect(daemon.log().contains("the recording being made was deleted"))
    }

    // MARK: The CLI

    @Test(.enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func recordStopsOnEnterAndTheTakeIsListedAndPlays() throws {
        let sink = try PrivateSink()
        let daemon = try DaemonProcess(device: "pulse", arguments: ["--capture-device", "pulse"], environment: sink.environment)
        try playTone(on: daemon)
        let socket = ["--socket", daemon.socketPath]
        // A fresh library: the folder is made on the way.
        let record = try CLIBackgroundProcess(["record", "/Notes", "--name", "idea"] + socket, stdin: true)
        #expect(try record.readLine() == "created /Notes")
        _ = try record.readLine { $0.hasPrefix("recording /Notes/idea") }
        _ = try waitForElapsed(try daemon.client(), 2)
        record.type("\n")
        let saved = try record.readLine { $0.hasPrefix("saved") }
        #expect(saved.hasPrefix("saved /Notes/idea (0:0"), "\(saved)")
        #expect(record.waitForExit() == 0)
        let listing = try CLI.run(["ls", "/Notes"] + socket)
        #expect(listing.stdout.contains("idea"), "\(listing)")
        let play = try CLI.run(["play", "/Notes/idea"] + socket)
        #expect(play.status == 0, "\(play)")
        let item = try daemon.client().result("library.get", ["path": "/Notes/idea"])
        #expect((item["duration"]?.doubleValue ?? 0) >= 2)
    }

    @Test func recordWithADurationEndsByItselfAndStopAndCancelNeedARecording() throws {
        let daemon = try DaemonProcess(arguments: ["--capture-device", "null"])
        let socket = ["--socket", daemon.socketPath]
        let timed = try CLI.run(["record", "--name", "short", "--duration", "0.5", "--format", "wav"] + socket)
        #expect(timed.status == 0, "\(timed)")
        #expect(timed.stdout.contains("saved /short (0:00, wav 48000 Hz 1 ch)"), "\(timed)")
        let stop = try CLI.run(["record", "stop"] + socket)
        #expect(stop.status == 1)
        #expect(stop.stderr.contains("nothing is being recorded"))
        let detached = try CLI.run(["record", "--detach", "--name", "bg"] + socket)
        #expect(detached.status == 0, "\(detached)")
        #expect(detached.stdout.hasPrefix("recording /bg"))
        let cancel = try CLI.run(["record", "cancel"] + socket)
        #expect(cancel.status == 0, "\(cancel)")
        let bad = try CLI.run(["record", "Notes"] + socket)
        #expect(bad.status == 2)
    }
}
