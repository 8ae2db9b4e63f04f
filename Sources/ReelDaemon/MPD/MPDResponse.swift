// What an MPD command answers: `Key: value` lines, or an ACK with MPD's code and message.

import NIOCore
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// The body of a successful reply (the lines before `OK` / `list_OK`), as the bytes that go
/// out: a field is written straight into one buffer (no string made per field or per song),
/// which the connection sends as it is. Values never contain a newline (a tag with one would
/// end the reply early: each CR LF, LF or CR is replaced by a space), and numbers always use
/// `.` as the decimal separator.
struct MPDResponse {
    private(set) var bytes = ByteBuffer()
    /// The payload of `binary: N` (`albumart`, `readpicture`), written after `bytes`: always
    /// the last field of a reply, as in MPD.
    private(set) var binary: [UInt8]?

    init() {}

    /// The lines as text (tests, logs).
    var text: String { String(buffer: bytes) }

    /// How many bytes the lines take so far.
    var count: Int { bytes.readableBytes }

    /// Room for `bytes` more of lines (a reply of many songs grows once, not step by step).
    mutating func reserveCapacity(_ count: Int) {
        bytes.reserveCapacity(minimumWritableBytes: count)
    }

    mutating func field(_ key: String, _ value: String) {
        bytes.writeString(key)
        bytes.writeStaticString(": ")
        write(value: value)
        bytes.writeInteger(UInt8(ascii: "\n"))
    }

    mutating func field(_ key: String, _ value: Int) {
        bytes.writeString(key)
        bytes.writeStaticString(": ")
        write(decimal: value)
        bytes.writeInteger(UInt8(ascii: "\n"))
    }

    /// Seconds with three decimals, as MPD prints `elapsed` and `duration`.
    mutating func field(_ key: String, seconds: Double) {
        bytes.writeString(key)
        bytes.writeStaticString(": ")
        let total = Self.wholeMilliseconds(seconds)
        write(decimal: total / 1000)
        let fraction = total % 1000
        bytes.writeMultipleIntegers(
            UInt8(ascii: "."), UInt8(truncatingIfNeeded: 0x30 + fraction / 100),
            UInt8(truncatingIfNeeded: 0x30 + fraction / 10 % 10), UInt8(truncatingIfNeeded: 0x30 + fraction % 10),
            UInt8(ascii: "\n"))
    }

    mutating func append(_ other: MPDResponse) {
        var lines = other.bytes
        bytes.writeBuffer(&lines)
    }

    /// Writes again the bytes `range` of these lines (offsets as `count` gave them): a song
    /// already written once, repeated without being formatted again.
    mutating func repeatLines(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.readableBytes)
        guard !range.isEmpty else { return }
        bytes.reserveCapacity(minimumWritableBytes: range.count)
        let (reader, writer) = (bytes.readerIndex, bytes.writerIndex)
        bytes.withVeryUnsafeMutableBytes { storage in
            let base = storage.baseAddress!
            (base + writer).copyMemory(from: base + reader + range.lowerBound, byteCount: range.count)
        }
        bytes.moveWriterIndex(forwardBy: range.count)
    }

    /// Ends the reply with `binary: N`, the N bytes and a newline.
    mutating func binary(_ bytes: [UInt8]) {
        binary = bytes
    }

    var isEmpty: Bool { bytes.readableBytes == 0 && binary == nil }

    // MARK: Parts of a field

    /// `value` with each CR LF, LF or CR as a space (what `String.replacing` made of it,
    /// character by character: a CR LF is one character).
    mutating func write(value: String) {
        let clean = value.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.isEmpty else { return true }
            let raw = UnsafeRawBufferPointer(utf8)
            guard memchr(raw.baseAddress!, 0x0A, raw.count) == nil, memchr(raw.baseAddress!, 0x0D, raw.count) == nil else {
                return false
            }
            bytes.writeBytes(raw)
            return true
        }
        if clean == true { return }
        var previous: UInt8 = 0
        for byte in value.utf8 {
            switch byte {
            case 0x0A where previous == 0x0D: break  // the LF of a CR LF: its space is written
            case 0x0A, 0x0D: bytes.writeInteger(UInt8(ascii: " "))
            default: bytes.writeInteger(byte)
            }
            previous = byte
        }
    }

    /// `value` in decimal, `-` first when negative (as `String(value)`).
    mutating func write(decimal value: Int) {
        bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: 20) { out in
            var magnitude = value.magnitude
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, filled from the end
            return withUnsafeMutableBytes(of: &digits) { scratch in
                var at = scratch.count
                repeat {
                    at -= 1
                    scratch[at] = UInt8(truncatingIfNeeded: 0x30 + magnitude % 10)
                    magnitude /= 10
                } while magnitude > 0
                var written = 0
                if value < 0 {
                    out[0] = UInt8(ascii: "-")
                    written = 1
                }
                let length = scratch.count - at
                out.baseAddress!.advanced(by: written).copyMemory(from: scratch.baseAddress! + at, byteCount: length)
                return written + length
            }
        }
    }

    /// A key and `: ` (a song's keys, which are literals).
    mutating func write(key: StaticString) {
        bytes.writeStaticString(key)
        bytes.writeStaticString(": ")
    }

    mutating func endLine() {
        bytes.writeInteger(UInt8(ascii: "\n"))
    }

    /// `2026-11-22T14:03:05Z` for seconds since 1970 (UTC), as `isoTime` prints it.
    mutating func write(isoTime seconds: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilDate(daysSince1970: days)
        write(decimal: year)
        bytes.writeMultipleIntegers(
            UInt8(ascii: "-"), Self.twoDigits(month).0, Self.twoDigits(month).1,
            UInt8(ascii: "-"), Self.twoDigits(day).0, Self.twoDigits(day).1, UInt8(ascii: "T"))
        let (hour, minute, second) = (secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60)
        bytes.writeMultipleIntegers(
            Self.twoDigits(hour).0, Self.twoDigits(hour).1, UInt8(ascii: ":"),
            Self.twoDigits(minute).0, Self.twoDigits(minute).1, UInt8(ascii: ":"),
            Self.twoDigits(second).0, Self.twoDigits(second).1, UInt8(ascii: "Z"))
    }

    private static func twoDigits(_ value: Int) -> (UInt8, UInt8) {
        (UInt8(truncatingIfNeeded: 0x30 + value / 10), UInt8(truncatingIfNeeded: 0x30 + value % 10))
    }

    /// `12.345`: three decimals, a dot, whatever the locale.
    static func milliseconds(_ seconds: Double) -> String {
        let total = wholeMilliseconds(seconds)
        let fraction = total % 1000
        let padded = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        return "\(total / 1000).\(padded)"
    }

    /// Seconds as whole milliseconds, for a length a file's header gave: negative and NaN are 0,
    /// and a bogus header's absurd length is held at 10^15 ms (~31,700 years) rather than
    /// trapping on a conversion to Int.
    static func wholeMilliseconds(_ seconds: Double) -> Int {
        guard !seconds.isNaN, seconds > 0 else { return 0 }
        return Int(min(seconds * 1000, 1e15).rounded())
    }
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`), as `gmtime_r` gives it.
func civilDate(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let shiftedMonth = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
    let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
    return (era * 400 + yearOfEra + (month <= 2 ? 1 : 0), month, day)
}

/// An MPD error reply: `ACK [code@index] {command} message`.
struct MPDAck: Error, Equatable {
    /// MPD's `enum ack` (`src/protocol/Ack.hxx`).
    enum Code: Int, Sendable {
        case notList = 1, argument = 2, password = 3, permission = 4, unknown = 5
        case noExist = 50, playlistMax = 51, system = 52, playlistLoad = 53, updateAlready = 54
        case playerSync = 55, exist = 56
    }

    var code: Code
    var message: String
    /// The command's name, filled in by the connection when the handler leaves it empty.
    var command: String?

    init(_ code: Code, _ message: String, command: String? = nil) {
        self.code = code
        self.message = message
        self.command = command
    }

    /// MPD's argument errors: `Integer expected: abc`.
    static func argument(_ what: String, _ value: String) -> MPDAck {
        MPDAck(.argument, "\(what): \(value)")
    }

    /// The reply line for the command at `index` of a command list (0 outside a list).
    func line(index: Int) -> String {
        let message = self.message.replacing("\n", with: " ")
        return "ACK [\(code.rawValue)@\(index)] {\(command ?? "")} \(message)\n"
    }

    /// A core error as MPD would name its kind: a missing entry or file is `NO_EXIST`, a bad
    /// value `ARG`, a refused path `PERMISSION`, a device or disk failure `SYSTEM`.
    init(_ error: ReelError) {
        let code: Code
        switch error.reason {
        case .notFound, .notARecording, .notAFolder: code = .noExist
        case .outOfRange, .invalidName, .root, .cycle, .notPlaying, .notSeekable: code = .argument
        case .nameTaken: code = .exist
        case .forbidden, .readOnly: code = .permission
        case .unsupportedFormat, .corruptFile: code = .argument
        // MPD's own answer to a stream that cannot be opened (`Failed to open …`).
        case .unreachable: code = .system
        case .busy, .deviceBusy, .deviceUnavailable, .diskFull, .ioError, .notRecording, .noMixer: code = .system
        }
        self.init(code, error.message)
    }
}

/// MPD's idle subsystems, in the order MPD prints them (`src/IdleFlags.cxx`).
struct MPDSubsystems: OptionSet, Hashable, Sendable {
    let rawValue: UInt16

    static let database = MPDSubsystems(rawValue: 1 << 0)
    static let storedPlaylist = MPDSubsystems(rawValue: 1 << 1)
    static let playlist = MPDSubsystems(rawValue: 1 << 2)
    static let player = MPDSubsystems(rawValue: 1 << 3)
    static let mixer = MPDSubsystems(rawValue: 1 << 4)
    static let output = MPDSubsystems(rawValue: 1 << 5)
    static let options = MPDSubsystems(rawValue: 1 << 6)
    static let sticker = MPDSubsystems(rawValue: 1 << 7)
    static let update = MPDSubsystems(rawValue: 1 << 8)
    static let subscription = MPDSubsystems(rawValue: 1 << 9)
    static let message = MPDSubsystems(rawValue: 1 << 10)
    static let neighbor = MPDSubsystems(rawValue: 1 << 11)
    static let mount = MPDSubsystems(rawValue: 1 << 12)
    static let partition = MPDSubsystems(rawValue: 1 << 13)

    static let names: [(name: String, subsystem: MPDSubsystems)] = [
        ("database", .database), ("stored_playlist", .storedPlaylist), ("playlist", .playlist), ("player", .player),
        ("mixer", .mixer), ("output", .output), ("options", .options), ("sticker", .sticker), ("update", .update),
        ("subscription", .subscription), ("message", .message), ("neighbor", .neighbor), ("mount", .mount),
        ("partition", .partition),
    ]

    static let all = MPDSubsystems(rawValue: (1 << 14) - 1)

    /// The subsystems named by `idle`'s arguments (case-insensitive, as MPD); all when none.
    static func parse(_ arguments: [String]) throws(MPDAck) -> MPDSubsystems {
        guard !arguments.isEmpty else { return .all }
        var set: MPDSubsystems = []
        for argument in arguments {
            let lowered = argument.lowercased()
            guard let match = names.first(where: { $0.name == lowered }) else {
                throw MPDAck(.argument, "Unrecognized idle event: \(argument)")
            }
            set.insert(match.subsystem)
        }
        return set
    }

    /// `changed: X` lines for these subsystems, in MPD's order.
    var changedLines: String {
        var text = ""
        for (name, subsystem) in Self.names where contains(subsystem) {
            text += "changed: \(name)\n"
        }
        return text
    }
}
