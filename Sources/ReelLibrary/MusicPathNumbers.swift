// The numbers of many distinct paths found by their bytes: what a read of a whole music folder's
// rows matches each row's path against (`MusicIndex.forEachNumberedRow`).
import Foundation

/// Each of a list of paths by its number (its index in the list), found from a path's UTF-8
/// bytes as SQLite hands them over (`sqlite3_column_text`), with no `String` made per row.
/// Paths are equal when their bytes are: the rule of SQLite's `path = ?` (BINARY collation), so
/// a path differing from an indexed one only by case or by Unicode normalization is not found,
/// as with a query. A path given twice is found under both numbers.
///
/// An open-addressing table (linear probing, at most half full) of numbers into one buffer
/// holding every path's bytes. Threads: a value; built and read on one thread.
struct MusicPathNumbers {
    /// Every path's bytes, one after the other.
    private var bytes: [UInt8] = []
    /// Where path `n` starts in `bytes`; `starts[n + 1]` is where it ends.
    private var starts: [Int] = [0]
    /// Path numbers by hash (-1: empty).
    private var slots: [Int32]
    private let mask: Int

    init(_ paths: [String]) {
        var size = 16
        while size < paths.count * 2 { size *= 2 }
        mask = size - 1
        slots = [Int32](repeating: -1, count: size)
        starts.reserveCapacity(paths.count + 1)
        bytes.reserveCapacity(paths.reduce(0) { $0 + $1.utf8.count })
        for path in paths {
            bytes.append(contentsOf: path.utf8)
            starts.append(bytes.count)
        }
        bytes.withUnsafeBytes { all in
            for number in paths.indices {
                let key = UnsafeRawBufferPointer(rebasing: all[starts[number]..<starts[number + 1]])
                var slot = Self.hash(key) & mask
                while slots[slot] >= 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(number)
            }
        }
    }

    /// Calls `body` with the number of each path whose bytes are `key`'s (none, once, or once
    /// per time the path was given).
    func forEachNumber(of key: UnsafeRawBufferPointer, _ body: (Int) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { all in
            var slot = Self.hash(key) & mask
            while true {
                let number = Int(slots[slot])
                if number < 0 { return }
                let start = starts[number]
                let end = starts[number + 1]
                if end - start == key.count,
                    key.isEmpty || memcmp(all.baseAddress! + start, key.baseAddress!, key.count) == 0
                {
                    try body(number)
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// A hash of `key`'s bytes, eight at a time (a multiply and a rotation per word).
    static func hash(_ key: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(key.count)
        var offset = 0
        while offset + 8 <= key.count {
            let word = key.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            hash = ((hash ^ word) &* 0xFF51_AFD7_ED55_8CCD).rotateLeft(29)
            offset += 8
        }
        if offset < key.count {
            var word: UInt64 = 0
            for index in offset..<key.count { word = word << 8 | UInt64(key[index]) }
            hash = ((hash ^ word) &* 0xFF51_AFD7_ED55_8CCD).rotateLeft(29)
        }
        hash ^= hash >> 32
        hash &*= 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 29
        return Int(truncatingIfNeeded: hash)
    }
}

extension UInt64 {
    fileprivate func rotateLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
