import Foundation
import Logging
@testable import ReelAudio
@testable import ReelCore
import ReelModel
import ReelTestSupport
import Testing

/// The player's wake-ups for a stream's next title: one pending at a time, however many titles
/// the decoder marks (each used to start an endless chain of its own: a station that sent its
/// title every few seconds had thousands of them after an hour, and the daemon's memory grew).
@Suite struct TitleWakeUpsTests {
    @Test func aRequestNoEarlierThanThePendingOneAddsNone() {
        var wakeUps = TitleWakeUps()
        let first = wakeUps.request(entry: 1, at: 1_000)
        #expect(first != nil)
        // Every title marked, every engine change asks again: the pending one serves them all.
        for due in stride(from: UInt64(1_000), through: 100_000, by: 1_000) {
            let again = wakeUps.request(entry: 1, at: due)
            #expect(again == nil)
        }
        #expect(wakeUps.scheduled == 1)
        #expect(wakeUps.pending?.serial == first)
    }

    @Test func theWakeUpThatCameAsksForTheNextTitleAgain() {
        var wakeUps = TitleWakeUps()
        var serial = wakeUps.request(entry: 1, at: 1_000)!
        // 1,000 titles heard one after another: one wake-up each, one pending at any time.
        for title in 1...1_000 {
            let came = wakeUps.fire(serial)
            #expect(came)
            #expect(wakeUps.pending == nil)
            serial = wakeUps.request(entry: 1, at: UInt64(1_000 + title * 1_000))!
            let later = wakeUps.request(entry: 1, at: UInt64(2_000 + title * 1_000))
            #expect(later == nil)
        }
        #expect(wakeUps.scheduled == 1_001)
        #expect(wakeUps.came == 1_000)
    }

    @Test func anEarlierRequestReplacesThePendingOneWhichThenDoesNothing() {
        var wakeUps = TitleWakeUps()
        let late = wakeUps.request(entry: 1, at: 5_000)!
        // A seek back: the title heard next is earlier.
        let early = wakeUps.request(entry: 1, at: 2_000)!
        #expect(early != late)
        #expect(wakeUps.pending?.serial == early)
        let earlyCame = wakeUps.fire(early)
        #expect(earlyCame)
        // The replaced one comes later and does nothing (the one that came has looked).
        let lateCame = wakeUps.fire(late)
        #expect(!lateCame)
        #expect(wakeUps.pending == nil)
    }

    @Test func anotherEntryReplacesThePendingOne() {
        var wakeUps = TitleWakeUps()
        let old = wakeUps.request(entry: 1, at: 1_000)!
        // The next station plays: its titles are looked at, not the old entry's.
        let new = wakeUps.request(entry: 2, at: 9_000)!
        #expect(wakeUps.pending == TitleWakeUps.Pending(serial: new, entry: 2, due: 9_000))
        let oldCame = wakeUps.fire(old)
        let newCame = wakeUps.fire(new)
        #expect(!oldCame && newCame)
    }
}

/// The same rule in the player, against Tests/Streams/stream_server.py on loopback: a station
/// that changes its title at every metadata block (8 a second) is played until 40 changes were
/// heard; the wake-ups that came stay in proportion to the titles (one each and some early
/// ones), not to their square as one chain per title made them.
@Suite(.serialized) struct StreamTitleWakeUpTests {
    @Test func manyTitlesKeepOneWakeUpNotOneChainEach() throws {
        let server = try StreamServer(
            seconds: 30, extra: ["--metaint", "2000", "--title-every", "1", "--title", "Odd", "--title", "Even"])
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let core = try ReelCore(
            dataDirectory: directory + "/data", output: RealTimeClock(), timing: PCMTiming(), input: ALSAInput(name: "null"),
            captureTiming: PCMTiming(), recording: RecordingDefaults(), mediaRoots: [directory], streams: StreamConfiguration(),
            logger: Logger(label: "test"))
        defer { core.shutdown() }
        let played = Awaited<Result<PlayerState, ReelError>>()
        core.player.play(.url(server.url("/live.mp3"))) { played.put($0) }
        _ = try #require(played.get(timeout: 120)).get()

        var changes = 0
        var shown: String?
        let deadline = Date().addingTimeInterval(120)
        while changes < 40 && Date() < deadline {
            if case .url(_, _, let title) = core.player.state.source, let title, title != shown {
                if shown != nil { changes += 1 }
                shown = title
            }
            usleep(5_000)
        }
        #expect(changes >= 40, "only \(changes) title changes were heard")
        let wakeUps = core.player.shared.withLock { $0.titleWakeUps }
        #expect(wakeUps.scheduled >= changes / 2, "the titles were not shown by wake-ups (\(wakeUps.scheduled))")
        #expect(wakeUps.came <= 4 * changes + 40, "\(wakeUps.came) wake-ups came for \(changes) title changes")
    }
}
