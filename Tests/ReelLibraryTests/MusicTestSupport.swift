// Music folders for the tests: audio files whose contents are their tags, read by a fake reader.
import Foundation
import ReelModel
import Synchronization
import Testing

@testable import ReelLibrary

/// Stands in for the tag reader: a file's contents are its tags as `key=value` lines
/// (`title`, `artist`, `album`, `albumartist`, `track`, `disc`, `date`, `genre`, `cover`,
/// `duration`); a file whose contents are `CORRUPT` fails with `corrupt_file`, a file that is
/// not there with `not_found`. Counts and remembers its calls.
final class FakeTagReader: Sendable {
    private let paths = Mutex<[String]>([])
    /// Called after each read, with the number of reads so far (to cancel a scan, say).
    let afterRead: (@Sendable (Int) -> Void)?

    init(afterRead: (@Sendable (Int) -> Void)? = nil) {
        self.afterRead = afterRead
    }

    var calls: Int { paths.withLock { $0.count } }
    var readPaths: [String] { paths.withLock { $0 } }
    func reset() { paths.withLock { $0.removeAll() } }

    var reader: MusicScanner.Reader {
        { [self] path throws(ReelError) in
            let count = paths.withLock { paths in
                paths.append(path)
                return paths.count
            }
            defer { afterRead?(count) }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ReelError(.notFound, "no file at \(path)")
            }
            let text = String(decoding: data, as: UTF8.self)
            if text.hasPrefix("CORRUPT") {
                throw ReelError(.corruptFile, "\(path) is not a valid audio file: no FLAC stream marker")
            }
            return Self.parse(text, path: path)
        }
    }

    static func parse(_ text: String, path: String) -> ScannedAudio {
        var tags = TrackTags()
        var cover = false
        var duration: Double? = 180
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals]
            let value = String(line[line.index(after: equals)...])
            switch key {
            case "title": tags.title = value
            case "artist": tags.artist = value
            case "album": tags.album = value
            case "albumartist": tags.albumArtist = value
            case "track": tags.track = Int(value)
            case "disc": tags.disc = Int(value)
            case "date": tags.date = value
            case "genre": tags.genre = value
            case "cover": cover = value == "1"
            case "duration": duration = Double(value)
            default: break
            }
        }
        let ext = (path as NSString).pathExtension.lowercased()
        return ScannedAudio(
            tags: tags, codec: ext == "ogg" ? "vorbis" : ext, sampleRate: 44100, channels: 2, duration: duration,
            hasEmbeddedCover: cover)
    }
}

/// A music folder under construction.
struct MusicTree {
    let root: String

    init(_ root: String) {
        self.root = root
        try! FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func path(_ relative: String) -> String { root + "/" + relative }

    /// Writes a file whose contents are these tags (the fake reader's format).
    @discardableResult
    func add(
        _ relative: String, title: String? = nil, artist: String? = nil, album: String? = nil,
        albumArtist: String? = nil, track: Int? = nil, disc: Int? = nil, date: String? = nil, cover: Bool = false,
        extra: String = ""
    ) -> String {
        var lines: [String] = []
        if let title { lines.append("title=\(title)") }
        if let artist { lines.append("artist=\(artist)") }
        if let album { lines.append("album=\(album)") }
        if let albumArtist { lines.append("albumartist=\(albumArtist)") }
        if let track { lines.append("track=\(track)") }
        if let disc { lines.append("disc=\(disc)") }
        if let date { lines.append("date=\(date)") }
        if cover { lines.append("cover=1") }
        if !extra.isEmpty { lines.append(extra) }
        return write(relative, lines.joined(separator: "\n"))
    }

    @discardableResult
    func write(_ relative: String, _ text: String) -> String {
        let full = path(relative)
        try! FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: full, contents: Data(text.utf8))
        return full
    }

    func link(_ relative: String, to destination: String) {
        let full = path(relative)
        try! FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: destination)
    }

    func remove(_ relative: String) { try! FileManager.default.removeItem(atPath: path(relative)) }

    func move(_ from: String, _ to: String) {
        let destination = path(to)
        try! FileManager.default.createDirectory(
            atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! FileManager.default.moveItem(atPath: path(from), toPath: destination)
    }

    /// Sets a file's modification time (seconds since the epoch).
    func setModified(_ relative: String, _ seconds: Double) {
        try! FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: seconds)], ofItemAtPath: path(relative))
    }
}

/// A library with a music index and a scanner over `roots`, read by a fake reader.
struct MusicFixture {
    let directory = TemporaryDirectory()
    let store: LibraryStore
    let index: MusicIndex
    let reader: FakeTagReader

    init(reader: FakeTagReader = FakeTagReader()) throws {
        store = try LibraryStore(directory: directory.file("data"))
        index = MusicIndex(store: store)
        self.reader = reader
    }

    /// A music folder `name` under the test's directory.
    func tree(_ name: String = "Music") -> MusicTree { MusicTree(directory.file(name)) }

    func scanner(_ roots: [String], readerCount: Int = 2, batchSize: Int = 500) -> MusicScanner {
        MusicScanner(index: index, roots: roots, extensions: MusicTestSupport.audioExtensions, reader: reader.reader, readerCount: readerCount, batchSize: batchSize)
    }

    @discardableResult
    func scan(_ roots: [String], batchSize: Int = 500) throws -> MusicScanOutcome {
        try scanner(roots, batchSize: batchSize).scan()
    }

    /// Every indexed path under `root` (present and missing), sorted.
    func paths(_ root: String) throws -> [String] {
        try index.indexedFiles(root: root).keys.sorted()
    }
}

enum MusicTestSupport {
    /// The suffixes the scanner and the watcher look at in these tests (the daemon gives them the
    /// codec registry's).
    static let audioExtensions: Set<String> = ["flac", "mp3", "ogg", "oga", "opus", "wav", "m4a", "aac", "aif", "aiff", "wv"]
}
