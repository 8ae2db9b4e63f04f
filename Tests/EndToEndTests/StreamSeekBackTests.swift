// Going back in a live stream that FFmpeg decodes (Ogg Vorbis), through reeld's socket: a seek
// within the pause buffer lands where asked and plays on; beyond it is `out_of_range`.

import Foundation
import ReelProtocol
import Testing
import ReelTestSupport

@Suite(.serialized) struct StreamSeekBackTests {
    @Test func aLiveOggStreamSeeksBackWithinItsBuffer() throws {
        let fixtures = FileManager.default.temporaryDirectory.appendingPathComponent("reel-seekback-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: fixtures, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: fixtures) }
        let streams = URL(fileURLWithPath: StreamServer.script).deletingLastPathComponent().path
        try TestTool.run(
            "/usr/bin/python3",
            ["-c", "import sys; sys.path.insert(0, sys.argv[1]); import stream_server; stream_server.make_fixture(sys.argv[2], 'vorbis', 20)",
             streams, fixtures.path])
        let fixture = fixtures.appendingPathComponent("fixture-vorbis.ogg").path
        let server = try StreamServer(extra: ["--fixture", "tone.ogg=\(fixture)=20"])
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let url = server.url("/live/tone.ogg")
        _ = try client.result("player.play", ["url": .string(url)])
        let played = try StreamPlaybackTests.waitFor(client) { ($0["position"]?.doubleValue ?? 0) > 8 }
        #expect(played["format"]?["codec"] == .string("vorbis"), "\(played)")
        #expect(played["live"] == .bool(true))
        _ = try client.result("player.pause")
        // Back within what the buffer keeps: there, paused.
        let back = try client.result("player.seek", ["position": 3])
        #expect(abs((back["position"]?.doubleValue ?? -1) - 3) < 0.05, "\(back)")
        // Ahead of what was received: out of range, and nothing changes.
        guard case .failure(let error) = try client.call("player.seek", ["position": 5000]) else {
            throw TestFailure("a seek past what was received succeeded")
        }
        #expect(error.data?["reason"] == .string("out_of_range"), "\(error)")
        let still = try client.result("player.status")
        #expect(abs((still["position"]?.doubleValue ?? -1) - 3) < 0.05, "\(still)")
        // Resumed: it plays on from there.
        _ = try client.result("player.resume")
        let resumed = try StreamPlaybackTests.waitFor(client) { ($0["position"]?.doubleValue ?? 0) > 4 }
        #expect((resumed["position"]?.doubleValue ?? 0) > 4, "\(resumed)")
        #expect(resumed["state"] == .string("playing"), "\(resumed)")
        _ = try client.result("player.stop")
    }
}
