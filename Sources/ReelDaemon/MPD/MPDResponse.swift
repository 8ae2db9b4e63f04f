// What an MPD command answers: `Key: value` lines, or an ACK with MPD's code and message.

import NIOCore
import ReelModel
import ReelRuntime

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

    /// Room for `count` more bytes of lines (a reply of many songs grows once, not step by step).
    /// A large reply starts in the storage of the last large reply sent when that is free again
    /// (`MPDReplyStorage`): pages the process has, not 2 MB of fresh ones faulted in and zeroed
    /// by the kernel (malloc maps each block of 128 KiB or more afresh: `HeapSettings`).
    mutating func reserveCapacity(_ count: Int, reusing storage: MPDReplyStorage = .shared) {
        if bytes.readableBytes == 0, bytes.capacity < count, let kept = storage.take(atLeast: count) { bytes = kept }
        bytes.reserveCapacity(minimumWritableBytes: count)
    }

    mutating func field(_ key: String, _ value: String) {
        writeLines(atMost: key.utf8.count + value.utf8.count + 3) { lines in
            lines.write(key: key)
            lines.write(value: value)
            lines.endLine()
        }
    }

    mutating func field(_ key: String, _ value: Int) {
        writeLines(atMost: key.utf8.count + MPDLines.decimalBytes + 3) { lines in
            lines.write(key: key)
            lines.write(decimal: value)
            lines.endLine()
        }
    }

    /// Seconds with three decimals, as MPD prints `elapsed` and `duration`.
    mutating func field(_ key: String, seconds: Double) {
        writeLines(atMost: key.utf8.count + MPDLines.decimalBytes + 7) { lines in
            lines.write(key: key)
            lines.write(seconds: seconds)
            lines.endLine()
        }
    }

    /// Writes lines through `body`, which writes at most `count` bytes: room for them is made
    /// here, once (a write past it traps).
    mutating func writeLines(atMost count: Int, _ body: (inout MPDLines) -> Void) {
        bytes.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { room in
            var lines = MPDLines(room.baseAddress!, count: count)
            body(&lines)
            return room.baseAddress!.distance(to: lines.next)
        }
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

    /// `Time`'s whole seconds: the whole milliseconds rounded half up, as MPD rounds its
    /// millisecond lengths; never a trap (see `wholeMilliseconds`).
    static func wholeSeconds(_ seconds: Double) -> Int {
        (wholeMilliseconds(seconds) + 500) / 1000
    }
}

/// The storage of the last large MPD reply sent, kept for the next one (`MPDResponse.reserveCapacity`):
/// a listing of 10,000 songs is 1.8 MB, and a fresh block that size is 440 pages faulted in and
/// zeroed each time. One buffer is kept, of 128 KiB to 8 MiB, and let go when no large reply has
/// taken it for a minute (`dropUnused`, from `MPDEventHub`'s sweep); its storage is reused when
/// the channel has sent it and let it go (a buffer still referenced is never written:
/// `ByteBuffer.clear` gives fresh storage then). Any thread (a lock).
final class MPDReplyStorage: Sendable {
    /// The one the connections and the commands share.
    static let shared = MPDReplyStorage()

    /// Replies from this size on leave their storage for the next.
    static let smallest = 128 << 10
    /// Replies up to this size do (a larger one's storage goes back to the kernel with it).
    static let largest = 8 << 20

    private let kept = Locked<(buffer: ByteBuffer, at: NIODeadline)?>(nil)

    /// Keeps `bytes`, a large reply just handed to the channel, for the next large reply.
    func keep(_ bytes: ByteBuffer, now: NIODeadline = .now()) {
        guard bytes.capacity >= Self.smallest, bytes.capacity <= Self.largest else { return }
        kept.withLock { kept in kept = (bytes, now) }
    }

    /// The kept storage, emptied, when it holds `count` bytes (a buffer still being sent is
    /// left to the channel: `clear` gives fresh storage of its size, as a new reply would have).
    func take(atLeast count: Int) -> ByteBuffer? {
        guard count >= Self.smallest, var buffer = kept.withLock({ kept in kept.take()?.buffer }), buffer.capacity >= count
        else { return nil }
        buffer.clear()
        return buffer
    }

    /// Lets the kept storage go when it was kept before `deadline` (no large reply since).
    func dropUnused(keptBefore deadline: NIODeadline) {
        let dropped = kept.withLock { kept -> ByteBuffer? in
            guard let held = kept, held.at < deadline else { return nil }
            kept = nil
            return held.buffer
        }
        _ = dropped  // freed here, outside the lock
    }

    /// Whether storage is kept (tests).
    var isHolding: Bool { kept.withLock { $0 != nil } }
}

/// Writes MPD lines into memory that has room for them (`MPDResponse.writeLines`): a song's
/// dozen fields go into room made once, with no buffer's bookkeeping per field; a write past
/// the room traps (its size is the caller's promise).
struct MPDLines {
    /// Where the next byte goes.
    private(set) var next: UnsafeMutableRawPointer
    /// Where the room ends.
    private let end: UnsafeMutableRawPointer

    init(_ start: UnsafeMutableRawPointer, count: Int) {
        next = start
        end = start + count
    }

    private func ensure(_ count: Int) {
        precondition(count <= next.distance(to: end), "MPD lines overran their room")
    }

    /// The most bytes `write(decimal:)` writes (`-` and 19 digits).
    static let decimalBytes = 20
    /// The most bytes `write(isoTime:)` writes.
    static let isoTimeBytes = decimalBytes + 16

    mutating func write(key: StaticString) {
        write(raw: UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        write(byte: UInt8(ascii: ":"))
        write(byte: UInt8(ascii: " "))
    }

    /// A key given as a string (a tag's name), as it is.
    mutating func write(key: String) {
        let written: Void? = key.utf8.withContiguousStorageIfAvailable { utf8 in write(raw: UnsafeRawBufferPointer(utf8)) }
        if written == nil {
            for byte in key.utf8 { write(byte: byte) }
        }
        write(byte: UInt8(ascii: ":"))
        write(byte: UInt8(ascii: " "))
    }

    mutating func endLine() {
        write(byte: UInt8(ascii: "\n"))
    }

    mutating func write(byte: UInt8) {
        ensure(1)
        next.storeBytes(of: byte, as: UInt8.self)
        next += 1
    }

    mutating func write(raw: UnsafeRawBufferPointer) {
        guard let base = raw.baseAddress, raw.count > 0 else { return }
        ensure(raw.count)
        next.copyMemory(from: base, byteCount: raw.count)
        next += raw.count
    }

    /// `value` with each CR LF, LF or CR as a space (what `String.replacing` made of it,
    /// character by character: a CR LF is one character): at most `value.utf8.count` bytes.
    mutating func write(value: String) {
        let clean = value.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            let raw = UnsafeRawBufferPointer(utf8)
            guard !Self.hasLineBreak(raw) else { return false }
            write(raw: raw)
            return true
        }
        if clean == true { return }
        var previous: UInt8 = 0
        for byte in value.utf8 {
            switch byte {
            case 0x0A where previous == 0x0D: break  // the LF of a CR LF: its space is written
            case 0x0A, 0x0D: write(byte: UInt8(ascii: " "))
            default: write(byte: byte)
            }
            previous = byte
        }
    }

    /// Whether `bytes` hold a CR or an LF: 8 bytes at a time, in one pass (a value is a dozen
    /// to a few dozen bytes; two `memchr` calls per value cost more than the scan).
    static func hasLineBreak(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        var at = 0
        while at + 8 <= count {
            if hasLineBreak(word: base.loadUnaligned(fromByteOffset: at, as: UInt64.self)) { return true }
            at += 8
        }
        guard at < count else { return false }
        // The last 1–7 bytes, the rest of the word zero (neither CR nor LF).
        var last: UInt64 = 0
        withUnsafeMutableBytes(of: &last) { word in word.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[at...])) }
        return hasLineBreak(word: last)
    }

    /// Whether one of the 8 bytes of `word` is CR or LF (a byte equal to one is a zero byte
    /// of `word ^ that byte repeated`; `(x - 0x01…) & ~x & 0x80…` is nonzero exactly when `x`
    /// has a zero byte).
    @inline(__always)
    private static func hasLineBreak(word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let lf = word ^ (ones &* 0x0A)
        let cr = word ^ (ones &* 0x0D)
        return ((lf &- ones) & ~lf | (cr &- ones) & ~cr) & highs != 0
    }

    /// `value` in decimal, `-` first when negative (as `String(value)`).
    mutating func write(decimal value: Int) {
        if value < 0 { write(byte: UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var length = 1
        var rest = magnitude / 10
        while rest > 0 {
            length += 1
            rest /= 10
        }
        ensure(length)
        var at = next + length
        repeat {
            at -= 1
            at.storeBytes(of: UInt8(truncatingIfNeeded: 0x30 + magnitude % 10), as: UInt8.self)
            magnitude /= 10
        } while magnitude > 0
        next += length
    }

    /// Seconds with three decimals (`MPDResponse.milliseconds`).
    mutating func write(seconds: Double) {
        let total = MPDResponse.wholeMilliseconds(seconds)
        write(decimal: total / 1000)
        write(byte: UInt8(ascii: "."))
        let fraction = total % 1000
        write(byte: UInt8(truncatingIfNeeded: 0x30 + fraction / 100))
        write(byte: UInt8(truncatingIfNeeded: 0x30 + fraction / 10 % 10))
        write(byte: UInt8(truncatingIfNeeded: 0x30 + fraction % 10))
    }

    /// `2026-11-22T14:03:05Z` for seconds since 1970 (UTC), as `isoTime` prints it.
    mutating func write(isoTime seconds: Int) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilTime.date(days: days)
        write(decimal: year)
        write(byte: UInt8(ascii: "-"))
        write(twoDigits: month)
        write(byte: UInt8(ascii: "-"))
        write(twoDigits: day)
        write(byte: UInt8(ascii: "T"))
        write(twoDigits: secondOfDay / 3600)
        write(byte: UInt8(ascii: ":"))
        write(twoDigits: secondOfDay / 60 % 60)
        write(byte: UInt8(ascii: ":"))
        write(twoDigits: secondOfDay % 60)
        write(byte: UInt8(ascii: "Z"))
    }

    private mutating func write(twoDigits value: Int) {
        write(byte: UInt8(truncatingIfNeeded: 0x30 + value / 10))
        write(byte: UInt8(truncatingIfNeeded: 0x30 + value % 10))
    }
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
