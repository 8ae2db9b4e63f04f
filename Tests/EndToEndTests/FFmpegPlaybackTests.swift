// FFmpeg in the daemon: loaded by the first file that needs it, never before; a lossless file
// played through ALSA's file plugin comes out byte for byte.

import Foundation
import ReelProtocol
import ReelTestSupport
import Testing

@Suite struct FFmpegPlaybackTests {
    /// Whether reeld's memory maps hold FFmpeg's decoder library.
    static func mapsFFmpeg(_ pid: Int32) throws -> Bool {
        // procfs files have no size: read to the end, not by the size stat gives.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard maps.contains("libsndfile") else { throw TestFailure("cannot read reeld's memory maps") }
        return maps.contains("libavcodec")
    }

    static func waitUntilStopped(_ client: RPCTestClient) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let status = try client.result("player.status")
            if status["state"] == .string("stopped") { return status }
            usleep(20_000)
        }
        throw TestFailure("still playing after 30 s")
    }

    /// The files reeld maps (the paths in /proc/PID/maps).
    static func mappedFiles(_ pid: Int32) throws -> Set<String> {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line in
            line.firstIndex(of: "/").map { String(line[$0...]) }
        })
    }

    /// Of the mappings of files not in `before`, how many files, and their resident pages that
    /// are still the files' own (smaps's `Rss` less its `Anonymous`: not the relocated data the
    /// loader wrote), in MB.
    static func residentFilePages(_ pid: Int32, notIn before: Set<String>) throws -> (files: Int, megabytes: Double) {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var files: Set<String> = []
        var counted = false
        var kilobytes = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let key = fields.first else { continue }
            if !key.hasSuffix(":") {
                // A mapping's first line: range, permissions, offset, device, inode, path.
                let path = line.firstIndex(of: "/").map { String(line[$0...]) }
                counted = path.map { !before.contains($0) } ?? false
                if counted, let path { files.insert(path) }
            } else if counted, key == "Rss:" || key == "Anonymous:", fields.count > 1, let value = Int(fields[1]) {
                kilobytes += key == "Rss:" ? value : -value
            }
        }
        return (files.count, Double(kilobytes) / 1024)
    }

    @Test func decodingKeepsFewOfThePagesThatLoadingFFmpegAndOpeningAFileTouch() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-ffmpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = scratch.appendingPathComponent("source.wav").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", source, "synth", "2", "sine", "300-3000", "vol", "0.5"])
        let aac = scratch.appendingPathComponent("tone.m4a").path
        try TestTool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", source, "-c:a", "aac", aac])
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let before = try Self.mappedFiles(daemon.pid)
        _ = try client.result("player.play", ["file": .string(aac)])
        _ = try Self.waitUntilStopped(client)
        let (files, megabytes) = try Self.residentFilePages(daemon.pid, notIn: before)
        // Loading maps libavcodec's dependencies (every codec library Debian's FFmpeg is built
        // with), and loading and opening the file touch some 27 MB of their pages; decoding AAC
        // runs a few MB of them.
        #expect(files > 50, "only \(files) files were mapped by playing the AAC file: is FFmpeg loaded?")
        #expect(megabytes < 12, "\(String(format: "%.1f", megabytes)) MB of the pages of the \(files) files FFmpeg brought in are resident")
        print("after an AAC file: \(files) files mapped since idle, \(String(format: "%.2f", megabytes)) MB of their pages resident")
    }

    @Test func ffmpegIsLoadedByTheFirstFileThatNeedsItAndALosslessFilePlaysByteExact() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-ffmpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = scratch.appendingPathComponent("source.wav").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", source, "synth", "2", "sine", "300-3000", "whitenoise", "remix", "1,2", "1", "vol", "0.4"])
        let flac = scratch.appendingPathComponent("native.flac").path
        try TestTool.run("sox", [source, flac])
        let alac = scratch.appendingPathComponent("lossless.m4a").path
        try TestTool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", source, "-c:a", "alac", alac])
        let captured = scratch.appendingPathComponent("out.raw").path
        let home = scratch.appendingPathComponent("home").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try """
            pcm.capture_to_file {
                type file
                slave.pcm null
                file "\(captured)"
                format raw
            }
            """.write(toFile: home + "/.asoundrc", atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(device: "capture_to_file", environment: ["HOME": home])
        let client = try daemon.client()

        // Started, and a native format played: no FFmpeg in memory.
        #expect(try !Self.mapsFFmpeg(daemon.pid))
        _ = try client.result("player.play", ["file": .string(flac)])
        _ = try Self.waitUntilStopped(client)
        #expect(try !Self.mapsFFmpeg(daemon.pid), "FFmpeg was loaded for a FLAC file")

        // An ALAC file: FFmpeg is loaded, and what the device got is the source, byte for byte.
        let state = try client.result("player.play", ["file": .string(alac)])
        #expect(state["format"]?["codec"] == .string("alac"))
        #expect(state["duration"]?.doubleValue == 2.0)
        _ = try Self.waitUntilStopped(client)
        #expect(try Self.mapsFFmpeg(daemon.pid))
        let played = try Data(contentsOf: URL(fileURLWithPath: captured))
        let expected = try AudioAnalysis.rawSamples(source)
        #expect(played.count == expected.count, "\(played.count) bytes played, the source has \(expected.count)")
        #expect(played == expected, "the ALAC file did not come out byte for byte")
    }

    @Test func highResolutionFilesPlayAtTheirOwnRateAndDepthAndTheStateSaysWhatTheDeviceGot() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hires-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let source = scratch.appendingPathComponent("hires.wav").path
        try TestTool.run("sox", ["-n", "-r", "96000", "-c", "2", "-b", "24", source, "synth", "0.5", "sine", "1000"])
        let wavpack = scratch.appendingPathComponent("hires.wv").path
        try TestTool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", source, "-c:a", "wavpack", wavpack])
        let float = scratch.appendingPathComponent("float.wav").path
        try TestTool.run("sox", ["-n", "-r", "48000", "-c", "2", "-e", "floating-point", "-b", "32", float, "synth", "0.5", "sine", "500"])
        let cd = scratch.appendingPathComponent("cd.flac").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", cd, "synth", "0.5", "sine", "500"])
        let daemon = try DaemonProcess(device: "null")
        let client = try daemon.client()
        let cases: [(String, String, Int, Int)] = [(wavpack, "wavpack", 96000, 32), (float, "wav", 48000, 32), (cd, "flac", 44100, 16)]
        for (path, codec, rate, bits) in cases {
            let state = try client.result("player.play", ["file": .string(path)])
            #expect(state["format"] == ["codec": .string(codec), "sampleRate": .int(Int64(rate)), "channels": 2], "\(path): \(state)")
            // The reply is the state the load published: the device just opened for the file.
            #expect(state["state"] == .string("playing"), "\(path): \(state)")
            #expect(state["output"] == ["sampleRate": .int(Int64(rate)), "bits": .int(Int64(bits)), "channels": 2], "\(path): \(state)")
        }
    }
}
