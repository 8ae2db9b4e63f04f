// M3U and extended M3U station lists: reading (`#EXTINF` titles) and writing.

/// The entries of an M3U body: every line that is not blank and not a `#` comment, with the
/// duration and title of the `#EXTINF:<seconds>[ attributes],<title>` line before it. A line
/// longer than `limits.maximumLineLength` is reported, not used.
func readM3UEntries(_ bytes: [UInt8], limits: PlaylistLimits) -> [RawPlaylistEntry] {
    var entries: [RawPlaylistEntry] = []
    var pendingTitle: String?
    var pendingDuration: Double?
    forEachLine(bytes) { line in
        let text = trimmedBlankBytes(line.bytes)
        if text.isEmpty { return true }
        if text.count > limits.maximumLineLength {
            entries.append(RawPlaylistEntry(
                line: line.number, location: "", problem: "the line is longer than \(limits.maximumLineLength) bytes"))
            return entries.count <= limits.maximumEntries * 2
        }
        if text.first == UInt8(ascii: "#") {
            if hasASCIIPrefix(text, "#EXTINF:") {
                (pendingDuration, pendingTitle) = parseEXTINF(text.dropFirst(8))
            }
            return true
        }
        entries.append(RawPlaylistEntry(
            line: line.number, location: String(trimmedBlanks(decodeStationText(text))), title: pendingTitle, duration: pendingDuration))
        pendingTitle = nil
        pendingDuration = nil
        // Keep reading a little past the cap so the caller reports the cut.
        return entries.count <= limits.maximumEntries * 2
    }
    return entries
}

/// `<seconds>[ key="value" …],<title>` → (seconds unless negative, title unless empty). The
/// title starts after the first comma outside double quotes (IPTV-style attributes may hold
/// commas).
func parseEXTINF(_ bytes: ArraySlice<UInt8>) -> (Double?, String?) {
    var inQuotes = false
    var comma: Int?
    for index in bytes.indices {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\"") { inQuotes.toggle() }
        if byte == UInt8(ascii: ","), !inQuotes {
            comma = index
            break
        }
    }
    let head = bytes[bytes.startIndex..<(comma ?? bytes.endIndex)]
    let number = head.prefix { $0 != 0x20 && $0 != 0x09 }
    var duration: Double?
    if number.count <= 24, let value = Double(String(decoding: number, as: UTF8.self)), value.isFinite, value >= 0 {
        duration = value
    }
    var title: String?
    if let comma {
        let text = String(trimmedBlanks(decodeStationText(bytes[(comma + 1)...])))
        title = text.isEmpty ? nil : text
    }
    return (duration, title)
}

/// An extended M3U of `entries` (`#EXTM3U`, then `#EXTINF:<seconds or -1>,<title>` before each
/// entry that has a title or a duration, then its location), LF line ends. Throws
/// `.malformed` for a location or title holding a line break or NUL, which would split it.
public func writeM3U(_ entries: [PlaylistEntry]) throws(StreamFormatError) -> [UInt8] {
    var out = Array("#EXTM3U\n".utf8)
    for (index, entry) in entries.enumerated() {
        try checkLine(entry.location, what: "entry \(index + 1)'s location")
        if entry.title != nil || entry.duration != nil {
            let title = entry.title ?? ""
            try checkLine(title, what: "entry \(index + 1)'s title")
            let seconds = entry.duration.map { $0.rounded() == $0 && $0 < 1e15 ? String(Int64($0)) : String($0) } ?? "-1"
            out += Array("#EXTINF:\(seconds),\(title)\n".utf8)
        }
        out += Array(entry.location.utf8)
        out.append(0x0A)
    }
    return out
}

func checkLine(_ text: String, what: String) throws(StreamFormatError) {
    if text.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
        throw StreamFormatError(.malformed, "\(what) holds a line break or NUL: \(clip(text))")
    }
}
