// Shared helpers for the ReelProtocol tests.

@testable import ReelProtocol

/// Parses UTF-8 text.
func parse(_ text: String) throws(JSONParseError) -> JSONValue {
    try JSONValue.parse(Array(text.utf8))
}

/// The parse error for `bytes`, or nil when they parse.
func parseError(_ bytes: [UInt8]) -> JSONParseError? {
    do {
        _ = try JSONValue.parse(bytes)
        return nil
    } catch {
        return error
    }
}

/// The parse error for UTF-8 text, or nil when it parses.
func parseError(_ text: String) -> JSONParseError? { parseError(Array(text.utf8)) }

/// UTF-8 bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A line as text.
func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// `text` as a JSON string, escaped one character at a time: what `JSONWriter`'s scan of eight
/// bytes at a time must write.
func jsonEscapedOneByOne(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x22: out += "\\\""
        case 0x5C: out += "\\\\"
        case 0..<0x20: out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}
