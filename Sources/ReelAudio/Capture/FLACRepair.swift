// FLAC: keep the complete frames of a file that was cut off and record their count in STREAMINFO.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

enum FLACRepair {
    /// Cuts the file after its last complete frame (header CRC-8 and frame CRC-16 right) and
    /// writes the number of samples kept into STREAMINFO, clearing its MD5 when that changed.
    static func repair(_ path: String) throws(ReelError) -> String {
        let file = try MappedFile(path: path)
        let total = file.bytes.count
        let scan: Scan
        do throws(ReelError) {
            scan = try Self.scan(file.bytes, path: path)
        } catch {
            file.unmap()
            throw error
        }
        file.unmap()
        if scan.keptBytes == total && scan.declaredSamples == scan.samples {
            return "the FLAC file is complete (\(scan.samples) samples)"
        }
        if scan.keptBytes < total {
            try truncateFile(path, to: scan.keptBytes)
        }
        try patchStreamInfo(path, samples: scan.samples, clearMD5: true)
        RecordingRepair.syncFile(path)
        return "kept \(scan.frames) complete FLAC frames (\(scan.samples) samples), cut \(total - scan.keptBytes) bytes, "
            + "set STREAMINFO's sample count (was \(scan.declaredSamples))"
    }

    struct Scan: Equatable {
        var keptBytes: Int
        var frames: Int
        var samples: Int64
        var declaredSamples: Int64
    }

    /// Offset of the STREAMINFO block's data (after `fLaC` and the block header).
    static let streamInfoOffset = 8

    static func scan(_ bytes: UnsafeRawBufferPointer, path: String) throws(ReelError) -> Scan {
        guard bytes.count >= 42, bytes[0] == 0x66, bytes[1] == 0x4C, bytes[2] == 0x61, bytes[3] == 0x43,
              bytes[4] & 0x7F == 0
        else {
            throw ReelError(.corruptFile, "\(path) does not start with a FLAC STREAMINFO block")
        }
        // Metadata blocks: 1 byte (last flag, type), 3 bytes length, then the data.
        var offset = 4
        while true {
            guard offset + 4 <= bytes.count else {
                throw ReelError(.corruptFile, "\(path) ends inside its FLAC metadata")
            }
            let last = bytes[offset] & 0x80 != 0
            let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            offset += 4 + length
            if last { break }
        }
        guard offset <= bytes.count else {
            throw ReelError(.corruptFile, "\(path) ends inside its FLAC metadata")
        }
        let declared = readSampleCount(bytes)
        var scan = Scan(keptBytes: offset, frames: 0, samples: 0, declaredSamples: declared)
        var position = offset
        while let header = frameHeader(bytes, at: position) {
            guard let end = frameEnd(bytes, start: position, headerLength: header.length) else { break }
            scan.frames += 1
            scan.samples += Int64(header.blockSize)
            scan.keptBytes = end
            position = end
        }
        return scan
    }

    /// The 36-bit total-samples field of STREAMINFO.
    static func readSampleCount(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        let at = streamInfoOffset + 13
        var value = Int64(bytes[at] & 0x0F)
        for index in 1...4 { value = value << 8 | Int64(bytes[at + index]) }
        return value
    }

    static func patchStreamInfo(_ path: String, samples: Int64, clearMD5: Bool) throws(ReelError) {
        let fd = open(path, O_RDWR)
        guard fd >= 0 else {
            throw ReelError(.ioError, "cannot repair \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let at = streamInfoOffset + 13
        var field = [UInt8](repeating: 0, count: 5)
        guard pread(fd, &field, 1, off_t(at)) == 1 else {
            throw ReelError(.ioError, "cannot read \(path)'s STREAMINFO")
        }
        field[0] = (field[0] & 0xF0) | UInt8((samples >> 32) & 0x0F)
        for index in 1...4 { field[index] = UInt8((samples >> (8 * (4 - index))) & 0xFF) }
        var ok = pwrite(fd, field, 5, off_t(at)) == 5
        if clearMD5 {
            let zeros = [UInt8](repeating: 0, count: 16)
            ok = ok && pwrite(fd, zeros, 16, off_t(streamInfoOffset + 18)) == 16
        }
        guard ok else {
            throw ReelError(.ioError, "cannot write \(path)'s STREAMINFO: \(String(cString: strerror(errno)))")
        }
    }

    struct FrameHeader {
        var length: Int
        var blockSize: Int
    }

    /// A frame header at `start` with a right CRC-8, or nil.
    static func frameHeader(_ bytes: UnsafeRawBufferPointer, at start: Int) -> FrameHeader? {
        let count = bytes.count
        guard start + 6 <= count, bytes[start] == 0xFF, bytes[start + 1] & 0xFE == 0xF8 else { return nil }
        let blockCode = Int(bytes[start + 2] >> 4)
        let rateCode = Int(bytes[start + 2] & 0x0F)
        let channelCode = Int(bytes[start + 3] >> 4)
        guard blockCode != 0, rateCode != 15, channelCode <= 10, bytes[start + 3] & 0x01 == 0,
              (bytes[start + 3] >> 1) & 0x07 != 3
        else { return nil }
        var position = start + 4
        // The frame or sample number, UTF-8 coded.
        let lead = bytes[position]
        let extra: Int
        switch lead {
        case 0x00..<0x80: extra = 0
        case 0xC0..<0xE0: extra = 1
        case 0xE0..<0xF0: extra = 2
        case 0xF0..<0xF8: extra = 3
        case 0xF8..<0xFC: extra = 4
        case 0xFC..<0xFE: extra = 5
        case 0xFE: extra = 6
        default: return nil
        }
        guard position + 1 + extra <= count else { return nil }
        if extra > 0 {
            for index in 1...extra where bytes[position + index] & 0xC0 != 0x80 { return nil }
        }
        position += 1 + extra
        var blockSize: Int
        switch blockCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (blockCode - 2)
        case 6:
            guard position + 1 <= count else { return nil }
            blockSize = Int(bytes[position]) + 1
            position += 1
        case 7:
            guard position + 2 <= count else { return nil }
            blockSize = (Int(bytes[position]) << 8 | Int(bytes[position + 1])) + 1
            position += 2
        default: blockSize = 256 << (blockCode - 8)
        }
        switch rateCode {
        case 12: position += 1
        case 13, 14: position += 2
        default: break
        }
        guard position + 1 <= count else { return nil }
        var crc: UInt8 = 0
        for index in start..<position { crc = crc8Table[Int(crc ^ bytes[index])] }
        guard crc == bytes[position] else { return nil }
        return FrameHeader(length: position + 1 - start, blockSize: blockSize)
    }

    /// Where the frame starting at `start` ends: the next frame header at which the CRC-16 of
    /// the bytes so far (the frame with its own CRC at the end) is zero, or the end of the file
    /// if it is zero there. Nil for a frame that is cut off or damaged.
    static func frameEnd(_ bytes: UnsafeRawBufferPointer, start: Int, headerLength: Int) -> Int? {
        var crc: UInt16 = 0
        let count = bytes.count
        var index = start
        let firstCandidate = start + headerLength + 2
        while index < count {
            if index >= firstCandidate && crc == 0 && bytes[index] == 0xFF && frameHeader(bytes, at: index) != nil {
                return index
            }
            crc = (crc << 8) ^ crc16Table[Int(UInt8(crc >> 8) ^ bytes[index])]
            index += 1
        }
        return (crc == 0 && count >= firstCandidate) ? count : nil
    }

    static let crc8Table: [UInt8] = (0..<256).map { index in
        var value = UInt8(index)
        for _ in 0..<8 { value = value & 0x80 != 0 ? (value << 1) ^ 0x07 : value << 1 }
        return value
    }

    static let crc16Table: [UInt16] = (0..<256).map { index in
        var value = UInt16(index) << 8
        for _ in 0..<8 { value = value & 0x8000 != 0 ? (value << 1) ^ 0x8005 : value << 1 }
        return value
    }
}
