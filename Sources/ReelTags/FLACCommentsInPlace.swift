// A FLAC file's Vorbis comment rewritten in its own padding, through a redo journal.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// Rewrites the VORBIS_COMMENT of a FLAC file in place, in the PADDING that follows it (the
/// recorder's takes have 8 KiB of metadata: `FLACWriter.metadataEnd`), so that writing a
/// take's chapters costs a few KiB instead of a copy of the whole file.
///
/// The region rewritten runs from the VORBIS_COMMENT block's header to the end of the metadata
/// (the comment and the PADDING blocks after it, nothing else); the new comment and a PADDING
/// block filling the rest replace it, same length, so no frame moves. A file laid out otherwise,
/// or whose new comment does not fit, is left untouched (`write` returns false) and the caller
/// takes the copy-and-rename path.
///
/// Crash safety, a redo journal (`journalPath`, beside the file, on the same disk):
/// 1. the journal is written: a magic, the file's name and size, the region's offset and new
///    bytes, and a CRC-32 of all that; then synced, and its directory synced;
/// 2. the new region is written over the old one with one `pwrite`, and the file synced;
/// 3. the journal is removed.
/// A kill or a power cut
/// - during 1 leaves a journal that is short or fails its CRC (the file is untouched, still
///   the old comments): `finishInterrupted` removes it;
/// - during 2 (any part of the region written, in any order, torn anywhere) or between 2 and
///   3 leaves a whole journal: `finishInterrupted` writes its region again (idempotent), syncs,
///   and removes it: the new comments.
/// No state reads a half-written header: the daemon calls `finishInterrupted` for each journal
/// at start, before the library is reconciled, and `write` calls it first for its own journal
/// (one left by an I/O error). Between steps 1 and 3 nothing else writes the file (the
/// recorder's queue does both). Threads: one call per file at a time.
public enum FLACCommentsInPlace {
    /// What a kill leaves, for the tests: the write stops there, as the process would.
    enum Interruption: Equatable {
        /// The journal written only up to `bytes` (nothing synced after).
        case journal(bytes: Int)
        /// The journal whole and synced, the file's region not yet touched.
        case beforeRegion
        /// The region written only up to `bytes`.
        case region(bytes: Int)
        /// The region written and synced, the journal still there.
        case beforeRemovingJournal
    }

    static let magic: [UInt8] = Array("REELFLACVC1\n".utf8)

    /// The most of a file's start read for its metadata, so the largest region (and journal)
    /// this writes: a layout ending further in goes through the copy path.
    static let maximumRegionBytes = 1 << 20

    /// Replaces the comment's fields with `fields` ("KEY=value", kept in order) for which
    /// `replaces` is true, keeping the others and the vendor string. False when the file's
    /// layout or size does not allow it in place (nothing was written).
    public static func write(
        path: String, journalPath: String, replaces: (String) -> Bool, with fields: [String]
    ) throws(ReelError) -> Bool {
        try write(path: path, journalPath: journalPath, replaces: replaces, with: fields, interruption: nil)
    }

    static func write(
        path: String, journalPath: String, replaces: (String) -> Bool, with fields: [String], interruption: Interruption?
    ) throws(ReelError) -> Bool {
        try finishInterrupted(journalPath: journalPath)
        // The journal names the file by its name in the journal's directory.
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard directory(of: path) == directory(of: journalPath), !name.isEmpty else { return false }
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw ReelError(.ioError, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ReelError(.ioError, "cannot read \(path)'s size") }
        let head = readHead(fd, size: Int(info.st_size))
        guard let layout = Layout(head) else { return false }
        var kept = layout.fields.filter { !replaces($0) }
        kept.append(contentsOf: fields)
        guard let region = layout.region(vendor: layout.vendor, fields: kept) else { return false }

        // 1. The journal.
        let journal = Journal(file: name, size: Int64(info.st_size), offset: Int64(layout.regionStart), bytes: region).encoded
        let written = interruption.flatMap { if case .journal(let bytes) = $0 { return bytes } else { return nil } }
        try writeFile(journalPath, Array(journal.prefix(written ?? journal.count)))
        if written != nil { throw ReelError(.ioError, "interrupted") }
        syncDirectory(of: journalPath)
        if interruption == .beforeRegion { throw ReelError(.ioError, "interrupted") }

        // 2. The region, then 3. the journal goes.
        let part = interruption.flatMap { if case .region(let bytes) = $0 { return bytes } else { return nil } }
        try writeRegion(fd, Array(region.prefix(part ?? region.count)), at: layout.regionStart, path: path)
        if part != nil || interruption == .beforeRemovingJournal { throw ReelError(.ioError, "interrupted") }
        unlink(journalPath)
        return true
    }

    /// Finishes a write cut short (see the type's comment): a whole journal's region is
    /// written into its file (named in it, in the journal's directory, when it still has the
    /// size it had), synced; then the journal is removed, as is a journal cut short (the file
    /// is as it was). Nothing at `journalPath`, or something that is not a journal (a copy of
    /// the rename path): nothing done, false. True when a journal was found and handled. A
    /// whole journal whose region cannot be written stays (the error is thrown): it holds the
    /// only whole copy of the header, and the next start tries again.
    @discardableResult
    public static func finishInterrupted(journalPath: String) throws(ReelError) -> Bool {
        let fd = open(journalPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        // A journal is its header and a region of at most `maximumRegionBytes`: a longer file is
        // a copy of the rename path (up to a whole take), and is not read whole to find that out.
        let limit = maximumRegionBytes + 4096
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 14)
        while bytes.count <= limit {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if !bytes.starts(with: magic.prefix(min(bytes.count, magic.count))) { break }
        }
        close(fd)
        guard bytes.count <= limit, bytes.starts(with: magic.prefix(min(bytes.count, magic.count))) else { return false }
        guard let journal = Journal(decoding: bytes) else {
            unlink(journalPath)  // cut short before step 2: the file is as it was
            return true
        }
        let path = "\(directory(of: journalPath))/\(journal.file)"
        let target = open(path, O_RDWR | O_CLOEXEC)
        guard target >= 0 else {
            let error = errno
            guard error == ENOENT else {
                throw ReelError(.ioError, "cannot open \(path) to finish its chapters: \(String(cString: strerror(error)))")
            }
            unlink(journalPath)  // deleted since
            return true
        }
        defer { close(target) }
        var info = stat()
        guard fstat(target, &info) == 0 else { throw ReelError(.ioError, "cannot read \(path)'s size") }
        if Int64(info.st_size) == journal.size {
            try writeRegion(target, journal.bytes, at: Int(journal.offset), path: path)
        }
        // Else another file by now (a replaced recording): the journal is not for it.
        unlink(journalPath)
        return true
    }

    /// Every journal left in `directory` (named `prefix`…`suffix`) finished: the names of those
    /// finished, and of those whose redo failed (kept, with the error; the caller must leave them).
    /// Other files with those names (copies of the rename path) are left for the caller.
    public static func finishInterrupted(
        inDirectory directory: String, prefix: String, suffix: String
    ) -> (finished: [String], failed: [(name: String, error: ReelError)]) {
        guard let listing = opendir(directory) else { return ([], []) }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name.hasPrefix(prefix) && name.hasSuffix(suffix) { names.append(name) }
        }
        closedir(listing)
        var finished: [String] = []
        var failed: [(name: String, error: ReelError)] = []
        for name in names {
            do {
                if try finishInterrupted(journalPath: "\(directory)/\(name)") { finished.append(name) }
            } catch {
                failed.append((name, error))
            }
        }
        return (finished, failed)
    }

    // MARK: The metadata

    /// The metadata blocks as far as this rewrite needs them.
    struct Layout {
        /// Where the VORBIS_COMMENT block's header starts, and where the metadata ends.
        var regionStart: Int
        var regionEnd: Int
        var vendor: [UInt8]
        /// "KEY=value", as stored.
        var fields: [String]

        /// Nil unless the blocks from the VORBIS_COMMENT to the end are that comment and PADDING.
        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 8, bytes[0...3] == [0x66, 0x4C, 0x61, 0x43] else { return nil }
            var offset = 4
            var comment: (start: Int, length: Int)?
            while true {
                guard offset + 4 <= bytes.count else { return nil }
                let last = bytes[offset] & 0x80 != 0
                let type = bytes[offset] & 0x7F
                let length = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
                if type == 4 {
                    guard comment == nil else { return nil }
                    comment = (offset, length)
                } else if comment != nil && type != 1 {
                    return nil
                }
                offset += 4 + length
                if last { break }
            }
            guard let comment, offset <= bytes.count else { return nil }
            regionStart = comment.start
            regionEnd = offset
            var reader = Reader(bytes: bytes, position: comment.start + 4, end: comment.start + 4 + comment.length)
            guard let vendorLength = reader.uint32(), let vendor = reader.bytes(Int(vendorLength)), let count = reader.uint32() else {
                return nil
            }
            self.vendor = vendor
            fields = []
            for _ in 0..<count {
                guard let length = reader.uint32(), let field = reader.bytes(Int(length)) else { return nil }
                fields.append(String(decoding: field, as: UTF8.self))
            }
        }

        /// The region's new bytes: the comment, then PADDING to the region's end; nil when it
        /// does not fit.
        func region(vendor: [UInt8], fields: [String]) -> [UInt8]? {
            var data: [UInt8] = []
            func append(_ value: Int) {
                for shift in stride(from: 0, to: 32, by: 8) { data.append(UInt8((value >> shift) & 0xFF)) }
            }
            append(vendor.count)
            data += vendor
            append(fields.count)
            for field in fields {
                let bytes = Array(field.utf8)
                append(bytes.count)
                data += bytes
            }
            let room = regionEnd - regionStart - 4 - data.count
            guard room == 0 || room >= 4, data.count < 1 << 24 else { return nil }
            var region = Self.header(type: 4, last: room == 0, length: data.count) + data
            if room >= 4 {
                region += Self.header(type: 1, last: true, length: room - 4)
                region += [UInt8](repeating: 0, count: room - 4)
            }
            return region
        }

        static func header(type: UInt8, last: Bool, length: Int) -> [UInt8] {
            [type | (last ? 0x80 : 0), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        }
    }

    struct Reader {
        var bytes: [UInt8]
        var position: Int
        var end: Int

        mutating func uint32() -> UInt32? {
            guard let four = self.bytes(4) else { return nil }
            return four.reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func bytes(_ count: Int) -> [UInt8]? {
            guard count >= 0, position + count <= min(end, bytes.count) else { return nil }
            defer { position += count }
            return Array(bytes[position..<position + count])
        }
    }

    /// The first bytes of the file, enough for its metadata (a recorder's take has 8 KiB; a
    /// file with more than 1 MiB is not rewritten in place).
    static func readHead(_ fd: Int32, size: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: min(size, maximumRegionBytes))
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            done += count
        }
        return Array(bytes.prefix(done))
    }

    // MARK: The journal

    struct Journal: Equatable {
        var file: String
        var size: Int64
        var offset: Int64
        var bytes: [UInt8]

        var encoded: [UInt8] {
            var out = FLACCommentsInPlace.magic
            func append(_ value: Int64, _ width: Int) {
                for shift in stride(from: 0, to: width * 8, by: 8) { out.append(UInt8((value >> Int64(shift)) & 0xFF)) }
            }
            let name = Array(file.utf8)
            append(Int64(name.count), 2)
            out += name
            append(size, 8)
            append(offset, 8)
            append(Int64(bytes.count), 4)
            out += bytes
            append(Int64(CRC32.of(out)), 4)
            return out
        }

        /// Nil for anything but a whole journal with its CRC right.
        init?(decoding data: [UInt8]) {
            guard data.count >= FLACCommentsInPlace.magic.count + 26, data.starts(with: FLACCommentsInPlace.magic) else { return nil }
            let body = Array(data.dropLast(4))
            let stored = data.suffix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard CRC32.of(body) == stored else { return nil }
            var position = FLACCommentsInPlace.magic.count
            func read(_ width: Int) -> Int64? {
                guard position + width <= body.count else { return nil }
                defer { position += width }
                return body[position..<position + width].reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
            }
            guard let nameLength = read(2), position + Int(nameLength) <= body.count else { return nil }
            file = String(decoding: body[position..<position + Int(nameLength)], as: UTF8.self)
            position += Int(nameLength)
            guard let size = read(8), let offset = read(8), let length = read(4), position + Int(length) == body.count,
                  !file.isEmpty, !file.contains("/")
            else { return nil }
            self.size = size
            self.offset = offset
            bytes = Array(body[position...])
        }

        init(file: String, size: Int64, offset: Int64, bytes: [UInt8]) {
            self.file = file
            self.size = size
            self.offset = offset
            self.bytes = bytes
        }
    }

    // MARK: Files

    static func writeFile(_ path: String, _ bytes: [UInt8]) throws(ReelError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw ReelError(errno == ENOSPC ? .diskFull : .ioError, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let full = errno == ENOSPC
                let detail = String(cString: strerror(errno))
                unlink(path)
                throw ReelError(full ? .diskFull : .ioError, "cannot write \(path): \(detail)")
            }
            done += count
        }
        guard fsync(fd) == 0 else {
            let detail = String(cString: strerror(errno))
            unlink(path)
            throw ReelError(.ioError, "cannot sync \(path): \(detail)")
        }
    }

    static func writeRegion(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(ReelError) {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + done)) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw ReelError(.ioError, "cannot write \(path)'s comments: \(String(cString: strerror(errno)))") }
            done += count
        }
        guard fsync(fd) == 0 else { throw ReelError(.ioError, "cannot sync \(path): \(String(cString: strerror(errno)))") }
    }

    static func directory(of path: String) -> String {
        path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
    }

    static func syncDirectory(of path: String) {
        let fd = open(directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }
}

/// CRC-32 (IEEE 802.3, as zlib's), for the journal.
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    static func of(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
