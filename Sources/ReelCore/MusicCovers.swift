// Album art of the music folders: the picture embedded in a file, or a cover image beside it.

import ReelModel
import ReelTags

#if canImport(Glibc)
import Glibc
#endif

/// A picture to show for a track or an album, with an entity tag for HTTP caches (computed
/// where the picture is read, never on an event loop).
public struct MusicCover: Sendable, Equatable {
    public let bytes: [UInt8]
    public let mimeType: String
    /// `"<FNV-1a of the bytes>-<size>"`, in hex: a new picture gets a new tag.
    public let etag: String

    public init(bytes: [UInt8], mimeType: String) {
        self.bytes = bytes
        self.mimeType = mimeType
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        etag = "\"\(String(hash, radix: 16))-\(String(bytes.count, radix: 16))\""
    }
}

/// Where a music file's art is: embedded in it (read by TagLib), or an image file in its
/// folder under one of the names MPD's `albumart` looks for. Blocking file reads on the caller's
/// thread (never an event loop).
public enum MusicCovers {
    /// The names looked for beside a file, in order: MPD 0.23's `albumart` (case as written).
    public static let folderImageNames = ["cover.png", "cover.jpg", "cover.webp"]
    /// A folder image larger than this is not read whole (art is a few hundred KiB; this is a
    /// daemon on a small machine).
    public static let largestFolderImage = 16 << 20

    /// The picture embedded in the file at `path`, or nil; nil too when the file, with every
    /// link followed, is not inside one of `musicFolders`. TagLib reads the descriptor that was
    /// checked (through `/proc/self/fd`), not the path again.
    public static func embedded(in path: String, musicFolders: [String]) throws(ReelError) -> MusicCover? {
        guard let descriptor = openInside(path, musicFolders.compactMap(MediaRoots.resolve)) else { return nil }
        defer { close(descriptor) }
        return try TagReader.picture(path: "/proc/self/fd/\(descriptor)").map {
            MusicCover(bytes: $0.bytes, mimeType: $0.mimeType)
        }
    }

    /// The first folder image beside `path` (`cover.png`, `cover.jpg`, …), read whole, or nil
    /// (none, or larger than `largestFolderImage`).
    public static func folderImage(beside path: String, musicFolders: [String]) -> MusicCover? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        guard
            let file = readFile(
                in: String(path[..<slash]), names: folderImageNames, insideOf: musicFolders, offset: 0,
                limit: largestFolderImage, largest: largestFolderImage)
        else { return nil }
        return MusicCover(bytes: file.bytes, mimeType: mimeType(ofName: file.name))
    }

    /// A piece of the first of `names` in `directory` that is a regular file and, with every
    /// symbolic link followed, still lies inside one of `musicFolders` (a link out of the music
    /// folders is never read): its name, its size, and up to `limit` bytes from `offset` (none
    /// when `offset` is at or past the end). Nil when none is there. What MPD's `albumart` reads
    /// a chunk at a time, and the page's `/cover` whole.
    /// A file larger than `largest` (when given) is passed over unread.
    public static func readFile(
        in directory: String, names: [String], insideOf musicFolders: [String], offset: Int, limit: Int,
        largest: Int? = nil
    ) -> (name: String, size: Int, bytes: [UInt8])? {
        let roots = musicFolders.compactMap(MediaRoots.resolve)
        for name in names {
            guard let descriptor = openInside(directory + "/" + name, roots) else { continue }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            let size = Int(info.st_size)
            if let largest, size > largest { continue }
            guard offset < size, limit > 0 else { return (name, size, []) }
            var bytes = [UInt8](repeating: 0, count: min(limit, size - offset))
            var filled = 0
            while filled < bytes.count {
                let count = bytes.withUnsafeMutableBytes { buffer in
                    pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled))
                }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                filled += count
            }
            return (name, size, Array(bytes[..<filled]))
        }
        return nil
    }

    /// Opens `path` for reading and returns the descriptor if the file it opened lies inside one
    /// of `roots` (real paths): the check is made on what was opened (`/proc/self/fd`), so a
    /// folder swapped for a link between a check and the open cannot lead outside.
    static func openInside(_ path: String, _ roots: [String]) -> Int32? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/fd/\(descriptor)", &buffer, buffer.count - 1)
        guard count > 0 else {
            close(descriptor)
            return nil
        }
        let opened = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard roots.contains(where: { opened.hasPrefix($0 == "/" ? "/" : $0 + "/") }) else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    static func mimeType(ofName name: String) -> String {
        switch name.split(separator: ".").last {
        case "png": "image/png"
        case "webp": "image/webp"
        default: "image/jpeg"
        }
    }
}

extension MusicController {
    /// An album's art: the first of its tracks (in album order) with a picture embedded, else the
    /// first folder image beside one of its tracks. `not_found` when it has none; the album is
    /// named as in `tracks(album:albumArtist:)`.
    public func cover(album: String, albumArtist: String?, reply: @escaping Reply<MusicCover>) {
        read({ [self] () throws(ReelError) -> MusicCover in
            let tracks = try albumTracks(album: album, albumArtist: albumArtist).filter { !$0.missing }
            for track in tracks where track.audio.hasEmbeddedCover {
                if let picture = try? MusicCovers.embedded(in: track.path, musicFolders: roots) { return picture }
            }
            var folders = Set<String>()
            for track in tracks {
                let folder = String(track.path[..<(track.path.lastIndex(of: "/") ?? track.path.endIndex)])
                guard folders.insert(folder).inserted else { continue }
                if let image = MusicCovers.folderImage(beside: track.path, musicFolders: roots) { return image }
            }
            throw ReelError(.notFound, "the album \"\(album)\" has no cover art")
        }, reply: reply)
    }
}
