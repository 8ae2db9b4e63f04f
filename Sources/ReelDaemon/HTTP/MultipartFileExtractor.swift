// The one file in a `multipart/form-data` body (what a browser sends for a FormData), as it arrives.

/// Takes a `multipart/form-data` body in pieces of any size and gives back the bytes of its
/// file part, in order, holding at most one piece and a delimiter's length in memory: the
/// upload goes to disk as it arrives. Fields without a file name are skipped; a second file is
/// refused. Pure; owned by one connection on its event loop.
struct MultipartFileExtractor {
    enum Failure: Error, Equatable {
        /// Not multipart/form-data, or no boundary.
        case notMultipart
        /// Part headers too long, or no file part, or the body ended before the closing boundary.
        case malformed(String)
    }

    private enum State {
        /// Before the first delimiter.
        case preamble
        /// Right after a delimiter: `--` ends the body, a line break starts a part's headers.
        case afterDelimiter
        case headers
        case fileBody
        case skippedBody
        case epilogue
    }

    /// `\r\n--BOUNDARY`: what ends every part (the body is read as if it began with `\r\n`).
    private let delimiter: [UInt8]
    private var state = State.preamble
    private var pending: [UInt8] = [13, 10]
    /// The file part's name as the browser gave it (`filename=` or `filename*=`).
    private(set) var filename: String?
    private(set) var sawFile = false
    static let maxHeaderBytes = 16 * 1024

    /// Reads the boundary from a `Content-Type: multipart/form-data; boundary=…` header.
    init(contentType: String) throws(Failure) {
        let parts = contentType.split(separator: ";").map { $0.trimmingSpacesAndTabs }
        guard let type = parts.first, type.lowercased() == "multipart/form-data" else { throw .notMultipart }
        var boundary: Substring?
        for parameter in parts.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            if parameter[..<equals].trimmingSpacesAndTabs.lowercased() == "boundary" {
                var value = parameter[parameter.index(after: equals)...].trimmingSpacesAndTabs
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
                boundary = value
            }
        }
        guard let boundary, !boundary.isEmpty, boundary.utf8.count <= 200 else { throw .notMultipart }
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// Takes the next piece of the body; returns the file's bytes found in it (possibly none).
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Failure) -> [UInt8] {
        pending.append(contentsOf: bytes)
        var file: [UInt8] = []
        while true {
            switch state {
            case .preamble, .fileBody, .skippedBody:
                if let found = find(delimiter, in: pending) {
                    if state == .fileBody { file.append(contentsOf: pending[..<found]) }
                    if state == .fileBody { sawFile = true }
                    pending.removeFirst(found + delimiter.count)
                    state = .afterDelimiter
                    continue
                }
                // Keep what could be the start of a delimiter split across pieces.
                let keep = min(pending.count, delimiter.count - 1)
                if state == .fileBody { file.append(contentsOf: pending[..<(pending.count - keep)]) }
                pending.removeFirst(pending.count - keep)
                return file
            case .afterDelimiter:
                guard pending.count >= 2 else { return file }
                if pending[0] == UInt8(ascii: "-"), pending[1] == UInt8(ascii: "-") {
                    state = .epilogue
                    continue
                }
                // Transport padding (spaces, tabs) may come before the line break.
                guard let lineEnd = find([13, 10], in: pending) else {
                    guard pending.count < 256 else { throw .malformed("a boundary line is too long") }
                    return file
                }
                guard pending[..<lineEnd].allSatisfy({ $0 == 0x20 || $0 == 0x09 }) else {
                    throw .malformed("a boundary is followed by something else than a line break")
                }
                pending.removeFirst(lineEnd + 2)
                state = .headers
            case .headers:
                guard let end = find([13, 10, 13, 10], in: pending) else {
                    guard pending.count <= Self.maxHeaderBytes else { throw .malformed("a part's headers are too long") }
                    return file
                }
                let name = Self.filename(inHeaders: pending[..<end])
                pending.removeFirst(end + 4)
                if let name {
                    guard !sawFile, filename == nil else { throw .malformed("send one file per upload") }
                    filename = name
                    state = .fileBody
                    // The part's body is read as if after a line break: the next delimiter is
                    // `\r\n--BOUNDARY`, so put back nothing; the body starts here.
                } else {
                    state = .skippedBody
                }
            case .epilogue:
                pending.removeAll()
                return file
            }
        }
    }

    /// At the end of the body: throws unless the closing boundary came after a file part.
    func finish() throws(Failure) {
        guard state == .epilogue else { throw .malformed("the upload ended before its closing boundary") }
        guard sawFile else { throw .malformed("the form has no file") }
    }

    /// The file name of a part whose `Content-Disposition` has `filename*=` or `filename=`
    /// (the first wins; an empty name is a file field left empty); nil for a plain field.
    static func filename(inHeaders headers: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: headers, as: UTF8.self)
        for line in text.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":"),
                line[..<colon].trimmingSpacesAndTabs.lowercased() == "content-disposition"
            else { continue }
            let value = line[line.index(after: colon)...]
            if let extended = parameter("filename*", in: value), let quote = extended.firstRange(of: "''") {
                // RFC 8187: charset'language'percent-encoded.
                return HTTPRequestTarget.decode(ArraySlice(extended[quote.upperBound...].utf8), plusIsSpace: false)
            }
            return parameter("filename", in: value)
        }
        return nil
    }

    /// A parameter's value (a quoted string with `\` escapes, or a token) in `; name=value` lists.
    private static func parameter(_ name: String, in value: Substring) -> String? {
        var rest = value[...]
        while let semicolon = rest.firstIndex(of: ";") {
            rest = rest[rest.index(after: semicolon)...]
            let trimmed = rest.trimmingSpacesAndTabs
            guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals].trimmingSpacesAndTabs.lowercased() == name
            else { continue }
            let raw = trimmed[trimmed.index(after: equals)...].trimmingSpacesAndTabs
            guard raw.hasPrefix("\"") else {
                return String(raw.prefix { $0 != ";" }.trimmingSpacesAndTabs)
            }
            var result = ""
            var escaped = false
            for character in raw.dropFirst() {
                if escaped {
                    result.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    return result
                } else {
                    result.append(character)
                }
            }
            return nil
        }
        return nil
    }

    private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count, let first = needle.first else { return nil }
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
