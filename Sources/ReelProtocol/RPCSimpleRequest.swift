// The common request — `{"jsonrpc":"2.0","id":N,"method":"name"}` — read without a JSON tree.

/// Reads a request with no parameters (or `"params":{}`) straight from the line's bytes, for
/// the requests a client polls with (`player.status`): no `JSONValue` tree, no dictionary.
///
/// It takes only a strict subset of JSON, and gives the same request the full parser and
/// `RPCRequestDecoding` would: an object whose members are `"jsonrpc":"2.0"`, `"method"` with a
/// string, optionally `"id"` (an integer of at most 18 digits, a string or null) and
/// `"params":{}`, each at most once, in any order, with JSON whitespace between tokens; strings
/// of printable ASCII without escapes. Anything else — another member, an escape, a byte above
/// 0x7E, a fraction, an error of any kind — is nil, and the line goes to the full parser, which
/// accepts it or names what is wrong.
enum RPCSimpleRequest {
    static func parse(_ line: UnsafeRawBufferPointer) -> RPCRequest? {
        var reader = Reader(bytes: line)
        return reader.request()
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        mutating func skipSpace() {
            while index < bytes.count {
                let byte = bytes[index]
                guard byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A else { return }
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string of printable ASCII without escapes, as its bytes' range.
        mutating func plainString() -> Range<Int>? {
            guard take(0x22) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x22 {
                    index += 1
                    return start..<(index - 1)
                }
                guard byte >= 0x20, byte <= 0x7E, byte != 0x5C else { return nil }
                index += 1
            }
            return nil
        }

        func equals(_ range: Range<Int>, _ text: StaticString) -> Bool {
            guard range.count == text.utf8CodeUnitCount else { return false }
            let expected = UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            for offset in 0..<range.count where bytes[range.lowerBound + offset] != expected[offset] {
                return false
            }
            return true
        }

        func string(_ range: Range<Int>) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        /// An integer of at most 18 digits (no fraction, no exponent), a plain string or null.
        mutating func id() -> JSONValue? {
            skipSpace()
            guard index < bytes.count else { return nil }
            let first = bytes[index]
            if first == 0x22 {
                return plainString().map { .string(string($0)) }
            }
            if first == 0x6E {  // null
                guard index + 4 <= bytes.count, bytes[index + 1] == 0x75, bytes[index + 2] == 0x6C,
                    bytes[index + 3] == 0x6C
                else { return nil }
                index += 4
                return .null
            }
            let negative = first == 0x2D
            if negative { index += 1 }
            let start = index
            var value: Int64 = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                guard index - start < 18 else { return nil }
                value = value * 10 + Int64(bytes[index] - 0x30)
                index += 1
            }
            let digits = index - start
            guard digits > 0, digits == 1 || bytes[start] != 0x30 else { return nil }
            // A fraction or an exponent: a double, for the full parser.
            if index < bytes.count, bytes[index] == 0x2E || bytes[index] == 0x65 || bytes[index] == 0x45 {
                return nil
            }
            return .int(negative ? -value : value)
        }

        mutating func request() -> RPCRequest? {
            guard take(0x7B) else { return nil }
            var id: JSONValue?
            var method: String?
            var sawVersion = false
            var sawParams = false
            var first = true
            while true {
                if take(0x7D) {
                    guard !first else { return nil }
                    break
                }
                if !first, !take(0x2C) { return nil }
                first = false
                guard let key = plainString(), take(0x3A) else { return nil }
                if equals(key, "jsonrpc") {
                    guard !sawVersion, let value = plainString(), equals(value, "2.0") else { return nil }
                    sawVersion = true
                } else if equals(key, "method") {
                    guard method == nil, let value = plainString() else { return nil }
                    method = string(value)
                } else if equals(key, "id") {
                    guard id == nil, let value = self.id() else { return nil }
                    id = value
                } else if equals(key, "params") {
                    guard !sawParams, take(0x7B), take(0x7D) else { return nil }
                    sawParams = true
                } else {
                    return nil
                }
            }
            skipSpace()
            guard index == bytes.count, sawVersion, let method else { return nil }
            return RPCRequest(id: id, method: method)
        }
    }
}
