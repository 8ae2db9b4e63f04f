// A query of songs by tags, URI, folder and time: the value MPD's filter syntax is parsed into,
// which the core runs against the music index (narrowing it in SQL) and which decides on each song.

/// The tags Reel reports on songs (a recording's `Title`, `Album`, `Date`; a music file's tags
/// once music folders are indexed), by the names MPD and Vorbis comments give them.
public enum SongTag: String, CaseIterable, Sendable {
    case artist = "Artist"
    case album = "Album"
    case albumArtist = "AlbumArtist"
    case title = "Title"
    case track = "Track"
    case genre = "Genre"
    case date = "Date"
    case disc = "Disc"
    /// A stream's station (`icy-name`).
    case name = "Name"
}

/// What a query sees of one song: its URI (as the front end shows it: MPD's `file:`), its
/// tags, and its modification time (seconds since 1970) when known.
public struct SongFields: Sendable, Equatable {
    public var uri: String
    /// An empty value counts as no tag at all, as in MPD, which never stores an empty tag.
    public var tags: [SongTag: String]
    public var lastModified: Int64?

    public init(uri: String, tags: [SongTag: String] = [:], lastModified: Int64? = nil) {
        self.uri = uri
        self.tags = tags
        self.lastModified = lastModified
    }

    func value(_ tag: SongTag) -> String? {
        guard let value = tags[tag], !value.isEmpty else { return nil }
        return value
    }
}

/// A query of songs, as MPD's filters express it (`src/song/Filter.cxx`): all of its items must
/// match (a command's filter arguments are ANDed). A front end parses its syntax into this value
/// (MPD's `MPDFilter.parse`); the core narrows the music index with its `indexConditions`
/// (`MusicCatalog.candidates(for:)`) and `matches` decides on each song.
///
/// What is supported, as MPD 0.24 does it:
/// - the old form, pairs `TYPE VALUE` where TYPE is a tag name, `any`, `file` (or `filename`),
///   `base` or `modified-since`; `find` compares whole values case-sensitively, `search`
///   looks for a substring, ignoring case;
/// - `(EXPRESSION)` arguments, which may be mixed with pairs: `(TAG OP 'VALUE')` with `==`, `!=`,
///   `contains`, `!contains`, `starts_with`, `!starts_with`, `=~`, `!~` and the explicit-case
///   variants `eq_cs`, `eq_ci`, `contains_cs`, … (each with a `!` form); `(file OP 'VALUE')`;
///   `(base 'DIR')`; `(modified-since 'TIME')` (Unix seconds or ISO 8601); `(!EXPRESSION)`;
///   `(EXPRESSION AND EXPRESSION …)`; the `any` tag; tag names in any case; values quoted with
///   `'` or `"` and `\` escaping the next character;
/// - a tag the song lacks matches an empty value (`(Composer == '')`); `AlbumArtist` falls back
///   to `Artist` (and `ArtistSort`, `AlbumSort`, `TitleSort` to theirs), as MPD.
///
/// Not supported (a clear ACK rather than a wrong answer): `AudioFormat`, `added-since` (Reel
/// keeps no time a song was added) and `prio` (queue priorities).
///
/// Where Reel differs:
/// - Case folding is `String.lowercased()` and a few typographic punctuation marks mapped to
///   ASCII, not ICU's full case folding and normalization: `É` matches `é`, but `ß` does not
///   match `ss`. Folded values compare by Unicode canonical equivalence (Swift's `String`).
/// - Regular expressions are Swift's `Regex` (no Foundation): mostly PCRE syntax, searched
///   anywhere in the value, `.` matching a newline and case ignored for `search`, as MPD sets
///   up PCRE; but lookbehind, `\K`, recursion and conditionals are refused with an ACK.
/// - A filter on a tag name MPD knows but Reel does not report (`Composer`, `Name`, …) parses and
///   sees that tag as missing on every song.
/// - Where MPD would read past a missing `(` after `AND` (its parser asserts it), Reel answers
///   `'(' expected`.
public struct MusicQuery: Sendable {
    public let items: [Node]

    public init(items: [Node]) {
        self.items = items
    }

    /// The filter with no items: it matches every song (`count` and `list` without a filter).
    public static let all = MusicQuery(items: [])

    public var isEmpty: Bool { items.isEmpty }


    public func matches(_ song: SongFields) -> Bool {
        items.allSatisfy { $0.matches(song) }
    }

    /// The directory a search may start at: the first `base` of the filter that every match must
    /// satisfy (at the top, or in an `AND` there; not under a `!`), as MPD picks it. MPD answers
    /// `ACK [50@0] {find} No such directory` when it names neither a directory nor a song.
    public var base: String? {
        func first(_ nodes: [Node]) -> String? {
            for node in nodes {
                switch node {
                case .base(let value): return value
                case .and(let inner): if let value = first(inner) { return value }
                default: continue
                }
            }
            return nil
        }
        return first(items)
    }

    /// Conditions on tags that every match satisfies, for the music index to narrow its
    /// candidates in SQL (`MusicIndex.tracks(matching:)`); the filter still decides on each
    /// candidate. Only positive string matches at the top (or in a top `AND`) on Title, Artist,
    /// Album, Genre, Date or AlbumArtist (falling back to Artist), with a non-empty value, give
    /// conditions: an exact case-sensitive match gives `equals`; any other (folded, substring,
    /// prefix) gives a folded substring condition for each run of plain ASCII characters in the
    /// value. The runs stop at anything the index's plain lowercasing could see differently from
    /// the filter's folding: characters that are not one ASCII scalar (accents, combining marks,
    /// canonical equivalents) and those MPD's folding makes from typographic marks (`'`, `"`,
    /// `-`, `.`, `<`, `>`), so a condition can only ever keep more.
    public var indexConditions: [MusicTagCondition] {
        var conditions: [MusicTagCondition] = []
        func visit(_ nodes: [Node]) {
            for node in nodes {
                switch node {
                case .and(let inner): visit(inner)
                case .tag(let selector, let match): conditions += Self.conditions(selector, match)
                default: continue
                }
            }
        }
        visit(items)
        return conditions
    }

    private static func conditions(_ selector: TagSelector, _ match: StringMatch) -> [MusicTagCondition] {
        guard case .named(let tag?, let fallbacks) = selector, match.regex == nil, !match.negated,
            !match.value.isEmpty
        else { return [] }
        let column: MusicTagColumn
        switch (tag, fallbacks) {
        case (.title, []): column = .title
        case (.artist, []): column = .artist
        case (.album, []): column = .album
        case (.genre, []): column = .genre
        case (.date, []): column = .date
        case (.albumArtist, [.artist]): column = .albumArtistOrArtist
        default: return []
        }
        if !match.foldCase, match.position == .full { return [.equals(column, match.value)] }
        let unsafe: Set<UInt8> = [UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "-"), UInt8(ascii: "."),
                                  UInt8(ascii: "<"), UInt8(ascii: ">")]
        var runs: [String] = []
        var run = ""
        for character in match.value {
            let scalars = character.unicodeScalars
            if scalars.count == 1, let scalar = scalars.first, scalar.isASCII, !unsafe.contains(UInt8(scalar.value)) {
                run.append(character)
            } else if !run.isEmpty {
                runs.append(run)
                run = ""
            }
        }
        if !run.isEmpty { runs.append(run) }
        return runs.map { .containsFolded(column, $0.lowercased()) }
    }

}

// MARK: - What a filter is made of

extension MusicQuery {
    public indirect enum Node: Sendable {
        case tag(TagSelector, StringMatch)
        case uri(StringMatch)
        case base(String)
        case modifiedSince(Int64)
        case not(Node)
        case and([Node])

        public func matches(_ song: SongFields) -> Bool {
            switch self {
            case .tag(let selector, let match): return selector.matches(song, match)
            case .uri(let match): return match.matches(song.uri)
            case .base(let base): return Self.isChildOrSame(base: base, uri: song.uri)
            case .modifiedSince(let time): return song.lastModified.map { $0 >= time } ?? false
            case .not(let inner): return !inner.matches(song)
            case .and(let items): return items.allSatisfy { $0.matches(song) }
            }
        }

        /// MPD's `uri_is_child_or_same`: the URI is the base, or lies below it (`base ''`
        /// therefore takes everything).
        private static func isChildOrSame(base: String, uri: String) -> Bool {
            let baseBytes = base.utf8, uriBytes = uri.utf8
            if uriBytes.elementsEqual(baseBytes) { return true }
            guard uriBytes.starts(with: baseBytes) else { return false }
            let suffix = uriBytes.dropFirst(baseBytes.count)
            guard let next = suffix.first else { return false }
            return baseBytes.isEmpty || baseBytes.last == UInt8(ascii: "/") || next == UInt8(ascii: "/")
        }
    }

    /// Which tag a string filter looks at.
    public enum TagSelector: Sendable {
        /// Every tag the song has (never its URI).
        case any
        /// One MPD tag: `tag` is nil for a tag Reel does not report; `fallbacks` are the tags
        /// looked at, in order, when the song lacks it (those Reel reports: the others are
        /// always missing, and MPD moves past a missing fallback).
        case named(tag: SongTag?, fallbacks: [SongTag])

        /// MPD's `TagSongFilter::Match`.
        public func matches(_ song: SongFields, _ match: StringMatch) -> Bool {
            switch self {
            case .any:
                let found = song.tags.values.contains { !$0.isEmpty && match.matchesIgnoringNegation($0) }
                return found != match.negated
            case .named(let tag, let fallbacks):
                if let value = tag.flatMap(song.value) {
                    return match.matchesIgnoringNegation(value) != match.negated
                }
                for fallback in fallbacks {
                    if let value = song.value(fallback) {
                        return match.matchesIgnoringNegation(value) != match.negated
                    }
                }
                // A missing tag is an empty one: an empty value matches it.
                return match.value.isEmpty != match.negated
            }
        }
    }

    /// MPD's `StringFilter`: a value compared to a tag or the URI.
    public struct StringMatch: Sendable {
        public enum Position: Sendable {
            /// The whole value.
            case full
            /// Anywhere in the value.
            case anywhere
            /// At its start.
            case prefix
        }

        public let value: String
        public let position: Position
        public let foldCase: Bool
        public let negated: Bool
        /// Set for `=~` and `!~`: it decides alone (position and folding then play no part).
        public let regex: CompiledRegex?
        /// `value` folded, when `foldCase`.
        private let foldedValue: String
        private let valueBytes: [UInt8]

        public init(_ value: String, position: Position, foldCase: Bool, negated: Bool, regex: CompiledRegex? = nil) {
            self.value = value
            self.position = position
            self.foldCase = foldCase
            self.negated = negated
            self.regex = regex
            foldedValue = foldCase ? MusicQuery.fold(value) : value
            valueBytes = Array(value.utf8)
        }

        public func matches(_ text: String) -> Bool {
            matchesIgnoringNegation(text) != negated
        }

        public func matchesIgnoringNegation(_ text: String) -> Bool {
            if let regex { return text.contains(regex.regex) }
            if foldCase {
                let folded = MusicQuery.fold(text)
                switch position {
                case .full: return folded == foldedValue
                case .anywhere: return foldedValue.isEmpty || folded.contains(foldedValue)
                case .prefix: return folded.hasPrefix(foldedValue)
                }
            }
            // Case-sensitive: byte for byte, as MPD compares.
            switch position {
            case .full: return text.utf8.elementsEqual(valueBytes)
            case .prefix: return text.utf8.starts(with: valueBytes)
            case .anywhere: return Self.bytes(of: text, contain: valueBytes)
            }
        }

        private static func bytes(of text: String, contain needle: [UInt8]) -> Bool {
            guard let first = needle.first else { return true }
            let haystack = Array(text.utf8)
            guard haystack.count >= needle.count else { return false }
            for start in 0...(haystack.count - needle.count) where haystack[start] == first {
                if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
            }
            return false
        }
    }

    /// A compiled regular expression, shared between threads. `Regex` is not declared
    /// `Sendable`, but it is never mutated after parsing, and the program it compiles lazily on
    /// first use is published with an atomic store, so matching from several threads is safe.
    public final class CompiledRegex: @unchecked Sendable {
        public struct InvalidPattern: Error, Sendable {
            public let message: String
        }


        public let regex: Regex<AnyRegexOutput>

        /// The options MPD gives PCRE: `.` matches a newline, case ignored when folding; and
        /// matching by Unicode scalar rather than by character, as PCRE does.
        /// `InvalidPattern` says why a pattern does not compile (Swift's `Regex` error text).
        public init(_ pattern: String, ignoringCase: Bool) throws(InvalidPattern) {
            do {
                var regex = try Regex(pattern).dotMatchesNewlines()
                if ignoringCase { regex = regex.ignoresCase() }
                self.regex = regex.matchingSemantics(.unicodeScalar)
            } catch {
                throw InvalidPattern(message: "\(error)")
            }
        }
    }

    /// Case folding for `search` and the `_ci` operators: `String.lowercased()` (full Unicode
    /// lowercasing, not ICU's case folding: `ß` stays `ß`), then the typographic quotes, dashes
    /// and ellipsis as their ASCII forms, as MPD's ICU transliteration does for punctuation (so
    /// `don't` finds `Don’t`).
    public static func fold(_ text: String) -> String {
        let lowered = text.lowercased()
        guard lowered.utf8.contains(where: { $0 >= 0xC2 }) else { return lowered }
        var result = ""
        result.reserveCapacity(lowered.utf8.count)
        for scalar in lowered.unicodeScalars {
            switch scalar.value {
            case 0x2018, 0x2019, 0x201A, 0x201B, 0x2032: result += "'"
            case 0x201C, 0x201D, 0x201E, 0x201F, 0x2033: result += "\""
            case 0x2010...0x2015, 0x2212: result += "-"
            case 0x2026: result += "..."
            case 0x00AB: result += "<<"
            case 0x00BB: result += ">>"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
