// What a stream's server said before its body: parsed from libcurl's header lines, without I/O.

import ReelModel

/// One response's status and the headers a stream needs. Built line by line (`take`): a status
/// line starts a response afresh (a redirect's headers are replaced by the next response's),
/// an empty line ends it.
public struct HTTPResponseHead: Equatable, Sendable {
    /// The status code (`ICY 200 OK` of a Shoutcast server is 200).
    public var status: Int = 0
    public var contentType: String?
    /// Bytes in the body, when the server says (`Content-Length`): a finite resource.
    public var contentLength: Int64?
    /// `Accept-Ranges: bytes`.
    public var acceptsRanges = false
    /// For a 206: the first byte of the range sent (`Content-Range: bytes N-…/…`).
    public var rangeStart: Int64?
    /// The total of a 206's `Content-Range` (`…/TOTAL`), when not `*`.
    public var rangeTotal: Int64?
    /// Bytes of audio between two ICY metadata blocks (`icy-metaint`), when the server sends them.
    public var icyMetaInterval: Int?
    /// The station's name (`icy-name`).
    public var icyName: String?
    /// Kilobits a second (`icy-br`).
    public var icyBitrate: Int?
    /// True once the empty line after the headers came.
    public var complete = false

    public init() {}

    /// The largest `icy-metaint` taken: an interval beyond it is an error (ICY servers send
    /// 8–64 KiB).
    public static let maxMetaInterval = 1 << 20

    /// Takes one header line (without its line end). A status line starts a new response.
    public mutating func take(line: String) {
        if line.hasPrefix("HTTP/") || line.hasPrefix("ICY ") {
            self = HTTPResponseHead()
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            status = parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
            return
        }
        if line.isEmpty {
            complete = true
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingSpaces()
        switch name {
        case "content-type": contentType = value.isEmpty ? nil : value
        case "content-length": contentLength = Int64(value).flatMap { $0 >= 0 ? $0 : nil }
        case "accept-ranges": acceptsRanges = value.lowercased() == "bytes"
        case "content-range": (rangeStart, rangeTotal) = Self.parseContentRange(value)
        case "icy-metaint":
            icyMetaInterval = Int(value).flatMap { $0 > 0 && $0 <= Self.maxMetaInterval ? $0 : nil }
        case "icy-name": icyName = value.isEmpty ? nil : value
        case "icy-br":
            // Some servers send `128,128`: the first.
            icyBitrate = Int(value.split(separator: ",").first.map { String($0).trimmingSpaces() } ?? "")
        default: break
        }
    }

    /// `bytes START-END/TOTAL`.
    static func parseContentRange(_ value: String) -> (Int64?, Int64?) {
        let lower = value.lowercased()
        guard lower.hasPrefix("bytes ") else { return (nil, nil) }
        let spec = lower.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1)
        let start = halves.first.flatMap { $0.split(separator: "-").first }.flatMap { Int64($0) }
        let total = halves.count == 2 ? Int64(halves[1]) : nil
        return (start, total)
    }

    /// The media type without parameters, lower case (`audio/mpeg`).
    public var mediaType: String? {
        contentType.map { String($0.split(separator: ";").first ?? "").trimmingSpaces().lowercased() }
    }

    /// A body that is a web page, not audio.
    public var isHTML: Bool {
        guard let type = mediaType else { return false }
        return type == "text/html" || type == "application/xhtml+xml"
    }

    /// A body that is MP3 (MPEG audio), by its type: it goes to libmpg123.
    public var isMPEGAudio: Bool {
        guard let type = mediaType else { return false }
        return ["audio/mpeg", "audio/mp3", "audio/x-mpeg", "audio/mpeg3", "audio/x-mp3"].contains(type)
    }

    /// The body's length, when it is finite: `Content-Length` of a 200, the total of a 206.
    public var resourceLength: Int64? {
        status == 206 ? rangeTotal : contentLength
    }

    /// Why this response is not one to play from (nil when it is): a status other than 200/206,
    /// or a web page. For `url`'s message.
    public func refusal(url: String) -> ReelError? {
        guard status == 200 || status == 206 else {
            return ReelError(.unreachable, "\(url) answered HTTP \(status)")
        }
        if isHTML {
            return ReelError(.unreachable, "\(url) sent a web page (\(mediaType ?? "text/html")), not audio")
        }
        return nil
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
