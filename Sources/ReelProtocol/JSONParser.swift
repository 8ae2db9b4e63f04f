// A strict RFC 8259 JSON parser over raw bytes.
//
// The daemon parses every request line with it (through `RPCIncoming`), the CLI every reply and
// pushed event (through `RPCMessage`). It is strict so that what one side accepts the other
// accepts too, and hostile input cannot hurt the daemon: it rejects invalid UTF-8, nesting
// deeper than `JSONParser.maxDepth`, NaN/Infinity, leading zeros, trailing data, raw control
// characters in strings, lone surrogates and numbers too large for a Double. It never
// recurses (containers are kept on explicit stacks), so no input can exhaust the stack, and it
// runs in time linear in the input.

/// Why a text is not valid JSON, and where: `offset` is the byte at which the problem was found.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset into the input.
    public var offset: Int
    /// What is wrong, e.g. `leading zeros are not allowed`.
    public var reason: String

    public init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// `<reason> at byte <offset>`.
    public var description: String { "\(reason) at byte \(offset)" }
}

/// Limits of the parser.
public enum JSONParser {
    /// The deepest nesting of arrays and objects accepted; `[[...]]` 257 deep is rejected.
    public static let maxDepth = 256
}

extension JSONValue {
    /// Parses one JSON text (any value, surrounded by optional whitespace).
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        var parser = Parser(bytes)
        return try parser.parseDocument()
    }

    /// Parses one JSON text.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try parse(buffer) }
        }.get()
    }

    /// Parses one JSON text.
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try parse(buffer) }
        }.get()
    }

    /// Parses one JSON text given as a string.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        return try text.withUTF8 { buffer in
            Result { () throws(JSONParseError) in try parse(UnsafeRawBufferPointer(buffer)) }
        }.get()
    }
}

// MARK: - Implementation

private let quote: UInt8 = 0x22  // "
private let backslash: UInt8 = 0x5C
private let comma: UInt8 = 0x2C
private let colon: UInt8 = 0x3A
private let openBracket: UInt8 = 0x5B
private let closeBracket: UInt8 = 0x5D
private let openBrace: UInt8 = 0x7B
private let closeBrace: UInt8 = 0x7D
private let minus: UInt8 = 0x2D
private let plus: UInt8 = 0x2B
private let dot: UInt8 = 0x2E
private let zero: UInt8 = 0x30

/// Exact powers of ten for the fast double path.
private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

@inline(__always) private func isDigit(_ byte: UInt8) -> Bool { byte &- zero < 10 }

private struct Parser {
    let bytes: UnsafeRawBufferPointer
    let count: Int
    var index = 0

    // Containers being built, innermost last. `kinds` says which stack the level lives on.
    var kinds: [Bool] = []  // true: object, false: array
    var arrays: [[JSONValue]] = []
    var objects: [[JSONObject.Element]] = []
    var keys: [String] = []

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.count = bytes.count
    }

    func fail(_ reason: String, at offset: Int) -> JSONParseError {
        JSONParseError(offset: offset, reason: reason)
    }

    func unexpected(_ what: String) -> JSONParseError {
        guard index < count else { return fail("unexpected end of input, expected \(what)", at: index) }
        return fail("unexpected \(describe(bytes[index])), expected \(what)", at: index)
    }

    func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x\(byte < 16 ? "0" : "")\(hex)"
    }

    @inline(__always) mutating func skipWhitespace() {
        while index < count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    @inline(__always) func peek() -> UInt8? { index < count ? bytes[index] : nil }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        var value: JSONValue
        nextValue: while true {
            skipWhitespace()
            guard index < count else { throw unexpected("a value") }
            switch bytes[index] {
            case openBracket:
                try push(object: false)
                index += 1
                skipWhitespace()
                if peek() == closeBracket {
                    index += 1
                    value = .array(arrays.removeLast())
                    kinds.removeLast()
                } else {
                    continue nextValue
                }
            case openBrace:
                try push(object: true)
                index += 1
                skipWhitespace()
                if peek() == closeBrace {
                    index += 1
                    objects.removeLast()
                    kinds.removeLast()
                    value = .object(JSONObject())
                } else {
                    try parseKey()
                    continue nextValue
                }
            case quote:
                value = .string(try parseString())
            case 0x74:  // t
                try literal("true")
                value = .bool(true)
            case 0x66:  // f
                try literal("false")
                value = .bool(false)
            case 0x6E:  // n
                try literal("null")
                value = .null
            case minus, zero...0x39:
                value = try parseNumber()
            case 0x4E, 0x49:  // N, I
                throw fail("NaN and Infinity are not valid JSON", at: index)
            default:
                throw unexpected("a value")
            }

            // Place the finished value into its container; close containers that end here.
            while true {
                guard let isObject = kinds.last else {
                    skipWhitespace()
                    guard index == count else { throw fail("unexpected data after the JSON value", at: index) }
                    return value
                }
                if isObject {
                    objects[objects.count - 1].append((keys.removeLast(), value))
                    skipWhitespace()
                    guard index < count else { throw unexpected("',' or '}'") }
                    let byte = bytes[index]
                    if byte == comma {
                        index += 1
                        skipWhitespace()
                        try parseKey()
                        continue nextValue
                    } else if byte == closeBrace {
                        index += 1
                        kinds.removeLast()
                        value = .object(JSONObject(uniquing: objects.removeLast()))
                    } else {
                        throw unexpected("',' or '}'")
                    }
                } else {
                    arrays[arrays.count - 1].append(value)
                    skipWhitespace()
                    guard index < count else { throw unexpected("',' or ']'") }
                    let byte = bytes[index]
                    if byte == comma {
                        index += 1
                        continue nextValue
                    } else if byte == closeBracket {
                        index += 1
                        kinds.removeLast()
                        value = .array(arrays.removeLast())
                    } else {
                        throw unexpected("',' or ']'")
                    }
                }
            }
        }
    }

    mutating func push(object: Bool) throws(JSONParseError) {
        guard kinds.count < JSONParser.maxDepth else {
            throw fail("nesting deeper than \(JSONParser.maxDepth) levels", at: index)
        }
        kinds.append(object)
        if object { objects.append([]) } else { arrays.append([]) }
    }

    /// Parses `"key"` and the `:` after it; whitespace before the key is already skipped.
    mutating func parseKey() throws(JSONParseError) {
        guard peek() == quote else { throw unexpected("a string key") }
        keys.append(try parseString())
        skipWhitespace()
        guard peek() == colon else { throw unexpected("':'") }
        index += 1
    }

    mutating func literal(_ word: StaticString) throws(JSONParseError) {
        let length = word.utf8CodeUnitCount
        let start = word.utf8Start
        for k in 0..<length {
            guard index + k < count, bytes[index + k] == start[k] else {
                throw fail("invalid literal, expected '\(word)'", at: index + k)
            }
        }
        index += length
    }

    // MARK: Strings

    /// Parses a string starting at its opening quote.
    mutating func parseString() throws(JSONParseError) -> String {
        let open = index
        var j = index + 1
        // Fast path: no escapes.
        while j < count {
            let byte = bytes[j]
            if byte == quote {
                index = j + 1
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(open + 1)..<j]), as: UTF8.self)
            }
            if byte == backslash { break }
            if byte < 0x20 { throw fail("control character in string (must be escaped)", at: j) }
            if byte < 0x80 { j += 1 } else { j = try validateUTF8(at: j) }
        }
        guard j < count else { throw fail("unterminated string", at: open) }

        // Slow path: unescape into a scratch buffer.
        var scratch: [UInt8] = []
        scratch.reserveCapacity(j - open + 16)
        scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[(open + 1)..<j]))
        while j < count {
            let byte = bytes[j]
            if byte == quote {
                index = j + 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == backslash {
                j = try unescape(at: j, into: &scratch)
            } else if byte < 0x20 {
                throw fail("control character in string (must be escaped)", at: j)
            } else if byte < 0x80 {
                scratch.append(byte)
                j += 1
            } else {
                let end = try validateUTF8(at: j)
                scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[j..<end]))
                j = end
            }
        }
        throw fail("unterminated string", at: open)
    }

    /// Checks the multi-byte UTF-8 sequence at `j` (its lead byte is >= 0x80); returns the
    /// index after it.
    func validateUTF8(at j: Int) throws(JSONParseError) -> Int {
        let lead = bytes[j]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // range of the second byte
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F  // no surrogates
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F  // nothing above U+10FFFF
        default: throw fail("invalid UTF-8", at: j)
        }
        guard j + length <= count else { throw fail("invalid UTF-8 (truncated sequence)", at: j) }
        let second = bytes[j + 1]
        guard second >= low && second <= high else { throw fail("invalid UTF-8", at: j) }
        for k in 2..<max(length, 2) where bytes[j + k] & 0xC0 != 0x80 {
            throw fail("invalid UTF-8", at: j)
        }
        return j + length
    }

    /// Decodes the escape at `j` (a backslash) into `scratch`; returns the index after it.
    func unescape(at j: Int, into scratch: inout [UInt8]) throws(JSONParseError) -> Int {
        guard j + 1 < count else { throw fail("unterminated string", at: j) }
        switch bytes[j + 1] {
        case quote: scratch.append(quote)
        case backslash: scratch.append(backslash)
        case 0x2F: scratch.append(0x2F)  // /
        case 0x62: scratch.append(0x08)  // b
        case 0x66: scratch.append(0x0C)  // f
        case 0x6E: scratch.append(0x0A)  // n
        case 0x72: scratch.append(0x0D)  // r
        case 0x74: scratch.append(0x09)  // t
        case 0x75:  // u
            let unit = try hex4(at: j + 2)
            var scalar = UInt32(unit)
            var end = j + 6
            switch unit {
            case 0xD800...0xDBFF:
                guard end + 1 < count, bytes[end] == backslash, bytes[end + 1] == 0x75 else {
                    throw fail("lone surrogate \\u\(hexString(unit)) (no low surrogate follows)", at: j)
                }
                let low = try hex4(at: end + 2)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw fail("lone surrogate \\u\(hexString(unit)) (no low surrogate follows)", at: j)
                }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                end += 6
            case 0xDC00...0xDFFF:
                throw fail("lone surrogate \\u\(hexString(unit))", at: j)
            default:
                break
            }
            appendUTF8(scalar, to: &scratch)
            return end
        default:
            throw fail("invalid escape sequence", at: j)
        }
        return j + 2
    }

    func hex4(at start: Int) throws(JSONParseError) -> UInt16 {
        guard start + 4 <= count else { throw fail("truncated \\u escape", at: start - 2) }
        var value: UInt16 = 0
        for k in 0..<4 {
            let byte = bytes[start + k]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw fail("invalid hex digit in \\u escape", at: start + k)
            }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    func hexString(_ unit: UInt16) -> String { String(unit, radix: 16, uppercase: true) }

    func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        let negative = bytes[index] == minus
        if negative {
            index += 1
            guard index < count, isDigit(bytes[index]) else {
                if peek() == 0x49 { throw fail("NaN and Infinity are not valid JSON", at: index) }
                throw fail("expected a digit after '-'", at: index)
            }
        }
        // Integer part; the significant digits go into `mantissa` while they fit.
        var mantissa: UInt64 = 0
        var digits = 0  // digits accumulated in `mantissa` (leading zeros included)
        var exponent = 0  // decimal exponent adjustment of `mantissa`
        var exact = true  // `mantissa * 10^exponent` is the exact value
        let integerStart = index
        if bytes[index] == zero {
            index += 1
            if index < count && isDigit(bytes[index]) { throw fail("leading zeros are not allowed", at: integerStart) }
        } else {
            while index < count, isDigit(bytes[index]) {
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(bytes[index] - zero)
                    digits += 1
                } else {
                    exact = false
                }
                index += 1
            }
        }
        let integerDigits = index - integerStart
        var isInteger = true

        if index < count && bytes[index] == dot {
            isInteger = false
            index += 1
            guard index < count, isDigit(bytes[index]) else {
                throw fail("expected a digit after '.'", at: index)
            }
            while index < count, isDigit(bytes[index]) {
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(bytes[index] - zero)
                    digits += 1
                    exponent -= 1
                } else {
                    exact = false
                }
                index += 1
            }
        }
        if index < count && (bytes[index] | 0x20) == 0x65 {  // e or E
            isInteger = false
            index += 1
            var exponentNegative = false
            if index < count && (bytes[index] == plus || bytes[index] == minus) {
                exponentNegative = bytes[index] == minus
                index += 1
            }
            guard index < count, isDigit(bytes[index]) else {
                throw fail("expected a digit in the exponent", at: index)
            }
            var explicit = 0
            while index < count, isDigit(bytes[index]) {
                if explicit < 100_000 { explicit = explicit * 10 + Int(bytes[index] - zero) }
                index += 1
            }
            exponent += exponentNegative ? -explicit : explicit
        }

        if isInteger && integerDigits <= 19 {
            // At most 19 digits always fit UInt64.
            if !negative && mantissa <= UInt64(Int64.max) { return .int(Int64(mantissa)) }
            if negative && mantissa <= UInt64(Int64.max) + 1 { return .int(Int64(truncatingIfNeeded: 0 &- mantissa)) }
        }
        // Fast path (Clinger): both the mantissa and the power of ten are exact doubles, so one
        // correctly rounded operation gives the correctly rounded result.
        if exact && mantissa < (1 << 53) && exponent >= -22 && exponent <= 22 {
            var result = Double(mantissa)
            if exponent < 0 { result /= powersOfTen[-exponent] } else { result *= powersOfTen[exponent] }
            return .double(negative ? -result : result)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let result = Double(text), result.isFinite else {
            throw fail("number out of range", at: start)
        }
        return .double(result)
    }
}
