// The music folders in the MPD view: their directories, their URIs, and their files as MPD songs.

import ReelCore
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// One music folder as the MPD view shows it.
struct MusicFolder: Sendable, Equatable {
    /// As configured (`music_dirs`).
    let root: String
    /// Its top-level directory in the view; "" when it is the only one (its contents are the root).
    let directory: String
}

/// The music folders in the MPD view.
///
/// - One music folder is MPD's `music_directory`: its files and folders are the root's, beside
///   `Recordings`. A folder of its own named like the recordings directory is hidden by it (the
///   recordings tree keeps the name; set `mpd_recordings_dir` to another name to see both).
/// - Several are one top-level directory each, named by the folder's last path component; when
///   two share a name (or one has the recordings directory's name), the later ones in the
///   configuration get ` (2)`, ` (3)`, … until the name is free.
///
/// URIs are relative, MPD-style: `Artist/Album/01 Song.flac` (one music folder) or
/// `Music/Artist/Album/01 Song.flac` (several). Songs print as MPD's: `file`, `Last-Modified`
/// (the file's mtime), `Format`, only the tags the file has, `Time`, `duration`.
extension MPDLibraryView {
    static func musicFolders(_ roots: [String], besides recordings: String) -> [MusicFolder] {
        // The same names as the stored playlists' lines use.
        PlaylistPaths.musicFolders(roots, besides: recordings).map { MusicFolder(root: $0.root, directory: $0.directory) }
    }

    /// A URI's target among the music folders (its parts already checked: none empty, `.` or
    /// `..`), nil when it names none.
    func musicTarget(_ parts: [Substring]) -> Target? {
        guard let first = musicFolders.first else { return nil }
        if first.directory.isEmpty { return .music(root: first.root, path: parts.joined(separator: "/")) }
        guard let folder = musicFolders.first(where: { $0.directory == parts[0] }) else { return nil }
        return .music(root: folder.root, path: parts.dropFirst().joined(separator: "/"))
    }

    /// The view's directory of a music folder ("" for a single one).
    func musicDirectory(ofRoot root: String) -> String {
        musicFolders.first { $0.root == root }?.directory ?? ""
    }

    /// The URI of `path` (relative, "" for the folder itself) in the music folder `root`.
    func musicURI(root: String, path: String) -> String {
        let directory = musicDirectory(ofRoot: root)
        if directory.isEmpty { return path }
        return path.isEmpty ? directory : directory + "/" + path
    }

    /// A music file as an MPD song: only the tags it has, in MPD's tag order.
    func song(of track: MusicTrack) -> MPDSong {
        var values: [(MPDTag, String)] = []
        Self.forEachTag(of: track.audio.tags) { tag, value in
            values.append((tag, value))
        } number: { tag, value in
            values.append((tag, String(value)))
        }
        let audio = track.audio
        let seconds = Int(track.modified.rounded(.down))
        return MPDSong(
            uri: musicURI(root: track.root, path: track.relativePath), lastModified: isoTime(seconds),
            modifiedSeconds: Int64(seconds),
            format: AudioFormat(codec: audio.codec, sampleRate: audio.sampleRate, channels: audio.channels),
            tags: values, duration: audio.duration)
    }

    /// `song(of: track).write(into:tags:)`, byte for byte, written straight from the track: no
    /// song value and no string made per field, and the room for the song's lines made once
    /// (`listplaylistinfo` writes thousands).
    func write(_ track: MusicTrack, tags wanted: MPDTagSet, into response: inout MPDResponse) {
        let directory = musicFolders.count == 1 && musicFolders[0].directory.isEmpty ? "" : musicDirectory(ofRoot: track.root)
        let audio = track.audio
        // The keys and separators (at most 200 bytes), six numbers, the time, then the texts (a
        // value is never longer written).
        var room = 200 + 6 * MPDLines.decimalBytes + MPDLines.isoTimeBytes + directory.utf8.count + track.relativePath.utf8.count
        Self.forEachTag(of: audio.tags) { _, value in room += value.utf8.count } number: { _, _ in }
        response.writeLines(atMost: room) { lines in
            lines.write(key: "file")
            if !directory.isEmpty {
                lines.write(value: directory)
                if !track.relativePath.isEmpty { lines.write(byte: UInt8(ascii: "/")) }
            }
            lines.write(value: track.relativePath)
            lines.endLine()
            lines.write(key: "Last-Modified")
            lines.write(isoTime: Int(track.modified.rounded(.down)))
            lines.endLine()
            lines.write(key: "Format")
            lines.write(decimal: audio.sampleRate)
            lines.write(value: MPDSong.sampleBits(codec: audio.codec))
            lines.write(decimal: audio.channels)
            lines.endLine()
            Self.forEachTag(of: audio.tags) { tag, value in
                guard wanted.contains(tag) else { return }
                lines.write(key: tag.rawValue)
                lines.write(value: value)
                lines.endLine()
            } number: { tag, value in
                guard wanted.contains(tag) else { return }
                lines.write(key: tag.rawValue)
                lines.write(decimal: value)
                lines.endLine()
            }
            if let duration = audio.duration {
                lines.write(key: "Time")
                lines.write(decimal: MPDResponse.wholeSeconds(duration))
                lines.endLine()
                lines.write(key: "duration")
                lines.write(seconds: duration)
                lines.endLine()
            }
        }
    }

    /// The tags of a music file that MPD shows, in MPD's order, each only when the file has it
    /// (an empty text counts as none); `track` and `disc` are numbers.
    @inline(__always)
    static func forEachTag(of tags: TrackTags, text: (MPDTag, String) -> Void, number: (MPDTag, Int) -> Void) {
        func add(_ tag: MPDTag, _ value: String?) {
            if let value, !value.isEmpty { text(tag, value) }
        }
        add(.artist, tags.artist)
        add(.album, tags.album)
        add(.albumArtist, tags.albumArtist)
        add(.title, tags.title)
        if let track = tags.track { number(.track, track) }
        add(.genre, tags.genre)
        add(.date, tags.date)
        if let disc = tags.disc { number(.disc, disc) }
    }

    /// The music folder and relative path of an absolute file path inside one, or nil.
    func musicLocation(ofFile path: String) -> (root: String, path: String)? {
        for folder in musicFolders {
            let base = folder.root.hasSuffix("/") ? folder.root : folder.root + "/"
            if path.hasPrefix(base), path.count > base.count {
                let relative = String(path.dropFirst(base.count))
                guard !relative.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else { return nil }
                return (folder.root, relative)
            }
        }
        return nil
    }
}

extension MPDLibraryView {
    /// Whether a queue entry is a file of a music folder.
    func isMusicFile(_ entry: QueueEntry) -> Bool {
        if case .file(let path) = entry.source { return musicLocation(ofFile: path) != nil }
        return false
    }

    /// Queue entries as songs, their recordings and music files described by the core in one
    /// batch (on its read queue; `reply` comes there).
    func songs(of entries: [QueueEntry], music: MusicController, reply: @escaping @Sendable ([MPDSong]) -> Void) {
        var ids: [String] = []
        var files: [(path: String, root: String, relativePath: String)] = []
        for entry in entries {
            if let id = entry.itemID { ids.append(id) }
            if case .file(let path) = entry.source, let location = musicLocation(ofFile: path) {
                files.append((path, location.root, location.path))
            }
        }
        music.describe(recordings: ids, files: files) { [self] records in
            reply(entries.map { entry in
                var track: MusicTrack?
                if case .file(let path) = entry.source { track = records.tracks[path] }
                return song(of: entry, item: entry.itemID.flatMap { records.recordings[$0] }, track: track)
            })
        }
    }
}

/// `2026-11-22T14:03:05Z` for seconds since 1970 (UTC), as MPD prints `Last-Modified`.
func isoTime(_ seconds: Int) -> String {
    var time = time_t(seconds)
    var fields = tm()
    gmtime_r(&time, &fields)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(fields.tm_year + 1900)-\(two(fields.tm_mon + 1))-\(two(fields.tm_mday))T"
        + "\(two(fields.tm_hour)):\(two(fields.tm_min)):\(two(fields.tm_sec))Z"
}
