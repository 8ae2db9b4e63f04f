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
/// Crash-safe: the chapters go into a copy (`copyPath`, same directory), which is synced and
/// then renamed over the file, and the directory synced; a crash leaves either the old file or
/// the new one, whole (and maybe the copy, which the caller's start-up check removes). The copy
/// costs reading and writing the file once. Threads: one call at a time (TagLib's writing).
public enum ChapterWriter {
    /// Whether files of `codec` (`flac`, `vorbis`/`ogg`, `opus`, `wav`) hold chapters.
    public static func holdsChapters(codec: String) -> Bool {
        ["flac", "vorbis", "ogg", "opus"].contains(codec)
    }

    public static func write(_ marks: [Mark], into path: String, copyPath: String) throws(ReelError) {
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
