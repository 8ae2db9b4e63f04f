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
/// holding every path's bytes; a slot keeps the high half of its path's hash with the number,
/// so a probe that meets another path compares no bytes. Threads: a value; built and read on
/// one thread.
struct MusicPathNumbers {
    /// Every path's bytes, one after the other.
    private var bytes: [UInt8] = []
    /// Where path `n` starts in `bytes`; `starts[n + 1]` is where it ends.
    private var starts: [Int] = [0]
    /// By hash: 0 (empty), or the path's hash's high 32 bits, then its number + 1.
    private var slots: [UInt64]
    private let mask: Int

    init(_ paths: [String]) {
        var size = 16
        while size < paths.count * 2 { size *= 2 }
        mask = size - 1
        slots = [UInt64](repeating: 0, count: size)
        starts.reserveCapacity(paths.count + 1)
        bytes.reserveCapacity(paths.reduce(0) { $0 + $1.utf8.count })
        for path in paths {
            bytes.append(contentsOf: path.utf8)
            starts.append(bytes.count)
        }
        bytes.withUnsafeBytes { all in
            for number in paths.indices {
                let hash = Self.hash(UnsafeRawBufferPointer(rebasing: all[starts[number]..<starts[number + 1]]))
                var slot = Int(truncatingIfNeeded: hash) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = hash & 0xFFFF_FFFF_0000_0000 | UInt64(number + 1)
            }
        }
    }

    /// Calls `body` with the number of each path whose bytes are `key`'s (none, once, or once
    /// per time the path was given).
    func forEachNumber(of key: UnsafeRawBufferPointer, _ body: (Int) throws -> Void) rethrows {
        let hash = Self.hash(key)
        let tag = hash & 0xFFFF_FFFF_0000_0000
        try bytes.withUnsafeBytes { all in
            var slot = Int(truncatingIfNeeded: hash) & mask
            while true {
                let entry = slots[slot]
                if entry == 0 { return }
                if entry & 0xFFFF_FFFF_0000_0000 == tag {
                    let number = Int(entry & 0xFFFF_FFFF) - 1
                    let start = starts[number]
                    if starts[number + 1] - start == key.count,
                        key.isEmpty || memcmp(all.baseAddress! + start, key.baseAddress!, key.count) == 0
                    {
                        try body(number)
                    }
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// A hash of `key`'s bytes, eight at a time (a multiply and a rotation per word).
    static func hash(_ key: UnsafeRawBufferPointer) -> UInt64 {
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
        return hash
    }
}

extension UInt64 {
    fileprivate func rotateLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
