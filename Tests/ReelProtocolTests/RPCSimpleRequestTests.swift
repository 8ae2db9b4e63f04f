import Testing
@testable import ReelProtocol
import ReelTestSupport

/// The short path for simple requests must give exactly what the full parser gives, and must
/// leave everything else to it.
@Suite("Simple requests read without a JSON tree")
struct RPCSimpleRequestTests {
    private func fast(_ line: String) -> RPCRequest? {
        Array(line.utf8).withUnsafeBytes { RPCSimpleRequest.parse($0) }
    }

    private func full(_ line: String) -> RPCIncoming {
        Array(line.utf8).withUnsafeBytes { RPCIncoming(parsing: $0) }
    }

    static let simple = [
        #"{"jsonrpc":"2.0","id":1,"method":"player.status"}"#,
        #"{"method":"player.status","id":42,"jsonrpc":"2.0"}"#,
        #"{ "jsonrpc" : "2.0" , "id" : -7 , "method" : "queue.list" }"#,
        "{\t\"jsonrpc\":\"2.0\",\r\"id\":0,\"method\":\"m\"}\r",
        #"{"jsonrpc":"2.0","id":"abc","method":"player.status"}"#,
        #"{"jsonrpc":"2.0","id":"","method":""}"#,
        #"{"jsonrpc":"2.0","id":null,"method":"player.status"}"#,
        #"{"jsonrpc":"2.0","method":"player.stop"}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"player.status","params":{}}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"player.status","params":{ }}"#,
        #"{"jsonrpc":"2.0","id":999999999999999999,"method":"m"}"#,
    ]

    static let others = [
        #"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":1e3,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":-,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":9999999999999999999,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":nul,"method":"m"}"#,
        #"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m\u0041"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"mé"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"position":1}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m","extra":1}"#,
        #"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
        #"{"jsonrpc":"2.0","id":1,"method":7}"#,
        #"{"jsonrpc":"2.0","id":1}"#,
        #"{"id":1,"method":"m"}"#,
        #"{}"#,
        #"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m""#,
        "",
    ]

    @Test(arguments: simple)
    func simpleRequestsTakeTheShortPathAndGiveWhatTheParserGives(line: String) throws {
        let request = try #require(fast(line))
        #expect(full(line) == .single(.request(request)))
        #expect(RPCIncoming(line: Array(line.utf8)) == full(line))
    }

    @Test(arguments: others)
    func everythingElseGoesToTheFullParser(line: String) {
        #expect(fast(line) == nil)
        #expect(RPCIncoming(line: Array(line.utf8)) == full(line))
    }

    /// Random edits of simple requests (a byte changed, dropped or doubled): whenever the short
    /// path takes one, the full parser must give the same request.
    @Test func randomEditsNeverDisagreeWithTheParser() {
        var generator = SeededGenerator(seed: 0x5EED)
        let alphabet = Array(#"{}[]":,.-+0123456789eE \tnulltrue"\abcdefjsonrpcidmethodparams2é"#.utf8)
        var taken = 0
        for round in 0..<20_000 {
            var line = Array(Self.simple[round % Self.simple.count].utf8)
            for _ in 0...(generator.next() % 3) {
                let at = Int(generator.next() % UInt64(line.count))
                switch generator.next() % 3 {
                case 0: line[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: line.remove(at: at)
                default: line.insert(line[at], at: at)
                }
                if line.isEmpty { break }
            }
            let short = line.withUnsafeBytes { RPCSimpleRequest.parse($0) }
            let parsed = line.withUnsafeBytes { RPCIncoming(parsing: $0) }
            if let short {
                taken += 1
                #expect(parsed == .single(.request(short)), "\(String(decoding: line, as: UTF8.self))")
            }
        }
        // The edits must leave many lines simple, or the test would prove nothing.
        #expect(taken > 1_000)
    }
}
