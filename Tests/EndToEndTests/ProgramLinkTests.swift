// How reeld is linked (Package.swift, Sources/reeld/read-only-data.ld): its read-only data is
// laid out read-only, so that the pages of it that starting read can be handed back.

import Foundation
import Testing

@Suite struct ProgramLinkTests {
    /// One section of an ELF64 little-endian file: its name, flags and address.
    struct Section {
        var name: String
        var flags: UInt64
        var address: UInt64
        var size: UInt64
    }

    /// One PT_LOAD program header: its address range and flags.
    struct Segment {
        var address: UInt64
        var size: UInt64
        var flags: UInt32
    }

    static let shfWrite: UInt64 = 0x1
    static let pfWrite: UInt32 = 0x2

    static func integer<T: FixedWidthInteger>(_ bytes: Data, _ offset: Int, as: T.Type) -> T {
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes[bytes.startIndex + offset..<bytes.startIndex + offset + MemoryLayout<T>.size]) }
        return T(littleEndian: value)
    }

    /// The sections and loaded segments of the ELF64 file at `path`.
    static func layout(of path: String) throws -> (sections: [Section], segments: [Segment]) {
        let file = try #require(FileHandle(forReadingAtPath: path), "cannot open \(path)")
        defer { try? file.close() }
        func read(_ offset: UInt64, _ count: Int) throws -> Data {
            try file.seek(toOffset: offset)
            let bytes = try file.read(upToCount: count) ?? Data()
            guard bytes.count == count else { throw CocoaError(.fileReadCorruptFile) }
            return bytes
        }
        let header = try read(0, 64)
        #expect(header.prefix(4) == Data([0x7f, 0x45, 0x4c, 0x46]) && header[4] == 2 && header[5] == 1,
                "\(path) is not a 64-bit little-endian ELF file")
        let programOffset = integer(header, 0x20, as: UInt64.self)
        let sectionOffset = integer(header, 0x28, as: UInt64.self)
        let programSize = Int(integer(header, 0x36, as: UInt16.self))
        let programCount = Int(integer(header, 0x38, as: UInt16.self))
        let sectionSize = Int(integer(header, 0x3a, as: UInt16.self))
        let sectionCount = Int(integer(header, 0x3c, as: UInt16.self))
        let namesIndex = Int(integer(header, 0x3e, as: UInt16.self))

        let programs = try read(programOffset, programSize * programCount)
        var segments: [Segment] = []
        for index in 0..<programCount {
            let base = index * programSize
            guard integer(programs, base, as: UInt32.self) == 1 else { continue }  // PT_LOAD
            segments.append(Segment(address: integer(programs, base + 0x10, as: UInt64.self),
                                    size: integer(programs, base + 0x28, as: UInt64.self),
                                    flags: integer(programs, base + 0x04, as: UInt32.self)))
        }

        let headers = try read(sectionOffset, sectionSize * sectionCount)
        let namesBase = namesIndex * sectionSize
        let names = try read(integer(headers, namesBase + 0x18, as: UInt64.self),
                             Int(integer(headers, namesBase + 0x20, as: UInt64.self)))
        var sections: [Section] = []
        for index in 0..<sectionCount {
            let base = index * sectionSize
            let nameStart = Int(integer(headers, base, as: UInt32.self))
            let nameBytes = names[names.startIndex + nameStart..<names.endIndex].prefix { $0 != 0 }
            sections.append(Section(name: String(decoding: nameBytes, as: UTF8.self),
                                    flags: integer(headers, base + 0x08, as: UInt64.self),
                                    address: integer(headers, base + 0x10, as: UInt64.self),
                                    size: integer(headers, base + 0x20, as: UInt64.self)))
        }
        return (sections, segments)
    }

    @Test func reeldsReadOnlyDataIsLoadedReadOnly() throws {
        // The Swift toolchain's objects each have a small `.rodata` flagged writable; merged, they
        // made all of it (36 MB in a static build, ICU's data) writable, never handed back.
        let path = DaemonProcess.executable("reeld")
        let (sections, segments) = try Self.layout(of: path)
        let rodata = try #require(sections.first { $0.name == ".rodata" }, "\(path) has no .rodata")
        #expect(rodata.flags & Self.shfWrite == 0, ".rodata of \(path) is writable (flags \(rodata.flags))")
        let segment = try #require(segments.first { $0.address <= rodata.address && rodata.address < $0.address + $0.size },
                                   "no loaded segment holds .rodata")
        #expect(segment.flags & Self.pfWrite == 0, "the segment holding .rodata is writable (flags \(segment.flags))")
        // What must stay writable is small: the objects' writable-flagged records, on their own.
        let writable = sections.filter { $0.name.hasPrefix(".rodata") && $0.flags & Self.shfWrite != 0 }
        #expect(writable.reduce(0) { $0 + $1.size } < rodata.size / 4,
                "writable read-only data: \(writable.map { "\($0.name) \($0.size)" }), .rodata \(rodata.size)")
    }
}
