// Text from a station's bytes: UTF-8 when it is valid UTF-8, else Windows-1252 (Latin-1).

/// Decodes bytes a station sent as text: valid UTF-8 is read as UTF-8; anything else as
/// Windows-1252, the superset of Latin-1 that Shoutcast-era encoders write (so 0x92 is a
/// right quote, not a C1 control). NUL bytes are dropped and other control characters become
/// spaces, so a title never carries a line break into a protocol line. Pure; any thread.
public func decodeStationText<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    let array = Array(bytes)
    if let text = String(validating: array, as: UTF8.self) {
        return sanitize(text)
    }
    var scalars = String.UnicodeScalarView()
    scalars.reserveCapacity(array.count)
    for byte in array {
        if byte >= 0x80 && byte <= 0x9F {
            scalars.append(Unicode.Scalar(windows1252High[Int(byte - 0x80)]) ?? " ")
        } else {
            scalars.append(Unicode.Scalar(byte))
        }
    }
    return sanitize(String(scalars))
}

private func sanitize(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        if scalar.value == 0 { continue }
        scalars.append(scalar.value < 0x20 || scalar.value == 0x7F ? " " : scalar)
    }
    return String(scalars)
}

/// Windows-1252's characters for 0x80…0x9F (the five holes decode as spaces).
private let windows1252High: [UInt32] = [
    0x20AC, 0x0020, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x0020, 0x017D, 0x0020,
    0x0020, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x0020, 0x017E, 0x0178,
]

/// `text` without leading and trailing white space.
func trimmedBlanks<S: StringProtocol>(_ text: S) -> Substring {
    var sub = Substring(text)
    while let first = sub.first, first.isWhitespace { sub = sub.dropFirst() }
    while let last = sub.last, last.isWhitespace { sub = sub.dropLast() }
    return sub
}
