// Tests/Streams/stream_server.py run as a child process on loopback (as in ReelAudioTests), with
// its counters (`stats`).

import Foundation
import Glibc

/// The project's test stream server on a free loopback port, serving an MP3 fixture made with
/// ffmpeg (`seconds` long). Stopped when released.
final class StreamServer: @unchecked Sendable {
    let port: Int
    let mp3Path: String
    private let process: Process
    let directory: URL

    /// The server's source, next to this file's directory.
    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Streams/stream_server.py").path
    }

    init(seconds: Double = 3, extra: [String] = []) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-streams-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        mp3Path = directory.appendingPathComponent("fixture.mp3").path
        try StreamServer.run(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds):sample_rate=44100", "-ac", "2",
             "-c:a", "libmp3lame", "-b:a", "128k", "-id3v2_version", "0", "-write_xing", "0", "-f", "mp3", mp3Path])
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script, "--port", "0", "--mp3", mp3Path] + extra
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
            throw TestFailure("the stream server did not start (said \"\(text)\")")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: the test runner's threads block SIGTERM, and the child inherits that mask.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("\(executable) exited \(process.terminationStatus)") }
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Asks the server something on its control paths (`/control/drop`, …).
    func control(_ path: String) throws {
        try StreamServer.run("/usr/bin/curl", ["-s", "-o", "/dev/null", url(path)])
    }
}

extension StreamServer {
    /// The server's counters (`/control/stats`): requests, paths, connections held now.
    func stats() throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", url("/control/stats")]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw TestFailure("the stream server's stats are not JSON")
        }
        return object
    }

    /// Connections the server holds unanswered now (`/hold/…`).
    func held() throws -> Int { try stats()["held"] as? Int ?? -1 }
}
