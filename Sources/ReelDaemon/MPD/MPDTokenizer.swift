// Splits one MPD command line into its command name and arguments, with MPD's rules.

/// One command as a client sent it: the name and its arguments, unquoted and unescaped.
struct MPDCommandLine: Equatable, Sendable {
    var name: String
    var arguments: [String]
}

/// MPD's tokenizer (`src/util/Tokenizer.cxx`), byte for byte:
/// - the command name is a letter followed by letters, digits and `_`;
/// - an unquoted argument is a run of bytes above 0x20 other than `"` and `'`;
/// - a quoted argument is `"…"` where `\` takes the next byte literally, and the closing quote
///   must be followed by a space, a tab or the end of the line;
/// - runs of spaces and tabs separate words.
///
/// A line that does not start with a lowercase letter is not MPD at all (a stray HTTP request,
/// say): the caller closes the connection without a reply, as MPD does.
enum MPDTokenizer {
    enum Failure: Error, Equatable {
        /// The command name is malformed: answer `ACK [5@0] {} message`, then close.
        case badName(String)
        /// An argument is malformed: answer `ACK [5@0] {} message`; the connection goes on.
        case badArgument(String)
    }

    /// At most this many arguments (MPD's `COMMAND_ARGV_MAX`).
    static let maxArguments = 4096

    /// True when `bytes` may be an MPD command at all (its first byte is a lowercase letter).
    static func looksLikeCommand(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let first = bytes.first else { return false }
        return first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z")
    }

    static func split(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> MPDCommandLine {
        var index = 0
        let end = bytes.count

        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        func skipSpaces() { while index < end, isSpace(bytes[index]) { index += 1 } }

        // The name.
        let nameStart = index
        guard index < end else { throw .badName("No command given") }
        guard isLetter(bytes[index]) else { throw .badName("Letter expected") }
        index += 1
        while index < end, !isSpace(bytes[index]) {
            let byte = bytes[index]
            guard isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_") else {
                throw .badName("Invalid word character")
            }
            index += 1
        }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[nameStart..<index]), as: UTF8.self)
        skipSpaces()

        var arguments: [String] = []
        while index < end {
            guard arguments.count < maxArguments else { throw .badArgument("Too many arguments") }
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                var value: [UInt8] = []
                while true {
                    guard index < end else { throw .badArgument("Missing closing '\"'") }
                    var byte = bytes[index]
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\") {
                        index += 1
                        guard index < end else { throw .badArgument("Missing closing '\"'") }
                        byte = bytes[index]
                    }
                    value.append(byte)
                    index += 1
                }
                index += 1
                guard index == end || isSpace(bytes[index]) else {
                    throw .badArgument("Space expected after closing '\"'")
                }
                arguments.append(String(decoding: value, as: UTF8.self))
            } else {
                let start = index
                while index < end, !isSpace(bytes[index]) {
                    let byte = bytes[index]
                    guard byte > 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "'") else {
                        throw .badArgument("Invalid unquoted character")
                    }
                    index += 1
                }
                arguments.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
            }
            skipSpaces()
        }
        return MPDCommandLine(name: name, arguments: arguments)
    }

    static func split(_ text: String) throws(Failure) -> MPDCommandLine {
        let result = Array(text.utf8).withUnsafeBytes { bytes -> Result<MPDCommandLine, Failure> in
            do throws(Failure) {
                return .success(try split(bytes))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
