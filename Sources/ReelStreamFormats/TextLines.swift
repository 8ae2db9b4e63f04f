// Splitting a text file's bytes into lines, bounded, without Foundation.

/// One line of a text body: its 1-based number and its bytes (without the line break).
struct TextLine {
    var number: Int
    var bytes: ArraySlice<UInt8>
}

/// The lines of `bytes`: breaks are LF, CR LF or a lone CR; a UTF-8 byte order mark at the
/// start is dropped. Calls `body` for each line; stops early when `body` returns false.
func forEachLine(_ bytes: [UInt8], _ body: (TextLine) -> Bool) {
    var start = 0
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
    var number = 1
    var index = start
    let count = bytes.count
    while index < count {
        let byte = bytes[index]
        if byte == 0x0A || byte == 0x0D {
            if !body(TextLine(number: number, bytes: bytes[start..<index])) { return }
            number += 1
            if byte == 0x0D, index + 1 < count, bytes[index + 1] == 0x0A { index += 1 }
            index += 1
            start = index
        } else {
            index += 1
        }
    }
    if start < count { _ = body(TextLine(number: number, bytes: bytes[start..<count])) }
}

/// `bytes` without leading and trailing ASCII blanks (space, tab).
func trimmedBlankBytes(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
    while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
    return slice
}

/// Whether `bytes` starts with the ASCII text `prefix`, compared without regard to case.
func hasASCIIPrefix(_ bytes: ArraySlice<UInt8>, _ prefix: String, ignoringCase: Bool = true) -> Bool {
    // Walks the string's UTF-8 view in place: no array is made per call (this runs for every
    // line against every tag).
    var index = bytes.startIndex
    for expected in prefix.utf8 {
        guard index < bytes.endIndex else { return false }
        let byte = bytes[index]
        if ignoringCase ? asciiLower(byte) != asciiLower(expected) : byte != expected { return false }
        index += 1
    }
    return true
}

func asciiLower(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
}
