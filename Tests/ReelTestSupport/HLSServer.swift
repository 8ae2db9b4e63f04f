// Tests/Streams/hls_server.py run as a child process on loopback, for the HLS tests.

import Foundation

/// The project's live HLS server (TS, fMP4 and ADTS variants of 2 s segments, a window of 6,
/// a 20 s pool looped with a discontinuity) on a free loopback port. Stopped, and its segments
/// removed, when released.
public final class HLSServer: @unchecked Sendable {
    public let port: Int
    /// The segments' directory.
    public let directory: URL
    private let server: ChildServer

    public static var script: String { TestTool.testsDirectory.appendingPathComponent("Streams/hls_server.py").path }

    /// Returns once ffmpeg made the segments and the server listens.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-hls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        server = try ChildServer(name: "HLS server", script: Self.script, arguments: ["--dir", directory.path])
        port = server.port
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    /// The paths asked of the server so far, in order.
    public func requests() throws -> [String] {
        let data = try TestTool.output("/usr/bin/curl", ["-s", url("control/requests")])
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// `/control/restart`, `/control/freeze?on=1`, `/control/jump?n=20`.
    public func control(_ path: String) throws {
        try TestTool.run("/usr/bin/curl", ["-s", "-o", "/dev/null", url(path)])
    }
}
