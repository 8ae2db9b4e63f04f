// Compact JSON serialization into byte buffers.
//
// The daemon writes every reply and pushed event with it (through `RPCEncoder`), the CLI its
// requests (through `RPCRequest.encodedLine()`). Output has no whitespace, keeps object keys in
// insertion order, escapes only what RFC 8259 requires (`"`, `\` and control characters, the
// latter as `\u00xx`), leaves non-ASCII UTF-8 as is, and prints doubles in the shortest form
// that reads back to the same value (`3.0`, `0.1`, `1e+16`); non-finite doubles become `null`.

/// JSON already written as compact text: a result encoded once, straight from its value, where
/// building a `JSONValue` tree first would cost more than the answer (`player.status`).
public struct JSONText: Sendable, Equatable {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The text of a value.
    public init(_ value: JSONValue) {
        self.bytes = value.jsonBytes
    }
}

/// Low-level writers, for callers that assemble a message without building a `JSONValue`.
public enum JSONWriter {
    /// Appends `value` as compact JSON.
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): writeInt(i, into: &out)
        case .double(let d): writeDouble(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(0x5B)
            var first = true
            for element in elements {
                if !first { out.append(0x2C) }
                first = false
                write(element, into: &out)
            }
            out.append(0x5D)
        case .object(let object): writeObject(object, into: &out)
        }
    }

    /// Appends `object` as compact JSON, keys in insertion order.
    public static func writeObject(_ object: JSONObject, into out: inout [UInt8]) {
        out.append(0x7B)
        var first = true
        for (key, value) in object.members {
            if !first { out.append(0x2C) }
            first = false
            writeString(key, into: &out)
            out.append(0x3A)
            write(value, into: &out)
        }
        out.append(0x7D)
    }

    /// Appends `"string"` with the escapes RFC 8259 requires.
    public static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(0x22)
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { utf8 in
            writeEscaped(utf8, into: &out)
        }
        if done == nil {
            let bytes = Array(string.utf8)
            bytes.withUnsafeBufferPointer { writeEscaped($0, into: &out) }
        }
        out.append(0x22)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private static func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        guard let base = utf8.baseAddress else { return }
        // Most text needs no escape: the bytes before the first that does are found eight at a
        // time and appended in one go (a queue's paths and tags, 10,000 of them in a record).
        var runStart = 0
        var k = firstEscaped(UnsafeRawPointer(base), count: utf8.count)
        while k < utf8.count {
            let byte = utf8[k]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C else {
                k += 1
                continue
            }
            if runStart < k { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<k])) }
            runStart = k + 1
            if byte == 0x22 || byte == 0x5C {
                out.append(0x5C)
                out.append(byte)
            } else {
                out.append(0x5C)  // \u00xx
                out.append(0x75)
                out.append(0x30)
                out.append(0x30)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            }
            k += 1
        }
        if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }

    /// The offset of the first word of 8 bytes at `bytes` that holds a byte JSON escapes (a
    /// control character, `"` or `\`), else of the last bytes that do not fill a word (`count`
    /// when the word ending with them holds none): no byte before it needs an escape.
    /// (`(x - n·0x0101…) & ~x & 0x8080…` is nonzero exactly when a byte of `x` is below
    /// `n` ≤ 128: a control character below 0x20, and a zero byte of `x ^ 0x2222…` or
    /// `x ^ 0x5C5C…`, a quote or a backslash.)
    static func firstEscaped(_ bytes: UnsafeRawPointer, count: Int) -> Int {
        func escapes(_ word: UInt64) -> Bool {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let quote = word ^ (0x22 &* ones)
            let backslash = word ^ (0x5C &* ones)
            let control = (word &- 0x20 &* ones) & ~word
            return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & 0x8080_8080_8080_8080 != 0
        }
        var offset = 0
        while offset + 8 <= count {
            if escapes(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) { return offset }
            offset += 8
        }
        // The last bytes as the word that ends with them (overlapping the one before).
        if offset < count, count >= 8, !escapes(bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)) {
            return count
        }
        return offset
    }

    /// Appends the decimal digits of `value`.
    public static func writeInt(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(0x2D) }
        var magnitude = value.magnitude
        if magnitude < 10 {
            out.append(0x30 + UInt8(magnitude))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch, enough for 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var position = scratch.count
            while magnitude > 0 {
                position -= 1
                scratch[position] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[position...]))
        }
    }

    /// Appends the shortest text that reads back as `value` (`3.0`, `2.5e-07`), or `null` when
    /// `value` is NaN or infinite.
    /// Appends fixed text (a key, `null`, punctuation) without going through `String`.
    @inline(__always)
    public static func append(_ literal: StaticString, into out: inout [UInt8]) {
        out.append(contentsOf: UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    public static func writeDouble(_ value: Double, into out: inout [UInt8]) {
        guard value.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        var text = value.description
        text.withUTF8 { out.append(contentsOf: $0) }
    }
}

extension JSONValue {
    /// Appends the compact JSON text to `out`.
    public func write(into out: inout [UInt8]) { JSONWriter.write(self, into: &out) }

    /// The compact JSON text as bytes.
    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(into: &out)
        return out
    }

    /// The compact JSON text.
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }
}

extension JSONObject {
    /// Appends the compact JSON text to `out`.
    public func write(into out: inout [UInt8]) { JSONWriter.writeObject(self, into: &out) }

    /// The compact JSON text as bytes.
    public var jsonBytes: [UInt8] { JSONValue.object(self).jsonBytes }

    /// The compact JSON text.
    public var jsonString: String { JSONValue.object(self).jsonString }
}
