// Album art of the music folders: the picture embedded in a file, or a cover image beside it.

import ReelModel
import ReelTags

#if canImport(Glibc)
import Glibc
#endif

/// A picture to show for a track or an album.
public struct MusicCover: Sendable, Equatable {
    public var bytes: [UInt8]
    public var mimeType: String

    public init(bytes: [UInt8], mimeType: String) {
        self.bytes = bytes
        self.mimeType = mimeType
    }
}

/// Where a music file's art is: embedded in it (read by TagLib), or an image file in its
/// folder under one of the names MPD's `albumart` looks for. Blocking file reads on the caller's
/// thread (never an event loop).
public enum MusicCovers {
    /// The names looked for beside a file, in order, as MPD does (case as written).
    public static let folderImageNames = ["cover.png", "cover.jpg", "cover.jxl", "cover.webp"]
    /// A folder image larger than this is not read (art is a few hundred KiB; this is a
    /// daemon on a small machine).
    public static let largestFolderImage = 16 << 20

    /// The picture embedded in the file at `path`, or nil.
    public static func embedded(in path: String) throws(ReelError) -> MusicCover? {
        try TagReader.picture(path: path).map { MusicCover(bytes: $0.bytes, mimeType: $0.mimeType) }
    }

    /// The first folder image beside `path` (`cover.png`, `cover.jpg`, …) that is a regular file
    /// and, with every symbolic link followed, still lies inside one of `musicFolders`: a link
    /// out of the music folders is never read. Nil when there is none.
    public static func folderImage(beside path: String, musicFolders: [String]) -> MusicCover? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let folder = String(path[..<slash])
        let roots = musicFolders.compactMap(realPath)
        for name in folderImageNames {
            guard let real = realPath(folder + "/" + name),
                roots.contains(where: { real.hasPrefix($0 == "/" ? "/" : $0 + "/") }),
                let bytes = readSmallFile(real)
            else { continue }
            return MusicCover(bytes: bytes, mimeType: mimeType(ofName: name))
        }
        return nil
    }

    /// The file's embedded picture, else its folder's image.
    public static func cover(of path: String, musicFolders: [String]) -> MusicCover? {
        if let embedded = try? embedded(in: path) { return embedded }
        return folderImage(beside: path, musicFolders: musicFolders)
    }

    static func mimeType(ofName name: String) -> String {
        switch name.split(separator: ".").last {
        case "png": "image/png"
        case "jxl": "image/jxl"
        case "webp": "image/webp"
        default: "image/jpeg"
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A regular file's bytes, or nil (not a regular file, unreadable, or too large).
    private static func readSmallFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0,
            info.st_size <= largestFolderImage
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            filled += count
        }
        return bytes
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
                if let picture = try? MusicCovers.embedded(in: track.path) { return picture }
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
