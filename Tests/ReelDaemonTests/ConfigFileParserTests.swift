import Testing

@testable import ReelDaemon

@Suite struct ConfigFileParserTests {
    func parse(_ text: String) throws -> [String: ConfigValue] {
        var result: [String: ConfigValue] = [:]
        for entry in try ConfigFileParser.parse(text).entries { result[entry.key] = entry.value }
        return result
    }

    @Test func keysValuesCommentsAndBlankLines() throws {
        let values = try parse(
            """
            # reeld
            device = "plughw:CARD=Headphones"   # the DAC
            capture_device = 'hw:1,0'

            period_ms = 1_000
            "quoted key" = -5
            flag = true
            roots = ["/srv/music", '/home/pi/Music']\r
            """)
        #expect(values["device"] == .string("plughw:CARD=Headphones"))
        #expect(values["capture_device"] == .string("hw:1,0"))
        #expect(values["period_ms"] == .integer(1000))
        #expect(values["quoted key"] == .integer(-5))
        #expect(values["flag"] == .boolean(true))
        #expect(values["roots"] == .array([.string("/srv/music"), .string("/home/pi/Music")]))
    }

    /// A ReplayGain preamp is written as TOML writes it (`-3.5`), kept as written.
    @Test func decimalNumbersAreKeptAsWritten() throws {
        let values = try parse("a = -3.5\nb = +1_0.2_5\nc = 1e3\nd = 2.5E-1\ne = 0.0")
        #expect(values["a"] == .decimal("-3.5"))
        #expect(values["b"] == .decimal("+10.25"))
        #expect(values["c"] == .decimal("1e3"))
        #expect(values["d"] == .decimal("2.5E-1"))
        #expect(values["e"] == .decimal("0.0"))
    }

    @Test func escapesInBasicStrings() throws {
        let values = try parse(#"name = "a\"b\\c\u00e9\tz""#)
        #expect(values["name"] == .string("a\"b\\cé\tz"))
    }

    @Test func emptyFileHasNoSettings() throws {
        #expect(try ConfigFileParser.parse("") == ConfigDocument())
        #expect(try ConfigFileParser.parse("\n# only a comment\n") == ConfigDocument())
    }

    @Test func arraysOfTablesTakeTheKeysBelowThem() throws {
        let document = try ConfigFileParser.parse(
            """
            device = "hw:1"
            [[outputs]]   # the first
            type = "alsa"

            [[outputs]]
            type = "snapcast"
            path = "/run/reel/snapfifo"
            """)
        #expect(document.entries == [ConfigEntry(key: "device", value: .string("hw:1"), line: 1)])
        #expect(document.tables.count == 2)
        #expect(document.tables[0] == ConfigTable(name: "outputs", line: 2, entries: [ConfigEntry(key: "type", value: .string("alsa"), line: 3)]))
        #expect(document.tables[1].line == 5)
        #expect(document.tables[1].entries.map(\.key) == ["type", "path"])
    }

    @Test(arguments: [
        ("device = \"hw:1\nx = 1", "1:", "unterminated string"),
        ("[player]\ndevice = 1", "1:1", "tables are not used"),
        ("player.device = 1", "1:", "dotted keys"),
        ("start = 07:30", "1:", "no dates, times or hexadecimal"),
        ("mask = 0xff", "1:", "no dates, times or hexadecimal"),
        ("when = 2026-11-28", "1:", "no dates, times or hexadecimal"),
        ("preamp = 1.", "1:", "is not a number"),
        ("preamp = .5", "1:", "expected a value"),
        ("preamp = 1e", "1:", "is not a number"),
        ("preamp = 1e999", "1:", "is not a number"),
        ("device = hw", "1:", "expected a value"),
        ("device = \"a\" \"b\"", "1:", "unexpected text"),
        ("a = 1\na = 2", "2:1", "set twice"),
        ("= 3", "1:1", "expected a key"),
        ("device \"x\"", "1:", "expected \"=\""),
        ("roots = [\"a\",", "1:", "expected a value"),
        ("bad = \"\\q\"", "1:", "unknown escape"),
        ("[[outputs]\ntype = 1", "1:", "expected \"]]\""),
        ("[[outputs]]\ntype = \"pipe\"\ntype = \"alsa\"", "3:1", "set twice in this [[outputs]]"),
        ("outputs = 1\n[[outputs]]", "2:1", "cannot also be a table"),
    ])
    func errorsSayWhereAndWhat(text: String, position: String, message: String) {
        do {
            _ = try ConfigFileParser.parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(position), "\(error)")
            #expect(error.description.contains(message), "\(error)")
        }
    }
}
