// Stored playlists in MPD's `playlist_directory` format: one entry a line, kept byte for byte.

/// A stored playlist file (`NAME.m3u` in `playlist_dir`), as MPD writes and reads it: one
/// entry a line — a path relative to the music folder (for recordings, their tree path under
/// `Recordings/`), or a URL as it is — `#` lines comments, blank lines nothing. Pure value.
///
/// Nothing of a file is lost on a rewrite: comments, blank lines and broken lines (not valid
/// UTF-8, a NUL, longer than the limit) are kept in `lines` with their raw bytes and written
/// back as they were (line breaks become LF), so `lines[i]` is line i + 1 of the file; broken
/// lines are also listed in `brokenLines` so they can be reported. Entry positions
/// (`playlistdelete`, `listplaylist`) count `.entry` lines only.
public struct StoredPlaylist: Equatable, Sendable {
    /// One line of the file.
    public enum Line: Equatable, Sendable {
        /// A path relative to the music folder, or a URL.
        case entry(String)
        /// A `#` line (`#EXTM3U`, `#EXTINF:…`), kept as it was.
        case comment([UInt8])
        /// An empty line or one of spaces and tabs, kept as it was.
        case blank([UInt8])
        /// A line that cannot be an entry, kept as it was, with why.
        case broken([UInt8], reason: String)
    }

    public var lines: [Line]

    public init(lines: [Line] = []) {
        self.lines = lines
    }

    /// A playlist of these entries (no comments).
    public init(entries: [String]) {
        self.lines = entries.map { .entry($0) }
    }

    /// The entries, in order.
    public var entries: [String] {
        lines.compactMap { if case .entry(let text) = $0 { text } else { nil } }
    }

    /// The broken lines: their 1-based line number (index in `lines` + 1), and why.
    public var brokenLines: [(line: Int, reason: String)] {
        lines.enumerated().compactMap { index, line in
            if case .broken(_, let reason) = line { (index + 1, reason) } else { nil }
        }
    }

    /// Reads a file's bytes. Throws `.tooLarge` beyond `limits.maximumBytes` or
    /// `limits.maximumEntries` entries (a stored playlist is never cut silently).
    public init(reading bytes: [UInt8], limits: PlaylistLimits = .stored) throws(StreamFormatError) {
        guard bytes.count <= limits.maximumBytes else {
            throw StreamFormatError(.tooLarge, "the playlist file is larger than \(limits.maximumBytes) bytes")
        }
        var lines: [Line] = []
        var entryCount = 0
        forEachLine(bytes) { line in
            let raw = line.bytes
            if raw.count > limits.maximumLineLength {
                lines.append(.broken(Array(raw), reason: "longer than \(limits.maximumLineLength) bytes"))
            } else if raw.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                lines.append(.blank(Array(raw)))
            } else if raw.contains(0) {
                lines.append(.broken(Array(raw), reason: "holds a NUL byte"))
            } else if raw.first == UInt8(ascii: "#") {
                lines.append(.comment(Array(raw)))
            } else if let text = String(validating: raw, as: UTF8.self) {
                lines.append(.entry(text))
                entryCount += 1
            } else {
                lines.append(.broken(Array(raw), reason: "not valid UTF-8"))
            }
            return entryCount <= limits.maximumEntries
        }
        guard entryCount <= limits.maximumEntries else {
            throw StreamFormatError(.tooLarge, "the playlist file has more than \(limits.maximumEntries) entries")
        }
        self.lines = lines
    }

    /// The file's bytes: each line then LF. Throws `.malformed` for an entry holding a line
    /// break or NUL (it would become two entries), or an empty one or one starting with `#`
    /// (it would read back as nothing or as a comment).
    public func encoded() throws(StreamFormatError) -> [UInt8] {
        var out: [UInt8] = []
        for (index, line) in lines.enumerated() {
            switch line {
            case .entry(let text):
                try checkLine(text, what: "entry \(index + 1)")
                guard let first = text.utf8.first, first != UInt8(ascii: "#"),
                    !text.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 })
                else {
                    throw StreamFormatError(.malformed, "entry \(index + 1) is empty or starts with #: \(clip(text))")
                }
                out += text.utf8
            case .comment(let bytes), .blank(let bytes), .broken(let bytes, _):
                out += bytes
            }
            out.append(0x0A)
        }
        return out
    }
}
