// CDynamicLibrary's reel_loaded_pages_release: the code pages of what is loaded go back to the
// kernel, and what the process wrote stays.

import CDynamicLibrary
import Foundation
import ReelTestSupport
import Testing

/// Written before the release and read after: a writable page is never handed back.
nonisolated(unsafe) private var written = [Int](repeating: 0, count: 4096)

@Suite(.serialized) struct LoadedPagesTests {
    /// This process's own executable: resident pages of its read-only mappings (text and
    /// read-only data) that are the file's (smaps's `Rss` less its `Anonymous`), in kB.
    static func residentCodeKilobytes() throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let smaps = try Self.whole("/proc/self/smaps")
        var counted = false
        var kilobytes = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let key = fields.first else { continue }
            if !key.hasSuffix(":") {
                // range, permissions, offset, device, inode, path
                counted = fields.count >= 6 && fields[1].hasPrefix("r") && !fields[1].contains("w")
                    && String(fields[5...].joined(separator: " ")) == executable
            } else if counted, key == "Rss:" || key == "Anonymous:", fields.count > 1, let value = Int(fields[1]) {
                kilobytes += key == "Rss:" ? value : -value
            }
        }
        return kilobytes
    }

    /// A /proc file read to its end (/proc says its size is 0, and a one-read reader stops at the
    /// first page).
    static func whole(_ path: String) throws -> String {
        let file = try #require(FileHandle(forReadingAtPath: path))
        defer { try? file.close() }
        return String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// Reads a byte of every page of this process's executable's read-only mappings, so that
    /// all of its code is resident: what other tests running in this process at the same time
    /// did to it (a stream decoder's own release of the loaded pages) does not decide what is
    /// measured. Returns a sum of the bytes (so that the reads are made).
    @discardableResult
    static func touchCode() throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var sum = 0
        for line in try whole("/proc/self/maps").split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1].hasPrefix("r"), !fields[1].contains("w"),
                String(fields[5...].joined(separator: " ")) == executable
            else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt(String($0), radix: 16) }
            guard bounds.count == 2 else { continue }
            var address = bounds[0]
            while address < bounds[1] {
                if let byte = UnsafePointer<UInt8>(bitPattern: address) { sum &+= Int(byte.pointee) }
                address += 4096
            }
        }
        return sum
    }

    /// The resident pages, in kB, of the mappings of the first file in /proc/self/maps whose
    /// name starts with `name`: its first mapping (offset 0: ELF header, program headers, symbol
    /// tables) and all its mappings; nil when it is not mapped.
    static func residentKilobytes(ofLibraryNamed name: String) throws -> (first: Int, all: Int)? {
        let smaps = try Self.whole("/proc/self/smaps")
        var path: String?
        var inLibrary = false
        var firstMapping = false
        var first = 0
        var all = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let key = fields.first else { continue }
            if !key.hasSuffix(":") {
                // range, permissions, offset, device, inode, path
                let file = fields.count >= 6 ? String(fields[5...].joined(separator: " ")) : ""
                if path == nil, file.split(separator: "/").last?.hasPrefix(name) == true { path = file }
                inLibrary = path != nil && file == path
                firstMapping = inLibrary && fields[2].allSatisfy { $0 == "0" }
            } else if inLibrary, key == "Rss:", fields.count > 1, let value = Int(fields[1]) {
                all += value
                if firstMapping { first += value }
            }
        }
        return path == nil ? nil : (first, all)
    }

    /// A library Reel itself never loads, so that nothing else in this process touches its
    /// pages: libuuid is one of Debian's required packages.
    static let untouchedLibrary = (file: "libuuid.so.1", function: "uuid_generate")

    static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func aReleaseReadsNothingOfWhatItHandedBack() throws {
        // The program headers it reads lie in each object's first read-only mapping. Read after
        // that mapping's release, they faulted it back in, 64 KB of every object. (What was
        // resident before is only printed: another test's release may run in between.)
        var error = [CChar](repeating: 0, count: 256)
        let library = try #require(reel_library_open(Self.untouchedLibrary.file, &error, error.count),
                                   "\(Self.text(error))")
        var function: UnsafeMutableRawPointer?
        let found = Self.untouchedLibrary.function.withCString { name in
            withUnsafeMutablePointer(to: &function) { slot in
                let symbols = [reel_library_symbol(name: name, slot: slot)]
                return reel_library_find(library, Self.untouchedLibrary.file, symbols, 1, &error, error.count)
            }
        }
        #expect(found == 0 && function != nil, "\(Self.text(error))")
        let name = String(Self.untouchedLibrary.file.prefix { $0 != "." })
        let loaded = try #require(try Self.residentKilobytes(ofLibraryNamed: name))
        reel_loaded_pages_release()
        let released = try #require(try Self.residentKilobytes(ofLibraryNamed: name))
        #expect(released.first == 0, "\(released.first) kB of its first mapping are resident after the release (\(loaded.first) kB before)")
        // Its code still runs: what it touches comes back from the file.
        let generate = unsafeBitCast(try #require(function), to: (@convention(c) (UnsafeMutablePointer<UInt8>) -> Void).self)
        var uuid = [UInt8](repeating: 0, count: 16)
        generate(&uuid)
        #expect(uuid.contains { $0 != 0 }, "uuid_generate wrote nothing after the release")
        print("\(Self.untouchedLibrary.file): \(loaded.all) kB resident (\(loaded.first) kB of its headers' mapping) after loading, \(released.all) kB (\(released.first) kB) after the release")
    }

    @Test func theCodePagesOfWhatIsLoadedGoBackAndWrittenPagesStay() throws {
        for index in written.indices { written[index] = index &* 7 }
        try Self.touchCode()
        let before = try Self.residentCodeKilobytes()
        #expect(before > 1024, "only \(before) kB of the test binary's code are resident")
        reel_loaded_pages_release()
        let after = try Self.residentCodeKilobytes()
        // What this test runs from here on comes back at its first touch; the rest stays out.
        #expect(after < before / 2, "\(before) kB of the test binary's code were resident before, \(after) kB after")
        #expect(written.indices.allSatisfy { written[$0] == $0 &* 7 })
        print("the test binary's code: \(before) kB resident, \(after) kB after the release")
    }

    /// (Last in the suite: its release leaves little of the test binary resident, which the
    /// test before it measures.) A read-only segment longer in memory than in the file (a read-only section of zeros,
    /// `NOBITS`): the loader zero-fills the page the file's part ends in. Handed back, that page
    /// came back as the file's bytes after the segment (here made non-zero, as another segment's
    /// data can be), so the zeros read otherwise. Found in review.
    @Test func aSegmentsZeroFilledPageIsNotHandedBack() throws {
        let directory = NSTemporaryDirectory() + "reel-zeros-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = directory + "/zeros.c"
        try #"""
        __asm__(".section .robss,\"a\",@nobits\n.globl reel_zeros\nreel_zeros:\n.zero 20000\n.previous\n");
        extern const unsigned char reel_zeros[];
        const unsigned char reel_marker[9976] = {1, 2, 3};
        int reel_zero_sum(void) { int sum = 0; for (int i = 0; i < 20000; i++) sum += reel_zeros[i]; return sum; }
        """#.write(toFile: source, atomically: true, encoding: .utf8)
        let library = directory + "/libreelzeros.so"
        // gold puts a read-only NOBITS section in the read-only segment (GNU ld moves it to the
        // writable one, where nothing is handed back).
        try TestTool.run("/usr/bin/cc", ["-shared", "-fPIC", "-O1", "-fuse-ld=gold", "-o", library, source])
        // The file's bytes after the first segment's end, up to its page's end (padding the
        // loader maps but zero-fills), made non-zero.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: library)))
        func word(_ at: Int, _ size: Int) -> Int { (0..<size).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        let headers = word(0x20, 8), size = word(0x36, 2), count = word(0x38, 2)
        let loads = (0..<count).map { headers + $0 * size }.filter { word($0, 4) == 1 }
        // The read-only segment (flags without PF_W) that is longer in memory than in the file.
        let zeroFilled = try #require(loads.first { word($0 + 4, 4) & 2 == 0 && word($0 + 40, 8) > word($0 + 32, 8) },
                                      "the test library has no read-only segment with a zero-filled part")
        let (offset, fileSize) = (word(zeroFilled + 8, 8), word(zeroFilled + 32, 8))
        let pageEnd = (offset + fileSize + 4095) & ~4095
        let next = loads.map { word($0 + 8, 8) }.filter { $0 > offset }.min() ?? bytes.count
        try #require(pageEnd <= next, "another segment's bytes share that page")
        for index in (offset + fileSize)..<min(pageEnd, bytes.count) { bytes[index] = 0xA5 }
        try Data(bytes).write(to: URL(fileURLWithPath: library))

        var error = [CChar](repeating: 0, count: 256)
        let handle = try #require(reel_library_open(library, &error, error.count), "\(Self.text(error))")
        var function: UnsafeMutableRawPointer?
        let found = "reel_zero_sum".withCString { name in
            withUnsafeMutablePointer(to: &function) { slot in
                let symbols = [reel_library_symbol(name: name, slot: slot)]
                return reel_library_find(handle, library, symbols, 1, &error, error.count)
            }
        }
        #expect(found == 0, "\(Self.text(error))")
        let sum = unsafeBitCast(try #require(function), to: (@convention(c) () -> Int32).self)
        #expect(sum() == 0)
        reel_loaded_pages_release()
        #expect(sum() == 0, "the zeros read as the file's bytes after the release")
    }
}
