// The music folders' files a playlist's lines name, each once, and the file of each line.

/// The files of the music folders that a playlist's lines name, each once, and the file each
/// line names: a playlist that names 200 files 50 times is looked up in the index as 200 files,
/// and its 10,000 lines find theirs by number, not by hashing their paths on every load.
/// Pure value.
struct PlaylistMusicLines: Sendable {
    /// Each file once, in the order of the first line naming it.
    var files: [(root: String, path: String)] = []
    /// For each line from `firstLine`: its file's index in `files`, or -1 (not a music file).
    var fileOfLine: [Int] = []
    /// The index of the first line (the locations' start).
    var firstLine = 0

    /// The files of these lines, each line's location given (a window of a playlist, a
    /// playlist file of a music folder): equal files found by hashing their paths.
    init(_ locations: ArraySlice<PlaylistPaths.Location>) {
        firstLine = locations.startIndex
        var files = FileNumbers()
        fileOfLine.reserveCapacity(locations.count)
        for location in locations {
            if case .music(let root, let path) = location {
                fileOfLine.append(files.number(root: root, path: path))
            } else {
                fileOfLine.append(-1)
            }
        }
        self.files = files.files
    }

    /// The files of a stored playlist's lines as read (`StoredPlaylistEntries`): `lines` its
    /// distinct lines and `locations` what each names, `distinctOfLine` each line's index in
    /// them. Only the distinct lines are looked at. Two distinct lines name distinct files when
    /// they are ASCII (`allASCII`) and relative (a music folder's path, not `/…` or `file://…`,
    /// which may name a file a relative line names too): then no path is hashed; otherwise
    /// equal files are found by hashing the distinct lines' paths (as `init(_:)` does: paths
    /// equal as strings are one file).
    init(distinct lines: [String], locations: [PlaylistPaths.Location], allASCII: Bool, distinctOfLine: [Int]) {
        var fileOfDistinct = [Int](repeating: -1, count: locations.count)
        var unique = allASCII
        for (number, location) in locations.enumerated() {
            guard case .music(let root, let path) = location else { continue }
            fileOfDistinct[number] = files.count
            files.append((root, path))
            if let first = lines[number].utf8.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "f"),
                lines[number].utf8.starts(with: "/".utf8) || lines[number].utf8.starts(with: "file://".utf8)
            {
                unique = false
            }
        }
        if !unique {
            var numbers = FileNumbers()
            for number in fileOfDistinct.indices where fileOfDistinct[number] >= 0 {
                let (root, path) = files[fileOfDistinct[number]]
                fileOfDistinct[number] = numbers.number(root: root, path: path)
            }
            files = numbers.files
        }
        fileOfLine = distinctOfLine.map { fileOfDistinct[$0] }
    }

    /// Numbers files by their root and path, each once, in the order first given.
    private struct FileNumbers {
        var files: [(root: String, path: String)] = []
        var indexOfFile: [String: [String: Int]] = [:]

        mutating func number(root: String, path: String) -> Int {
            if let known = indexOfFile[root]?[path] { return known }
            indexOfFile[root, default: [:]][path] = files.count
            files.append((root, path))
            return files.count - 1
        }
    }
}
