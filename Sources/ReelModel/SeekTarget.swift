// Seek requests: absolute or relative, resolved against the track's length.

/// The longest position, offset or length in seconds Reel accepts (about 31 years): beyond it a
/// frame number no longer fits in 64 bits at high rates, and no audio is that long.
public let maximumSeconds = 1_000_000_000.0

/// The frame at `seconds` into a stream of `rate` frames per second, rounded; 0 for negative
/// or NaN input, and clamped far below Int64's limit (converting a larger Double would trap).
public func frameIndex(seconds: Double, rate: Double) -> Int64 {
    let frames = (seconds * rate).rounded()
    guard frames > 0 else { return 0 }
    return frames < 9.0e18 ? Int64(frames) : 9_000_000_000_000_000_000
}

/// A seek as asked for: `player.seek` with `position` or `offset`, or `reel seek 1:30` / `+10`.
public enum SeekTarget: Equatable, Sendable {
    case absolute(Double)
    case relative(Double)

    /// The position in seconds to go to from `current` in a track of `duration` seconds.
    /// An absolute position outside the track is `out_of_range`; a relative one is clamped to
    /// the track, so `-5` near the start goes to 0 and `+10` near the end goes to the end.
    public func resolve(current: Double, duration: Double) throws(ReelError) -> Double {
        switch self {
        case .absolute(let position):
            guard position.isFinite, position >= 0, position <= maximumSeconds else {
                throw ReelError(.outOfRange, "cannot seek to \(position) s: a position is 0 or more seconds")
            }
            guard position <= duration else {
                throw ReelError(
                    .outOfRange,
                    "cannot seek to \(formatSeconds(position)): the track is \(formatSeconds(duration)) long")
            }
            return position
        case .relative(let offset):
            guard offset.isFinite, abs(offset) <= maximumSeconds else {
                throw ReelError(.outOfRange, "cannot seek by \(offset) s")
            }
            return min(max(current + offset, 0), duration)
        }
    }

    /// Parses the CLI forms: `90`, `90.5`, `1:30`, `1:02:03`, `+10`, `-5`, `+1:00`.
    public init?(parsing text: String) {
        var body = Substring(text)
        var sign: Double? = nil
        if body.first == "+" { sign = 1; body = body.dropFirst() }
        else if body.first == "-" { sign = -1; body = body.dropFirst() }
        guard let seconds = parseClock(body) else { return nil }
        if let sign { self = .relative(sign * seconds) } else { self = .absolute(seconds) }
    }
}

/// `SS`, `MM:SS` or `HH:MM:SS`, seconds possibly fractional; nil for anything else.
private func parseClock(_ text: Substring) -> Double? {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard (1...3).contains(parts.count) else { return nil }
    var total = 0.0
    for (index, part) in parts.enumerated() {
        let isLast = index == parts.count - 1
        guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || ($0 == "." && isLast)) }),
              let value = Double(part), value.isFinite
        else { return nil }
        if index > 0 && value >= 60 { return nil }
        total = total * 60 + value
    }
    return total
}

/// `m:ss` or `h:mm:ss` for messages and the CLI.
public func formatSeconds(_ seconds: Double) -> String {
    guard seconds.isFinite else { return "--:--" }
    let whole = Int(max(seconds, 0).rounded(.down))
    let h = whole / 3600, m = (whole / 60) % 60, s = whole % 60
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
}
