import Foundation
import ReelProtocol
import Testing

/// With `media_roots` set, reeld plays and imports only files that resolve inside them.
@Suite(.serialized) struct MediaRootsTests {
    func reason(_ result: Result<JSONValue, RPCError>) -> String? {
        if case .failure(let error) = result { return error.reason }
        return nil
    }

    @Test func filesOutsideTheRootsAreForbiddenAfterResolvingLinksAndDots() throws {
        let scratch = try DaemonProcess()
        let music = scratch.directory.appendingPathComponent("music").path
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let inside = try scratch.tone("music/in.wav", seconds: 0.3)
        let outside = try scratch.tone("out.wav", seconds: 0.3)
        try FileManager.default.createSymbolicLink(atPath: music + "/link.wav", withDestinationPath: outside)
        let daemon = try DaemonProcess(environment: ["REEL_MEDIA_ROOTS": music])
        let client = try daemon.client()

        #expect(reason(try client.call("player.play", ["file": .string(inside)])) == nil)
        let refused = try client.call("player.play", ["file": .string(outside)])
        #expect(reason(refused) == "forbidden")
        if case .failure(let error) = refused { #expect(error.message.contains(outside)) }
        #expect(reason(try client.call("player.play", ["file": .string(music + "/link.wav")])) == "forbidden")
        #expect(reason(try client.call("player.play", ["file": .string(music + "/../out.wav")])) == "forbidden")
        #expect(reason(try client.call("player.play", ["file": .string(music + "/missing.wav")])) == "not_found")
        #expect(reason(try client.call("library.import", ["file": .string(outside)])) == "forbidden")
        #expect(reason(try client.call("library.import", ["file": .string(inside)])) == nil)
        // A recording in the library plays whatever the roots: its file is reeld's own.
        #expect(reason(try client.call("player.play", ["path": "/in"])) == nil)
    }
}
