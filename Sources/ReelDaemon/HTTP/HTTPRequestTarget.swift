// A request's target split into its path and query, percent-decoded.

/// `/audio/0190…?download=1` as a path and query parameters. Pure; any thread.
struct HTTPRequestTarget: Equatable, Sendable {
    /// The decoded path (`/audio/0190…`); never contains a query.
    var path: String
    /// Query parameters (`application/x-www-form-urlencoded`: `+` is a space); the last of
    /// repeated names wins.
    var query: [String: String]

    /// Nil for a target that is not an absolute path, or whose escapes are not UTF-8.
    init?(_ uri: String) {
        guard uri.hasPrefix("/") else { return nil }
        let bytes = Array(uri.utf8)
        let questionMark = bytes.firstIndex(of: UInt8(ascii: "?"))
        guard let path = Self.decode(bytes[..<(questionMark ?? bytes.endIndex)], plusIsSpace: false) else { return nil }
        self.path = path
        query = [:]
        guard let questionMark else { return }
        for pair in bytes[(questionMark + 1)...].split(separator: UInt8(ascii: "&")) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            guard let name = Self.decode(pair[..<(equals ?? pair.endIndex)], plusIsSpace: true) else { return nil }
            let value = equals.map { pair[($0 + 1)...] } ?? []
            guard let decoded = Self.decode(value, plusIsSpace: true) else { return nil }
            query[name] = decoded
        }
    }

    /// `%XX` escapes (and `+` when `plusIsSpace`) decoded; nil for a bad escape or invalid UTF-8.
    static func decode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
