// XSPF station lists through a small, bounded XML reader (no DTD, no entity expansion).

/// The tracks of an XSPF body: each `<track>`'s first `<location>` and `<title>` (and
/// `<duration>` in milliseconds), in order. The reader knows the XML it needs and no more:
/// elements, attributes (skipped), text, CDATA, comments, processing instructions; a DOCTYPE
/// is skipped and its entities are never defined, so only the five predefined entities and
/// character references are decoded (`&foo;` stays as it is: no entity expansion, no bomb).
/// Nesting deeper than 64 or text longer than the line limit is refused or cut.
func readXSPFEntries(_ bytes: [UInt8], limits: PlaylistLimits) throws(StreamFormatError) -> [RawPlaylistEntry] {
    var reader = XMLReader(bytes: bytes)
    var stack: [String] = []
    var entries: [RawPlaylistEntry] = []
    var sawPlaylist = false
    var trackNumber = 0
    var location: String?
    var title: String?
    var duration: Double?
    var text: [UInt8] = []
    var textTooLong = false
    while let event = try reader.next() {
        switch event {
        case .start(let name, let selfClosing):
            let local = localName(name)
            if local == "playlist" { sawPlaylist = true }
            if selfClosing { continue }
            guard stack.count < 64 else {
                throw StreamFormatError(.malformed, "the XSPF playlist nests elements deeper than 64")
            }
            stack.append(local)
            if local == "track" {
                trackNumber += 1
                location = nil
                title = nil
                duration = nil
            }
            text.removeAll(keepingCapacity: true)
            textTooLong = false
        case .text(let bytes):
            if text.count + bytes.count > limits.maximumLineLength {
                textTooLong = true
            } else {
                text += bytes
            }
        case .end(let name):
            let local = localName(name)
            guard let index = stack.lastIndex(of: local) else { continue }  // a stray end tag
            stack.removeSubrange(index...)
            let inTrack = stack.last == "track"
            if inTrack && local == "location" && location == nil {
                location = textTooLong ? "" : String(trimmedBlanks(decodeStationText(text)))
            } else if inTrack && local == "title" && title == nil && !textTooLong {
                let value = String(trimmedBlanks(decodeStationText(text)))
                title = value.isEmpty ? nil : value
            } else if inTrack && local == "duration" && !textTooLong {
                let value = String(trimmedBlanks(decodeStationText(text)))
                if value.count <= 24, let milliseconds = Double(value), milliseconds.isFinite, milliseconds >= 0 {
                    duration = milliseconds / 1000
                }
            } else if local == "track" {
                if let location, !location.isEmpty {
                    entries.append(RawPlaylistEntry(line: trackNumber, location: location, title: title, duration: duration))
                } else {
                    entries.append(RawPlaylistEntry(
                        line: trackNumber, location: "", problem: "track \(trackNumber) has no usable <location>"))
                }
                if entries.count > limits.maximumEntries * 2 { return entries }
            }
            text.removeAll(keepingCapacity: true)
            textTooLong = false
        }
    }
    guard sawPlaylist else { throw StreamFormatError(.malformed, "not an XSPF playlist: no <playlist> element") }
    return entries
}

private func localName(_ name: String) -> String {
    if let colon = name.lastIndex(of: ":") { return String(name[name.index(after: colon)...]).lowercased() }
    return name.lowercased()
}

/// A pull reader over XML bytes: start and end tags, and text with the predefined entities and
/// character references decoded. Malformed markup throws `.malformed`; work is linear in the
/// input (every loop consumes bytes).
struct XMLReader {
    enum Event {
        case start(name: String, selfClosing: Bool)
        case end(name: String)
        case text([UInt8])
    }

    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    mutating func next() throws(StreamFormatError) -> Event? {
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
                return .text(decodeEntities(bytes[start..<index]))
            }
            if matches("<!--") {
                try skip(past: "-->", what: "comment")
            } else if matches("<![CDATA[") {
                let start = index + 9
                try skip(past: "]]>", what: "CDATA section")
                return .text(Array(bytes[start..<(index - 3)]))
            } else if matches("<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if matches("<!") {
                try skipDeclaration()
            } else if matches("</") {
                index += 2
                let name = readName()
                while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
                guard index < bytes.count else { throw unterminated("end tag") }
                index += 1
                return .end(name: name)
            } else {
                index += 1
                let name = readName()
                guard !name.isEmpty else { throw StreamFormatError(.malformed, "the XML has a '<' that starts no tag") }
                // Attributes are skipped; a quoted value may hold '>'.
                var quote: UInt8?
                while index < bytes.count {
                    let byte = bytes[index]
                    if let open = quote {
                        if byte == open { quote = nil }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: ">") {
                        break
                    }
                    index += 1
                }
                guard index < bytes.count else { throw unterminated("start tag <\(name)>") }
                let selfClosing = index > 0 && bytes[index - 1] == UInt8(ascii: "/")
                index += 1
                return .start(name: name, selfClosing: selfClosing)
            }
        }
        return nil
    }

    private func matches(_ text: String) -> Bool {
        hasASCIIPrefix(bytes[index...], text, ignoringCase: false)
    }

    private func unterminated(_ what: String) -> StreamFormatError {
        StreamFormatError(.malformed, "the XML ends inside a \(what)")
    }

    private mutating func skip(past terminator: String, what: String) throws(StreamFormatError) {
        let end = Array(terminator.utf8)
        var position = index + 2
        while position + end.count <= bytes.count {
            if bytes[position] == end[0] && bytes[position..<(position + end.count)].elementsEqual(end) {
                index = position + end.count
                return
            }
            position += 1
        }
        throw unterminated(what)
    }

    /// `<!DOCTYPE …>` with an optional `[ … ]` internal subset: skipped whole, never read.
    private mutating func skipDeclaration() throws(StreamFormatError) {
        var inSubset = false
        var quote: UInt8?
        index += 2
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                inSubset = true
            } else if byte == UInt8(ascii: "]") {
                inSubset = false
            } else if byte == UInt8(ascii: ">") && !inSubset {
                return
            }
        }
        throw unterminated("declaration")
    }

    private mutating func readName() -> String {
        let start = index
        while index < bytes.count, index - start < 256 {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "<")
            {
                break
            }
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}

/// Text with `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` and `&#N;`/`&#xH;` decoded; any other `&…`
/// is kept as it is.
func decodeEntities(_ text: ArraySlice<UInt8>) -> [UInt8] {
    guard text.contains(UInt8(ascii: "&")) else { return Array(text) }
    var out: [UInt8] = []
    out.reserveCapacity(text.count)
    var index = text.startIndex
    while index < text.endIndex {
        let byte = text[index]
        guard byte == UInt8(ascii: "&"),
            let semicolon = text[index..<min(index + 12, text.endIndex)].firstIndex(of: UInt8(ascii: ";"))
        else {
            out.append(byte)
            index += 1
            continue
        }
        let name = String(decoding: text[(index + 1)..<semicolon], as: UTF8.self)
        var replacement: [UInt8]?
        switch name {
        case "lt": replacement = [UInt8(ascii: "<")]
        case "gt": replacement = [UInt8(ascii: ">")]
        case "amp": replacement = [UInt8(ascii: "&")]
        case "quot": replacement = [UInt8(ascii: "\"")]
        case "apos": replacement = [UInt8(ascii: "'")]
        default:
            if name.hasPrefix("#") {
                let digits = name.dropFirst()
                let value: UInt32?
                if digits.first == "x" || digits.first == "X" {
                    value = UInt32(digits.dropFirst(), radix: 16)
                } else {
                    value = UInt32(digits, radix: 10)
                }
                if let value, value != 0, let scalar = Unicode.Scalar(value) {
                    replacement = Array(String(Character(scalar)).utf8)
                }
            }
        }
        if let replacement {
            out += replacement
            index = semicolon + 1
        } else {
            out.append(byte)
            index += 1
        }
    }
    return out
}
