// Which files clients may have reeld read: everything, or only what lies under the media roots.

internal import ReelLibrary
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// The configured `media_roots` and `music_dirs`, resolved once at start. With no media root,
/// any readable file may be played or imported. With some, a file must resolve (symlinks and
/// `..` followed) to a path inside one of them or inside a music folder, else the request is
/// `forbidden`: music folders are always playable, and never narrow what plays.
public struct MediaRoots: Sendable {
    public let roots: [String]
    /// The music folders (`music_dirs`), resolved the same way.
    public let musicDirectories: [String]
    /// The music folders as configured, normalized as the music index names its files' roots
    /// (`MusicScanner.normalized`).
    public let configuredMusicDirectories: [String]

    /// Resolves each root; a root that does not exist is kept as written (it may be mounted later).
    public init(_ roots: [String], musicDirectories: [String] = []) {
        self.roots = roots.map(Self.resolveRoot)
        self.musicDirectories = musicDirectories.map(Self.resolveRoot)
        self.configuredMusicDirectories = musicDirectories.map(MusicScanner.normalized)
    }

    /// The music folder (as configured) a path lies under, and the path below it, read from the
    /// text alone (as the index names files): nil for a path outside every music folder.
    public func musicLocation(of path: String) -> (root: String, relativePath: String)? {
        for root in configuredMusicDirectories where path.hasPrefix(root == "/" ? "/" : root + "/") {
            let relative = path.dropFirst(root == "/" ? 1 : root.count + 1)
            if !relative.isEmpty { return (root, String(relative)) }
        }
        return nil
    }

    private static func resolveRoot(_ root: String) -> String {
        resolve(root) ?? (root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root)
    }

    /// Checks `path` before reeld opens it: it must be absolute, and inside a root if there are any.
    public func check(_ path: String) throws(ReelError) {
        guard path.hasPrefix("/") else { throw ReelError(.notFound, "\(path) is not an absolute path") }
        guard !roots.isEmpty else { return }
        guard let resolved = Self.resolve(path) else {
            throw ReelError(.notFound, "no file at \(path)")
        }
        for root in roots + musicDirectories where resolved == root || resolved.hasPrefix(root == "/" ? "/" : root + "/") {
            return
        }
        throw ReelError(
            .forbidden,
            "\(path) is outside the media roots (\(roots.joined(separator: ", "))); reeld only reads files under them")
    }

    /// The canonical absolute path, or nil if it does not exist.
    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
