// ReconnectOverlap: a live stream's new connection that starts with the end of what the old one
// delivered (a server's burst) is spliced on; anything else is a new start.

import Foundation
import Testing

@testable import ReelAudio

struct ReconnectOverlapTests {
    /// Bytes that never repeat within `count` (a station's audio, not a loop).
    static func broadcast(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }

    /// Feeds `bytes` in pieces of `piece`, a piece each `interval` nanoseconds (all at once by
    /// default); the decision.
    static func feed(
        _ overlap: inout ReconnectOverlap, _ bytes: ArraySlice<UInt8>, piece: Int, interval: UInt64 = 0
    ) -> ReconnectOverlap.Decision {
        var index = bytes.startIndex
        var now: UInt64 = 5_000_000_000
        while index < bytes.endIndex {
            let end = min(index + piece, bytes.endIndex)
            let decision = Array(bytes[index..<end]).withUnsafeBytes { overlap.take($0, at: now) }
            now += interval
            if decision != .undecided { return decision }
            index = end
        }
        return .undecided
    }

    @Test(arguments: [1, 700, 4096, 70_000])
    func aBurstThatRepeatsTheEndIsFoundWhateverPiecesItComesIn(piece: Int) {
        let air = Self.broadcast(400_000)
        // The old connection got up to byte 200,000; the new one starts 60,000 bytes earlier.
        var overlap = ReconnectOverlap(tail: Array(air[0..<200_000].suffix(ReconnectOverlap.tailLimit)))
        let decision = Self.feed(&overlap, air[140_000...], piece: piece)
        #expect(decision == .repeats(count: 60_000))
        // What is written (the held bytes after the repeat) continues the old bytes exactly.
        let heldStart = 140_000
        #expect(Array(overlap.held[60_000...]) == Array(air[200_000..<(heldStart + overlap.held.count)]))
    }

    @Test func bytesFromAfterTheEndAreNew() {
        let air = Self.broadcast(300_000)
        var overlap = ReconnectOverlap(tail: Array(air[0..<100_000]))
        // The outage was longer than the burst: the new bytes start after a gap.
        #expect(Self.feed(&overlap, air[150_000...], piece: 4096) == .new)
        #expect(overlap.held.count < 8192, "decided as soon as the first bytes were looked up")
    }

    @Test func bytesThatMatchAtFirstAndThenDifferAreNew() {
        let air = Self.broadcast(200_000)
        var overlap = ReconnectOverlap(tail: Array(air[0..<100_000]))
        var other = Array(air[80_000..<90_000])
        other += Self.broadcast(50_000, seed: 99)
        #expect(Self.feed(&overlap, other[...], piece: 4096) == .new)
    }

    @Test func aConnectionThatEndsBeforeItIsKnownIsNew() {
        let air = Self.broadcast(200_000)
        var overlap = ReconnectOverlap(tail: Array(air[0..<100_000]))
        #expect(Self.feed(&overlap, air[50_000..<60_000], piece: 4096) == .undecided)
        #expect(overlap.finish() == .new)
        var short = ReconnectOverlap(tail: Array(air[0..<100_000]))
        #expect(Self.feed(&short, air[50_000..<50_500], piece: 100) == .undecided)
        #expect(short.finish() == .new)
    }

    @Test func aTailShorterThanTheProbeIsNeverMatched() {
        let air = Self.broadcast(10_000)
        var overlap = ReconnectOverlap(tail: Array(air[0..<500]))
        #expect(Self.feed(&overlap, air[0...], piece: 4096) == .new)
    }

    @Test func aLoopingStreamIsSplicedSoThatItStillContinues() {
        // A station looping one 30,000-byte program: the probe matches once per loop in the
        // tail. Whichever repeat is cut, what is written goes on as the loop does.
        let program = Self.broadcast(30_000)
        let air = Array((0..<20).map { _ in program }.joined())
        var overlap = ReconnectOverlap(tail: Array(air[0..<250_000].suffix(ReconnectOverlap.tailLimit)))
        guard case .repeats(let count) = Self.feed(&overlap, air[243_000...], piece: 4096) else {
            Issue.record("no overlap found")
            return
        }
        #expect(count >= 7000)
        let written = overlap.held[count...]
        for (index, byte) in written.enumerated() where byte != air[250_000 + index] {
            Issue.record("byte \(index) after the splice does not continue the loop")
            break
        }
    }

    @Test func theWholeTailRepeatedIsSkippedWhole() {
        let air = Self.broadcast(120_000)
        var overlap = ReconnectOverlap(tail: Array(air[0..<60_000]))
        #expect(Self.feed(&overlap, air[0...], piece: 8192) == .repeats(count: 60_000))
    }
}

extension ReconnectOverlapTests {
    @Test func aConnectionThatStartsWhereTheLastOneStartedIsNew() {
        // A server that sends a file as an endless stream from its start on every connection:
        // not a burst, however much it repeats.
        let file = Self.broadcast(50_000)
        let tail = Array(file[0..<20_000] + file[0..<20_000])
        var overlap = ReconnectOverlap(tail: tail, lastStart: 20_000)
        #expect(Self.feed(&overlap, file[0...], piece: 4096) == .new)
        // Without the old connection's start, the same bytes would be taken for a burst.
        var unaware = ReconnectOverlap(tail: tail)
        #expect(Self.feed(&unaware, file[0..<30_000], piece: 4096) == .repeats(count: 20_000))
    }
}

extension ReconnectOverlapTests {
    @Test func aRepeatThatComesAtThePaceOfAudioIsANewStartAfterTwoSeconds() {
        // A server that restarts a looped programme on each connection, its start also in the
        // tail (not where the old connection began): the new bytes go on matching the tail, but
        // at 16,000 bytes a second, not as a burst. Held until the repeat ends, the listener
        // would hear 10 s of silence; after two seconds what is held plays as a new start.
        let programme = Self.broadcast(160_000)
        let tail = Array(programme[100_000..<160_000] + programme[0..<160_000])
        let second: UInt64 = 1_000_000_000
        var overlap = ReconnectOverlap(tail: tail, lastStart: 0, bytesPerSecond: 16_000)
        #expect(Self.feed(&overlap, programme[0...], piece: 1600, interval: second / 10) == .new)
        #expect(overlap.held.count >= 2 * 16_000 && overlap.held.count <= 2 * 16_000 + 1600,
                "held \(overlap.held.count) bytes: two seconds of audio")
        // The same bytes all at once (a burst) are spliced on as before.
        var burst = ReconnectOverlap(tail: tail, lastStart: 0, bytesPerSecond: 16_000)
        #expect(Self.feed(&burst, programme[0...], piece: 1600) == .repeats(count: 160_000))
        // A burst on a slow link (twice as fast as audio plays, 10 s for all of it) is waited
        // for: spliced, not heard twice.
        var slow = ReconnectOverlap(tail: tail, lastStart: 0, bytesPerSecond: 16_000)
        #expect(Self.feed(&slow, programme[0...], piece: 3200, interval: second / 10) == .repeats(count: 160_000))
    }

    @Test func aBurstThatStallsIsWaitedFor() {
        // 1.5 s of audio comes at once, then nothing for 5 s, then the rest at once: less than
        // two seconds' audio was held through the stall, so the decision waits for the rest.
        let air = Self.broadcast(400_000)
        var overlap = ReconnectOverlap(tail: Array(air[0..<200_000].suffix(ReconnectOverlap.tailLimit)), bytesPerSecond: 16_000)
        let start: UInt64 = 5_000_000_000
        let first = Array(air[140_000..<164_000]).withUnsafeBytes { overlap.take($0, at: start) }
        #expect(first == .undecided)
        let rest = Array(air[164_000..<210_000]).withUnsafeBytes { overlap.take($0, at: start + 5_000_000_000) }
        #expect(rest == .repeats(count: 60_000))
    }
}
