// Tests/Streams/hls_server.py run as a child process on loopback, for the HLS tests.

import Foundation
import ReelModel

/// The project's live HLS server (TS, fMP4 and ADTS variants of 2 s segments, a window of 6,
/// a 20 s pool looped with a discontinuity) on a free loopback port. Stopped when released.
final class HLSServer {
    let port: Int
    private let process: Process
    let directory: URL

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Streams/hls_server.py").path
    }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script, "--dir", directory.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The first line is `PORT <n>`, once ffmpeg made the segments.
        var line = Data()
        while !line.contains(0x0A) {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            kill(process.processIdentifier, SIGKILL)
            throw ReelError(.ioError, "the HLS server did not start (said \"\(text)\")")
        }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// The paths asked of the server so far, in order.
    func requests() throws -> [String] {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", url("control/requests")]
        let output = Pipe()
        curl.standardOutput = output
        try curl.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        curl.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// `/control/restart`, `/control/freeze?on=1`, `/control/jump?n=20`.
    func control(_ path: String) throws {
        try TestAudio.run("/usr/bin/curl", ["-s", "-o", "/dev/null", url(path)])
    }
}
