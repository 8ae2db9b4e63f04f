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

    /// A line's bytes as a dictionary key: hashed and compared by its bytes (only while the
    /// file's buffer lives: within `read(_:limits:)`).
    private struct LineKey: Hashable {
        let bytes: UnsafeBufferPointer<UInt8>

        static func == (a: LineKey, b: LineKey) -> Bool {
            a.bytes.count == b.bytes.count
                && (a.bytes.count == 0 || memcmpBytes(a.bytes.baseAddress!, b.bytes.baseAddress!, a.bytes.count))
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        }
    }

    /// Reads the lines (the rules of `StoredPlaylist(reading:limits:)`, and its line breaks:
    /// `forEachLine`); returns whether there are more than `limits.maximumEntries` entries
    /// (reading stops at the first one too many).
    private mutating func read(_ file: UnsafeBufferPointer<UInt8>, limits: PlaylistLimits) -> Bool {
        let count = file.count
        guard let base = file.baseAddress, count > 0 else { return false }
        // Each distinct entry's bytes, and its index in `distinct` (-1: not valid UTF-8, broken).
        var known: [LineKey: Int] = [:]
        // About one line per 40 bytes (a path of the music folder), within reason.
        let estimate = min(count / 40, 1 << 16)
        known.reserveCapacity(estimate)
        entries.reserveCapacity(estimate)
        distinctOfEntry.reserveCapacity(estimate)
        var start = 0
        if count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { start = 3 }
        var number = 0
        while start < count {
            // The line's end, and what its bytes hold: a NUL, a byte above ASCII.
            var end = start
            var hasNUL = false
            var all: UInt8 = 0
            while end < count {
                let byte = base[end]
                if byte <= 0x0D {
                    if byte == 0x0A || byte == 0x0D { break }
                    if byte == 0 { hasNUL = true }
                }
                all |= byte
                end += 1
            }
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
            let key = LineKey(bytes: line)
            var index = known[key]
            if index == nil {
                let text = all < 0x80 ? String(decoding: line, as: UTF8.self) : String(validating: line, as: UTF8.self)
                if let text {
                    if all >= 0x80 { allASCII = false }
                    index = distinct.count
                    distinct.append(text)
                } else {
                    index = -1
                }
                known[key] = index
            }
            guard let index, index >= 0 else {
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
