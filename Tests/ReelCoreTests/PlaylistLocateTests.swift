// Locating a stored playlist's lines over their bytes: what each line names, and the music
// files of a playlist found from its distinct lines, as the string-based reading found them.
import ReelModel
import ReelStreamFormats
import Testing

@testable import ReelCore

@Suite struct PlaylistLocateTests {
    static let one = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: ["/srv/music"])
    static let two = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: ["/a/Music", "/b/Music"])
    static let none = PlaylistPaths(recordingsDirectory: "Recordings", musicRoots: [])

    /// `PlaylistPaths.location(of:)` as it was, over the string's UTF-8 view and `hasPrefix`
    /// (the reference for the reading over bytes).
    static func reference(_ paths: PlaylistPaths, _ line: String) -> PlaylistPaths.Location {
        func fileLocation(_ path: String) -> PlaylistPaths.Location {
            if let (root, relative) = paths.musicLocation(ofFile: path) { return .music(root: root, path: relative) }
            return .file(path)
        }
        if line.hasPrefix("file://") { return fileLocation(String(line.dropFirst("file://".count))) }
        if line.hasPrefix("/") { return fileLocation(line) }
        let utf8 = line.utf8
        if let slash = utf8.firstIndex(of: UInt8(ascii: "/")), slash > utf8.startIndex,
            utf8[utf8.index(before: slash)] == UInt8(ascii: ":"),
            utf8.index(after: slash) < utf8.endIndex, utf8[utf8.index(after: slash)] == UInt8(ascii: "/")
        {
            return .url(line)
        }
        var firstEnd: String.Index?
        var partStart = utf8.startIndex
        var index = utf8.startIndex
        while true {
            let atEnd = index == utf8.endIndex
            if atEnd || utf8[index] == UInt8(ascii: "/") {
                let length = utf8.distance(from: partStart, to: index)
                let dots = length <= 2 && utf8[partStart..<index].allSatisfy { $0 == UInt8(ascii: ".") }
                if length == 0 || dots { return .invalid("\(line) is not a path of the music folder (an empty, . or .. part)") }
                if firstEnd == nil { firstEnd = index }
                if atEnd { break }
                partStart = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        let first = line[..<firstEnd!]
        if first == paths.recordingsDirectory {
            guard firstEnd! < line.endIndex else { return .invalid("\(line) is the recordings directory, not a recording") }
            return .recording(treePath: String(line[firstEnd!...]))
        }
        guard let folder = paths.musicFolders.first else {
            return .invalid("\(line) names a music folder file, and no music folder is configured")
        }
        if folder.directory.isEmpty { return .music(root: folder.root, path: line) }
        guard firstEnd! < line.endIndex, let named = paths.musicFolders.first(where: { $0.directory == first }) else {
            return .invalid("\(line) is in none of the music folders")
        }
        return .music(root: named.root, path: String(line[line.index(after: firstEnd!)...]))
    }

    static let edgeLines = [
        "", "a", "A/B/01.flac", "/", "//", "a/", "/a", "a//b", ".", "..", "...", "./a", "a/.", "a/..", "a/.../b", ".a/b.",
        "Recordings", "Recordings/", "Recordings/Notes/idea.flac", "Recordings2/x", "recordings/x",
        "http://radio.example/live", "https://x", "a:/b", ":/", "://", "a://", "x:y://z", "a/b://c", "http:/x",
        "file://", "file:///tmp/x.wav", "file:///srv/music/A/01.flac", "file:/x", "FILE:///x", "/srv/music/A/01.flac",
        "/srv/music/", "/srv/music/../etc", "/tmp/x.wav", "Music/x.flac", "Music (2)/x.flac", "Music (2)", "Other/x.flac",
        "Caf\u{E9}/01.flac", "Cafe\u{301}/01.flac", "/\u{301}x", "file:/\u{301}/x", "file://\u{301}x", "a/\u{301}",
        "Recordings\u{301}/x", "\u{212A}/x", "\u{301}", "\u{1F3B5}/\u{1F3B6}.flac",
    ]

    @Test(arguments: edgeLines)
    func aLineNamesWhatTheStringReadingNamed(line: String) {
        for paths in [Self.one, Self.two, Self.none] {
            #expect(paths.location(of: line) == Self.reference(paths, line), "\(paths.musicFolders.map(\.root)): \(line.debugDescription)")
        }
    }

    /// Random lines of the parts that matter, located both ways. Seeded: the same lines every run.
    @Test func randomLinesNameWhatTheStringReadingNamed() {
        let parts = ["a", "/", ".", "..", ":", "//", "Recordings", "Music", "Music (2)", "file://", "http://", "\u{301}", "\u{E9}", "srv", "music"]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<3000 {
            let line = (0..<next(7)).map { _ in parts[next(parts.count)] }.joined()
            for paths in [Self.one, Self.two] {
                #expect(paths.location(of: line) == Self.reference(paths, line), "\(line.debugDescription)")
            }
        }
    }

    /// The music files of a stored playlist found from its distinct lines are those found from
    /// every line's location (`PlaylistMusicLines.init(_:)`): the same files in the same order,
    /// the same file for each line.
    @Test(arguments: [
        ["A/01.flac", "A/02.flac", "A/01.flac", "http://x.example/", "A/02.flac"],
        ["A/01.flac", "/srv/music/A/01.flac", "file:///srv/music/A/01.flac", "/tmp/x.wav", "A/01.flac"],
        ["Caf\u{E9}.flac", "Cafe\u{301}.flac", "Caf\u{E9}.flac"],
        ["K.flac", "\u{212A}.flac"],
        ["Recordings/a.flac", "A/../b", "A/01.flac"],
        [],
    ])
    func distinctLinesNameTheFilesEveryLineNamed(lines: [String]) throws {
        for (paths, directory) in [(Self.one, ""), (Self.two, "Music/")] {
            let text = lines.map { !$0.hasPrefix("/") && !$0.contains(":") ? directory + $0 : $0 }
            let read = try StoredPlaylistEntries(reading: Array(text.joined(separator: "\n").utf8))
            let distinct = read.distinct.map(paths.location(of:))
            let music = PlaylistMusicLines(
                distinct: read.distinct, locations: distinct, allASCII: read.allASCII, distinctOfLine: read.distinctOfEntry)
            let each = PlaylistMusicLines(read.entries.map(paths.location(of:))[...])
            #expect(music.files.map(\.root) == each.files.map(\.root))
            #expect(music.files.map(\.path) == each.files.map(\.path))
            #expect(music.fileOfLine == each.fileOfLine)
            #expect(music.firstLine == 0)
        }
    }
}
