// Handing back the pages of reeld's own program that only the start used.

#if canImport(Glibc)
import Glibc
#endif

/// reeld's program is one file of ~23 MB of code (the Swift runtime, Foundation, SwiftNIO, GRDB
/// and Reel, linked statically). Starting touches code all over it — argument parsing, the
/// config file, the library's schema checks, every listener's set-up — and the kernel maps the
/// 64 KB around each page touched, so ~16 MB of it are resident when reeld is ready, of which
/// playing, recording and answering clients then run 6–8 MB. `release()` unmaps the resident
/// pages of the program's read-only mappings (MADV_DONTNEED) once the daemon is ready: a page
/// used again comes back from the page cache at its first touch (a minor fault, the same bytes),
/// so what stays resident is what the daemon runs. Only mappings with no private copy of a page
/// (`Anonymous: 0` in smaps: never written, so never relocated) are released, so nothing the
/// process wrote is lost. (Streams and FFmpeg hand back every loaded object's code, the program's
/// too, through CDynamicLibrary's `reel_loaded_pages_release`.)
///
/// Threads: called once, on the thread that starts the daemon; other threads running code in
/// these pages meanwhile just fault them back in.
enum StartupPages {
    /// Releases the program's read-only, unwritten mappings; returns the bytes of address range
    /// released (not all of it was resident), or nil when /proc could not be read.
    @discardableResult
    static func release() -> Int? {
        guard let program = programPath(), let smaps = readWhole("/proc/self/smaps") else { return nil }
        var released = 0
        for mapping in unwrittenMappings(smaps: smaps, path: program) {
            if madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), mapping.end - mapping.start, MADV_DONTNEED) == 0 {
                released += mapping.end - mapping.start
            }
        }
        return released
    }

    /// The mappings of `path` in `smaps` (the text of /proc/self/smaps) that are private, not
    /// writable, and hold no private (anonymous) page.
    static func unwrittenMappings(smaps: String, path: String) -> [(start: Int, end: Int)] {
        var found: [(start: Int, end: Int)] = []
        var candidate: (start: Int, end: Int)?
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), fields.count >= 5, range.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                // A mapping's first line: range, permissions, offset, device, inode, path.
                candidate = nil
                let bounds = range.split(separator: "-")
                let permissions = fields[1]
                guard fields.count >= 6, fields[5...].joined(separator: " ") == path, bounds.count == 2,
                    let start = Int(bounds[0], radix: 16), let end = Int(bounds[1], radix: 16),
                    permissions.count == 4, !permissions.contains("w"), permissions.hasSuffix("p")
                else { continue }
                candidate = (start, end)
            } else if fields.first == "Anonymous:", let mapping = candidate {
                if fields.count >= 2, fields[1] == "0" { found.append(mapping) }
                candidate = nil
            }
        }
        return found
    }

    /// The program's real path (/proc/self/exe), as /proc/self/smaps names it.
    private static func programPath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func readWhole(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}
