// MPD's song filter for `find`, `search`, `findadd`, `searchadd`, `count`, `searchcount` and
// `list`: the old `TYPE VALUE` pairs and the `(EXPRESSION)` form, parsed into a `MusicQuery`
// (ReelModel), which the core runs. The syntax, its rules and error messages are MPD's
// (`src/song/Filter.cxx` and the filters beside it); `MusicQuery` says where Reel differs.

import ReelModel

/// MPD's filters are the model's song queries; this front end only parses them.
typealias MPDFilter = MusicQuery
/// What a filter sees of one song.
typealias MPDSongFields = SongFields

extension MPDFilter {
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
                let regex: CompiledRegex
                do throws(CompiledRegex.InvalidPattern) {
                    regex = try CompiledRegex(value, ignoringCase: foldCase)
                } catch {
                    throw MPDAck(.argument, "Error in regex: \(error.message)")
                }
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
