// MPD's song filter for `find`, `search`, `findadd`, `searchadd`, `count`, `searchcount` and
// `list`: the old `TYPE VALUE` pairs and the `(EXPRESSION)` form, parsed into a value that
// answers whether a song matches. The rules and error messages are MPD's (`src/song/Filter.cxx`
// and the filters beside it); the notes below say where Reel differs.

import ReelLibrary

/// What a filter sees of one song: its URI (as MPD prints `file:`), its tags, and its
/// modification time (seconds since 1970) when known.
struct MPDSongFields: Sendable, Equatable {
    var uri: String
    /// An empty value counts as no tag at all, as in MPD, which never stores an empty tag.
    var tags: [MPDTag: String]
    var lastModified: Int64?

    init(uri: String, tags: [MPDTag: String] = [:], lastModified: Int64? = nil) {
        self.uri = uri
        self.tags = tags
        self.lastModified = lastModified
    }

    fileprivate func value(_ tag: MPDTag) -> String? {
        guard let value = tags[tag], !value.isEmpty else { return nil }
        return value
    }
}

/// A parsed song filter: all of its items must match (a command's filter arguments are ANDed).
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
struct MPDFilter: Sendable {
    private let items: [Node]

    /// The filter with no items: it matches every song (`count` and `list` without a filter).
    static let all = MPDFilter(items: [])

    var isEmpty: Bool { items.isEmpty }

    /// The words that start a command's trailing options: `sort`, `window`, `group`, `position`.
    static let optionKeywords: Set<String> = ["sort", "window", "group", "position"]

    /// Parses a command's filter arguments: either the old form — pairs `TYPE VALUE …` where TYPE
    /// is a tag name, `any`, `file`, `base`, `modified-since` — or one `(EXPRESSION)` argument
    /// (possibly followed by further arguments the caller handles, e.g. `sort`, `window`,
    /// `group`: return how many arguments the filter used). `foldCase` is true for
    /// `search`/`searchadd`/`searchcount` (case-insensitive substring match in the old form, as
    /// MPD) and false for `find` (exact, case-sensitive).
    ///
    /// The filter ends where the rest of the arguments is nothing but `KEYWORD VALUE` pairs with
    /// a keyword of `optionKeywords`; the caller reads those (and checks their order, which MPD
    /// fixes: `sort` before `window`, `position` last). No filter at all is MPD's "Incorrect
    /// number of filter arguments", unless `allowEmpty` (for `count` and `list`, which then
    /// count or list everything): the answer is then `.all` with nothing consumed.
    static func parse(
        _ arguments: [String], foldCase: Bool, allowEmpty: Bool = false
    ) throws(MPDAck) -> (filter: MPDFilter, consumed: Int) {
        var items: [Node] = []
        var index = 0
        while index < arguments.count, !isOptionTail(arguments[index...]) {
            let argument = arguments[index]
            if argument.utf8.first == UInt8(ascii: "(") {
                items.append(try ExpressionParser.parse(argument, foldCase: foldCase))
                index += 1
                continue
            }
            guard index + 1 < arguments.count else { throw wrongCount }
            items.append(try parsePair(type: argument, value: arguments[index + 1], foldCase: foldCase))
            index += 2
        }
        if items.isEmpty {
            guard allowEmpty else { throw wrongCount }
            return (.all, 0)
        }
        return (MPDFilter(items: items), index)
    }

    func matches(_ song: MPDSongFields) -> Bool {
        items.allSatisfy { $0.matches(song) }
    }

    /// The directory a search may start at: the first `base` of the filter that every match must
    /// satisfy (at the top, or in an `AND` there; not under a `!`), as MPD picks it. MPD answers
    /// `ACK [50@0] {find} No such directory` when it names neither a directory nor a song.
    var base: String? {
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
    var indexConditions: [MusicTagCondition] {
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

    private static var wrongCount: MPDAck { MPDAck(.argument, "Incorrect number of filter arguments") }

    private static func isOptionTail(_ rest: ArraySlice<String>) -> Bool {
        guard !rest.isEmpty, rest.count % 2 == 0 else { return false }
        return stride(from: rest.startIndex, to: rest.endIndex, by: 2).allSatisfy { optionKeywords.contains(rest[$0]) }
    }

    /// One `TYPE VALUE` pair of the old form. Its errors name no type, as MPD's.
    private static func parsePair(type: String, value: String, foldCase: Bool) throws(MPDAck) -> Node {
        guard let kind = FilterType(name: type) else { throw MPDAck(.argument, "Unknown filter type") }
        // The old form's search also looks for a substring (MPD 0.20 compatibility).
        let position: StringMatch.Position = foldCase ? .anywhere : .full
        switch kind {
        case .base:
            guard isSafeLocalURI(value) else { throw MPDAck(.argument, "Bad URI") }
            return .base(value)
        case .modifiedSince:
            return .modifiedSince(try TimeStamp.parse(value))
        case .file:
            return .uri(StringMatch(value, position: position, foldCase: foldCase, negated: false))
        case .any:
            return .tag(.any, StringMatch(value, position: position, foldCase: foldCase, negated: false))
        case .tag(let selector):
            return .tag(selector, StringMatch(value, position: position, foldCase: foldCase, negated: false))
        case .unsupported(let name):
            throw unsupported(name)
        }
    }

    fileprivate static func unsupported(_ name: String) -> MPDAck {
        MPDAck(.argument, "Unsupported filter type: \(name)")
    }

    /// MPD's `uri_safe_local`: segments separated by `/`, none empty, `.` or `..`.
    private static func isSafeLocalURI(_ uri: String) -> Bool {
        uri.split(separator: "/", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && $0 != "." && $0 != ".."
        }
    }
}

// MARK: - What a filter is made of

extension MPDFilter {
    fileprivate indirect enum Node: Sendable {
        case tag(TagSelector, StringMatch)
        case uri(StringMatch)
        case base(String)
        case modifiedSince(Int64)
        case not(Node)
        case and([Node])

        func matches(_ song: MPDSongFields) -> Bool {
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
    fileprivate enum TagSelector: Sendable {
        /// Every tag the song has (never its URI).
        case any
        /// One MPD tag: `tag` is nil for a tag Reel does not report; `fallbacks` are the tags
        /// looked at, in order, when the song lacks it (those Reel reports: the others are
        /// always missing, and MPD moves past a missing fallback).
        case named(tag: MPDTag?, fallbacks: [MPDTag])

        /// MPD's `TagSongFilter::Match`.
        func matches(_ song: MPDSongFields, _ match: StringMatch) -> Bool {
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
    fileprivate struct StringMatch: Sendable {
        enum Position: Sendable {
            /// The whole value.
            case full
            /// Anywhere in the value.
            case anywhere
            /// At its start.
            case prefix
        }

        let value: String
        let position: Position
        let foldCase: Bool
        let negated: Bool
        /// Set for `=~` and `!~`: it decides alone (position and folding then play no part).
        let regex: CompiledRegex?
        /// `value` folded, when `foldCase`.
        private let foldedValue: String
        private let valueBytes: [UInt8]

        init(_ value: String, position: Position, foldCase: Bool, negated: Bool, regex: CompiledRegex? = nil) {
            self.value = value
            self.position = position
            self.foldCase = foldCase
            self.negated = negated
            self.regex = regex
            foldedValue = foldCase ? MPDFilter.fold(value) : value
            valueBytes = Array(value.utf8)
        }

        func matches(_ text: String) -> Bool {
            matchesIgnoringNegation(text) != negated
        }

        func matchesIgnoringNegation(_ text: String) -> Bool {
            if let regex { return text.contains(regex.regex) }
            if foldCase {
                let folded = MPDFilter.fold(text)
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
    fileprivate final class CompiledRegex: @unchecked Sendable {
        let regex: Regex<AnyRegexOutput>

        /// The options MPD gives PCRE: `.` matches a newline, case ignored when folding; and
        /// matching by Unicode scalar rather than by character, as PCRE does.
        init(_ pattern: String, ignoringCase: Bool) throws(MPDAck) {
            do {
                var regex = try Regex(pattern).dotMatchesNewlines()
                if ignoringCase { regex = regex.ignoresCase() }
                self.regex = regex.matchingSemantics(.unicodeScalar)
            } catch {
                throw MPDAck(.argument, "Error in regex: \(error)")
            }
        }
    }

    /// Case folding for `search` and the `_ci` operators: `String.lowercased()` (full Unicode
    /// lowercasing, not ICU's case folding: `ß` stays `ß`), then the typographic quotes, dashes
    /// and ellipsis as their ASCII forms, as MPD's ICU transliteration does for punctuation (so
    /// `don't` finds `Don’t`).
    fileprivate static func fold(_ text: String) -> String {
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

// MARK: - Filter types

extension MPDFilter {
    /// What the TYPE word of a pair or an expression names (MPD's `locate_parse_type`).
    fileprivate enum FilterType {
        case file, any, base, modifiedSince
        case tag(TagSelector)
        case unsupported(String)

        /// `file`, `filename`, `any`, `AudioFormat`, `prio` and tag names in any ASCII case;
        /// `base`, `modified-since` and `added-since` exactly. Nil when MPD knows no such type.
        init?(name: String) {
            if equalsIgnoringASCIICase(name, "file") || equalsIgnoringASCIICase(name, "filename") {
                self = .file
            } else if equalsIgnoringASCIICase(name, "any") {
                self = .any
            } else if name == "base" {
                self = .base
            } else if name == "modified-since" {
                self = .modifiedSince
            } else if name == "added-since" {
                self = .unsupported(name)
            } else if equalsIgnoringASCIICase(name, "AudioFormat") || equalsIgnoringASCIICase(name, "prio") {
                self = .unsupported(name)
            } else if let canonical = mpdTagNames.first(where: { equalsIgnoringASCIICase(name, $0) }) {
                let fallbacks = MPDFilter.fallbacks[canonical, default: []].compactMap { MPDTag(rawValue: $0) }
                self = .tag(.named(tag: MPDTag(rawValue: canonical), fallbacks: fallbacks))
            } else {
                return nil
            }
        }
    }

    /// Every tag name MPD knows (`src/tag/Names.cxx`), Reel's `MPDTag` among them: a filter on
    /// one of these is valid even where Reel never has the tag.
    static let mpdTagNames: [String] = [
        "Artist", "ArtistSort", "Album", "AlbumSort", "AlbumArtist", "AlbumArtistSort", "Title", "TitleSort",
        "Track", "Name", "Genre", "Mood", "Date", "OriginalDate", "Composer", "ComposerSort", "Performer",
        "Conductor", "Work", "Movement", "MovementNumber", "ShowMovement", "Ensemble", "Location", "Grouping",
        "Comment", "Disc", "DiscSubtitle", "Label",
        "MUSICBRAINZ_ARTISTID", "MUSICBRAINZ_ALBUMID", "MUSICBRAINZ_ALBUMARTISTID", "MUSICBRAINZ_TRACKID",
        "MUSICBRAINZ_RELEASETRACKID", "MUSICBRAINZ_WORKID", "MUSICBRAINZ_RELEASEGROUPID",
    ]

    /// The tags looked at, in order, when a song lacks the one filtered on (MPD's
    /// `ApplyTagFallback`).
    private static let fallbacks: [String: [String]] = [
        "AlbumArtistSort": ["AlbumArtist", "Artist"],
        "AlbumArtist": ["Artist"],
        "ArtistSort": ["Artist"],
        "AlbumSort": ["Album"],
        "TitleSort": ["Title"],
        "ComposerSort": ["Composer"],
    ]

    fileprivate static func equalsIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        func lower(_ byte: UInt8) -> UInt8 {
            byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte
        }
        return a.utf8.elementsEqual(b.utf8) { lower($0) == lower($1) }
    }
}

// MARK: - The expression form

extension MPDFilter {
    /// Reads one `(EXPRESSION)` argument byte by byte, as MPD's `SongFilter::ParseExpression`:
    /// whitespace is any byte from 0x01 to 0x20, and a NUL byte ends the text.
    private struct ExpressionParser {
        private let bytes: [UInt8]
        private var index = 0
        private let foldCase: Bool

        /// MPD's limit on one quoted value, in bytes.
        private static let maxQuotedLength = 4096

        static func parse(_ argument: String, foldCase: Bool) throws(MPDAck) -> Node {
            var parser = ExpressionParser(bytes: Array(argument.utf8.prefix { $0 != 0 }), foldCase: foldCase)
            let node = try parser.expression()
            guard parser.current == 0 else { throw error("Unparsed garbage after expression") }
            return node
        }

        private init(bytes: [UInt8], foldCase: Bool) {
            self.bytes = bytes
            self.foldCase = foldCase
        }

        private static func error(_ message: String) -> MPDAck { MPDAck(.argument, message) }

        /// The byte at `index + offset`, 0 past the end (as the C string's terminator).
        private func peek(_ offset: Int = 0) -> UInt8 {
            index + offset < bytes.count ? bytes[index + offset] : 0
        }

        private var current: UInt8 { peek() }

        private var rest: String { String(decoding: bytes[min(index, bytes.count)...], as: UTF8.self) }

        private mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] > 0, bytes[index] <= 0x20 { index += 1 }
        }

        /// Past `byte` (known to be there) and the whitespace after it.
        private mutating func consume(_ byte: UInt8) {
            index += 1
            skipWhitespace()
        }

        private mutating func expectClosing() throws(MPDAck) {
            guard current == UInt8(ascii: ")") else { throw Self.error("')' expected") }
            consume(current)
        }

        /// `(` … `)`, at `(`.
        private mutating func expression() throws(MPDAck) -> Node {
            guard current == UInt8(ascii: "(") else { throw Self.error("'(' expected") }
            consume(current)

            if current == UInt8(ascii: "(") {
                let first = try expression()
                if current == UInt8(ascii: ")") {
                    consume(current)
                    return first
                }
                var items = [first]
                while true {
                    guard try word() == "AND" else { throw Self.error("'AND' expected") }
                    items.append(try expression())
                    if current == UInt8(ascii: ")") {
                        consume(current)
                        return .and(items)
                    }
                }
            }

            if current == UInt8(ascii: "!") {
                consume(current)
                guard current == UInt8(ascii: "(") else { throw Self.error("'(' expected") }
                let inner = try expression()
                try expectClosing()
                return .not(inner)
            }

            let name = try word()
            guard let type = FilterType(name: name) else { throw Self.error("Unknown filter type: \(name)") }
            switch type {
            case .modifiedSince:
                let value = try quoted()
                try expectClosing()
                return .modifiedSince(try TimeStamp.parse(value))
            case .base:
                let value = try quoted()
                try expectClosing()
                return .base(value)
            case .unsupported(let name):
                throw MPDFilter.unsupported(name)
            case .file:
                let match = try stringMatch()
                try expectClosing()
                return .uri(match)
            case .any:
                let match = try stringMatch()
                try expectClosing()
                return .tag(.any, match)
            case .tag(let selector):
                let match = try stringMatch()
                try expectClosing()
                return .tag(selector, match)
            }
        }

        /// A run of ASCII letters, `_` and `-` (a tag name or `AND`), and the whitespace after it.
        private mutating func word() throws(MPDAck) -> String {
            let start = index
            while index < bytes.count, Self.isWordByte(bytes[index]) { index += 1 }
            guard index > start else { throw Self.error("Word expected") }
            let word = String(decoding: bytes[start..<index], as: UTF8.self)
            skipWhitespace()
            return word
        }

        private static func isWordByte(_ byte: UInt8) -> Bool {
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }

        /// `'…'` or `"…"`, where `\` takes the next byte literally; and the whitespace after it.
        private mutating func quoted() throws(MPDAck) -> String {
            let quote = current
            guard quote == UInt8(ascii: "'") || quote == UInt8(ascii: "\"") else {
                throw Self.error("Quoted string expected")
            }
            index += 1
            var value: [UInt8] = []
            while current != quote {
                if current == UInt8(ascii: "\\") { index += 1 }
                guard current != 0 else { throw Self.error("Closing quote not found") }
                value.append(current)
                index += 1
                guard value.count < Self.maxQuotedLength else { throw Self.error("Quoted value is too long") }
            }
            consume(quote)
            return String(decoding: value, as: UTF8.self)
        }

        /// The operators with a word (`eq_cs`, `contains`, …): each must be followed by a space.
        private typealias WordOperator = (prefix: String, foldCase: Bool?, negated: Bool, position: StringMatch.Position)
        private static let wordOperators: [WordOperator] = [
            ("contains_cs ", false, false, .anywhere), ("!contains_cs ", false, true, .anywhere),
            ("contains_ci ", true, false, .anywhere), ("!contains_ci ", true, true, .anywhere),
            ("starts_with_cs ", false, false, .prefix), ("!starts_with_cs ", false, true, .prefix),
            ("starts_with_ci ", true, false, .prefix), ("!starts_with_ci ", true, true, .prefix),
            ("eq_cs ", false, false, .full), ("!eq_cs ", false, true, .full),
            ("eq_ci ", true, false, .full), ("!eq_ci ", true, true, .full),
            // Nil: the command decides (`find` compares case, `search` ignores it).
            ("contains ", nil, false, .anywhere), ("!contains ", nil, true, .anywhere),
            ("starts_with ", nil, false, .prefix), ("!starts_with ", nil, true, .prefix),
        ]

        /// An operator and its quoted value (MPD's `ParseStringFilter`).
        private mutating func stringMatch() throws(MPDAck) -> StringMatch {
            for op in Self.wordOperators where restStarts(withIgnoringASCIICase: op.prefix) {
                index += op.prefix.utf8.count
                skipWhitespace()
                let value = try quoted()
                return StringMatch(value, position: op.position, foldCase: op.foldCase ?? foldCase, negated: op.negated)
            }

            let first = peek(), second = peek(1)
            if (first == UInt8(ascii: "=") || first == UInt8(ascii: "!")) && second == UInt8(ascii: "~") {
                index += 2
                skipWhitespace()
                let value = try quoted()
                let regex = try CompiledRegex(value, ignoringCase: foldCase)
                return StringMatch(
                    value, position: .full, foldCase: foldCase, negated: first == UInt8(ascii: "!"), regex: regex)
            }

            let negated: Bool
            if first == UInt8(ascii: "!") && second == UInt8(ascii: "=") {
                negated = true
            } else if first == UInt8(ascii: "=") && second == UInt8(ascii: "=") {
                negated = false
            } else {
                throw Self.error("Unknown filter operator: \(rest)")
            }
            index += 2
            skipWhitespace()
            let value = try quoted()
            return StringMatch(value, position: .full, foldCase: foldCase, negated: negated)
        }

        private func restStarts(withIgnoringASCIICase prefix: String) -> Bool {
            let count = prefix.utf8.count
            guard bytes.count - index >= count else { return false }
            return MPDFilter.equalsIgnoringASCIICase(
                String(decoding: bytes[index..<index + count], as: UTF8.self), prefix)
        }
    }
}

// MARK: - Time stamps

extension MPDFilter {
    /// MPD's `ParseTimeStamp` for `modified-since`: ISO 8601 first, else whole seconds since
    /// 1970; when neither fits, the ISO 8601 error.
    enum TimeStamp {
        static func parse(_ text: String) throws(MPDAck) -> Int64 {
            let bytes = Array(text.utf8)
            do throws(MPDAck) {
                var parser = ISO8601(bytes: bytes)
                return try parser.parse()
            } catch {
                if !bytes.isEmpty, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                    return Int64(text) ?? Int64.max
                }
                throw error
            }
        }
    }

    /// MPD's `ParseISO8601`, with glibc's `strptime` rules for the numbers (each field takes up
    /// to its width of digits, stopping early where another digit would leave its range):
    /// `YYYY-MM` (the month's start), `YYYY-MM-DD` or `YYYYMMDD`, then optionally `T` with `HH`,
    /// `HH:MM`, `HH:MM:SS`, `HHMM` or `HHMMSS`, then optionally `Z` or an offset `±HH`,
    /// `±HHMM`, `±HH:MM`. Times without a zone are UTC.
    private struct ISO8601 {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        private static func error(_ message: String) -> MPDAck { MPDAck(.argument, message) }

        private var current: UInt8 { index < bytes.count ? bytes[index] : 0 }

        private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        /// glibc's `get_number`: skips whitespace, then at least one digit and at most `width`,
        /// stopping early when one more would pass `range`; nil (and nothing read) otherwise.
        private mutating func number(_ range: ClosedRange<Int>, width: Int) -> Int? {
            let start = index
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D].contains(bytes[index]) { index += 1 }
            guard Self.isDigit(current) else {
                index = start
                return nil
            }
            var value = 0
            var left = width
            repeat {
                value = value * 10 + Int(current - UInt8(ascii: "0"))
                index += 1
                left -= 1
            } while left > 0 && value * 10 <= range.upperBound && Self.isDigit(current)
            guard range.contains(value) else {
                index = start
                return nil
            }
            return value
        }

        private mutating func literal(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        mutating func parse() throws(MPDAck) -> Int64 {
            // A whole month: its first second.
            if let year = number(0...9999, width: 4), literal(UInt8(ascii: "-")), let month = number(1...12, width: 2),
                index == bytes.count
            {
                return Self.seconds(year: year, month: month, day: 1)
            }

            index = 0
            var date: (year: Int, month: Int, day: Int)?
            if let year = number(0...9999, width: 4), literal(UInt8(ascii: "-")), let month = number(1...12, width: 2),
                literal(UInt8(ascii: "-")), let day = number(1...31, width: 2)
            {
                date = (year, month, day)
            } else {
                index = 0
                if let year = number(0...9999, width: 4), let month = number(1...12, width: 2),
                    let day = number(1...31, width: 2)
                {
                    date = (year, month, day)
                }
            }
            guard let date else { throw Self.error("Failed to parse date") }

            var time = Self.seconds(year: date.year, month: date.month, day: date.day)
            if literal(UInt8(ascii: "T")) {
                time += try timeOfDay()
            }

            if literal(UInt8(ascii: "Z")) {
                // UTC
            } else if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
                time -= try zoneOffset()
            }

            guard index == bytes.count else { throw Self.error("Garbage at end of time stamp") }
            return time
        }

        /// `HH`, `HH:MM`, `HH:MM:SS`, `HHMM`, `HHMMSS`, in seconds.
        private mutating func timeOfDay() throws(MPDAck) -> Int64 {
            let failed = Self.error("Failed to parse time of day")
            guard let hour = number(0...23, width: 2) else { throw failed }
            var minute = 0, second = 0
            if literal(UInt8(ascii: ":")) {
                guard let value = number(0...59, width: 2) else { throw failed }
                minute = value
                if literal(UInt8(ascii: ":")) {
                    guard let value = number(0...61, width: 2) else { throw failed }
                    second = value
                }
            } else if let value = number(0...59, width: 2) {
                minute = value
                if let value = number(0...61, width: 2) { second = value }
            }
            return Int64(hour * 3600 + minute * 60 + second)
        }

        /// `±HH`, `±HHMM`, `±HH:MM`, in seconds east of UTC.
        private mutating func zoneOffset() throws(MPDAck) -> Int64 {
            let negative = current == UInt8(ascii: "-")
            index += 1
            let failed = Self.error("Failed to parse time zone offset")
            func digits(_ parser: inout ISO8601) -> (value: Int, count: Int) {
                var value = 0, count = 0
                while Self.isDigit(parser.current) {
                    value = value &* 10 &+ Int(parser.current - UInt8(ascii: "0"))
                    parser.index += 1
                    count += 1
                }
                return (value, count)
            }
            let (value, count) = digits(&self)
            var hours: Int, minutes: Int
            switch count {
            case 4:
                (hours, minutes) = (value / 100, value % 100)
            case 2:
                (hours, minutes) = (value, 0)
                if literal(UInt8(ascii: ":")) {
                    let (value, count) = digits(&self)
                    guard count == 2 else { throw failed }
                    minutes = value
                }
            default:
                throw failed
            }
            guard hours <= 13 else { throw Self.error("Time offset hours out of range") }
            guard minutes < 60 else { throw Self.error("Time offset minutes out of range") }
            let offset = Int64(hours * 3600 + minutes * 60)
            return negative ? -offset : offset
        }

        /// Seconds since 1970 at the start of a day (the proleptic Gregorian calendar; a day past
        /// the month's end runs into the next month, as `timegm` does).
        private static func seconds(year: Int, month: Int, day: Int) -> Int64 {
            let y = Int64(month <= 2 ? year - 1 : year)
            let era = (y >= 0 ? y : y - 399) / 400
            let yearOfEra = y - era * 400
            let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
            let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return (era * 146_097 + dayOfEra - 719_468) * 86_400
        }
    }
}
