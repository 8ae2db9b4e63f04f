// A recording's marks written into its file as chapter comments (Vorbis comments).

import CTagLib
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// Writes marks as chapters into FLAC, Ogg Vorbis and Ogg Opus files: Vorbis comments
/// `CHAPTER001=HH:MM:SS.sss` and `CHAPTER001NAME=label` (the chapter format of
/// https://wiki.xiph.org/Chapter_Extension; FFmpeg, and so mpv, reads it, and VLC),
/// replacing any chapters there. WAV has no Vorbis comment and no chapters: nothing is written.
///
/// Crash-safe, two ways; a crash leaves the old chapters or the new ones, in a whole file:
/// - a FLAC file with room in the padding after its comment (the recorder's takes reserve 8 KiB
///   of metadata, `FLACWriter.metadataEnd`) gets its comment rewritten in place through a redo
///   journal at `copyPath` (`FLACCommentsInPlace`: a few KiB written and two fsyncs, whatever
///   the file's length). A journal left by a crash is finished at the daemon's start
///   (`finishInterrupted`), before the library's reconcile removes what is left at such paths;
/// - otherwise the chapters go into a copy (`copyPath`, same directory), which is synced and
///   then renamed over the file, and the directory synced (maybe leaving the copy, which the
///   caller's start-up check removes). The copy costs reading and writing the file once.
/// Threads: one call at a time (TagLib's writing).
public enum ChapterWriter {
    /// Whether files of `codec` (`flac`, `vorbis`/`ogg`, `opus`, `wav`) hold chapters.
    public static func holdsChapters(codec: String) -> Bool {
        ["flac", "vorbis", "ogg", "opus"].contains(codec)
    }

    public static func write(_ marks: [Mark], into path: String, copyPath: String) throws(ReelError) {
        // (A journal an I/O error left at `copyPath` is finished first, before `copy` could
        // overwrite it.)
        if try FLACCommentsInPlace.write(
            path: path, journalPath: copyPath, replaces: isChapterField, with: fields(of: marks))
        {
            return
        }
        try writeThroughCopy(marks, into: path, copyPath: copyPath)
    }

    /// The chapters written into a copy at `copyPath`, synced and renamed over `path`.
    static func writeThroughCopy(_ marks: [Mark], into path: String, copyPath: String) throws(ReelError) {
        try copy(path, to: copyPath)
        var error: Int32 = 0
        let times = marks.map { strdup($0.chapterTime) }
        let names = marks.map { $0.label.map { strdup($0) } ?? nil }
        defer { for pointer in times + names { free(pointer) } }
        let timeArguments: [UnsafePointer<CChar>?] = times.map { $0.map { UnsafePointer($0) } }
        let nameArguments: [UnsafePointer<CChar>?] = names.map { $0.map { UnsafePointer($0) } }
        let status = reel_tags_write_chapters(copyPath, timeArguments, nameArguments, marks.count, &error)
        guard status == REEL_TAGS_OK else {
            unlink(copyPath)
            let detail: String
            switch status {
            case REEL_TAGS_UNKNOWN_FORMAT: detail = "it is not a FLAC, Ogg Vorbis or Opus file"
            case REEL_TAGS_OPEN_FAILED: detail = String(cString: strerror(error))
            default: detail = "its headers could not be read or written"
            }
            throw ReelError(.ioError, "cannot write chapters into \(path): \(detail)")
        }
        let fd = open(copyPath, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
        guard rename(copyPath, path) == 0 else {
            let detail = String(cString: strerror(errno))
            unlink(copyPath)
            throw ReelError(.ioError, "cannot put \(path)'s chapters in place: \(detail)")
        }
        if let slash = path.lastIndex(of: "/") {
            let directory = open(slash == path.startIndex ? "/" : String(path[..<slash]), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
        }
    }

    /// Finishes the in-place write of chapters cut short by a crash whose journal is at
    /// `journalPath` (see `FLACCommentsInPlace`); true when there was one. Anything else there
    /// (a copy of the rename path) is left alone.
    @discardableResult
    public static func finishInterrupted(journalPath: String) throws(ReelError) -> Bool {
        try FLACCommentsInPlace.finishInterrupted(journalPath: journalPath)
    }

    /// The Vorbis comment fields of `marks`: `CHAPTER001=HH:MM:SS.sss`, `CHAPTER001NAME=label`
    /// when it has one, and so on, in order.
    static func fields(of marks: [Mark]) -> [String] {
        var fields: [String] = []
        for (index, mark) in marks.enumerated() {
            let number = String(index + 1)
            let key = "CHAPTER" + String(repeating: "0", count: max(0, 3 - number.count)) + number
            fields.append("\(key)=\(mark.chapterTime)")
            if let label = mark.label, !label.isEmpty { fields.append("\(key)NAME=\(label)") }
        }
        return fields
    }

    /// A chapter field ("CHAPTERnnn…=…", any case), which a new set of chapters replaces (as
    /// `reel_tags_write_chapters` does).
    static func isChapterField(_ field: String) -> Bool {
        let key = Array(field.prefix { $0 != "=" }.uppercased().utf8)
        guard key.count >= 10, key[0..<7].elementsEqual("CHAPTER".utf8) else { return false }
        return key[7..<10].allSatisfy { (0x30...0x39).contains($0) }
    }

    /// Copies `path` to `target` (replacing it), byte for byte.
    private static func copy(_ path: String, to target: String) throws(ReelError) {
        let source = open(path, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else {
            throw ReelError(.ioError, "cannot write chapters into \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(source) }
        let destination = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard destination >= 0 else {
            throw ReelError(errno == ENOSPC ? .diskFull : .ioError, "cannot create \(target): \(String(cString: strerror(errno)))")
        }
        defer { close(destination) }
        let size = 1 << 16
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = read(source, buffer, size)
            if count == 0 { return }
            if count < 0 {
                if errno == EINTR { continue }
                let detail = String(cString: strerror(errno))
                unlink(target)
                throw ReelError(.ioError, "cannot read \(path) to write its chapters: \(detail)")
            }
            var written = 0
            while written < count {
                let result = Glibc.write(destination, buffer + written, count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    let full = errno == ENOSPC
                    let detail = String(cString: strerror(errno))
                    unlink(target)
                    throw ReelError(full ? .diskFull : .ioError, "cannot write \(target): \(detail)")
                }
                written += result
            }
        }
    }
}
