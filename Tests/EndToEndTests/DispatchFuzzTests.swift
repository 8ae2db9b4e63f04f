import Foundation
import Glibc
import ReelProtocol
import Testing
import ReelTestSupport

/// Seeded random requests (valid ones, mutated ones, every method with wrong, huge, nested and
/// invalid-UTF-8 parameters, truncated lines, noise) sent over the socket to a real reeld whose
/// devices do not exist. Every reply must be a JSON line, the connection must stay up, a
/// sentinel request after every batch must be answered (no hang), and the daemon must not crash
/// or grow. `REEL_FUZZ_INPUTS` sets the count (default 60,000; the figure in
/// docs/reliability.md comes from a run with 2,000,000).
@Suite struct DispatchFuzzTests {
    static let methods = [
        "daemon.info", "library.createFolder", "library.delete", "library.get", "library.import", "library.list",
        "library.move", "library.rename", "library.search", "player.pause", "player.play", "player.resume",
        "player.seek", "player.status", "player.stop", "player.toggle", "recorder.cancel", "recorder.start",
        "recorder.status", "recorder.stop", "subscribe", "unsubscribe", "no.such.method",
    ]
    static let keys = [
        "file", "item", "path", "position", "offset", "name", "parent", "parentPath", "to", "toPath", "folder",
        "folderPath", "query", "limit", "cursor", "stream", "interval", "subscription", "format", "sampleRate",
        "channels", "maxDuration", "bogus",
    ]

    static func value(_ random: inout SeededGenerator, depth: Int = 0) -> String {
        switch Int.random(in: 0..<14, using: &random) {
        case 0: return "null"
        case 1: return Bool.random(using: &random) ? "true" : "false"
        case 2: return String(Int64.random(in: .min ... .max, using: &random))
        case 3: return ["1e400", "-1e400", "1e-400", "9223372036854775808", "-0", "0.1", "3600.0001", "NaN", "1.5e308"]
            .randomElement(using: &random)!
        case 4: return String(Double.random(in: -100...100, using: &random))
        case 5: return "\"/\(["a", "..", "tmp", "dev/zero", "etc/passwd", "", "Notes"].randomElement(using: &random)!)\""
        case 6: return "\"\(["", "flac", "opus", "player", "recorder", "library", "folder", "item", "x/y", ".", "..", "é😀"].randomElement(using: &random)!)\""
        case 7: return "\"\\ud800\\u0000\\\"\""
        case 8: return "\"" + String(repeating: "a", count: Int.random(in: 0...300, using: &random)) + "\""
        case 9 where depth < 6: return "[" + (0..<Int.random(in: 0...3, using: &random)).map { _ in value(&random, depth: depth + 1) }.joined(separator: ",") + "]"
        case 10 where depth < 6: return object(&random, depth: depth + 1)
        case 11: return String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        case 12:
            let hex = String(UInt64.random(in: 0 ... .max, using: &random), radix: 16)
            return "\"01a20000-0000-7000-8000-\(String(hex.prefix(12)))\""
        default: return "0"
        }
    }

    static func object(_ random: inout SeededGenerator, depth: Int) -> String {
        let members = (0..<Int.random(in: 0...4, using: &random)).map { _ in
            "\"\(keys.randomElement(using: &random)!)\":\(value(&random, depth: depth))"
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    static func request(_ random: inout SeededGenerator) -> [UInt8] {
        let id = ["1", "\"x\"", "null", "[]", "1.5", "-7"].randomElement(using: &random)!
        let method = methods.randomElement(using: &random)!
        var text = "{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\""
        if Bool.random(using: &random) { text += ",\"params\":\(Int.random(in: 0..<8, using: &random) == 0 ? value(&random) : object(&random, depth: 0))" }
        text += "}"
        if Int.random(in: 0..<8, using: &random) == 0 { text = "[" + text + "," + text + "]" }
        var bytes = Array(text.utf8)
        // Mutations: flip, insert noise or invalid UTF-8, truncate.
        for _ in 0..<Int.random(in: 0...2, using: &random) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes[at] ^= 1 << UInt8.random(in: 0..<7, using: &random)
            case 1: bytes.insert(contentsOf: [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x00]].randomElement(using: &random)!, at: at)
            case 2: bytes = Array(bytes[..<at])
            default: bytes.insert(UInt8.random(in: 0x20...0x7E, using: &random), at: at)
            }
        }
        return bytes.filter { $0 != 0x0A }
    }

    @Test func randomRequestsNeverCrashHangOrGrowTheDaemon() throws {
        let count = ProcessInfo.processInfo.environment["REEL_FUZZ_INPUTS"].flatMap(Int.init) ?? 60_000
        let daemon = try DaemonProcess(device: "reel_absent_device", arguments: ["--capture-device", "reel_absent_device", "--log-level", "error"])
        let client = try daemon.client()
        var random = SeededGenerator(seed: 0x5EED_0005)
        let batch = 200
        var sent = 0
        var replies = 0
        var memoryAfterWarmUp = 0
        while sent < count {
            var payload: [UInt8] = []
            for _ in 0..<min(batch, count - sent) {
                payload += Self.request(&random) + [0x0A]
                sent += 1
            }
            let sentinel = "s\(sent)"
            payload += Array("{\"jsonrpc\":\"2.0\",\"id\":\"\(sentinel)\",\"method\":\"daemon.info\"}\n".utf8)
            try client.send(raw: payload)
            // Every reply is JSON; the sentinel's comes after this batch's.
            while true {
                guard let line = try client.readLine(timeout: 20) else {
                    throw TestFailure("the daemon closed the connection after \(sent) inputs; log:\n\(daemon.log().suffix(2000))")
                }
                guard let reply = try? JSONValue.parse(line) else {
                    Issue.record("a reply that is not JSON: \(String(decoding: line, as: UTF8.self))")
                    continue
                }
                replies += 1
                if reply["id"] == .string(sentinel) { break }
            }
            if sent == min(count, 10_000) { memoryAfterWarmUp = daemon.residentKiB }
        }
        let memoryAtEnd = daemon.residentKiB
        #expect(replies > count / 2)
        if count > 10_000 && !runningUnderSanitizer {
            #expect(memoryAtEnd - memoryAfterWarmUp < 4096, "RSS \(memoryAfterWarmUp) → \(memoryAtEnd) KiB")
        }
        #expect(daemon.process.isRunning)
        #expect(try daemon.client().result("daemon.info")["version"] != nil)
        print("dispatch fuzz: \(count) inputs, \(replies) replies, RSS \(memoryAfterWarmUp) → \(memoryAtEnd) KiB")
    }
}
