import Testing
@testable import ReelProtocol
import ReelTestSupport

@Suite("JSON writer")
struct JSONWriterTests {
    @Test func writesCompactlyInInsertionOrder() {
        let value: JSONValue = ["z": 1, "a": [true, false, .null], "m": ["x": "y"], "e": [], "o": .object([:])]
        #expect(value.jsonString == #"{"z":1,"a":[true,false,null],"m":{"x":"y"},"e":[],"o":{}}"#)
    }

    @Test func escapesQuotesBackslashesAndControlCharacters() {
        #expect(JSONValue.string("a\"b\\c").jsonString == #""a\"b\\c""#)
        #expect(JSONValue.string("\n\r\t\u{0}\u{1F}").jsonString == #""\u000a\u000d\u0009\u0000\u001f""#)
        #expect(JSONValue.string("/\u{7F}").jsonString == "\"/\u{7F}\"")
    }

    /// Text is scanned for what needs an escape eight bytes at a time: each character that
    /// does (and bytes near those values that do not) at every place of texts of 0 to 24
    /// characters, across and at the words' edges, is written as a character-by-character writer
    /// writes it.
    @Test func escapesTheSameAtEveryPlaceOfAWord() {
        let characters = [
            "\u{0}", "\u{1F}", "\n", "\"", "\\", " ", "!", "#", "[", "]", "\u{7F}", "é", "¢", "Ü", "€", "😀",
        ]
        for length in 0...24 {
            for place in 0..<max(length, 1) {
                for character in characters {
                    var text = String(repeating: "a", count: length)
                    if length > 0 {
                        text = String(repeating: "a", count: place) + character + String(repeating: "b", count: length - place - 1)
                    }
                    #expect(JSONValue.string(text).jsonString == jsonEscapedOneByOne(text), "\(length) bytes, \(character) at \(place)")
                    let twice = text + character + text
                    #expect(JSONValue.string(twice).jsonString == jsonEscapedOneByOne(twice))
                }
            }
        }
    }

    @Test func leavesNonASCIIAsIs() {
        #expect(JSONValue.string("café 😀").jsonBytes == bytes("\"café 😀\""))
    }

    @Test func escapesObjectKeys() {
        let value: JSONValue = ["a\"\n": 1]
        #expect(value.jsonString == #"{"a\"\u000a":1}"#)
    }

    @Test func writesIntegersAtTheBoundaries() {
        #expect(JSONValue.int(.max).jsonString == "9223372036854775807")
        #expect(JSONValue.int(.min).jsonString == "-9223372036854775808")
        #expect(JSONValue.int(0).jsonString == "0")
        #expect(JSONValue.int(-7).jsonString == "-7")
        #expect(JSONValue.int(10).jsonString == "10")
    }

    @Test func writesDoublesInShortestRoundTripForm() throws {
        #expect(JSONValue.double(3).jsonString == "3.0")
        #expect(JSONValue.double(0.1).jsonString == "0.1")
        #expect(JSONValue.double(-0.0).jsonString == "-0.0")
        #expect(JSONValue.double(12.5).jsonString == "12.5")
        for sample in [1e16, 1e300, Double.leastNonzeroMagnitude, 1.7976931348623157e308, 2.5e-7, 123456.789, -1e-5] {
            #expect(try parse(JSONValue.double(sample).jsonString) == .double(sample), "\(sample)")
        }
    }

    @Test func writesNonFiniteDoublesAsNull() {
        #expect(JSONValue.double(.nan).jsonString == "null")
        #expect(JSONValue.double(.infinity).jsonString == "null")
        #expect(JSONValue.double(-.infinity).jsonString == "null")
    }

    @Test func appendsToAnExistingBuffer() {
        var out = bytes("x=")
        JSONValue.array([1, "a"]).write(into: &out)
        #expect(text(out) == #"x=[1,"a"]"#)
    }

    @Test func roundTripsEveryParsedValue() throws {
        let samples = [
            #"{"jsonrpc":"2.0","id":7,"method":"player.seek","params":{"position":12.5}}"#,
            #"[1,-2,3.25,1e+100,"\u0001",{"":null},[[]],{"a":{"b":{"c":[true]}}}]"#,
            #""\ud83d\ude00 \"quoted\" \\ tab\t""#,
        ]
        for sample in samples {
            let value = try parse(sample)
            #expect(try JSONValue.parse(value.jsonBytes) == value)
        }
    }

    @Test func roundTripsRandomValues() throws {
        var random = SeededGenerator(seed: 42)
        for _ in 0..<2_000 {
            let value = randomValue(depth: 0, &random)
            #expect(try JSONValue.parse(value.jsonBytes) == value)
        }
    }

    private func randomValue(depth: Int, _ random: inout SeededGenerator) -> JSONValue {
        let kind = Int.random(in: 0..<(depth > 4 ? 5 : 7), using: &random)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .int(Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0..<64, using: &random))
        case 3:
            let d = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &random))
            return .double(d.isFinite ? d : 0.5)
        case 4:
            let scalars = (0..<Int.random(in: 0..<12, using: &random)).map { _ in
                Unicode.Scalar(UInt32.random(in: 0..<0xD800, using: &random)) ?? "x"
            }
            return .string(String(String.UnicodeScalarView(scalars)))
        case 5:
            return .array((0..<Int.random(in: 0..<5, using: &random)).map { _ in randomValue(depth: depth + 1, &random) })
        default:
            var object = JSONObject()
            for k in 0..<Int.random(in: 0..<5, using: &random) {
                object["k\(k)\(Int.random(in: 0..<3, using: &random))"] = randomValue(depth: depth + 1, &random)
            }
            return .object(object)
        }
    }
}

@Suite("JSON values")
struct JSONValueTests {
    @Test func objectSubscriptSetsReplacesAndRemoves() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["c"] = 3
        object["a"] = 10
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["a"] == .int(10))
        object["b"] = nil
        #expect(object.keys == ["a", "c"])
        #expect(object.removeValue(forKey: "a") == .int(10))
        #expect(object.count == 1)
        #expect(object["zz"] == nil)
    }

    @Test func repeatedKeysInALiteralOrSequenceKeepTheLastValue() {
        let literal: JSONObject = ["a": 1, "b": 2, "a": 3]
        #expect(literal.keys == ["a", "b"])
        #expect(literal["a"] == .int(3))
        let many = JSONObject((0..<10_000).map { ("k\($0 % 100)", JSONValue.int(Int64($0))) })
        #expect(many.count == 100)
        #expect(many["k5"] == .int(9_905))
    }

    @Test func objectEqualityIgnoresKeyOrder() {
        let one: JSONObject = ["a": 1, "b": 2]
        let two: JSONObject = ["b": 2, "a": 1]
        #expect(one == two)
        #expect(one.hashValue == two.hashValue)
        #expect(one != ["a": 1, "b": 3])
        #expect(one != ["a": 1])
    }

    @Test func objectIteratesInOrderAndMerges() {
        var object: JSONObject = ["subscription": 3]
        object.merge(["state": "playing", "subscription": 4])
        #expect(object.map(\.key) == ["subscription", "state"])
        #expect(object["subscription"] == .int(4))
    }

    @Test func accessorsConvertOnlyMatchingKinds() {
        #expect(JSONValue.int(3).doubleValue == 3)
        #expect(JSONValue.double(2.5).doubleValue == 2.5)
        #expect(JSONValue.double(48000).intValue == 48000)
        #expect(JSONValue.double(0.5).intValue == nil)
        #expect(JSONValue.double(1e300).intValue == nil)
        #expect(JSONValue.double(0x1p63).int64Value == nil)
        #expect(JSONValue.double(-0x1p63).int64Value == .min)
        #expect(JSONValue.double(-2).int64Value == -2)
        #expect(JSONValue.double(.nan).int64Value == nil)
        #expect(JSONValue.double(-.infinity).int64Value == nil)
        #expect(JSONValue.string("3").doubleValue == nil)
        #expect(JSONValue.string("s").stringValue == "s")
        #expect(JSONValue.bool(true).boolValue == true)
        #expect(JSONValue.null.isNull)
        #expect(JSONValue.array([1]).arrayValue == [1])
        #expect((["a": 1] as JSONValue)["a"] == .int(1))
        #expect(JSONValue.int(1)["a"] == nil)
        #expect(JSONValue(nil as String?) == .null)
        #expect(JSONValue(2.5 as Double?) == .double(2.5))
    }

    @Test func intAndDoubleAreDistinctValues() {
        #expect(JSONValue.int(3) != JSONValue.double(3))
    }
}
