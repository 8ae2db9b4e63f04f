// Tests/Streams/stream_server.py run as a child process on loopback, for every test target that
// plays or records a URL.

import Foundation

/// The project's test stream server on a free loopback port. It serves an MP3 fixture made with
/// ffmpeg (`seconds` long, or the file `mp3` given) and, as `/live/NAME` and `/file/NAME`, the
/// `fixtures` asked for (NAME: what `stream_server.make_fixture` makes of a kind: `aac`, `heaac`,
/// `vorbis`, `opus`, `flac`, `m4a`). Its control paths (`/control/drop`, …) and counters are in
/// `stream_server.py`. Stopped, and its fixtures removed, when released.
public final class StreamServer: @unchecked Sendable {
    public let port: Int
    public let mp3Path: String
    /// The fixtures' directory.
    public let directory: URL
    private let server: ChildServer

    /// The server's source.
    public static var script: String { TestTool.testsDirectory.appendingPathComponent("Streams/stream_server.py").path }

    /// `xing`: the fixture has a Xing/Info frame with a LAME tag (a podcast as encoders make
    /// it); else none (it loops cleanly as a live stream). `source`: ffmpeg's lavfi source of the
    /// fixture (`%SECONDS%` replaced), a tone by default. `mp3`: serve this file instead of
    /// making one. `extra`: the server's own options.
    public init(
        seconds: Double = 3, xing: Bool = false, mp3: String? = nil, extra: [String] = [],
        source: String = "sine=frequency=440:duration=%SECONDS%:sample_rate=44100",
        fixtures: [(name: String, kind: String, seconds: Double)] = []
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-streams-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let mp3 {
            mp3Path = mp3
        } else {
            mp3Path = directory.appendingPathComponent("fixture.mp3").path
            try TestTool.run(
                "/usr/bin/ffmpeg",
                ["-v", "error", "-y", "-f", "lavfi", "-i", source.replacingOccurrences(of: "%SECONDS%", with: "\(seconds)"),
                 "-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-id3v2_version", xing ? "3" : "0",
                 "-write_xing", xing ? "1" : "0", "-f", "mp3", mp3Path])
        }
        var arguments = ["--port", "0", "--mp3", mp3Path] + extra
        for fixture in fixtures {
            let made = try Self.makeFixture(kind: fixture.kind, seconds: fixture.seconds, in: directory.path)
            arguments += ["--fixture", "\(fixture.name)=\(made)=\(fixture.seconds)"]
        }
        server = try ChildServer(name: "stream server", script: Self.script, arguments: arguments)
        port = server.port
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A fixture made by `stream_server.make_fixture` (ffmpeg); its path.
    public static func makeFixture(kind: String, seconds: Double, in directory: String) throws -> String {
        let streams = URL(fileURLWithPath: script).deletingLastPathComponent().path
        try TestTool.run(
            "/usr/bin/python3",
            ["-c", "import sys; sys.path.insert(0, sys.argv[1]); import stream_server; stream_server.make_fixture(sys.argv[2], sys.argv[3], float(sys.argv[4]))",
             streams, directory, kind, "\(seconds)"])
        let suffix = ["aac": "aac", "heaac": "aac", "vorbis": "ogg", "opus": "opus", "flac": "flac", "m4a": "m4a"][kind] ?? kind
        return directory + "/fixture-\(kind).\(suffix)"
    }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Asks the server something on its control paths (`/control/drop`, …).
    public func control(_ path: String) throws {
        try TestTool.run("/usr/bin/curl", ["-s", "-o", "/dev/null", url(path)])
    }

    /// The server's counters (`/control/stats`): requests, paths, connections held now.
    public func stats() throws -> [String: Any] {
        let data = try TestTool.output("/usr/bin/curl", ["-s", url("/control/stats")])
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw TestSupportError("the stream server's stats are not JSON")
        }
        return object
    }

    /// Connections the server holds unanswered now (`/hold/…`).
    public func held() throws -> Int { try stats()["held"] as? Int ?? -1 }
}
