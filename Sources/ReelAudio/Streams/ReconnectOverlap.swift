// A live stream's new connection that repeats the end of what was received: found and skipped.

#if canImport(Glibc)
import Glibc
#endif

/// A live server sends each new listener a burst of what it sent last (Icecast: 64 KB, about
/// 4 s at 128 kbit/s), so that playback can start at once. After a short drop, the new
/// connection's first bytes are therefore the end of what the old one already delivered. Written
/// after it, that audio would be heard twice, and every reconnect would put the listener a
/// burst further behind live (and the titles with them).
///
/// `ReconnectOverlap` holds the new connection's first audio bytes back until it knows: when
/// they continue the old connection's last bytes (`tail`) from some point on, the repeated part
/// is dropped and the stream goes on as one byte stream (no new container: nothing for a
/// demuxer to start over); otherwise they are a new start after a gap (the outage was longer
/// than the burst, or the server sends no burst, or a container's headers come first).
///
/// A value without I/O: the network thread feeds it (`take`) and writes what it decides.
struct ReconnectOverlap {
    /// The most of the old connection's end that is compared (a burst longer than this is taken
    /// as a new start: audio repeated, as before this check existed, never audio lost).
    static let tailLimit = 256 << 10
    /// The new bytes looked up in the tail; an overlap shorter than this is not looked for.
    static let probeLength = 1024
    /// Places in the tail where the probe matched, followed at most (periodic audio, silence).
    static let candidateLimit = 64
    /// How much audio a decision may wait for, held at the pace of audio. A burst comes faster
    /// than audio plays (Icecast's 64 KB at once, 4 s at 128 kbit/s); bytes that go on matching
    /// the tail at the pace of audio are a server that restarts its programme on a connection,
    /// whose start the tail also holds (a looped file). Held for as long as that repeat lasts,
    /// the listener would hear up to the whole tail (16 s at 128 kbit/s) of silence and stay
    /// behind live after it; taken as a new start, what is held plays at once. A burst slowed
    /// by the network, or a stall with less than this held, is still waited for.
    static let holdLimitNanoseconds: UInt64 = 2_000_000_000
    /// Held bytes that came at most this much faster than audio plays came at its pace.
    static let paceTolerance = 1.25

    enum Decision: Equatable {
        /// More of the new connection's bytes are needed (all are held).
        case undecided
        /// The first `count` bytes of what is held repeat the end of the tail: write the rest.
        case repeats(count: Int)
        /// What is held is new: write all of it, after a boundary (a new start).
        case new
    }

    /// The old connection's last bytes.
    let tail: [UInt8]
    /// The new connection's bytes taken so far, until a decision.
    private(set) var held: [UInt8] = []
    /// Where in `tail` the held bytes may start, each still matching as far as bytes came.
    private var candidates: [Int]?
    /// When the first bytes were held (monotonic nanoseconds).
    private var firstHeld: UInt64?
    /// The held bytes already compared with every candidate.
    private var verified = 0

    /// Where in `tail` the old connection's bytes began, if there. A new connection that starts
    /// with the same bytes is a server that starts every connection at the same place (a file
    /// sent as an endless stream, or a server that restarts its programme): not a burst, so it
    /// is a new start, played as it comes.
    let lastStart: Int?

    /// The stream's bytes a second (its bitrate): what "the pace of audio" is.
    let bytesPerSecond: Int

    /// `bytesPerSecond`: the stream's, when known; else 128 kbit/s, the common station's.
    init(tail: [UInt8], lastStart: Int? = nil, bytesPerSecond: Int? = nil) {
        self.tail = tail
        self.lastStart = lastStart
        self.bytesPerSecond = max(bytesPerSecond ?? 16_000, 1)
    }

    /// Takes the next bytes of the new connection, come at `now` (monotonic nanoseconds); once
    /// decided, further bytes are not taken (the caller writes them itself). Still undecided
    /// with `holdLimitNanoseconds` of audio held, come at the pace of audio, what is held is new.
    mutating func take(_ bytes: UnsafeRawBufferPointer, at now: UInt64) -> Decision {
        held.append(contentsOf: bytes)
        let first = firstHeld ?? now
        firstHeld = first
        let decision = decide(ended: false)
        guard decision == .undecided else { return decision }
        let heldNanoseconds = Double(held.count) / Double(bytesPerSecond) * 1e9
        let elapsed = Double(now &- first)
        if heldNanoseconds >= Double(Self.holdLimitNanoseconds) && heldNanoseconds <= elapsed * Self.paceTolerance {
            return .new
        }
        return decision
    }

    /// The new connection ended (or is given up) before a decision: what is held is new.
    mutating func finish() -> Decision {
        let decision = decide(ended: true)
        return decision == .undecided ? .new : decision
    }

    private mutating func decide(ended: Bool) -> Decision {
        if tail.count < Self.probeLength { return .new }
        if candidates == nil {
            guard held.count >= Self.probeLength else { return ended ? .new : .undecided }
            candidates = Self.matches(of: held.prefix(Self.probeLength), in: tail).filter { $0 != lastStart }
        }
        // A candidate at `start` says: held[i] == tail[start + i] while start + i < tail.count.
        // The first candidate is the longest overlap (the most repeated bytes); each is kept
        // while the held bytes go on matching, and decides once all its overlap came.
        let from = verified
        candidates = candidates!.filter { start in
            let upTo = min(held.count, tail.count - start)
            guard upTo > from else { return true }
            return held.withUnsafeBytes { h in
                tail.withUnsafeBytes { t in memcmp(h.baseAddress! + from, t.baseAddress! + start + from, upTo - from) == 0 }
            }
        }
        verified = held.count
        guard let longest = candidates!.first else { return .new }
        if held.count >= tail.count - longest { return .repeats(count: tail.count - longest) }
        return ended ? .new : .undecided
    }

    /// Every place in `tail` where `probe` occurs in full, first first, at most `candidateLimit`.
    private static func matches(of probe: ArraySlice<UInt8>, in tail: [UInt8]) -> [Int] {
        var found: [Int] = []
        probe.withUnsafeBytes { p in
            tail.withUnsafeBytes { t in
                // Each place the probe's first byte is (memchr), compared whole there (memcmp).
                let first = Int32(p[0])
                var from = 0
                while found.count < candidateLimit, from + p.count <= t.count,
                      let hit = memchr(t.baseAddress! + from, first, t.count - p.count + 1 - from)
                {
                    let start = t.baseAddress!.distance(to: UnsafeRawPointer(hit))
                    if memcmp(hit, p.baseAddress!, p.count) == 0 { found.append(start) }
                    from = start + 1
                }
            }
        }
        return found
    }
}
