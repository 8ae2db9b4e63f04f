// CDynamicLibrary's reel_loaded_pages_release: the code pages of what is loaded go back to the
// kernel, and what the process wrote stays.

import CDynamicLibrary
import Foundation
import Testing

/// Written before the release and read after: a writable page is never handed back.
nonisolated(unsafe) private var written = [Int](repeating: 0, count: 4096)

@Suite(.serialized) struct LoadedPagesTests {
    /// This process's own executable: resident pages of its read-only mappings (text and
    /// read-only data) that are the file's (smaps's `Rss` less its `Anonymous`), in kB.
    static func residentCodeKilobytes() throws -> Int {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let smaps = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
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

    @Test func theCodePagesOfWhatIsLoadedGoBackAndWrittenPagesStay() throws {
        for index in written.indices { written[index] = index &* 7 }
        let before = try Self.residentCodeKilobytes()
        #expect(before > 1024, "only \(before) kB of the test binary's code are resident")
        reel_loaded_pages_release()
        let after = try Self.residentCodeKilobytes()
        // What this test runs from here on comes back at its first touch; the rest stays out.
        #expect(after < before / 2, "\(before) kB of the test binary's code were resident before, \(after) kB after")
        #expect(written.indices.allSatisfy { written[$0] == $0 &* 7 })
        print("the test binary's code: \(before) kB resident, \(after) kB after the release")
    }
}
