// PLS station lists: `[playlist]`, `File1=`, `Title1=`, `Length1=`, `NumberOfEntries=`.

/// The entries of a PLS body, by number (`File3=` is entry 3, whatever the line order).
/// `NumberOfEntries` is not trusted (servers get it wrong): every `FileN=` counts. Keys are
/// case-insensitive; numbers above `limits.maximumEntries` are ignored.
func readPLSEntries(_ bytes: [UInt8], limits: PlaylistLimits) throws(StreamFormatError) -> [RawPlaylistEntry] {
    var files: [Int: (line: Int, location: String)] = [:]
    var titles: [Int: String] = [:]
    var lengths: [Int: Double] = [:]
    var sawHeader = false
    var longLines: [RawPlaylistEntry] = []
    forEachLine(bytes) { line in
        let text = trimmedBlankBytes(line.bytes)
        if text.isEmpty || text.first == UInt8(ascii: ";") || text.first == UInt8(ascii: "#") { return true }
        if text.count > limits.maximumLineLength {
            longLines.append(RawPlaylistEntry(
                line: line.number, location: "", problem: "the line is longer than \(limits.maximumLineLength) bytes"))
            return true
        }
        if text.first == UInt8(ascii: "[") {
            if hasASCIIPrefix(text, "[playlist]") { sawHeader = true }
            return true
        }
        guard let equals = text.firstIndex(of: UInt8(ascii: "=")) else { return true }
        let key = String(decoding: trimmedBlankBytes(text[text.startIndex..<equals]), as: UTF8.self).lowercased()
        let value = trimmedBlankBytes(text[(equals + 1)...])
        for (prefix, kind) in [("file", 0), ("title", 1), ("length", 2)] where key.hasPrefix(prefix) {
            let digits = key.dropFirst(prefix.count)
            guard !digits.isEmpty, digits.count <= 7, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = Int(digits), number >= 1, number <= limits.maximumEntries
            else { return true }
            switch kind {
            case 0: if files[number] == nil { files[number] = (line.number, String(trimmedBlanks(decodeStationText(value)))) }
            case 1: titles[number] = String(trimmedBlanks(decodeStationText(value)))
            default:
                if value.count <= 24, let seconds = Double(String(decoding: value, as: UTF8.self)), seconds.isFinite, seconds >= 0 {
                    lengths[number] = seconds
                }
            }
        }
        return true
    }
    guard sawHeader || !files.isEmpty else {
        throw StreamFormatError(.malformed, "not a PLS playlist: no [playlist] section and no File1= line")
    }
    var entries = longLines
    for number in files.keys.sorted() {
        let file = files[number]!
        let title = titles[number].flatMap { $0.isEmpty ? nil : $0 }
        entries.append(RawPlaylistEntry(line: file.line, location: file.location, title: title, duration: lengths[number]))
    }
    return entries
}
