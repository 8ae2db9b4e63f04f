// Listed means playable: every file of a music folder either plays or is a failure with its
// reason, and a music folder that goes away is reported missing, its files hidden, not listed.

import Foundation
import ReelProtocol
import ReelTestSupport
import Testing

@Suite struct MusicPlayabilityTests {
    /// One untagged file per format a music folder may hold, named `track-<kind>.<suffix>`,
    /// made with sox, lame, opusenc and ffmpeg from the same tone; plus text named `.flac`.
    static func makeEveryFormat(at root: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let source = root.appendingPathComponent(".source.wav").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", source, "synth", "0.5", "sine", "440", "vol", "0.3"])
        defer { try? FileManager.default.removeItem(atPath: source) }
        var names: [String] = []
        func make(_ name: String, _ tool: String, _ arguments: [String]) throws {
            try TestTool.run(tool, arguments.map { $0 == "OUT" ? root.appendingPathComponent(name).path : $0 == "IN" ? source : $0 })
            names.append(name)
        }
        for suffix in ["flac", "wav", "aif", "aiff", "au", "w64"] {
            try make("track-\(suffix).\(suffix)", "sox", ["IN", "OUT"])
        }
        try make("track-vorbis.ogg", "sox", ["IN", "-t", "vorbis", "OUT"])
        try make("track-vorbis.oga", "sox", ["IN", "-t", "vorbis", "OUT"])
        try make("track-mp3.mp3", "lame", ["--quiet", "IN", "OUT"])
        try make("track-opus.opus", "opusenc", ["--quiet", "IN", "OUT"])
        let ffmpeg = ["-hide_banner", "-loglevel", "error", "-y", "-i", "IN"]
        try make("track-aac.m4a", "ffmpeg", ffmpeg + ["-c:a", "aac", "-b:a", "96k", "OUT"])
        try make("track-alac.m4a", "ffmpeg", ffmpeg + ["-c:a", "alac", "OUT"])
        try make("track-adts.aac", "ffmpeg", ffmpeg + ["-c:a", "aac", "-f", "adts", "OUT"])
        try make("track-wavpack.wv", "ffmpeg", ffmpeg + ["-c:a", "wavpack", "OUT"])
        try make("track-wma.wma", "ffmpeg", ffmpeg + ["-c:a", "wmav2", "OUT"])
        try make("track-tta.tta", "ffmpeg", ffmpeg + ["-c:a", "tta", "OUT"])
        try make("track-musepack.mpc", "mpcenc", ["--silent", "--overwrite", "IN", "OUT"])
        try writeDSF(to: root.appendingPathComponent("track-dsd.dsf").path, seconds: 0.5)
        names.append("track-dsd.dsf")
        try Data("not audio".utf8).write(to: root.appendingPathComponent("track-text.flac"))
        names.append("track-text.flac")
        return names
    }

    /// A DSF file (DSD64, stereo) of a 1 kHz tone, written here: no tool in Debian makes one. A
    /// first-order delta-sigma modulator, bits least significant first, blocks of 4,096 bytes
    /// per channel, as the DSF specification lays them out.
    static func writeDSF(to path: String, seconds: Double) throws {
        let rate = 2_822_400
        let blockSize = 4096
        let samples = Int(seconds * Double(rate)) / (blockSize * 8) * (blockSize * 8)
        var channels = [[UInt8]](repeating: [UInt8](repeating: 0, count: samples / 8), count: 2)
        for channel in 0..<2 {
            var integrator = 0.0
            for index in 0..<samples {
                let input = 0.5 * sin(2 * Double.pi * 1000 * Double(index) / Double(rate))
                let bit = integrator >= 0
                integrator += input - (bit ? 1 : -1)
                if bit { channels[channel][index / 8] |= 1 << UInt8(index % 8) }
            }
        }
        var data: [UInt8] = []
        for block in stride(from: 0, to: samples / 8, by: blockSize) {
            for channel in 0..<2 { data += channels[channel][block..<(block + blockSize)] }
        }
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        let total = 28 + 52 + 12 + data.count
        var file = Array("DSD ".utf8) + le(UInt64(28)) + le(UInt64(total)) + le(UInt64(0))
        file += Array("fmt ".utf8) + le(UInt64(52)) + le(UInt32(1)) + le(UInt32(0)) + le(UInt32(2)) + le(UInt32(2))
        file += le(UInt32(rate)) + le(UInt32(1)) + le(UInt64(samples)) + le(UInt32(blockSize)) + le(UInt32(0))
        file += Array("data".utf8) + le(UInt64(12 + data.count)) + data
        try Data(file).write(to: URL(fileURLWithPath: path))
    }

    /// Every track the index lists (`music.search` for the common part of the names).
    static func listedTracks(_ client: RPCTestClient) throws -> [JSONValue] {
        try client.result("music.search", ["text": "track", "limit": 500])["tracks"]?.arrayValue ?? []
    }

    @Test func everyFileOfAMusicFolderIsListedAndPlaysOrIsAFailureWithItsReason() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-formats-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        let names = try Self.makeEveryFormat(at: music)
        let daemon = try DaemonProcess(device: "null", environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        let scan = try MusicFoldersTests.scanEnded(client, atLeast: 1)
        #expect(scan["seen"]?.intValue == names.count, "\(scan)")

        let decoders = try client.result("daemon.info")["decoders"]?.arrayValue ?? []
        let playableSuffixes = Set(decoders.flatMap { $0["suffixes"]?.arrayValue ?? [] }.compactMap(\.stringValue))
        #expect(playableSuffixes.contains("flac") && playableSuffixes.contains("mp3"), "\(decoders)")

        let listed = try Self.listedTracks(client)
        let failures = try client.result("music.failures")["failures"]?.arrayValue ?? []
        let listedNames = Set(listed.compactMap { $0["path"]?.stringValue.map { ($0 as NSString).lastPathComponent } })
        let failedNames = Set(failures.compactMap { $0["path"]?.stringValue.map { ($0 as NSString).lastPathComponent } })
        // Each file is one or the other, never both, never neither.
        for name in names {
            #expect(listedNames.contains(name) != failedNames.contains(name), "\(name): listed \(listedNames.contains(name)), failed \(failedNames.contains(name))")
        }
        // A suffix no decoder takes is never listed; text is never listed.
        for name in names where !playableSuffixes.contains((name as NSString).pathExtension) || name == "track-text.flac" {
            #expect(failedNames.contains(name), "\(name) is listed though nothing decodes it")
        }
        for failure in failures {
            let reason = failure["reason"]?.stringValue ?? ""
            #expect(!reason.isEmpty, "\(failure)")
            let path = failure["path"]?.stringValue ?? ""
            if path.hasSuffix(".m4a") { #expect(reason.contains("MP4"), "\(reason)") }
            if path.hasSuffix(".wv") { #expect(reason.contains("WavPack"), "\(reason)") }
        }
        let musepack = try #require(listed.first { $0["path"]?.stringValue?.hasSuffix("track-musepack.mpc") == true })
        #expect(musepack["format"]?["codec"] == .string("musepack"), "\(musepack)")
        // The DSF file (TagLib reads no DSF tags) is listed by its name, as DSD.
        let dsd = try #require(listed.first { $0["path"]?.stringValue?.hasSuffix("track-dsd.dsf") == true })
        #expect(dsd["format"]?["codec"] == .string("dsd"), "\(dsd)")
        #expect(dsd["name"] == .string("track-dsd"), "\(dsd)")
        // Everything listed plays: queued and played, it is loaded without an error.
        #expect(listed.count >= 10, "\(listedNames.sorted())")
        for track in listed {
            let id = try #require(track["id"]?.intValue)
            _ = try client.result("queue.clear")
            let entries = try client.result("queue.add", ["track": .int(Int64(id))])["entries"]?.arrayValue ?? []
            let entry = try #require(entries.first?["id"]?.intValue)
            let played = try client.call("player.play", ["entry": .int(Int64(entry))])
            guard case .success(let state) = played else {
                Issue.record("\(track["path"]?.stringValue ?? "?") is listed but does not play: \(played)")
                continue
            }
            #expect(state["error"] == .null, "\(track["path"]?.stringValue ?? "?"): \(state)")
            #expect(state["format"]?["codec"]?.stringValue == track["format"]?["codec"]?.stringValue)
        }
    }

    /// The bad files FFmpeg is asked about, in a music folder: each is a failure of the scan whose
    /// reason names the file and is the verdict playing it gives (`unsupported_format` or
    /// `corrupt_file`), none is listed, and the scan ends; a real WavPack file named `.m4a` is
    /// listed and plays as what it is.
    @Test func badFilesForFFmpegAreScanFailuresWithTheVerdictPlayingThemGives() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-bad-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: music) }
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        func path(_ name: String) -> String { music.appendingPathComponent(name).path }
        let source = path(".source.wav")
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", source, "synth", "1", "sine", "440", "vol", "0.3"])
        let ffmpeg = ["-hide_banner", "-loglevel", "error", "-y"]
        try TestTool.run("ffmpeg", ffmpeg + ["-i", source, "-c:a", "aac", path("track-good.m4a")])
        try TestTool.run("ffmpeg", ffmpeg + ["-i", source, "-c:a", "wavpack", "-f", "wv", path("track-wavpack-named.m4a")])
        try TestTool.run(
            "ffmpeg", ffmpeg + ["-f", "lavfi", "-i", "testsrc=size=64x64:rate=5", "-t", "1", "-c:v", "mpeg4", path("track-video-only.mp4")])
        try FileManager.default.removeItem(atPath: source)
        let good = try Data(contentsOf: URL(fileURLWithPath: path("track-good.m4a")))
        try good.prefix(good.count / 3).write(to: URL(fileURLWithPath: path("track-truncated.m4a")))
        try Data("this is text, not an MP4 file at all".utf8).write(to: URL(fileURLWithPath: path("track-lying.m4a")))
        try Data().write(to: URL(fileURLWithPath: path("track-empty.m4a")))
        // An `ftyp` box that says it is 2 GB long, then 4 KB of nothing, and a WavPack block
        // header that says its block is 4 GB long.
        try (Data([0x7F, 0xFF, 0xFF, 0xF0]) + Data("ftypM4A ".utf8) + Data(repeating: 0x41, count: 4096))
            .write(to: URL(fileURLWithPath: path("track-huge-box.m4a")))
        var wavpack = Data("wvpk".utf8) + Data([0xF0, 0xFF, 0xFF, 0xFF, 0x10, 0x04])
        wavpack += Data(repeating: 0, count: 4096)
        try wavpack.write(to: URL(fileURLWithPath: path("track-huge-block.wv")))
        let bad = ["track-truncated.m4a", "track-video-only.mp4", "track-lying.m4a", "track-empty.m4a", "track-huge-box.m4a",
                   "track-huge-block.wv"]

        let daemon = try DaemonProcess(device: "null", environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        let scan = try MusicFoldersTests.scanEnded(client, atLeast: 1)
        #expect(scan["seen"]?.intValue == bad.count + 2, "\(scan)")
        let failures = try client.result("music.failures")["failures"]?.arrayValue ?? []
        let listed = try Self.listedTracks(client)
        let listedNames = Set(listed.compactMap { $0["path"]?.stringValue.map { ($0 as NSString).lastPathComponent } })
        #expect(listedNames == ["track-good.m4a", "track-wavpack-named.m4a"], "\(listedNames)")
        for name in bad {
            let failure = failures.first { $0["path"]?.stringValue == path(name) }
            let reason = try #require(failure?["reason"]?.stringValue, "\(name) is not a failure: \(failures)")
            #expect(reason.contains(path(name)), "\(name): the reason names the file: \(reason)")
            // The verdict is the one playing it gives.
            guard case .failure(let error) = try client.call("player.play", ["file": .string(path(name))]) else {
                Issue.record("\(name) plays")
                continue
            }
            let code = error.data?["reason"]?.stringValue ?? ""
            #expect(code == "unsupported_format" || code == "corrupt_file", "\(name): \(error)")
            #expect(error.message == reason, "\(name): playing says \(error.message), the scan said \(reason)")
        }
        // The file whose suffix lies about a real format plays as that format.
        let wavpackTrack = try #require(listed.first { $0["path"]?.stringValue == path("track-wavpack-named.m4a") })
        #expect(wavpackTrack["format"]?["codec"] == .string("wavpack"), "\(wavpackTrack)")
        guard case .success(let state) = try client.call("player.play", ["file": .string(path("track-wavpack-named.m4a"))]) else {
            Issue.record("the WavPack file named .m4a does not play")
            return
        }
        #expect(state["format"]?["codec"] == .string("wavpack"), "\(state)")
        _ = try client.result("player.stop")
    }

    @Test func aMusicFolderThatGoesAwayIsReportedMissingItsFilesHiddenUntilItReturns() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-missing-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let music = base.appendingPathComponent("music")
        try FileManager.default.createDirectory(at: music.appendingPathComponent("Album"), withIntermediateDirectories: true)
        for name in ["track-one.flac", "track-two.flac"] {
            try TestTool.run(
                "sox", ["-n", "-r", "44100", "-c", "1", "-b", "16", music.appendingPathComponent("Album/\(name)").path, "synth", "0.3", "sine", "440"])
        }
        try Data("not audio".utf8).write(to: music.appendingPathComponent("Album/track-broken.flac"))
        let daemon = try DaemonProcess(device: "null", environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try MusicFoldersTests.scanEnded(client, atLeast: 1)
        #expect(try Self.listedTracks(client).count == 2)
        #expect((try client.result("music.failures")["failures"]?.arrayValue ?? []).count == 1)

        // The folder goes away while reeld runs.
        let away = base.appendingPathComponent("elsewhere")
        try FileManager.default.moveItem(at: music, to: away)
        var failures: [JSONValue] = []
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            failures = try client.result("music.failures")["failures"]?.arrayValue ?? []
            if failures.contains(where: { $0["path"]?.stringValue == music.path }) { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        // The folder is the one failure: the broken file's is gone with it, and nothing stale stays.
        #expect(failures.count == 1, "\(failures)")
        let reason = failures.first?["reason"]?.stringValue ?? ""
        #expect(failures.first?["path"]?.stringValue == music.path)
        #expect(reason.contains("missing") && reason.contains("2 files are kept"), "\(reason)")
        #expect(try Self.listedTracks(client).isEmpty)

        // A rescan says so, and so does `reel scan`.
        let scanned = try CLI.run(["scan", "--socket", daemon.socketPath])
        #expect(scanned.status == 0, "\(scanned)")
        #expect(scanned.stdout.contains("1 music folder missing"), "\(scanned.stdout)")
        #expect(scanned.stdout.contains("\(music.path): the music folder is missing"), "\(scanned.stdout)")
        #expect(!scanned.stdout.contains("could not read"), "\(scanned.stdout)")

        // Back again: listed again with the same ids, and the folder leaves the failures.
        try FileManager.default.moveItem(at: away, to: music)
        let rescan = try client.result("library.rescan")
        let done = try MusicFoldersTests.scanEnded(client, atLeast: rescan["scan"]?.intValue ?? 2)
        #expect(done["missingFolders"]?.arrayValue?.isEmpty == true, "\(done)")
        #expect(try Self.listedTracks(client).count == 2)
        let after = try client.result("music.failures")["failures"]?.arrayValue ?? []
        #expect(after.compactMap { $0["path"]?.stringValue } == [music.appendingPathComponent("Album/track-broken.flac").path])
    }
}
