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

/// A small deterministic generator (SplitMix64), so fuzz runs are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
