// The podcast test, through the core and captured with ALSA's `file` plugin: a
// 10-minute MP3 served over HTTP (Content-Length, byte ranges) whose connection is cut twice
// plays to its end with every sample of the file in place, and a seek into it lands on the
// frame asked. The silence the engine writes while the stream waits for the network (after a
// cut, before the Range request is answered) is no part of the file: runs of it are taken out
// of the capture before comparing. Also: a live stream's position does not count that silence.

import Foundation
import ReelAudio
@testable import ReelCore
import ReelModel
import Testing
import ReelTestSupport

@Suite(.serialized) struct StreamCaptureTests {
    static let rate = 44100

    static func run(_ tool: String, _ arguments: [String]) throws { try TestTool.run(tool, arguments) }

    /// A podcast as encoders make it: ID3v2, a Xing/Info frame with a LAME tag, 128 kbit/s.
    static func podcast(in directory: String, seconds: Int) throws -> String {
        let path = "\(directory)/podcast.mp3"
        try run(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds):sample_rate=44100", "-f", "lavfi", "-i",
             "sine=frequency=660:duration=\(seconds):sample_rate=44100", "-filter_complex", "[0][1]amerge=inputs=2",
             "-c:a", "libmp3lame", "-b:a", "128k", "-id3v2_version", "3", "-f", "mp3", path])
        return path
    }

    /// Every sample libmpg123 decodes from the local file (as reeld plays a local MP3).
    static func decode(_ path: String) throws -> [Int16] {
        let reader = try AudioFileOpener.open(path: path, mp3Length: .atOpen)
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 8192 * 2)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 8192) }
            if count == 0 { break }
            samples += chunk[0..<(count * 2)]
        }
        return samples
    }

    /// `samples` (stereo) without runs of at least `run` frames of exact silence.
    static func withoutSilence(_ samples: [Int16], run: Int = 32) -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(samples.count)
        var index = 0
        let frames = samples.count / 2
        while index < frames {
            var end = index
            while end < frames && samples[2 * end] == 0 && samples[2 * end + 1] == 0 { end += 1 }
            if end - index >= run {
                index = end
                continue
            }
            let stop = max(end, index + 1)
            out += samples[(2 * index)..<(2 * stop)]
            index = stop
        }
        return out
    }

    /// Plays `url` from the queue to its end (after a seek to `seek` seconds, when given) and
    /// returns what the device got.
    static func capture(_ url: String, seek: Double? = nil, directory: String, name: String) throws -> [Int16] {
        let out = "\(directory)/\(name).raw"
        let (core, _) = try makeCore(output: ALSAOutput(name: "file:FILE=\(out),FORMAT=raw"))
        defer { core.shutdown() }
        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(.url(url), at: nil, afterCurrent: false) { added.put($0) }
        let id = try #require(try added.get(timeout: 60)?.get().first).id
        let played = Awaited<Result<PlayerState, ReelError>>()
        core.player.play(entry: id) { played.put($0) }
        _ = try #require(played.get(timeout: 60)).get()
        // `play` answers while the URL connects (as MPD's); the duration comes with the server's answer.
        let connected = Date().addingTimeInterval(60)
        while Date() < connected, core.player.state.stream?.state == .connecting || core.player.state.stream == nil {
            usleep(10_000)
        }
        let state = core.player.state
        #expect(state.live == false && state.duration != nil, "a podcast has a duration: \(state)")
        if let seek {
            let sought = Awaited<Result<PlayerState, ReelError>>()
            core.player.seek(.absolute(seek)) { sought.put($0) }
            let position = try #require(sought.get(timeout: 60)).get().position
            #expect(abs(position - seek) < 0.01, "the position after the seek: \(position)")
        }
        let deadline = Date().addingTimeInterval(600)
        while Date() < deadline, !(core.player.state.state == .stopped && core.player.queueChanges.latest.value.current == nil) {
            usleep(20_000)
        }
        #expect(core.player.state.state == .stopped)
        #expect(core.player.state.error == nil, "\(String(describing: core.player.state.error))")
        // The track ended: its connection and buffer are let go now, not when the track is forgotten.
        let released = Date().addingTimeInterval(30)
        while Date() < released, core.player.shared.withLock({ $0.tracks.values.contains { $0.stream != nil } }) {
            usleep(10_000)
        }
        #expect(core.player.shared.withLock { $0.tracks.values.allSatisfy { $0.stream == nil } }, "the track still holds its stream")
        return try Data(contentsOf: URL(fileURLWithPath: out)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    @Test func aPodcastCutTwicePlaysToItsEndWithEverySampleAndASeekLandsWhereAsked() throws {
        let directory = NSTemporaryDirectory() + "reel-podcast-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mp3 = try Self.podcast(in: directory, seconds: 600)
        let source = try Self.decode(mp3)
        #expect(source.count / 2 > 599 * Self.rate)
        #expect(Self.withoutSilence(source).count == source.count, "the source has no silence to take out")
        let server = try StreamServer(mp3: mp3)
        // 9.6 MB, every connection cut after 4,000,000 bytes: cut twice, resumed by Range each time.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: mp3)[.size] as? Int)
        #expect(size > 8_000_000 && size < 12_000_000)
        let url = server.url("/drop/4000000/file.mp3")

        let whole = Self.withoutSilence(try Self.capture(url, directory: directory, name: "whole"))
        #expect(whole.count == source.count, "\(whole.count / 2) frames played of \(source.count / 2)")
        #expect(whole == source, "every sample in place")

        // A seek to 5:00 right after the start: what was written before it is the file's start,
        // everything after is the file from 5:00 exactly, to its end.
        let target = 300 * Self.rate
        let sought = Self.withoutSilence(try Self.capture(url, seek: 300, directory: directory, name: "sought"))
        let tail = source.count - target * 2
        #expect(sought.count >= tail)
        guard sought.count >= tail else { return }
        #expect(Array(sought.suffix(tail)) == Array(source[(target * 2)...]), "from the frame asked to the end")
        #expect(Array(sought.prefix(sought.count - tail)) == Array(source.prefix(sought.count - tail)))
    }
}
