// One ICY metadata block, parsed: `StreamTitle='…';StreamUrl='…';` as Shoutcast and Icecast send it.

/// The fields of one ICY metadata block (the bytes between two stretches of audio in an
/// `Icy-MetaData: 1` stream; `ICYDemuxer` cuts them out). Pure value; any thread.
///
/// The syntax is `Name='value';` repeated, padded with NULs to a multiple of 16 bytes. Real
/// servers do not escape anything, so a value may itself hold `'` and `;` (`StreamTitle='Rock 'n'
/// Roll; Live';`): a value ends at a `'` that is followed by the block's end, or by `;` and then
/// the block's end or another `Name=`. That is MPD's rule (`IcyMetaDataParser.cxx`: a quote
/// followed by `;`) made stricter, so `'a'; b` inside a title stays in the title. An unquoted
/// value (`StreamTitle=Song;`) runs to the next `;`. Text is decoded by `decodeStationText`
/// (UTF-8 when valid, else Windows-1252/Latin-1).
public struct ICYMetadata: Equatable, Sendable {
    /// One `Name='value'` pair, in the order the block had them.
    public struct Field: Equatable, Sendable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Every field of the block, in order (duplicates kept).
    public var fields: [Field]

    public init(fields: [Field]) {
        self.fields = fields
    }

    /// The first field named `name` (compared without regard to ASCII case), or nil.
    public func value(of name: String) -> String? {
        let key = name.lowercased()
        return fields.first { $0.name.lowercased() == key }?.value
    }

    /// `StreamTitle`: what is on air ("Artist - Title" by convention). `""` means the station
    /// cleared it; nil means this block did not say (keep the title shown).
    public var streamTitle: String? { value(of: "StreamTitle") }

    /// `StreamUrl`: a link the station attaches to the title (often empty), or nil.
    public var streamURL: String? { value(of: "StreamUrl") }

    /// Parses a block's bytes (without its length byte). Nil when the block holds no field: an
    /// empty block or NUL padding (the usual "no change"), or garbage without `Name=`.
    /// Reads at most `ICYDemuxer.maximumBlockSize` bytes; never traps.
    public init?<C: Collection>(block: C) where C.Element == UInt8 {
        var bytes = Array(block.prefix(ICYDemuxer.maximumBlockSize))
        while let last = bytes.last, last == 0 { bytes.removeLast() }
        var fields: [Field] = []
        var index = 0
        let end = bytes.count
        while index < end {
            // Skip separators and blanks between fields.
            while index < end, bytes[index] == UInt8(ascii: ";") || isBlankByte(bytes[index]) || bytes[index] == 0 {
                index += 1
            }
            guard index < end else { break }
            guard let nameEnd = nameEnd(bytes, from: index) else { break }
            let name = decodeStationText(bytes[index..<nameEnd])
            index = nameEnd + 1  // past '='
            let value: ArraySlice<UInt8>
            if index < end, bytes[index] == UInt8(ascii: "'") {
                let start = index + 1
                let close = closingQuote(bytes, from: start)
                value = bytes[start..<close]
                index = close + 1
            } else {
                var stop = index
                while stop < end, bytes[stop] != UInt8(ascii: ";") { stop += 1 }
                value = bytes[index..<stop]
                index = stop + 1
            }
            var text = decodeStationText(value)
            if text.unicodeScalars.last == " " || text.unicodeScalars.first == " " { text = String(trimmedBlanks(text)) }
            fields.append(Field(name: name, value: text))
        }
        guard !fields.isEmpty else { return nil }
        self.fields = fields
    }
}

private func isBlankByte(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}

private func isNameByte(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
        || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
}

/// The index of the `=` ending a field name that starts at `start`, or nil when the bytes there
/// are not a name (1…64 name characters, then `=`).
private func nameEnd(_ bytes: [UInt8], from start: Int) -> Int? {
    var index = start
    while index < bytes.count, index - start <= 64, isNameByte(bytes[index]) { index += 1 }
    guard index > start, index - start <= 64, index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
    return index
}

/// The index of the quote closing a value that starts at `start` (see `ICYMetadata`), or the
/// block's end when no quote closes it (a cut-off block keeps what it has).
private func closingQuote(_ bytes: [UInt8], from start: Int) -> Int {
    let end = bytes.count
    var lastQuoteBeforeSemicolon: Int?
    var index = start
    while index < end {
        if bytes[index] == UInt8(ascii: "'") {
            let next = index + 1
            if next == end { return index }
            if bytes[next] == UInt8(ascii: ";") {
                if lastQuoteBeforeSemicolon == nil { lastQuoteBeforeSemicolon = index }
                var after = next + 1
                while after < end, isBlankByte(bytes[after]) { after += 1 }
                if after == end || nameEnd(bytes, from: after) != nil { return index }
            } else if allBlank(bytes, from: next) {
                return index
            }
        }
        index += 1
    }
    // No quote is followed by another field: the first `';` ends it, as in MPD.
    return lastQuoteBeforeSemicolon ?? end
}

private func allBlank(_ bytes: [UInt8], from start: Int) -> Bool {
    var index = start
    while index < bytes.count {
        if !isBlankByte(bytes[index]) { return false }
        index += 1
    }
    return true
}
