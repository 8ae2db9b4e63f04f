// What an ID3v2 tag of HLS timed metadata says is on air: a packed-audio segment's leading tag,
// or the payload of an MPEG-TS timed-ID3 stream's packet (stream type 0x15, "ID3 ").

/// The title and artist of one ID3v2.3 or ID3v2.4 tag, as a station sends them for what is on
/// air: `TIT2` (else a `TXXX` described `title` or `StreamTitle`) and `TPE1`. Text frames in any
/// of ID3's encodings (0 Latin-1, 1 UTF-16 with a byte order mark, 2 UTF-16BE, 3 UTF-8); the
/// tag's unsynchronisation (2.3: the whole tag; 2.4: the tag's flag or each frame's), an
/// extended header, 2.4's data length indicator. Bounded: a tag of more than `maximumTagBytes`
/// is refused, at most `maximumFrames` frames are read. A tag that is not ID3v2.3/2.4 or breaks
/// its own sizes throws a `StreamFormatError` naming what was wrong; never traps. Pure; any thread.
public struct ID3OnAir: Equatable, Sendable {
    public var title: String?
    public var artist: String?

    /// The most bytes of a tag (header, body and footer): a timed-metadata tag is a few hundred
    /// bytes; FFmpeg's MPEG-TS demuxer hands out at most 200 KiB a packet.
    public static let maximumTagBytes = 1 << 20
    /// The most frames read from one tag.
    public static let maximumFrames = 256

    public init(title: String? = nil, artist: String? = nil) {
        self.title = title
        self.artist = artist
    }

    /// What is on air as a stream's title: "Artist - Title" when the tag gives both (as an ICY
    /// `StreamTitle` says it), the title alone, nil without a title.
    public var streamTitle: String? {
        guard let title else { return nil }
        guard let artist else { return title }
        return "\(artist) - \(title)"
    }

    /// Whether `bytes` start with an ID3v2 tag's identifier ("ID3").
    public static func startsTag<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        bytes.starts(with: [0x49, 0x44, 0x33])
    }

    /// The length of the ID3v2 tag `bytes` start with (its header, body and footer, up to the
    /// bytes there are), 0 without one: what a packed-audio segment's demuxer must not be given.
    public static func tagLength(_ bytes: [UInt8]) -> Int {
        guard bytes.count >= 10, startsTag(bytes), bytes[3] != 0xFF, bytes[4] != 0xFF,
            let size = syncsafe(bytes[6..<10])
        else { return 0 }
        let footer = bytes[5] & 0x10 != 0 ? 10 : 0
        return min(bytes.count, 10 + size + footer)
    }

    /// The ID3 tag in the payload of an MPEG-TS timed-metadata packet (stream type 0x15) as a
    /// demuxer hands it out. H.222.0 (2.12.4) wraps the tag in a metadata access unit whose
    /// 5-byte header FFmpeg's demuxer takes off; streams that send the bare tag, as Apple's
    /// timed-metadata note shows it, then lose the tag's own first 5 bytes ("ID3", its version):
    /// those are put back when the rest is a tag's (its flags, a syncsafe size that matches the
    /// bytes there are), as ID3v2.4, or ID3v2.3 when `version3`. A payload with the access unit
    /// header still on (a demuxer that does not take it off) loses it. Anything else is
    /// returned as it is (and does not parse). Pure.
    public static func tag(inTimedMetadata payload: [UInt8], version3: Bool = false) -> [UInt8] {
        if startsTag(payload) { return payload }
        if payload.count >= 15, startsTag(payload[5...]) { return Array(payload[5...]) }
        if payload.count >= 5, payload[0] & 0x0F == 0, let size = syncsafe(payload[1..<5]),
            size + 5 + (payload[0] & 0x10 != 0 ? 10 : 0) <= payload.count, size + 5 >= payload.count - 10
        {
            return [0x49, 0x44, 0x33, version3 ? 3 : 4, 0] + payload
        }
        return payload
    }

    /// Parses the tag of a timed-metadata packet's payload (`tag(inTimedMetadata:)`): as
    /// ID3v2.4 when its first bytes had to be put back, then as ID3v2.3 if that fails.
    public init(timedMetadata payload: [UInt8]) throws(StreamFormatError) {
        let tag = Self.tag(inTimedMetadata: payload)
        guard !Self.startsTag(payload), tag.count == payload.count + 5 else {
            try self.init(tag: tag)
            return
        }
        do throws(StreamFormatError) {
            try self.init(tag: tag)
        } catch {
            try self.init(tag: Self.tag(inTimedMetadata: payload, version3: true))
        }
    }

    /// Parses the tag `bytes` start with (bytes after it are ignored).
    public init(tag bytes: [UInt8]) throws(StreamFormatError) {
        guard bytes.count >= 10, Self.startsTag(bytes) else {
            throw StreamFormatError(.malformed, "not an ID3v2 tag (it does not start with \"ID3\" and a 10-byte header)")
        }
        let version = bytes[3]
        guard version == 3 || version == 4 else {
            throw StreamFormatError(.unsupported, "an ID3v2.\(version) tag (only ID3v2.3 and ID3v2.4 are read)")
        }
        guard let size = Self.syncsafe(bytes[6..<10]) else {
            throw StreamFormatError(.malformed, "the ID3 tag's size is not a syncsafe integer")
        }
        guard 10 + size <= Self.maximumTagBytes else {
            throw StreamFormatError(.tooLarge, "the ID3 tag holds \(size) bytes, more than \(Self.maximumTagBytes)")
        }
        guard 10 + size <= bytes.count else {
            throw StreamFormatError(.malformed, "the ID3 tag says it holds \(size) bytes, only \(bytes.count - 10) came")
        }
        let flags = bytes[5]
        var body = Array(bytes[10..<10 + size])
        // 2.3 unsynchronises the whole tag (extended header included); 2.4's flag says every frame is.
        let tagUnsynchronised = flags & 0x80 != 0
        if version == 3 && tagUnsynchronised { body = Self.resynchronised(body) }
        var index = 0
        if flags & 0x40 != 0 {
            // An extended header: its size counts itself in 2.4 (syncsafe), not in 2.3.
            guard body.count >= 4 else { throw StreamFormatError(.malformed, "the ID3 tag's extended header is cut short") }
            let length: Int
            if version == 4 {
                guard let size = Self.syncsafe(body[0..<4]) else {
                    throw StreamFormatError(.malformed, "the ID3 tag's extended header size is not a syncsafe integer")
                }
                length = size
            } else {
                length = 4 + Self.bigEndian(body[0..<4])
            }
            guard length >= 4, length <= body.count else {
                throw StreamFormatError(.malformed, "the ID3 tag's extended header says \(length) bytes, the tag holds \(body.count)")
            }
            index = length
        }
        var title: String?
        var described: String?
        var artist: String?
        var frames = 0
        while index + 10 <= body.count, frames < Self.maximumFrames {
            if body[index] == 0 { break }  // padding
            let id = body[index..<index + 4]
            guard id.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }) else {
                throw StreamFormatError(.malformed, "the ID3 tag holds a frame whose name is not a frame name (at byte \(10 + index))")
            }
            let name = String(decoding: id, as: UTF8.self)
            let frameSize: Int
            if version == 4 {
                guard let size = Self.syncsafe(body[index + 4..<index + 8]) else {
                    throw StreamFormatError(.malformed, "the ID3 frame \(name)'s size is not a syncsafe integer")
                }
                frameSize = size
            } else {
                frameSize = Self.bigEndian(body[index + 4..<index + 8])
            }
            let start = index + 10
            guard frameSize <= body.count - start else {
                throw StreamFormatError(.malformed, "the ID3 frame \(name) says it holds \(frameSize) bytes, the tag has \(body.count - start) left")
            }
            let formatFlags = body[index + 9]
            var content = Array(body[start..<start + frameSize])
            index = start + frameSize
            frames += 1
            guard name == "TIT2" || name == "TPE1" || name == "TXXX" else { continue }
            if version == 4 {
                // Compressed or encrypted: not read. Grouped: a group byte first; a data length
                // indicator: four bytes first; unsynchronised (the frame's flag or the tag's).
                if formatFlags & 0x0C != 0 { continue }
                var skip = 0
                if formatFlags & 0x40 != 0 { skip += 1 }
                if formatFlags & 0x01 != 0 { skip += 4 }
                guard skip <= content.count else {
                    throw StreamFormatError(.malformed, "the ID3 frame \(name) is shorter than its flags say")
                }
                content.removeFirst(skip)
                if formatFlags & 0x02 != 0 || tagUnsynchronised { content = Self.resynchronised(content) }
            } else {
                // 2.3's compression and encryption flags.
                if formatFlags & 0xC0 != 0 { continue }
                if formatFlags & 0x20 != 0 {
                    guard !content.isEmpty else { throw StreamFormatError(.malformed, "the ID3 frame \(name) is shorter than its flags say") }
                    content.removeFirst()
                }
            }
            let texts = try Self.texts(content, frame: name)
            switch name {
            case "TIT2":
                if title == nil, let text = texts.first.flatMap(Self.nonEmpty) { title = text }
            case "TPE1":
                // Several artists (2.4 separates them by NUL) are one "A / B".
                let names = texts.compactMap(Self.nonEmpty)
                if artist == nil, !names.isEmpty { artist = names.joined(separator: " / ") }
            default:
                if texts.count >= 2, ["title", "streamtitle"].contains(texts[0].lowercased()),
                    described == nil, let text = Self.nonEmpty(texts[1])
                {
                    described = text
                }
            }
        }
        self.title = title ?? described
        self.artist = self.title == nil ? nil : artist
    }

    // MARK: Pieces

    private static func nonEmpty(_ text: String) -> String? {
        let trimmed = trimmedBlanks(text)
        return trimmed.isEmpty ? nil : String(trimmed)
    }

    /// Four bytes of 7 bits each (the top bit clear), nil when one has its top bit set.
    static func syncsafe(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        return bytes.reduce(0) { $0 << 7 | Int($1) }
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    /// `bytes` with unsynchronisation undone: each 0xFF 0x00 is 0xFF.
    static func resynchronised(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            out.append(bytes[index])
            if bytes[index] == 0xFF && index + 1 < bytes.count && bytes[index + 1] == 0 { index += 1 }
            index += 1
        }
        return out
    }

    /// The strings of a text frame (its encoding byte, then strings ended by NUL), each
    /// decoded as the encoding says and cleaned of control characters.
    static func texts(_ content: [UInt8], frame: String) throws(StreamFormatError) -> [String] {
        guard let encoding = content.first else { return [] }
        let body = content.dropFirst()
        switch encoding {
        case 0:
            // Latin-1: each byte is its code point.
            return body.split(separator: 0, omittingEmptySubsequences: false).map { part in
                decodeStationText(Array(String(String.UnicodeScalarView(part.map { Unicode.Scalar($0) })).utf8))
            }
        case 3:
            return body.split(separator: 0, omittingEmptySubsequences: false).map { decodeStationText($0) }
        case 1, 2:
            var strings: [String] = []
            var index = body.startIndex
            while index + 1 < body.endIndex {
                var littleEndian = false
                if encoding == 1 {
                    if body[index] == 0xFF && body[index + 1] == 0xFE {
                        littleEndian = true
                        index += 2
                    } else if body[index] == 0xFE && body[index + 1] == 0xFF {
                        index += 2
                    }
                }
                var units: [UInt16] = []
                while index + 1 < body.endIndex {
                    let unit = littleEndian
                        ? UInt16(body[index + 1]) << 8 | UInt16(body[index])
                        : UInt16(body[index]) << 8 | UInt16(body[index + 1])
                    index += 2
                    if unit == 0 { break }
                    units.append(unit)
                }
                // Unpaired surrogates decode as U+FFFD.
                strings.append(decodeStationText(Array(String(decoding: units, as: UTF16.self).utf8)))
            }
            return strings
        default:
            throw StreamFormatError(.malformed, "the ID3 frame \(frame) names text encoding \(encoding) (0 to 3 are ID3's)")
        }
    }
}
