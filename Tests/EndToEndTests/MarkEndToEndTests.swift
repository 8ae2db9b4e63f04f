import Foundation
import Glibc
import ReelProtocol
import Testing

/// Marks through the real daemon (ALSA's `null` capture device): `recorder.mark` and
/// `reel mark` during a take, the mark kept across `kill -9` right after its reply, and the
/// errors of marks with nothing recorded or played.
@Suite(.serialized) struct MarkEndToEndTests {
    func reason(_ result: Result<JSONValue, RPCError>) -> String? {
        if case .failure(let error) = result { return error.data?["reason"]?.stringValue }
        return nil
    }

    @Test func aMarkAnsweredIsKeptAfterKillNine() throws {
        let first = try DaemonProcess(arguments: ["--capture-device", "null"])
        let client = try first.client()
        let started = try client.result("recorder.start", ["name": "take", "format": "flac"])
        let id = try #require(started["item"]?["id"]?.stringValue)
        let mark = try client.result("recorder.mark", ["label": "Intro"])
        #expect(mark["label"] == .string("Intro"))
        let frame = try #require(mark["frame"]?.int64Value)
        let at = try #require(mark["at"]?.doubleValue)
        #expect(at == Double(frame) / 48000)
        let cli = try CLI.run(["mark", "Verse", "--socket", first.socketPath])
        #expect(cli.status == 0, "\(cli)")
        #expect(cli.stdout.hasPrefix("marked ") && cli.stdout.contains("in the take: Verse"), "\(cli)")
        // The replies were sent: a crash now keeps both marks.
        kill(first.pid, SIGKILL)
        first.process.waitUntilExit()

        let second = try DaemonProcess(arguments: ["--data-dir", first.directory.path + "/data", "--capture-device", "null"])
        let item = try second.client().result("library.get", ["item": .string(id)])
        let marks = try #require(item["marks"]?.arrayValue)
        #expect(marks.count == 2, "\(item)")
        #expect(marks.first?["frame"]?.int64Value == frame)
        #expect(marks.first?["label"] == .string("Intro"))
        #expect(marks.last?["label"] == .string("Verse"))
        #expect((marks.last?["frame"]?.int64Value ?? 0) >= frame)
    }

    @Test func marksNeedATakeOrARecordingPlaying() throws {
        let daemon = try DaemonProcess(arguments: ["--capture-device", "null"])
        let client = try daemon.client()
        let idle = try client.call("recorder.mark")
        #expect(reason(idle) == "not_recording")
        if case .failure(let error) = idle { #expect(error.message.contains("nothing is being recorded")) }
        #expect(reason(try client.call("player.mark", ["label": "x"])) == "not_playing")
        #expect(reason(try client.call("player.seek", ["mark": 0])) == "not_playing")
        if case .failure(let error) = try client.call("recorder.mark", ["label": 3]) {
            #expect(error.code == -32602)
        } else {
            Issue.record("a label that is not a string was taken")
        }
        if case .failure(let error) = try client.call("player.seek", ["mark": 0, "position": 1]) {
            #expect(error.code == -32602)
        } else {
            Issue.record("player.seek with both mark and position was taken")
        }
        let cli = try CLI.run(["mark", "--socket", daemon.socketPath])
        #expect(cli.status != 0 && cli.stderr.contains("nothing is playing"), "\(cli)")
        let seek = try CLI.run(["seek", "--mark", "0", "--socket", daemon.socketPath])
        #expect(seek.status != 0 && seek.stderr.contains("nothing is playing"), "\(seek)")
        let both = try CLI.run(["seek", "10", "--mark", "0", "--socket", daemon.socketPath])
        #expect(both.status != 0 && both.stderr.contains("give a position or --mark, not both"), "\(both)")
    }
}
