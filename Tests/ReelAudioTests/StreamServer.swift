// Tests/Streams/stream_server.py run as a child process on loopback, for the URL-source tests.

import Foundation
import ReelModel

/// The project's test stream server on a free loopback port, serving an MP3 fixture made with
/// ffmpeg (`seconds` long) and, as `/live/NAME` and `/file/NAME`, the `fixtures` asked for
/// (NAME: what `stream_server.make_fixture` makes of a kind: `aac`, `heaac`, `vorbis`, `opus`,
/// `flac`, `m4a`). Stopped when released.
final class StreamServer {
    let port: Int
    let mp3Path: String
    private let process: Process
    let directory: URL

    /// The server's source, next to this file's directory.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Streams/stream_server.py").path
    }

    /// `xing`: the fixture has a Xing/Info frame with a LAME tag (a podcast as encoders make
    /// it); else none (it loops cleanly as a live stream).
    init(
        seconds: Double = 3, xing: Bool = false, extra: [String] = [], fixtures: [(name: String, kind: String, seconds: Double)] = []
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-streams-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        mp3Path = directory.appendingPathComponent("fixture.mp3").path
        try TestAudio.run(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds):sample_rate=44100", "-ac", "2",
             "-c:a", "libmp3lame", "-b:a", "128k", "-id3v2_version", xing ? "3" : "0", "-write_xing", xing ? "1" : "0",
             "-f", "mp3", mp3Path])
        var arguments = extra
        for fixture in fixtures {
            let made = try Self.makeFixture(kind: fixture.kind, seconds: fixture.seconds, in: directory.path)
            arguments += ["--fixture", "\(fixture.name)=\(made)=\(fixture.seconds)"]
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script, "--port", "0", "--mp3", mp3Path] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The first line is `PORT <n>`.
        var line = Data()
        while !line.contains(0x0A) {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            kill(process.processIdentifier, SIGKILL)
            throw ReelError(.ioError, "the stream server did not start (said \"\(text)\")")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: the test runner's threads block SIGTERM, and the child inherits that mask.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A fixture made by `stream_server.make_fixture` (ffmpeg); its path.
    static func makeFixture(kind: String, seconds: Double, in directory: String) throws -> String {
        let streams = URL(fileURLWithPath: script).deletingLastPathComponent().path
        try TestAudio.run(
            "/usr/bin/python3",
            ["-c", "import sys; sys.path.insert(0, sys.argv[1]); import stream_server; stream_server.make_fixture(sys.argv[2], sys.argv[3], float(sys.argv[4]))",
             streams, directory, kind, "\(seconds)"])
        let suffix = ["aac": "aac", "heaac": "aac", "vorbis": "ogg", "opus": "opus", "flac": "flac", "m4a": "m4a"][kind] ?? kind
        return directory + "/fixture-\(kind).\(suffix)"
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Asks the server something on its control paths (`/control/drop`, …).
    func control(_ path: String) throws {
        try TestAudio.run("/usr/bin/curl", ["-s", "-o", "/dev/null", url(path)])
    }
}
