// The `Range: bytes=…` header of a request for a file (RFC 9110 §14).

/// What part of a file of `size` bytes to send. Pure; any thread.
enum HTTPByteRange: Equatable, Sendable {
    /// No range, one the server may ignore (several ranges, another unit, bad syntax): 200.
    case whole
    /// One satisfiable range, first and last byte inclusive: 206 with `Content-Range`.
    case partial(first: Int64, last: Int64)
    /// A range that starts past the end (or a zero-length suffix): 416 with `bytes */size`.
    case unsatisfiable

    /// Reads `bytes=first-last`, `bytes=first-` or `bytes=-suffixLength`. A last byte past the
    /// end is cut to the end; a request for several ranges is answered whole (RFC 9110 allows
    /// ignoring Range; a browser's media element asks for one).
    init(header: String?, size: Int64) {
        guard let header else {
            self = .whole
            return
        }
        let text = header.trimmingSpacesAndTabs
        guard text.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = text.dropFirst("bytes=".count).trimmingSpacesAndTabs
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let firstText = spec[..<dash].trimmingSpacesAndTabs
        let lastText = spec[spec.index(after: dash)...].trimmingSpacesAndTabs
        if firstText.isEmpty {
            // A suffix: the last N bytes.
            guard let length = Self.number(lastText) else {
                self = .whole
                return
            }
            guard length > 0, size > 0 else {
                self = .unsatisfiable
                return
            }
            self = .partial(first: max(0, size - length), last: size - 1)
            return
        }
        guard let first = Self.number(firstText) else {
            self = .whole
            return
        }
        var last = size - 1
        if !lastText.isEmpty {
            guard let given = Self.number(lastText), given >= first else {
                self = .whole
                return
            }
            last = min(given, size - 1)
        }
        self = first < size ? .partial(first: first, last: last) : .unsatisfiable
    }

    /// Digits only (no sign, no spaces inside); nil past Int64.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int64(text)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingSpacesAndTabs: Substring {
        let string = Substring(self)
        let start = string.firstIndex(where: { $0 != " " && $0 != "\t" }) ?? string.endIndex
        let end = string.lastIndex(where: { $0 != " " && $0 != "\t" }).map { string.index(after: $0) } ?? start
        return string[start..<Swift.max(start, end)]
    }
}
