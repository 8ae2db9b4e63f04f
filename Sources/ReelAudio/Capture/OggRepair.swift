// Ogg: keep the complete pages of a file that was cut off.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

enum OggRepair {
    /// Cuts the file after its last complete page whose CRC is right.
    static func repair(_ path: String) throws(ReelError) -> String {
        let file = try MappedFile(path: path)
        let total = file.bytes.count
        let kept = completePagesLength(file.bytes)
        file.unmap()
        guard kept > 0 else {
            throw ReelError(.corruptFile, "\(path) holds no complete Ogg page")
        }
        if kept == total { return "all \(total) bytes are complete Ogg pages" }
        try truncateFile(path, to: kept)
        RecordingRepair.syncFile(path)
        return "cut \(total - kept) bytes of an incomplete Ogg page (kept \(kept))"
    }

    /// The length of the run of complete, CRC-checked pages at the start of `bytes`.
    static func completePagesLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while offset + 27 <= bytes.count {
            guard bytes[offset] == 0x4F, bytes[offset + 1] == 0x67, bytes[offset + 2] == 0x67,
                  bytes[offset + 3] == 0x53, bytes[offset + 4] == 0
            else { break }
            let segments = Int(bytes[offset + 26])
            let headerLength = 27 + segments
            guard offset + headerLength <= bytes.count else { break }
            var bodyLength = 0
            for index in 0..<segments { bodyLength += Int(bytes[offset + 27 + index]) }
            let pageLength = headerLength + bodyLength
            guard offset + pageLength <= bytes.count else { break }
            let stored = UInt32(bytes[offset + 22]) | UInt32(bytes[offset + 23]) << 8
                | UInt32(bytes[offset + 24]) << 16 | UInt32(bytes[offset + 25]) << 24
            guard crc(bytes, from: offset, length: pageLength) == stored else { break }
            offset += pageLength
        }
        return offset
    }

    /// Ogg's CRC-32 (polynomial 0x04C11DB7, no reflection, zero start), with the page's own
    /// checksum field (bytes 22–25) counted as zeros.
    static func crc(_ bytes: UnsafeRawBufferPointer, from start: Int, length: Int) -> UInt32 {
        var crc: UInt32 = 0
        for index in 0..<length {
            let byte: UInt8 = (index >= 22 && index < 26) ? 0 : bytes[start + index]
            crc = (crc << 8) ^ table[Int(UInt8(crc >> 24) ^ byte)]
        }
        return crc
    }

    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 {
            value = (value & 0x8000_0000) != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1
        }
        return value
    }
}
