// The subset of TOML that reeld's config file uses: top-level `key = value` lines, and arrays of
// tables (`[[outputs]]`).

/// A value in the config file.
enum ConfigValue: Equatable {
    case string(String)
    case integer(Int)
    /// A number with a fraction or an exponent (`-3.5`, `1e3`), as written (`_` removed).
    case decimal(String)
    case boolean(Bool)
    case array([ConfigValue])

    var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .decimal: "a decimal number"
        case .boolean: "a boolean"
        case .array: "an array"
        }
    }
}

/// One entry of an array of tables: `[[name]]` and the keys under it.
struct ConfigTable: Equatable {
    var name: String
    var line: Int
    var entries: [ConfigEntry]
}

/// `key = value`, with the line it is on.
struct ConfigEntry: Equatable {
    var key: String
    var value: ConfigValue
    var line: Int
}

/// A parsed file: the top-level keys (before the first table) and the tables in order.
struct ConfigDocument: Equatable {
    var entries: [ConfigEntry] = []
    var tables: [ConfigTable] = []
}

/// Parses TOML's top-level key/value pairs: bare or quoted keys; basic and literal strings,
/// integers (decimal, with `_` separators), decimal numbers (`-3.5`, `1e3`: a ReplayGain preamp),
/// booleans and one-line arrays of these; comments and blank lines; and arrays of tables
/// (`[[outputs]]`, each followed by its keys, as TOML says: every key after a table header
/// belongs to that table). Plain tables (`[name]`), dotted keys, dates, hexadecimal and special
/// floats (`inf`, `nan`) are refused with a message, since no reeld setting uses them. Errors
/// say `line:column: what`.
///
/// reeld's own parser rather than a TOML package: the packages pull in all of Foundation and ICU,
/// several megabytes of resident memory for a daemon that reads a dozen settings once.
struct ConfigFileParser {
    struct ParseError: Error, Equatable, CustomStringConvertible {
        var line: Int
        var column: Int
        var message: String
        var description: String { "\(line):\(column): \(message)" }
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    static func parse(_ text: String) throws(ParseError) -> ConfigDocument {
        var parser = ConfigFileParser(bytes: Array(text.utf8))
        return try parser.parseDocument()
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func fail(_ message: String) -> ParseError {
        ParseError(line: line, column: index - lineStart + 1, message: message)
    }

    private mutating func parseDocument() throws(ParseError) -> ConfigDocument {
        var document = ConfigDocument()
        var seen: Set<String> = []
        var table: ConfigTable?
        func finishTable() {
            if let table { document.tables.append(table) }
        }
        while current != nil {
            skipSpaces()
            switch current {
            case nil:
                break
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "#"):
                try endLine()
            case UInt8(ascii: "["):
                let headerLine = line
                guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") else {
                    throw fail("tables are not used in reeld's config; write keys at the top level, or [[outputs]] for an output")
                }
                index += 2
                skipSpaces()
                let name = try parseKey()
                skipSpaces()
                guard current == UInt8(ascii: "]"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "]") else {
                    throw fail("expected \"]]\" to close the table header [[\(name)]]")
                }
                index += 2
                guard !seen.contains(name) else {
                    throw ParseError(line: headerLine, column: 1, message: "\"\(name)\" is a key above; it cannot also be a table")
                }
                finishTable()
                table = ConfigTable(name: name, line: headerLine, entries: [])
                skipSpaces()
                try endLine()
            default:
                let keyLine = line
                let key = try parseKey()
                skipSpaces()
                guard current == UInt8(ascii: "=") else { throw fail("expected \"=\" after the key \"\(key)\"") }
                index += 1
                skipSpaces()
                let value = try parseValue()
                if table != nil {
                    guard !table!.entries.contains(where: { $0.key == key }) else {
                        throw ParseError(
                            line: keyLine, column: 1, message: "the key \"\(key)\" is set twice in this [[\(table!.name)]]")
                    }
                    table!.entries.append(ConfigEntry(key: key, value: value, line: keyLine))
                } else {
                    guard seen.insert(key).inserted else {
                        throw ParseError(line: keyLine, column: 1, message: "the key \"\(key)\" is set twice")
                    }
                    document.entries.append(ConfigEntry(key: key, value: value, line: keyLine))
                }
                skipSpaces()
                try endLine()
            }
        }
        finishTable()
        return document
    }

    private mutating func skipSpaces() {
        while current == UInt8(ascii: " ") || current == UInt8(ascii: "\t") { index += 1 }
    }

    /// Accepts an optional comment, then a newline or the end.
    private mutating func endLine() throws(ParseError) {
        if current == UInt8(ascii: "#") {
            while let byte = current, byte != UInt8(ascii: "\n") { index += 1 }
        }
        if current == UInt8(ascii: "\r") { index += 1 }
        switch current {
        case nil:
            return
        case UInt8(ascii: "\n"):
            index += 1
            line += 1
            lineStart = index
        default:
            throw fail("unexpected text after the value; one setting per line")
        }
    }

    private mutating func parseKey() throws(ParseError) -> String {
        if current == UInt8(ascii: "\"") || current == UInt8(ascii: "'") {
            guard case .string(let key) = try parseValue() else { throw fail("bad key") }
            return key
        }
        let start = index
        while let byte = current, isBareKeyByte(byte) { index += 1 }
        guard index > start else { throw fail("expected a key such as device = \"hw:1\"") }
        if current == UInt8(ascii: ".") { throw fail("dotted keys are not used in reeld's config") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func isBareKeyByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    private mutating func parseValue() throws(ParseError) -> ConfigValue {
        switch current {
        case UInt8(ascii: "\"")?:
            return .string(try parseBasicString())
        case UInt8(ascii: "'")?:
            index += 1
            let start = index
            while let byte = current, byte != UInt8(ascii: "'") {
                guard byte != UInt8(ascii: "\n") else { throw fail("unterminated string") }
                index += 1
            }
            guard current != nil else { throw fail("unterminated string") }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            index += 1
            return .string(text)
        case UInt8(ascii: "[")?:
            index += 1
            var elements: [ConfigValue] = []
            while true {
                skipSpaces()
                if current == UInt8(ascii: "]") {
                    index += 1
                    return .array(elements)
                }
                elements.append(try parseValue())
                skipSpaces()
                if current == UInt8(ascii: ",") {
                    index += 1
                } else if current != UInt8(ascii: "]") {
                    throw fail("expected \",\" or \"]\" in the array (arrays are written on one line)")
                }
            }
        case UInt8(ascii: "t")?, UInt8(ascii: "f")?:
            let start = index
            while let byte = current, byte >= 0x61 && byte <= 0x7A { index += 1 }
            switch String(decoding: bytes[start..<index], as: UTF8.self) {
            case "true": return .boolean(true)
            case "false": return .boolean(false)
            default:
                index = start
                throw fail("expected a value: a \"string\", a number, true or false")
            }
        case let byte? where byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || (byte >= 0x30 && byte <= 0x39):
            let start = index
            index += 1
            func digits() {
                while let byte = current, (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: "_") { index += 1 }
            }
            digits()
            var decimal = false
            if current == UInt8(ascii: ".") {
                decimal = true
                index += 1
                digits()
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                decimal = true
                index += 1
                if current == UInt8(ascii: "-") || current == UInt8(ascii: "+") { index += 1 }
                digits()
            }
            if let byte = current, byte == UInt8(ascii: ":") || byte == UInt8(ascii: "x") || byte == UInt8(ascii: "-")
                || (byte >= 0x61 && byte <= 0x7A)
            {
                throw fail("only decimal numbers are used in reeld's config (no dates, times or hexadecimal)")
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self).replacingOccurrences(of: "_", with: "")
            if decimal {
                // TOML's form: digits on both sides of the point, digits in the exponent.
                let parts = text.split(separator: ".", omittingEmptySubsequences: false)
                let wellFormed = Double(text)?.isFinite == true && !text.hasSuffix("e") && !text.hasSuffix("E")
                    && (parts.count == 1 || (parts[0].last?.isNumber == true && parts[1].first?.isNumber == true))
                guard wellFormed else {
                    index = start
                    throw fail("\"\(text)\" is not a number reeld can use")
                }
                return .decimal(text)
            }
            guard let number = Int(text) else {
                index = start
                throw fail("\"\(text)\" is not a number reeld can use")
            }
            return .integer(number)
        default:
            throw fail("expected a value: a \"string\", a number, true or false")
        }
    }

    private mutating func parseBasicString() throws(ParseError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
            run.removeAll()
        }
        while true {
            guard let byte = current, byte != UInt8(ascii: "\n") else { throw fail("unterminated string") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                guard let escape = current else { throw fail("unterminated string") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "u"), UInt8(ascii: "U"):
                    let count = escape == UInt8(ascii: "u") ? 4 : 8
                    guard index + count <= bytes.count,
                          let code = UInt32(String(decoding: bytes[index..<(index + count)], as: UTF8.self), radix: 16),
                          let scalar = Unicode.Scalar(code)
                    else { throw fail("bad \\u escape in a string") }
                    index += count
                    scalars.append(scalar)
                default:
                    throw fail("unknown escape \"\\\(Character(Unicode.Scalar(escape)))\" in a string")
                }
            default:
                run.append(byte)
            }
        }
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
