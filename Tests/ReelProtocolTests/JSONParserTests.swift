import Testing
@testable import ReelProtocol

@Suite("JSON parser")
struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#" { "a" : [1, -2.5, true, false, null, "x"], "b": {} , "c": [] } "#)
        #expect(value == ["a": [1, -2.5, true, false, .null, "x"], "b": .object([:]), "c": []])
    }

    @Test func acceptsAnyValueAtTopLevel() throws {
        #expect(try parse("42") == .int(42))
        #expect(try parse("\"s\"") == .string("s"))
        #expect(try parse("null") == .null)
        #expect(try parse(" \t\r\ntrue\n") == .bool(true))
    }

    @Test func keepsKeysInTheOrderWritten() throws {
        let value = try parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
    }

    @Test func lastDuplicateKeyWinsAtTheFirstPosition() throws {
        let value = try parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"] == .int(3))
    }

    @Test func lastDuplicateKeyWinsInLargeObjects() throws {
        var members = (0..<40).map { "\"k\($0)\":\($0)" }
        members.append("\"k7\":\"last\"")
        let value = try parse("{" + members.joined(separator: ",") + "}")
        #expect(value.objectValue?.count == 40)
        #expect(value["k7"] == .string("last"))
        #expect(value.objectValue?.keys.first == "k0")
    }

    @Test func objectWithManyDuplicateKeysParsesQuickly() throws {
        let body = Array(repeating: #""a":1"#, count: 50_000).joined(separator: ",")
        let value = try parse("{" + body + "}")
        #expect(value.objectValue?.count == 1)
    }

    // MARK: Strings

    @Test func decodesEveryEscape() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try parse(#""caf\u00e9 \u00E9""#) == .string("café é"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parse(#""a\uD834\uDD1Eb""#) == .string("a𝄞b"))
    }

    @Test func keepsNonASCIIText() throws {
        #expect(try parse("\"Ünïcødé 日本 😀\"") == .string("Ünïcødé 日本 😀"))
    }

    @Test func rejectsLoneHighSurrogate() {
        #expect(parseError(#""\uD800""#)?.reason.contains("lone surrogate") == true)
        #expect(parseError(#""\uD800x""#)?.reason.contains("lone surrogate") == true)
        #expect(parseError(#""\uD800\u0041""#)?.reason.contains("lone surrogate") == true)
        #expect(parseError(#""\uD800\uD800""#)?.reason.contains("lone surrogate") == true)
    }

    @Test func rejectsLoneLowSurrogate() {
        #expect(parseError(#""\uDC00""#)?.reason.contains("lone surrogate") == true)
        #expect(parseError(#""\uDFFFabc""#)?.offset == 1)
    }

    @Test func rejectsInvalidEscapes() {
        #expect(parseError(#""\x""#) != nil)
        #expect(parseError(#""\'""#) != nil)
        #expect(parseError(#""\u12""#) != nil)
        #expect(parseError(#""\u12G4""#) != nil)
        #expect(parseError(#""\"#) != nil)
    }

    @Test func rejectsRawControlCharactersInStrings() {
        for byte in UInt8(0)..<0x20 {
            let error = parseError([0x22, 0x61, byte, 0x22])
            #expect(error?.reason.contains("control character") == true)
            #expect(error?.offset == 2)
        }
    }

    @Test func acceptsDELInStrings() throws {
        #expect(try JSONValue.parse([0x22, 0x7F, 0x22]) == .string("\u{7F}"))
    }

    @Test func rejectsUnterminatedStrings() {
        #expect(parseError(#""abc"#)?.reason == "unterminated string")
        #expect(parseError(#"{"a"#) != nil)
        #expect(parseError(#""a\"#) != nil)
    }

    @Test(arguments: [
        [0xFF], [0xFE], [0x80], [0xBF],  // not lead bytes
        [0xC0, 0x80], [0xC1, 0xBF],  // overlong 2-byte
        [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],  // overlong 3-byte
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF],  // encoded surrogates
        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],  // overlong 4-byte
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80],  // above U+10FFFF
        [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98],  // truncated
        [0xC3, 0x41], [0xE2, 0x41, 0xAC], [0xF0, 0x9F, 0x41, 0x80],  // bad continuation
    ] as [[UInt8]])
    func rejectsInvalidUTF8InStrings(sequence: [UInt8]) {
        let input: [UInt8] = [0x22, 0x61] + sequence + [0x22]
        let error = parseError(input)
        #expect(error?.reason.contains("UTF-8") == true, "\(sequence)")
        #expect(error?.offset == 2)
        // And after an escape, on the slow path.
        let escaped: [UInt8] = [0x22, 0x5C, 0x6E] + sequence + [0x22]
        #expect(parseError(escaped)?.reason.contains("UTF-8") == true)
    }

    @Test func rejectsInvalidUTF8AtTheEndOfInput() {
        #expect(parseError([0x22, 0xE2, 0x82]) != nil)
        #expect(parseError([0x22, 0xF0]) != nil)
    }

    @Test func rejectsNonASCIIOutsideStrings() {
        #expect(parseError([0xEF, 0xBB, 0xBF] + bytes("{}")) != nil)  // byte order mark
        #expect(parseError([0x5B, 0xC3, 0xA9, 0x5D]) != nil)
        #expect(parseError([0x31, 0xFF]) != nil)
    }

    @Test func acceptsValidMultibyteUTF8() throws {
        let boundaries: [[UInt8]] = [
            [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF],
        ]
        for sequence in boundaries {
            let value = try JSONValue.parse([0x22] + sequence + [0x22])
            #expect(value.stringValue.map { Array($0.utf8) } == sequence)
        }
    }

    // MARK: Numbers

    @Test func integersThatFitInt64AreInts() throws {
        #expect(try parse("0") == .int(0))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("9223372036854775807") == .int(.max))
        #expect(try parse("-9223372036854775808") == .int(.min))
        #expect(try parse("1000000000000000000") == .int(1_000_000_000_000_000_000))
    }

    @Test func integersBeyondInt64AreDoubles() throws {
        #expect(try parse("9223372036854775808") == .double(9223372036854775808.0))
        #expect(try parse("-9223372036854775809") == .double(-9223372036854775809.0))
        #expect(try parse("18446744073709551616") == .double(18446744073709551616.0))
        #expect(try parse("123456789012345678901234567890") == .double(123456789012345678901234567890.0))
    }

    @Test func numbersWithFractionOrExponentAreDoubles() throws {
        #expect(try parse("1.0") == .double(1))
        #expect(try parse("-0.0") == .double(-0.0))
        #expect(try parse("-0.0").doubleValue?.sign == .minus)
        #expect(try parse("1e2") == .double(100))
        #expect(try parse("1E+2") == .double(100))
        #expect(try parse("12.5e-1") == .double(1.25))
        #expect(try parse("0.1") == .double(0.1))
        #expect(try parse("1e-400") == .double(0))
        #expect(try parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
        #expect(try parse("5e-324") == .double(.leastNonzeroMagnitude))
    }

    @Test func doublesAreCorrectlyRounded() throws {
        let samples = [
            "0.1", "0.3", "2.2250738585072011e-308", "9007199254740993", "9007199254740993.0",
            "123456.789e3", "0.000001234567890123456789", "3.141592653589793238462643383279",
            "1e23", "8.98846567431158e307", "4.9406564584124654e-324", "1.00000000000000011102230246251565404236316680908203125",
        ]
        for sample in samples {
            #expect(try parse(sample).doubleValue == Double(sample), "\(sample)")
        }
    }

    @Test func rejectsNumbersThatOverflowToInfinity() {
        #expect(parseError("1e400")?.reason == "number out of range")
        #expect(parseError("-1e400")?.reason == "number out of range")
        #expect(parseError("1.8e308") != nil)
        #expect(parseError("[1e99999999999999999999]") != nil)
        #expect(parseError(String(repeating: "9", count: 400)) != nil)
    }

    @Test func rejectsLeadingZeros() {
        #expect(parseError("01")?.reason == "leading zeros are not allowed")
        #expect(parseError("-01")?.reason == "leading zeros are not allowed")
        #expect(parseError("00") != nil)
        #expect(parseError("[007]")?.offset == 1)
    }

    @Test func rejectsNaNAndInfinity() {
        for token in ["NaN", "Infinity", "-Infinity", "[NaN]", "{\"a\":Infinity}", "nan", "inf"] {
            #expect(parseError(token) != nil, "\(token)")
        }
        #expect(parseError("NaN")?.reason == "NaN and Infinity are not valid JSON")
        #expect(parseError("-Infinity")?.reason == "NaN and Infinity are not valid JSON")
    }

    @Test func rejectsMalformedNumbers() {
        for token in ["-", "1.", "1.e3", ".5", "+1", "1e", "1e+", "1E-", "0x10", "1_000", "- 1", "2.5.1"] {
            #expect(parseError(token) != nil, "\(token)")
        }
    }

    // MARK: Structure

    @Test func rejectsEmptyInput() {
        #expect(parseError("")?.offset == 0)
        #expect(parseError("   ")?.reason.contains("end of input") == true)
    }

    @Test func rejectsTrailingGarbage() {
        #expect(parseError("{} x")?.reason == "unexpected data after the JSON value")
        #expect(parseError("{} x")?.offset == 3)
        #expect(parseError("1 2") != nil)
        #expect(parseError("{}{}") != nil)
        #expect(parseError("null\u{0}") != nil)
    }

    @Test func rejectsMalformedContainers() {
        for text in [
            "[1,]", "[,1]", "[1 2]", "[", "]", "{", "}", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":}",
            "{a:1}", "{'a':1}", "{1:2}", "[1;2]", "{\"a\":1 \"b\":2}", "[1,,2]", "{,}",
        ] {
            #expect(parseError(text) != nil, "\(text)")
        }
    }

    @Test func rejectsMisspelledLiterals() {
        for text in ["tru", "True", "nul", "nulll", "fals", "t", "[truex]", "undefined"] {
            #expect(parseError(text) != nil, "\(text)")
        }
    }

    @Test func rejectsCommentsAndSingleQuotes() {
        #expect(parseError("// c\n{}") != nil)
        #expect(parseError("/* c */ 1") != nil)
        #expect(parseError("'a'") != nil)
    }

    @Test func rejectsNonJSONWhitespace() {
        #expect(parseError("\u{0C}1") != nil)  // form feed
        #expect(parseError([0xC2, 0xA0, 0x31]) != nil)  // no-break space
    }

    @Test func reportsTheOffsetOfTheProblem() {
        let error = parseError("[1,2,x]")
        #expect(error?.offset == 5)
        #expect(error?.description == "unexpected 'x', expected a value at byte 5")
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        let depth = JSONParser.maxDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var value = try parse(text)
        var levels = 0
        while case .array(let inner) = value {
            levels += 1
            value = inner.first ?? .null
        }
        #expect(levels == depth)
    }

    @Test func rejectsNestingBeyondTheLimit() {
        let depth = JSONParser.maxDepth + 1
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(parseError(arrays)?.reason == "nesting deeper than 256 levels")
        #expect(parseError(arrays)?.offset == 256)
        let objects = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth)
        #expect(parseError(objects) != nil)
    }

    @Test func hundredThousandOpenBracketsDoNotCrash() {
        #expect(parseError(String(repeating: "[", count: 100_000)) != nil)
        #expect(parseError(String(repeating: "{\"a\":", count: 100_000)) != nil)
        #expect(parseError(String(repeating: "[{\"a\":", count: 100_000)) != nil)
    }

    @Test func parsesFromSlicesAndStrings() throws {
        let all = bytes("xx[1]yy")
        #expect(try JSONValue.parse(all[2..<5]) == [1])
        #expect(try JSONValue.parse("{\"k\":\"v\"}") == ["k": "v"])
    }
}
