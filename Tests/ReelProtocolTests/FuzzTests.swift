import Testing
@testable import ReelProtocol
import ReelTestSupport

/// Feeds the parser and the request decoder a deterministic stream of random and mutated
/// inputs; each must be answered (accepted or rejected) without a crash or hang, and whatever
/// is accepted must survive a write/parse round trip.
@Suite("Fuzzing")
struct FuzzTests {
    static let corpus: [[UInt8]] = [
        #"{"jsonrpc":"2.0","id":7,"method":"player.seek","params":{"position":12.5}}"#,
        #"{"jsonrpc":"2.0","id":"a","method":"player.play","params":{"file":"/abs/f.flac","position":0}}"#,
        #"{"jsonrpc":"2.0","method":"player.stop"}"#,
        #"[{"jsonrpc":"2.0","id":1,"method":"player.status"},{"jsonrpc":"2.0","method":"x","params":[1,2]}]"#,
        #"{"jsonrpc":"2.0","id":null,"method":"library.search","params":{"query":"caf\u00e9 \ud83d\ude00","limit":50,"cursor":null}}"#,
        #"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"subscribe","params":{"stream":"player","interval":2.5e-1}}"#,
        #"{"a":[true,false,null,{"b":[[[]]]}],"c":"\n\t\"\\\/","d":-0.0e+0,"e":1E400}"#,
        "{\"name\":\"Ünïcødé 日本\",\"x\":[1,2,3]}",
    ].map { Array($0.utf8) }

    static let fragments: [[UInt8]] = [
        "[", "]", "{", "}", "\"", "\\", "\\u", "\\uD800", "\\uDC00", ":", ",", "1e999", "-0", "01", "NaN",
        "true", "null", "\u{0}", " ", "\r\n", "é", "😀", "[[[[[[[[", "{\"k\":",
    ].map { Array($0.utf8) } + [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]]

    @Test func randomAndMutatedInputsNeverCrash() throws {
        var random = SeededGenerator(seed: 0x5EED_2026)
        var accepted = 0
        for round in 0..<200_000 {
            let input = Self.makeInput(round: round, &random)
            let parsed: JSONValue?
            do {
                parsed = try JSONValue.parse(input)
            } catch {
                // (#expect is costly in a loop this long: check first, record on failure.)
                if error.offset < 0 || error.offset > input.count {
                    Issue.record("offset \(error.offset) outside input \(input)")
                }
                parsed = nil
            }
            guard let parsed else { continue }
            accepted += 1
            let written = parsed.jsonBytes
            if (try? JSONValue.parse(written)) != parsed {
                Issue.record("round trip changed \(input) into \(written)")
            }
            // Whatever parses, the request decoder must answer (the rest is a parse error).
            switch RPCIncoming(parsed) {
            case .single(let decoding): _ = decoding.errorReply.map(RPCEncoder.replyLine)
            case .batch(let entries): _ = RPCEncoder.batchLine(entries.compactMap(\.errorReply))
            }
        }
        #expect(accepted > 1_000)  // the mutations keep a fair share valid
    }

    static func makeInput(round: Int, _ random: inout SeededGenerator) -> [UInt8] {
        if round % 10 == 0 {
            // Pure noise, biased towards JSON's alphabet.
            let alphabet = Array("{}[]\",:0123456789-+.eEtrufalsn \\u".utf8)
            return (0..<Int.random(in: 0..<64, using: &random)).map { _ in
                Bool.random(using: &random) ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0 ... 255, using: &random)
            }
        }
        var input = corpus.randomElement(using: &random)!
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let position = input.isEmpty ? 0 : Int.random(in: 0..<input.count, using: &random)
            switch Int.random(in: 0..<7, using: &random) {
            case 0 where !input.isEmpty:  // flip a bit
                input[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
            case 1:  // insert a random byte
                input.insert(UInt8.random(in: 0 ... 255, using: &random), at: position)
            case 2 where !input.isEmpty:  // delete a run
                input.removeSubrange(position..<min(input.count, position + Int.random(in: 1...8, using: &random)))
            case 3:  // insert a token that tends to find edge cases
                input.insert(contentsOf: fragments.randomElement(using: &random)!, at: position)
            case 4:  // truncate
                input = Array(input[..<position])
            case 5:  // splice with another corpus entry
                let other = corpus.randomElement(using: &random)!
                input = Array(input[..<position]) + other[Int.random(in: 0..<other.count, using: &random)...]
            default:  // duplicate a run
                let end = min(input.count, position + Int.random(in: 1...16, using: &random))
                input.insert(contentsOf: input[position..<end], at: end)
            }
        }
        return input
    }
}
