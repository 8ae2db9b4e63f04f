// A stored playlist file read for its entries only (to load or list it), in one pass over its bytes.

/// The entries of a stored playlist file, as `StoredPlaylist(reading:limits:)` reads them (the
/// same lines are entries, comments, blank or broken, for the same reasons, and the same files
/// are too large), read in one pass over the file's bytes for loading or listing it, not for
/// editing it: comments and blank lines are skipped, broken lines only listed.
///
/// Each distinct entry is made a `String` once: a line that repeats an earlier one is found by
/// its bytes (one hash of them) and shares that line's string and number in `distinct`, so a
/// playlist naming 200 files 50 times makes 200 strings and is located (`PlaylistPaths`) as
/// 200 lines. Pure value.
public struct StoredPlaylistEntries: Sendable {
    /// The entries in order (a repeated line is the same string as its first).
    public var entries: [String] = []
    /// Each distinct entry once, in the order of the first line holding it.
    public var distinct: [String] = []
    /// For each entry: its index in `distinct`.
    public var distinctOfEntry: [Int] = []
    /// Whether every entry is ASCII (its bytes all below 0x80): equal entries are then equal
    /// bytes, as strings compare them (Unicode's canonical equivalence).
    public var allASCII = true
    /// The broken lines: their 1-based line number in the file, and why
    /// (`StoredPlaylist.brokenLines`).
    public var brokenLines: [(line: Int, reason: String)] = []

    /// Reads a file's bytes. Throws `.tooLarge` as `StoredPlaylist(reading:limits:)` does:
    /// beyond `limits.maximumBytes` or `limits.maximumEntries` entries.
    public init(reading bytes: [UInt8], limits: PlaylistLimits = .stored) throws(StreamFormatError) {
        guard bytes.count <= limits.maximumBytes else {
            throw StreamFormatError(.tooLarge, "the playlist file is larger than \(limits.maximumBytes) bytes")
        }
        let tooMany = bytes.withUnsafeBufferPointer { read($0, limits: limits) }
        if tooMany {
            throw StreamFormatError(.tooLarge, "the playlist file has more than \(limits.maximumEntries) entries")
        }
    }

    /// Reads the lines (the rules of `StoredPlaylist(reading:limits:)`, and its line breaks:
    /// `forEachLine`); returns whether there are more than `limits.maximumEntries` entries
    /// (reading stops at the first one too many).
    private mutating func read(_ file: UnsafeBufferPointer<UInt8>, limits: PlaylistLimits) -> Bool {
        let count = file.count
        guard let base = file.baseAddress, count > 0 else { return false }
        // Each distinct entry's bytes, and its index in `distinct` (-1: not valid UTF-8, broken).
        var known = LineTable(file: base)
        // About one line per 40 bytes (a path of the music folder), within reason.
        let estimate = min(count / 40, 1 << 16)
        entries.reserveCapacity(estimate)
        distinctOfEntry.reserveCapacity(estimate)
        var start = 0
        if count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { start = 3 }
        var number = 0
        while start < count {
            // The line's end, what its bytes hold (a NUL, a byte above ASCII), and their hash
            // (`LineTable`: 8 bytes at a time from the line's start).
            var end = start
            var hasNUL = false
            var all: UInt64 = 0
            var hash = LineTable.seed
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            scan: while true {
                // 8 bytes at a time while none is a control byte up to CR (0x00…0x0D: a break,
                // a NUL, a tab): the word less 0x0E in each byte borrows into a byte's top bit
                // only where the byte is below 0x0E (a byte's own top bit is masked out).
                while end + 8 <= count {
                    let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: end, as: UInt64.self)
                    if (word &- 0x0E0E_0E0E_0E0E_0E0E) & ~word & 0x8080_8080_8080_8080 != 0 { break }
                    all |= word
                    hash = LineTable.mix(hash ^ word)
                    end += 8
                }
                // Then a byte at a time, through that word (or the file's last bytes): the
                // same 8 bytes make the same word (little-endian) as a load would.
                let stop = min(end + 8, count)
                while end < stop {
                    let byte = base[end]
                    if byte <= 0x0D {
                        if byte == 0x0A || byte == 0x0D { break scan }
                        if byte == 0 { hasNUL = true }
                    }
                    all |= UInt64(byte)
                    tail |= UInt64(byte) << shift
                    shift += 8
                    end += 1
                }
                if shift == 64 {
                    hash = LineTable.mix(hash ^ tail)
                    tail = 0
                    shift = 0
                }
                if end == count { break }
            }
            if shift > 0 { hash = LineTable.mix(hash ^ tail) }
            let ascii = all & 0x8080_8080_8080_8080 == 0
            number += 1
            let length = end - start
            let line = UnsafeBufferPointer(start: base + start, count: length)
            // The next line's start (CR LF is one break).
            var next = end + 1
            if end < count, base[end] == 0x0D, next < count, base[next] == 0x0A { next += 1 }
            defer { start = next }

            if length > limits.maximumLineLength {
                brokenLines.append((number, "longer than \(limits.maximumLineLength) bytes"))
                continue
            }
            let first = length > 0 ? line[0] : 0x20
            if first == 0x20 || first == 0x09, line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            if hasNUL {
                brokenLines.append((number, "holds a NUL byte"))
                continue
            }
            if first == UInt8(ascii: "#") { continue }
            let index = known.value(start: start, count: length, hash: LineTable.finish(hash, count: length)) {
                let text = ascii ? String(decoding: line, as: UTF8.self) : String(validating: line, as: UTF8.self)
                guard let text else { return -1 }
                if !ascii { allASCII = false }
                distinct.append(text)
                return distinct.count - 1
            }
            guard index >= 0 else {
                brokenLines.append((number, "not valid UTF-8"))
                continue
            }
            if entries.count == limits.maximumEntries { return true }
            entries.append(distinct[index])
            distinctOfEntry.append(index)
        }
        return false
    }
}

/// The distinct lines of a file by their bytes, each with a value (`StoredPlaylistEntries`: its
/// index in `distinct`): an open-addressing table of byte ranges of the file, by a hash of their
/// bytes taken 8 at a time from the line's start (`mix`, then `finish`: made while the line's
/// end is looked for) with a seed drawn once per process (a file cannot be made to collide on
/// purpose), so that no key or `Hasher` is made per line. Only while the file's buffer lives.
private struct LineTable {
    let file: UnsafePointer<UInt8>
    /// Each slot: 0 (empty) or a line's number in `lines` + 1.
    private var slots = [Int32](repeating: 0, count: 256)
    /// Each distinct line: its hash, start and length in the file, and value.
    private var lines: [(hash: UInt64, start: Int, count: Int, value: Int)] = []

    /// A line's hash before its first 8 bytes: drawn once per process.
    static let seed = UInt64.random(in: .min ... .max)

    init(file: UnsafePointer<UInt8>) { self.file = file }

    /// The value of the line of `count` bytes at `start` (`hash`: of its bytes); for a line not
    /// seen before, the one `make` gives, kept for the next time.
    mutating func value(start: Int, count: Int, hash: UInt64, make: () -> Int) -> Int {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            let line = lines[Int(slots[slot]) - 1]
            if line.hash == hash, line.count == count, memcmpBytes(file + line.start, file + start, count) {
                return line.value
            }
            slot = (slot + 1) & mask
        }
        let value = make()
        lines.append((hash, start, count, value))
        slots[slot] = Int32(lines.count)
        if lines.count * 2 > slots.count { grow() }
        return value
    }

    /// Twice the slots (at most half of them taken), every line placed again by its hash.
    private mutating func grow() {
        slots = [Int32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (number, line) in lines.enumerated() {
            var slot = Int(truncatingIfNeeded: line.hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(number + 1)
        }
    }

    /// A line's hash once its bytes are mixed in (8 at a time from its start, little-endian,
    /// the last ones as a shorter word): with its length.
    @inline(__always)
    static func finish(_ hash: UInt64, count: Int) -> UInt64 {
        mix(hash ^ (UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15))
    }

    /// Mixes 8 bytes into a line's hash.
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var x = value &* 0xBF58_476D_1CE4_E5B9
        x ^= x >> 31
        x = x &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 29)
    }
}

/// Whether `count` bytes at `a` and `b` are equal (8 at a time).
@inline(__always)
private func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    let rawA = UnsafeRawPointer(a)
    let rawB = UnsafeRawPointer(b)
    var index = 0
    while index + 8 <= count {
        if rawA.loadUnaligned(fromByteOffset: index, as: UInt64.self) != rawB.loadUnaligned(fromByteOffset: index, as: UInt64.self) {
            return false
        }
        index += 8
    }
    while index < count {
        if a[index] != b[index] { return false }
        index += 1
    }
    return true
}
