// The station's ICY response headers: `icy-name`, `icy-genre`, `icy-br`, `icy-metaint`, …

/// What a Shoutcast/Icecast server says about the station in its response headers (or, for
/// Shoutcast 1, in the `ICY 200 OK` header block). Fill it with `take(headerLine:)` or
/// `take(name:value:)` as the header lines arrive. Pure value; any thread.
public struct ICYHeaders: Equatable, Sendable {
    /// `icy-name`: the station's name, MPD's `Name:`.
    public var name: String?
    /// `icy-genre`.
    public var genre: String?
    /// `icy-description`.
    public var description: String?
    /// `icy-url`: the station's home page.
    public var url: String?
    /// `icy-br` (kbit/s), or `ice-bitrate=` of `ice-audio-info` when there is no `icy-br`.
    public var bitrate: Int?
    /// `icy-metaint`: audio bytes between metadata blocks; nil when the server interleaves none.
    public var metaInterval: Int?

    public init() {}

    /// The longest header value kept (longer values are cut, at a character boundary).
    public static let maximumValueLength = 1024

    /// Reads one header line (`icy-name: Radio X`, with or without its CR LF). Returns whether
    /// it was an ICY field this type keeps; other lines are ignored.
    @discardableResult
    public mutating func take<C: Collection>(headerLine: C) -> Bool where C.Element == UInt8 {
        guard let colon = headerLine.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let nameBytes = headerLine[headerLine.startIndex..<colon].prefix(64)
        guard nameBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        let name = String(decoding: nameBytes, as: UTF8.self)
        return take(name: name, value: headerLine[headerLine.index(after: colon)...])
    }

    /// Reads one header given as name and raw value bytes. Returns whether it was kept.
    @discardableResult
    public mutating func take<C: Collection>(name: String, value: C) -> Bool where C.Element == UInt8 {
        let text = String(trimmedBlanks(decodeStationText(value.prefix(Self.maximumValueLength * 4))).prefix(Self.maximumValueLength))
        switch name.lowercased() {
        case "icy-name": self.name = text.isEmpty ? nil : text
        case "icy-genre": genre = text.isEmpty ? nil : text
        case "icy-description": description = text.isEmpty ? nil : text
        case "icy-url": url = text.isEmpty ? nil : text
        case "icy-br":
            guard let value = Self.parseBitrate(text) else { return false }
            bitrate = value
        case "ice-audio-info":
            guard bitrate == nil, let value = Self.parseAudioInfoBitrate(text) else { return false }
            bitrate = value
        case "icy-metaint":
            guard let value = Self.parseMetaInterval(text) else { return false }
            metaInterval = value
        default: return false
        }
        return true
    }

    /// `icy-br`'s kbit/s: the first number of the value (`128`, `128,128` as some servers repeat
    /// it, `128 kbps`), 1…100000; nil otherwise.
    public static func parseBitrate(_ text: String) -> Int? {
        let digits = trimmedBlanks(text).prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 6, let value = Int(digits), value > 0, value <= 100_000 else { return nil }
        return value
    }

    /// `icy-metaint`'s byte count: a plain integer, 1…`ICYDemuxer.maximumMetaInterval`; nil
    /// otherwise (then the body must not be de-interleaved: the caller refuses or ignores it).
    public static func parseMetaInterval(_ text: String) -> Int? {
        let trimmed = trimmedBlanks(text)
        guard !trimmed.isEmpty, trimmed.count <= 8, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }),
            let value = Int(trimmed), value > 0, value <= ICYDemuxer.maximumMetaInterval
        else { return nil }
        return value
    }

    /// `ice-bitrate=` of an `ice-audio-info` value (`ice-samplerate=44100;ice-bitrate=128;…`).
    static func parseAudioInfoBitrate(_ text: String) -> Int? {
        for part in text.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, trimmedBlanks(pair[0]).lowercased() == "ice-bitrate" {
                return parseBitrate(String(pair[1]))
            }
        }
        return nil
    }
}
