// Recording what plays (`source: "player"`) and a station without playing it (`source: {url}`),
// through reeld's socket.

import Foundation
import Glibc
import ReelProtocol
import Testing
import ReelTestSupport

@Suite(.serialized) struct RecordingSourcesTests {
    let recording = RecordingTests()

    /// Polls `recorder.status` until it is idle (up to `timeout`); returns that state.
    func waitUntilIdle(_ client: RPCTestClient, timeout: Double) throws -> JSONValue {
        try recording.waitUntilIdle(client, timeout: timeout)
    }

    func reason(_ result: Result<JSONValue, RPCError>) -> String? {
        guard case .failure(let error) = result else { return nil }
        return error.data?["reason"]?.stringValue
    }

    /// A WAV played while `source: "player"` records into FLAC: the take holds the file's samples
    /// exactly, at full scale though the volume is down (the tap is before the volume).
    @Test func whatPlaysIsRecordedSampleForSampleBeforeTheVolume() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let wav = daemon.directory.appendingPathComponent("noise.wav").path
        // 3 s: a tone on the left, noise on the right, so any loss or repetition shows.
        try TestTool.run("sox", [
            "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "3", "sine", "440", "whitenoise", "vol", "0.5",
        ])
        _ = try client.result("mixer.setVolume", ["volume": 30])
        let started = try client.result(
            "recorder.start",
            ["source": "player", "format": "flac", "sampleRate": 44100, "channels": 2, "name": "what plays"])
        #expect(started["state"] == .string("recording"))
        #expect(started["format"]?["sampleRate"] == .int(44100))
        // Nothing plays yet: nothing is recorded.
        usleep(300_000)
        #expect(try client.result("recorder.status")["elapsed"]?.doubleValue == 0)
        _ = try client.result("player.play", ["file": .string(wav)])
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, try client.result("player.status")["state"] != .string("stopped") { usleep(50_000) }
        while Date() < deadline, (try client.result("recorder.status")["elapsed"]?.doubleValue ?? 0) < 3 { usleep(50_000) }
        let item = try client.result("recorder.stop")
        #expect(item["duration"]?.doubleValue == 3)
        let recorded = try AudioAnalysis.rawSamples(try recording.audioFile(daemon, item))
        let expected = try AudioAnalysis.rawSamples(wav)
        #expect(recorded.count == expected.count, "\(recorded.count / 4) frames recorded of \(expected.count / 4)")
        #expect(recorded == expected, "the take differs from the file played")
    }

    /// The same through a paced device (the PulseAudio null sink, which queues what it was given):
    /// paused and resumed twice on the way, the take is still the file, each frame once.
    @Test(.enabled(if: RecordingTests.pulse != nil, "needs the PulseAudio null sink that scripts/test starts"))
    func whatPlaysThroughAPacedDeviceIsRecordedOnceAcrossPauses() throws {
        let sink = try PrivateSink()
        let daemon = try DaemonProcess(device: "pulse", environment: sink.environment)
        let client = try daemon.client()
        let wav = daemon.directory.appendingPathComponent("noise.wav").path
        try TestTool.run("sox", [
            "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "4", "sine", "440", "whitenoise", "vol", "0.5",
        ])
        _ = try client.result(
            "recorder.start", ["source": "player", "format": "flac", "sampleRate": 44100, "channels": 2, "name": "paced"])
        _ = try client.result("player.play", ["file": .string(wav)])
        let deadline = Date().addingTimeInterval(60)
        for mark in [1.0, 2.0] {
            while Date() < deadline, (try client.result("player.status")["position"]?.doubleValue ?? 0) < mark { usleep(20_000) }
            _ = try client.result("player.pause")
            usleep(300_000)
            _ = try client.result("mixer.setVolume", ["volume": 50])
            _ = try client.result("player.resume")
        }
        while Date() < deadline, try client.result("player.status")["state"] != .string("stopped") { usleep(50_000) }
        while Date() < deadline, (try client.result("recorder.status")["elapsed"]?.doubleValue ?? 0) < 4 { usleep(50_000) }
        let item = try client.result("recorder.stop")
        #expect(item["duration"]?.doubleValue == 4)
        let recorded = try AudioAnalysis.rawSamples(try recording.audioFile(daemon, item))
        let expected = try AudioAnalysis.rawSamples(wav)
        #expect(recorded.count == expected.count, "\(recorded.count / 4) frames recorded of \(expected.count / 4)")
        #expect(recorded == expected, "the take differs from the file played")
    }

    /// A station recorded for 10 s: an item of 10 s whose audio is the stream's, decoded; nothing
    /// is played meanwhile.
    @Test func aStationIsRecordedWithoutPlayingIt() throws {
        // Pink noise: no two stretches alike, so the take lines up with the stream in one place only.
        let server = try StreamServer(seconds: 14, source: "anoisesrc=d=%SECONDS%:c=pink:r=44100:a=0.3")
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let url = server.url("/live.mp3")
        let started = try client.call(
            "recorder.start", ["source": .object(["url": .string(url)]), "format": "flac", "maxDuration": 10, "name": "station"],
            timeout: 60
        ).get()
        #expect(started["state"] == .string("recording"))
        #expect(started["format"]?["sampleRate"] == .int(44100))
        #expect(started["format"]?["channels"] == .int(2))
        // Recording, and nothing plays.
        let deadline = Date().addingTimeInterval(60)
        var idle: JSONValue?
        while Date() < deadline {
            #expect(try client.result("player.status")["state"] == .string("stopped"))
            let status = try client.result("recorder.status")
            if status["state"] == .string("idle") {
                idle = status
                break
            }
            usleep(200_000)
        }
        let item = try #require(idle?["item"], "the station's take did not end by itself within 60 s")
        let duration = try #require(item["duration"]?.doubleValue)
        #expect(abs(duration - 10) <= 0.1, "the take is \(duration) s")
        #expect(idle?["error"] == .null)
        // Its audio is the stream's: ffmpeg's decode of the served MP3, lined up.
        let take = try Self.samples(AudioAnalysis.rawSamples(try recording.audioFile(daemon, item)))
        let source = try Self.samples(Self.decodeMP3(server.mp3Path))
        #expect(take.count == 441_000 * 2)
        let offset = try #require(Self.alignment(of: take, in: source), "the take does not line up with the stream anywhere")
        let overlap = min(take.count, source.count - offset)
        var far = 0
        for index in 0..<overlap where abs(Int(take[index]) - Int(source[offset + index])) > 4 { far += 1 }
        #expect(overlap >= 440_000 * 2)
        #expect(far <= overlap / 1000, "\(far) of \(overlap) samples differ from the stream's decode by more than 4")
        #expect(try client.result("player.status")["state"] == .string("stopped"))
    }

    /// A station recorded in segments (`segmentSeconds: 2`, `maxDuration: 7`): four takes of
    /// 2, 2, 2 and 1 s whose samples, joined in order, are the stream's continuous decode from
    /// one offset: no frame lost or repeated at a boundary.
    @Test func aStationInSegmentsJoinsIntoTheStreamsContinuousDecode() throws {
        let server = try StreamServer(seconds: 14, extra: ["--pace", "4"], source: "anoisesrc=d=%SECONDS%:c=pink:r=44100:a=0.3")
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        _ = try client.call(
            "recorder.start",
            ["source": .object(["url": .string(server.url("/live.mp3"))]), "format": "flac", "segmentSeconds": 2,
             "maxDuration": 7, "name": "station"],
            timeout: 60
        ).get()
        let idle = try waitUntilIdle(client, timeout: 120)
        #expect(idle["error"] == .null)
        let takes = try Self.series(client, "station")
        #expect(takes.map(\.0) == ["station 001", "station 002", "station 003", "station 004"])
        var joined: [Int16] = []
        var lengths: [Int] = []
        for (_, item) in takes {
            let take = Self.samples(try AudioAnalysis.rawSamples(try recording.audioFile(daemon, item)))
            lengths.append(take.count / 2)
            joined += take
        }
        #expect(lengths == [88200, 88200, 88200, 44100], "segment lengths \(lengths)")
        let source = Self.samples(try Self.decodeMP3(server.mp3Path))
        let offset = try #require(Self.alignment(of: joined, in: source), "the first segment does not line up with the stream")
        let overlap = min(joined.count, source.count - offset)
        #expect(overlap == joined.count)
        // A frame lost or repeated at a boundary would put everything after it out of line.
        var far = 0
        for index in 0..<overlap where abs(Int(joined[index]) - Int(source[offset + index])) > 4 { far += 1 }
        #expect(far <= overlap / 1000, "\(far) of \(overlap) samples differ from the stream's decode by more than 4")
        for (number, start) in [88200, 176_400, 264_600].enumerated() {
            var off = 0
            for index in start * 2..<(start + 4410) * 2 where abs(Int(joined[index]) - Int(source[offset + index])) > 4 { off += 1 }
            #expect(off <= 8, "the first 0.1 s of segment \(number + 2) is off the stream by \(off) samples")
        }
    }

    /// A trigger on a station with silences: pink noise loud from 2 to 4 s and from 7 to 9 s of
    /// the stream, silent around. Two takes, each beginning the pre-roll (0.5 s) before its
    /// burst's first loud sample and holding it, its samples the stream's from there, and each
    /// ending `hold` (1 s) after its burst's last loud sample.
    @Test func aTriggerOnAStationWithSilencesMakesOneTakePerBurst() throws {
        let server = try StreamServer(
            seconds: 14, extra: ["--pace", "4"],
            source: "anoisesrc=d=%SECONDS%:c=pink:r=44100:a=0.3,volume=volume=0:enable='lt(t,2)+between(t,4,7)+gt(t,9)'")
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let started = try client.call(
            "recorder.start",
            ["source": .object(["url": .string(server.url("/live.mp3"))]), "format": "flac", "maxDuration": 12,
             "trigger": ["level": -30, "hold": 1, "preroll": 0.5, "minLength": 0.5], "name": "voice"],
            timeout: 60
        ).get()
        #expect(started["state"] == .string("armed"))
        let idle = try waitUntilIdle(client, timeout: 120)
        #expect(idle["error"] == .null)
        let takes = try Self.series(client, "voice")
        #expect(takes.map(\.0) == ["voice 001", "voice 002"])
        let source = Self.samples(try Self.decodeMP3(server.mp3Path))
        let threshold = 1036  // -30 dBFS of 32768
        let loud: ([Int16], Int) -> Int? = { samples, from in
            (from..<samples.count / 2).first { abs(Int(samples[2 * $0])) >= threshold || abs(Int(samples[2 * $0 + 1])) >= threshold }
        }
        let quiet: ([Int16], Int) -> Int? = { samples, from in
            // The first frame after `from` followed by 0.5 s below the level.
            var run = 0
            for frame in from..<samples.count / 2 {
                if abs(Int(samples[2 * frame])) < threshold && abs(Int(samples[2 * frame + 1])) < threshold {
                    run += 1
                    if run == 22050 { return frame - run + 1 }
                } else {
                    run = 0
                }
            }
            return nil
        }
        var searchFrom = 0
        for (name, item) in takes {
            let take = Self.samples(try AudioAnalysis.rawSamples(try recording.audioFile(daemon, item)))
            // The burst in the stream's decode, and in the take.
            let burst = try #require(loud(source, searchFrom), "no burst in the stream after frame \(searchFrom)")
            let burstEnd = try #require(quiet(source, burst))
            searchFrom = burstEnd + 22050
            let onset = try #require(loud(take, 0), "\(name) holds no loud sample")
            #expect(onset <= 22050 && onset >= 22050 - 1152, "\(name): its first loud sample is at frame \(onset), not after 0.5 s of pre-roll")
            // The take is the stream from the pre-roll before its burst (within the decoders' rounding).
            let offset = (burst - onset) * 2
            #expect(offset >= 0)
            var far = 0
            let overlap = min(take.count, source.count - offset)
            for index in 0..<overlap where abs(Int(take[index]) - Int(source[offset + index])) > 4 { far += 1 }
            #expect(far <= overlap / 1000, "\(name): \(far) of \(overlap) samples differ from the stream's decode by more than 4")
            // It ends `hold` after the burst's last loud sample.
            let lastLoud = try #require((0..<take.count / 2).last { abs(Int(take[2 * $0])) >= threshold || abs(Int(take[2 * $0 + 1])) >= threshold })
            #expect(take.count / 2 - 1 - lastLoud == 44100, "\(name): \(take.count / 2 - 1 - lastLoud) frames after its last loud one")
            #expect(abs((burstEnd - burst) - (lastLoud - onset + 1)) <= 1152, "\(name): the burst is \(burstEnd - burst) frames, the take's \(lastLoud - onset + 1)")
        }
    }

    @Test func sourcesThatCannotBeRecordedAreErrorsNamingThem() throws {
        let server = try StreamServer()
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let missing = server.url("/status/404")
        let refused = try client.call("recorder.start", ["source": .object(["url": .string(missing)])], timeout: 60)
        #expect(reason(refused) == "unreachable")
        if case .failure(let error) = refused { #expect(error.message.contains(missing), "\(error.message)") }
        #expect(reason(try client.call("recorder.start", ["source": .object(["url": "ftp://127.0.0.1/a.mp3"])])) == "unsupported_format")
        #expect(reason(try client.call("recorder.start", ["source": "player", "preroll": 1])) == "out_of_range")
        guard case .failure(let unknown) = try client.call("recorder.start", ["source": "speakers"]) else {
            Issue.record("source \"speakers\" started a recording")
            return
        }
        #expect(unknown.message.contains("source"), "\(unknown.message)")
        // Nothing was started by any of them.
        #expect(try client.result("recorder.status")["state"] == .string("idle"))
        let listed = try client.result("library.list", ["path": "/"])
        #expect(listed["items"]?.arrayValue?.isEmpty ?? true, "\(listed)")
    }

    @Test func reelRecordFromAStationOrThePlayer() throws {
        let server = try StreamServer(seconds: 4)
        let daemon = try DaemonProcess()
        let socket = ["--socket", daemon.socketPath]
        let station = try CLI.run(
            ["record", "--from", server.url("/live.mp3"), "--name", "radio", "--duration", "2", "--format", "wav"] + socket)
        #expect(station.status == 0, "\(station)")
        #expect(station.stdout.contains("saved /radio (0:02, wav 44100 Hz 2 ch)"), "\(station)")
        let player = try CLI.run(["record", "--from", "player", "--detach", "--name", "what plays", "--rate", "44100"] + socket)
        #expect(player.status == 0, "\(player)")
        #expect(player.stdout.hasPrefix("recording /what plays"), "\(player)")
        #expect(try CLI.run(["record", "cancel"] + socket).status == 0)
        let bad = try CLI.run(["record", "--from", "speakers"] + socket)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--from"), "\(bad)")
    }

    // MARK: Helpers

    /// The recordings `NAME 001`, `NAME 002`, … at the library's root, in order.
    static func series(_ client: RPCTestClient, _ name: String) throws -> [(String, JSONValue)] {
        let items = try client.result("library.list")["items"]?.arrayValue ?? []
        return items.compactMap { item -> (String, JSONValue)? in
            guard let itemName = item["name"]?.stringValue, itemName.hasPrefix(name + " ") else { return nil }
            return (itemName, item)
        }.sorted { $0.0 < $1.0 }
    }

    static func samples(_ data: Data) -> [Int16] {
        data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// ffmpeg's decode of an MP3 as 16-bit stereo samples.
    static func decodeMP3(_ path: String) throws -> Data {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("reel-mp3-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let (status, output) = try AudioAnalysis.run(
            "ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "s16le", "-ac", "2", "-ar", "44100", raw])
        guard status == 0 else { throw TestFailure("ffmpeg cannot decode \(path): \(output)") }
        return try Data(contentsOf: URL(fileURLWithPath: raw))
    }

    /// The sample offset (a whole frame) in `source` where `take`'s first 0.1 s fits best, if it
    /// fits at all (within a few steps of 16-bit rounding).
    static func alignment(of take: [Int16], in source: [Int16]) -> Int? {
        let window = 4410 * 2
        guard take.count >= window else { return nil }
        var best: (offset: Int, error: Int)?
        for frame in 0..<5000 {
            let offset = frame * 2
            guard offset + window <= source.count else { break }
            var error = 0
            for index in 0..<window {
                error += abs(Int(take[index]) - Int(source[offset + index]))
                if let best, error >= best.error { break }
            }
            if best == nil || error < best!.error { best = (offset, error) }
        }
        guard let best, best.error <= window * 2 else { return nil }
        return best.offset
    }
}
