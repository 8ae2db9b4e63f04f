// A path in the music folders: a music folder and a path under it.

/// A file or folder of a music folder: the folder as configured (`root`) and the path under it
/// (`/`-separated, no leading `/`; "" for the music folder itself).
public struct MusicPath: Hashable, Sendable, CustomStringConvertible {
    public var root: String
    public var relativePath: String

    public init(root: String, relativePath: String) {
        self.root = root
        self.relativePath = relativePath
    }

    /// The absolute path.
    public var absolute: String {
        relativePath.isEmpty ? root : MusicIndex.join(root, relativePath)
    }

    public var description: String { absolute }

    /// A path under this one (`relativePath` joined with `name`).
    public func appending(_ name: String) -> MusicPath {
        MusicPath(root: root, relativePath: relativePath.isEmpty ? name : relativePath + "/" + name)
    }

    /// Whether `other` is this path or lies under it.
    public func contains(_ other: MusicPath) -> Bool {
        guard root == other.root else { return false }
        return relativePath.isEmpty || other.relativePath == relativePath
            || other.relativePath.hasPrefix(relativePath + "/")
    }

    /// `other`, which lies under `from`, moved to lie under `to` instead.
    public static func rebase(_ other: MusicPath, from: MusicPath, to: MusicPath) -> MusicPath {
        let rest = other.relativePath.dropFirst(from.relativePath.count)
        let tail = rest.hasPrefix("/") ? String(rest.dropFirst()) : String(rest)
        return tail.isEmpty ? to : to.appending(tail)
    }

    /// The paths, without those lying under another one of them and without duplicates, in
    /// order of root and path. Each path's ancestors are looked up in a set: O(paths × depth).
    public static func outermost(_ paths: [MusicPath]) -> [MusicPath] {
        let all = Set(paths)
        var kept: [MusicPath] = []
        for path in all {
            var covered = false
            if !path.relativePath.isEmpty {
                if all.contains(MusicPath(root: path.root, relativePath: "")) { covered = true }
                var prefix = Substring(path.relativePath)
                while !covered, let slash = prefix.lastIndex(of: "/") {
                    prefix = prefix[..<slash]
                    covered = all.contains(MusicPath(root: path.root, relativePath: String(prefix)))
                }
            }
            if !covered { kept.append(path) }
        }
        return kept.sorted { ($0.root, $0.relativePath) < ($1.root, $1.relativePath) }
    }
}
