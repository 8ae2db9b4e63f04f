// reel-bench: measures reeld from outside, for bench/.
//
//   reel-bench rtt --socket PATH [--count 5000] [--warmup 500] [--method player.status] [--params JSON]
//                  [--seconds S] [--protocol reel|mpd]
//       One connection, one request at a time; prints `p50_us=… p99_us=… max_us=… count=…`.
//       --seconds S: requests for S seconds of wall time instead of --count (no warm-up).
//       --protocol mpd: speaks MPD's protocol instead (bench/compare): reads the greeting, sends
//       --method as a command line (default `status`) and reads the reply up to `OK` (`ACK` fails).
//   reel-bench call --socket PATH --method NAME [--params JSON]
//       Sends one request and prints its reply line (exit 1 on an error reply).
//   reel-bench build-tree …, reel-bench start …: for bench/library, see LibraryBench.swift.
//   reel-bench resample [--seconds N] [--rate R]: a Snapcast output's conversion alone, for
//       bench/snapcast (ResampleBench.swift).
//   reel-bench mp3-length FILE...: an MP3's length estimate against its exact length and
//       against the first frame's bitrate (MP3LengthBench.swift).
//   reel-bench decode [--from N] [--seconds S] LIST: plays each file of LIST through
//       AudioFileOpener with no device, for scripts/fuzz-decoders (DecodeCheck.swift).
//   reel-bench gain [--volume V] [--replaygain DB] [--read-tags] FILE: a file decoded through
//       the software gain stage with no device, for bench/replaygain (GainBench.swift).
//
// Flags are parsed by hand: this tool depends on ReelProtocol (ReelLibrary for build-tree,
// ReelAudio for resample, mp3-length and decode, ReelTags for decode).

#if canImport(Glibc)
import Glibc
#endif
import ReelProtocol

func fail(_ message: String, code: Int32 = 2) -> Never {
    let line = Array("reel-bench: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(code)
}

func printLine(_ text: String) {
    let line = Array((text + "\n").utf8)
    line.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(1, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 { if errno == EINTR { continue }; return }
            offset += n
        }
    }
}

let usage = """
    usage: reel-bench rtt --socket PATH [--count N] [--warmup N] [--method NAME] [--params JSON]
                          [--seconds S] [--protocol reel|mpd]
           reel-bench call --socket PATH --method NAME [--params JSON]
           reel-bench build-tree --data-dir DIR [--folders N] [--per-folder N] [--batch N]
           reel-bench start --socket PATH [--log FILE] [--pid-file FILE] [--timeout S] -- REELD [ARGS...]
           reel-bench resample [--seconds N] [--rate R]
           reel-bench mp3-length FILE...
           reel-bench decode [--from N] [--seconds S] LIST
           reel-bench gain [--volume V] [--replaygain DB] [--read-tags] FILE
    """

switch CommandLine.arguments.dropFirst().first {
case "build-tree": buildTreeCommand(Array(CommandLine.arguments.dropFirst(2)))
case "start": startCommand(Array(CommandLine.arguments.dropFirst(2)))
case "resample": resampleCommand(Array(CommandLine.arguments.dropFirst(2)))
case "mp3-length":
    mp3LengthCommand(Array(CommandLine.arguments.dropFirst(2)))
    exit(0)
case "decode": decodeCommand(Array(CommandLine.arguments.dropFirst(2)))
case "gain": gainCommand(Array(CommandLine.arguments.dropFirst(2)))
default: break
}

// MARK: - Arguments

struct Options {
    var command = ""
    var socket: String?
    var count = 5000
    var warmup = 500
    var method: String?
    var params: String?
    var seconds: Double?
    var mpd = false
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    guard let command = arguments.popFirst() else { fail("missing command\n\(usage)") }
    if command == "-h" || command == "--help" { printLine(usage); exit(0) }
    guard command == "rtt" || command == "call" else { fail("unknown command \(command)\n\(usage)") }
    options.command = command
    while let flag = arguments.popFirst() {
        if flag == "-h" || flag == "--help" { printLine(usage); exit(0) }
        guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
        func number() -> Int {
            guard let n = Int(value), n >= 0 else { fail("\(flag) must be a non-negative integer, not \(value)") }
            return n
        }
        switch flag {
        case "--socket": options.socket = value
        case "--count": options.count = number()
        case "--warmup": options.warmup = number()
        case "--method": options.method = value
        case "--params": options.params = value
        case "--seconds":
            guard let s = Double(value), s > 0 else { fail("--seconds must be a positive number, not \(value)") }
            options.seconds = s
        case "--protocol":
            guard value == "reel" || value == "mpd" else { fail("--protocol is reel or mpd, not \(value)") }
            options.mpd = value == "mpd"
        default: fail("unknown flag \(flag)\n\(usage)")
        }
    }
    if options.socket == nil { fail("--socket PATH is required") }
    if options.command == "rtt" && options.count < 1 { fail("--count must be at least 1") }
    if options.command == "call" && options.method == nil { fail("call needs --method") }
    if options.command == "call" && options.mpd { fail("call speaks Reel's protocol only") }
    if options.mpd && options.params != nil { fail("--params is for Reel's protocol; give MPD's arguments in --method") }
    return options
}

// MARK: - Socket

/// A blocking AF_UNIX stream connection with a reusable receive buffer.
struct Connection {
    let fd: Int32
    private var buffer: [UInt8]
    /// Unconsumed bytes are buffer[start..<end].
    private var start = 0
    private var end = 0

    init(path: String) {
        buffer = [UInt8](repeating: 0, count: 64 * 1024)
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { fail("socket: \(String(cString: strerror(errno)))", code: 1) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { fail("socket path longer than \(capacity - 1) bytes: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { fail("cannot connect to \(path): \(String(cString: strerror(errno)))", code: 1) }
    }

    func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    fail("send: \(String(cString: strerror(errno)))", code: 1)
                }
                offset += n
            }
        }
    }

    /// Blocks until a complete line is buffered; returns its range in the buffer (without the
    /// `\n`), valid until the next call. Calls `received` right after the read that completed it.
    mutating func nextLine(received: () -> Void = {}) -> Range<Int> {
        var scanFrom = start
        while true {
            if let newline = buffer.withUnsafeBufferPointer({ bytes -> Int? in
                var k = scanFrom
                while k < end {
                    if bytes[k] == 0x0A { return k }
                    k += 1
                }
                return nil
            }) {
                let line = start..<newline
                start = newline + 1
                return line
            }
            scanFrom = end
            if start > 0 {
                // Move the partial line to the front (rare: replies are small).
                let count = end - start
                buffer.withUnsafeMutableBytes { raw in
                    _ = memmove(raw.baseAddress!, raw.baseAddress! + start, count)
                }
                scanFrom -= start
                start = 0
                end = count
            }
            if end == buffer.count {
                guard buffer.count < 1 << 22 else { fail("reply line longer than 4 MiB", code: 1) }
                buffer.append(contentsOf: repeatElement(0, count: buffer.count))
            }
            let n = buffer.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress! + end, raw.count - end, 0)
            }
            if n < 0 {
                if errno == EINTR { continue }
                fail("recv: \(String(cString: strerror(errno)))", code: 1)
            }
            if n == 0 { fail("the daemon closed the connection", code: 1) }
            end += n
            received()
        }
    }

    func bytes(_ range: Range<Int>) -> [UInt8] { Array(buffer[range]) }

    func hasPrefix(_ prefix: [UInt8], in range: Range<Int>) -> Bool {
        guard range.count >= prefix.count else { return false }
        return buffer.withUnsafeBufferPointer { bytes in
            var k = 0
            while k < prefix.count {
                if bytes[range.lowerBound + k] != prefix[k] { return false }
                k += 1
            }
            return true
        }
    }
}

// MARK: - Commands

let options = parseOptions()
let method = options.method ?? (options.mpd ? "status" : "player.status")
var params: JSONObject = [:]
if let text = options.params {
    let parsed: JSONValue
    do { parsed = try JSONValue.parse(Array(text.utf8)) } catch { fail("--params is not valid JSON: \(error)") }
    guard case .object(let object) = parsed else { fail("--params must be a JSON object") }
    params = object
}
let requestID: Int64 = 1
let request = RPCRequest(id: .int(requestID), method: method, params: params).encodedLine()
var connection = Connection(path: options.socket!)

/// Reads lines until the reply to our request, skipping pushed notifications (no `id`).
/// Returns the decoded reply; `received` runs after the read that completed each line.
@MainActor func awaitReply(received: () -> Void = {}) -> Result<JSONValue, RPCError> {
    while true {
        let range = connection.nextLine(received: received)
        if range.isEmpty { continue }
        let message: RPCMessage
        do { message = try RPCMessage(line: connection.bytes(range)) } catch {
            fail("unreadable reply: \(error)", code: 1)
        }
        switch message {
        case .notification: continue
        case .response(let id, let result):
            guard id == .int(requestID) else { fail("reply with unexpected id \(id)", code: 1) }
            return result
        }
    }
}

if options.command == "call" {
    connection.send(request)
    let result = awaitReply()
    switch result {
    case .success(let value):
        printLine(value.description)
    case .failure(let error):
        printLine(error.json.description)
        exit(1)
    }
    exit(0)
}

@inline(__always) func nanoseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1_000_000_000 + now.tv_nsec
}

/// One timed exchange in Reel's protocol: returns the nanoseconds from the send to the read that
/// completed the reply. A successful reply starts with exactly `successPrefix` (RPCEncoder's
/// layout); anything else (a notification, another layout) gets a full decode, outside the timing.
let successPrefix = Array(#"{"jsonrpc":"2.0","id":1,"result":"#.utf8)
@MainActor func reelExchange() -> Int {
    var finished = 0
    let started = nanoseconds()
    connection.send(request)
    while true {
        let range = connection.nextLine(received: { finished = nanoseconds() })
        if connection.hasPrefix(successPrefix, in: range) { break }
        if range.isEmpty { continue }
        let message: RPCMessage
        do { message = try RPCMessage(line: connection.bytes(range)) } catch {
            fail("unreadable reply: \(error)", code: 1)
        }
        if case .response(_, let result) = message {
            if case .failure(let error) = result { fail("\(method) failed: \(error)", code: 1) }
            break
        }
    }
    return finished - started
}

/// One timed exchange in MPD's protocol: the command line, then reply lines up to `OK`.
let mpdRequest = Array((method + "\n").utf8)
let mpdOK = Array("OK".utf8)
let mpdACK = Array("ACK ".utf8)
@MainActor func mpdExchange() -> Int {
    var finished = 0
    let started = nanoseconds()
    connection.send(mpdRequest)
    while true {
        let range = connection.nextLine(received: { finished = nanoseconds() })
        if range.count == mpdOK.count && connection.hasPrefix(mpdOK, in: range) { break }
        if connection.hasPrefix(mpdACK, in: range) {
            fail("\(method) failed: \(String(decoding: connection.bytes(range), as: UTF8.self))", code: 1)
        }
    }
    return finished - started
}

if options.mpd {
    let greeting = connection.nextLine()
    guard connection.hasPrefix(Array("OK MPD ".utf8), in: greeting) else {
        fail("no MPD greeting: \(String(decoding: connection.bytes(greeting), as: UTF8.self))", code: 1)
    }
}
let exchange = options.mpd ? mpdExchange : reelExchange

var samples: [Int] = []
if let seconds = options.seconds {
    // For a time window (e.g. across the end of a track): no warm-up, every exchange counts.
    let deadline = nanoseconds() + Int(seconds * 1e9)
    samples.reserveCapacity(1 << 16)
    while nanoseconds() < deadline { samples.append(exchange()) }
} else {
    // Warm-up: for Reel's protocol a full decode of every reply, so an error reply stops the run.
    for _ in 0..<options.warmup {
        if options.mpd {
            _ = mpdExchange()
        } else {
            connection.send(request)
            if case .failure(let error) = awaitReply() { fail("\(method) failed: \(error)", code: 1) }
        }
    }
    samples = [Int](repeating: 0, count: options.count)
    for index in 0..<options.count { samples[index] = exchange() }
}
close(connection.fd)

samples.sort()
/// Nearest-rank percentile.
@MainActor func percentile(_ p: Double) -> Int {
    let rank = Int((p / 100 * Double(samples.count)).rounded(.up))
    return samples[max(0, min(samples.count - 1, rank - 1))]
}
func micros(_ ns: Int) -> String {
    let tenths = (ns + 50) / 100
    return "\(tenths / 10).\(tenths % 10)"
}
printLine("p50_us=\(micros(percentile(50))) p99_us=\(micros(percentile(99))) max_us=\(micros(samples.last!)) count=\(samples.count)")
