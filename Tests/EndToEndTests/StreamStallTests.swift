// A live stream whose server sends nothing for a while without closing the connection (held up,
// starved of the CPU), then goes on: the player's state says so, the position holds still
// meanwhile, and it plays on by itself without a reconnect.

import Foundation
import ReelProtocol
import ReelTestSupport
import Testing

@Suite(.serialized) struct StreamStallTests {
    struct Sample {
        var time: Double
        var position: Double
        var state: String
        var stream: String
        var reconnects: Int
        var underruns: Int
    }

    @Test func aServerThatSendsNothingForFiveSecondsIsBufferingThenPlaysOnWithoutAReconnect() throws {
        let server = try StreamServer(seconds: 10)
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        // The burst (64 KiB), about 3 s more at its pace, then nothing for 5 s on the same
        // connection, then what became due meanwhile at once, and on at its pace.
        let pauseAfter = 64 * 1024 + 3 * 16000
        _ = try client.result("player.play", ["url": .string(server.url("/pause/\(pauseAfter)/5/live.mp3"))])
        var samples: [Sample] = []
        let started = Date()
        var heldFrom: Int?
        // Until the position has held still for 3 s and then gone on by a second (or 60 s).
        while Date().timeIntervalSince(started) < 60 {
            let status = try client.result("player.status")
            samples.append(Sample(
                time: Date().timeIntervalSince(started), position: status["position"]?.doubleValue ?? -1,
                state: status["state"]?.stringValue ?? "?", stream: status["stream"]?["state"]?.stringValue ?? "-",
                reconnects: status["stream"]?["reconnects"]?.intValue ?? -1, underruns: status["underruns"]?.intValue ?? -1))
            let last = samples.count - 1
            if heldFrom == nil, let first = samples.firstIndex(where: {
                $0.position > 0 && $0.position == samples[last].position && samples[last].time - $0.time >= 3
            }) {
                heldFrom = first
            }
            if let from = heldFrom, samples[last].position > samples[from].position + 1 { break }
            usleep(100_000)
        }
        let trace = samples.map { String(format: "%.1f %.2f %@ %@ %d", $0.time, $0.position, $0.state, $0.stream, $0.reconnects) }
            .joined(separator: "; ")
        let from = try #require(heldFrom, "the position never held still for 3 s: \(trace)")
        let held = samples[from].position
        // While it held still the stream said it was waiting for bytes (no sample said playing),
        // and the player still played (silence, not counted).
        // (Its last half second aside: the stream says playing as soon as it decodes again, a
        // moment before that audio is measured as heard.)
        let still = samples.filter { $0.position == held && $0.time > samples[from].time + 0.5 }
        let end = still.last?.time ?? 0
        #expect(!still.isEmpty)
        #expect(still.filter { $0.time < end - 0.5 }.allSatisfy { $0.stream == "buffering" && $0.state == "playing" }, "\(trace)")
        // It went on by itself, on the same connection, with no underrun.
        #expect(samples.last!.position > held + 1, "\(trace)")
        #expect(samples.allSatisfy { $0.reconnects == 0 && $0.underruns == 0 }, "\(trace)")
        // The pause (5 s) was held, less what was buffered ahead when it began.
        #expect(end - samples[from].time >= 2.5, "\(trace)")
        print("the server's 5 s pause: the position held at \(held) s for \(String(format: "%.1f", end - samples[from].time)) s, the stream buffering")
        _ = try client.result("player.stop")
    }
}
