import Foundation
import Glibc
import ReelProtocol
import Testing

/// A stored playlist's `load`, answered and then `kill -9`ed at once, is there after a restart on
/// the same data directory, whatever became of the playlist file meanwhile: the journal's record
/// carries the entries it added (each repeated entry once, with their order), not a reference to
/// the file.
@Suite struct AcknowledgedLoadTests {
    enum Afterwards: String, CaseIterable, Sendable {
        case unchanged, rewritten, deleted
    }

    func paths(_ listing: JSONValue) -> [String] {
        (listing["entries"]?.arrayValue ?? []).compactMap { $0["source"]?["path"]?.stringValue }
    }

    @Test(arguments: Afterwards.allCases)
    func aLoadAnsweredRightBeforeKillNineIsThereAfterTheRestart(afterwards: Afterwards) throws {
        let playlists = FileManager.default.temporaryDirectory.appendingPathComponent("reel-load-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: playlists, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: playlists) }
        let environment = ["REEL_PLAYLIST_DIR": playlists]
        let first = try DaemonProcess(environment: environment)
        let a = try first.tone("a.wav", seconds: 1)
        let b = try first.tone("b.wav", seconds: 1)
        let c = try first.tone("c.wav", seconds: 1)
        // Files named again and again, as a long playlist of a few albums does.
        let lines = [a, b, a, c, b, a, a, c]
        let file = playlists + "/Mix.m3u"
        try lines.map { $0 + "\n" }.joined().write(toFile: file, atomically: true, encoding: .utf8)
        let client = try first.client()
        _ = try client.result("queue.add", ["file": .string(c)])

        try client.send(raw: RPCRequest(id: .int(1), method: "playlists.load", params: ["name": "Mix"]).encodedLine())
        let line = try client.readLine(timeout: 10)
        kill(first.pid, SIGKILL)
        first.process.waitUntilExit()
        guard let line, case .response(_, let result) = try RPCMessage(line: line) else {
            throw TestFailure("no reply to playlists.load")
        }
        guard case .success(let loaded) = result else { throw TestFailure("playlists.load failed: \(result)") }
        #expect(loaded["entries"]?.arrayValue?.count == lines.count)
        let journal = try String(contentsOfFile: first.directory.path + "/data/state.journal", encoding: .utf8)
        #expect(journal.contains(#""order":[0,1,0,2,1,0,0,2]"#), "the add is recorded with each entry once: \(journal.prefix(2000))")

        switch afterwards {
        case .unchanged: break
        case .rewritten: try "\(b)\n".write(toFile: file, atomically: true, encoding: .utf8)
        case .deleted: try FileManager.default.removeItem(atPath: file)
        }
        let second = try DaemonProcess(environment: environment, dataDirectory: first.directory.path + "/data")
        defer { second.stop() }
        let listing = try second.client().result("queue.list")
        #expect(paths(listing) == [c] + lines)
        #expect(listing["entries"]?.arrayValue?.allSatisfy { $0["missing"] != .bool(true) } == true)
        #expect(listing["entries"]?.arrayValue?.last?["duration"]?.doubleValue == 1, "an entry keeps its length")
    }
}
