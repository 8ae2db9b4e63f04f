import Testing

@testable import ReelDaemon

/// MPD's tokenizer rules (`src/util/Tokenizer.cxx`), case by case.
@Suite struct MPDTokenizerTests {
    func split(_ line: String) throws(MPDTokenizer.Failure) -> MPDCommandLine { try MPDTokenizer.split(line) }

    @Test func unquotedAndQuotedArguments() throws {
        #expect(try split("play") == MPDCommandLine(name: "play", arguments: []))
        #expect(try split("seek 1 20.5") == MPDCommandLine(name: "seek", arguments: ["1", "20.5"]))
        #expect(try split("add \"Recordings/A B/C.flac\"") == MPDCommandLine(name: "add", arguments: ["Recordings/A B/C.flac"]))
        #expect(try split("find \"(Title == \\\"x\\\")\"") == MPDCommandLine(name: "find", arguments: ["(Title == \"x\")"]))
        #expect(try split("add \"back\\\\slash\"") == MPDCommandLine(name: "add", arguments: ["back\\slash"]))
        #expect(try split("add \"\"") == MPDCommandLine(name: "add", arguments: [""]))
    }

    @Test func runsOfSpacesAndTabsSeparateWords() throws {
        #expect(try split("seek  1\t\t 20  ") == MPDCommandLine(name: "seek", arguments: ["1", "20"]))
        #expect(try split("status\t") == MPDCommandLine(name: "status", arguments: []))
    }

    @Test func utf8ArgumentsPassThrough() throws {
        #expect(try split("add Récordings/Ünïcode") == MPDCommandLine(name: "add", arguments: ["Récordings/Ünïcode"]))
    }

    @Test func malformedNamesAndArgumentsAreNamed() {
        #expect(throws: MPDTokenizer.Failure.badName("Invalid word character")) { try split("pl-ay") }
        #expect(throws: MPDTokenizer.Failure.badName("No command given")) { try split("") }
        #expect(throws: MPDTokenizer.Failure.badArgument("Missing closing '\"'")) { try split("add \"open") }
        #expect(throws: MPDTokenizer.Failure.badArgument("Missing closing '\"'")) { try split("add \"open\\") }
        #expect(throws: MPDTokenizer.Failure.badArgument("Space expected after closing '\"'")) { try split("add \"a\"b") }
        #expect(throws: MPDTokenizer.Failure.badArgument("Invalid unquoted character")) { try split("add a\"b") }
        #expect(throws: MPDTokenizer.Failure.badArgument("Invalid unquoted character")) { try split("add 'a'") }
    }

    @Test func onlyALowercaseFirstLetterIsACommand() {
        func looks(_ text: String) -> Bool { Array(text.utf8).withUnsafeBytes { MPDTokenizer.looksLikeCommand($0) } }
        #expect(looks("status"))
        #expect(!looks("Status"))
        #expect(!looks("GET / HTTP/1.1"))
        #expect(!looks("1play"))
        #expect(!looks(""))
        #expect(!looks(" status"))
    }

    @Test func atMost4096Arguments() throws {
        let many = "add " + Array(repeating: "x", count: 4096).joined(separator: " ")
        #expect(try split(many).arguments.count == 4096)
        #expect(throws: MPDTokenizer.Failure.badArgument("Too many arguments")) { try split(many + " x") }
    }
}

/// Argument parsing and reply formatting with MPD's messages.
@Suite struct MPDArgumentTests {
    func request(_ arguments: String...) -> MPDRequest {
        MPDRequest(
            name: "test", arguments: arguments, client: MPDClient(permission: .all, isLocal: false),
            table: MPDCommandTable([]))
    }

    @Test func integersBooleansRangesAndSeconds() throws {
        #expect(try request("12").int(0) == 12)
        #expect(throws: MPDAck.argument("Integer expected", "abc")) { try request("abc").int(0) }
        #expect(throws: MPDAck.argument("Number too large", "99999999999999999999999")) {
            try request("99999999999999999999999").int(0)
        }
        #expect(try request("1").bool(0))
        #expect(throws: MPDAck.argument("Boolean (0/1) expected", "2")) { try request("2").bool(0) }
        func range(_ text: String) throws -> [Int?] {
            let (start, end) = try request(text).range(0)
            return [start, end]
        }
        #expect(try range("3") == [3, 4])
        #expect(try range("3:7") == [3, 7])
        #expect(try range("3:") == [3, nil])
        #expect(throws: MPDAck.argument("Malformed range", "7:3")) { try request("7:3").range(0) }
        #expect(throws: MPDAck.argument("Integer or range expected", "x:3")) { try request("x:3").range(0) }
        #expect(try request("1.5").seconds(0) == 1.5)
        #expect(throws: MPDAck.argument("Negative value not allowed", "-1")) { try request("-1").seconds(0) }
        #expect(try request("-1").seconds(0, signed: true) == -1)
    }

    @Test func ackLinesCarryTheIndexTheCommandAndNoNewline() {
        #expect(MPDAck(.argument, "Bad song index", command: "play").line(index: 2) == "ACK [2@2] {play} Bad song index\n")
        #expect(MPDAck(.unknown, "unknown command \"x\"", command: "").line(index: 0) == "ACK [5@0] {} unknown command \"x\"\n")
        #expect(MPDAck(.system, "a\nb", command: "add").line(index: 0) == "ACK [52@0] {add} a b\n")
    }

    @Test func valuesNeverCarryANewlineAndSecondsUseADot() {
        var response = MPDResponse()
        response.field("Title", "two\nlines\r\nhere")
        response.field("elapsed", seconds: 12.3456)
        response.field("duration", seconds: 0.0004)
        #expect(response.text == "Title: two lines here\nelapsed: 12.346\nduration: 0.000\n")
    }

    @Test func idleSubsystemsParseCaseInsensitivelyAndPrintInMPDsOrder() throws {
        #expect(try MPDSubsystems.parse(["Player", "mixer"]) == [.player, .mixer])
        #expect(try MPDSubsystems.parse([]) == .all)
        #expect(throws: MPDAck(.argument, "Unrecognized idle event: nope")) { try MPDSubsystems.parse(["nope"]) }
        let events: MPDSubsystems = [.options, .database, .player, .playlist]
        #expect(events.changedLines == "changed: database\nchanged: playlist\nchanged: player\nchanged: options\n")
    }

    @Test func listenAddressesParse() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:6600") == .tcp(host: "127.0.0.1", port: 6600))
        #expect(try ListenAddress(parsing: "[::1]:6601") == .tcp(host: "::1", port: 6601))
        #expect(try ListenAddress(parsing: "/run/reel/mpd.sock") == .unix(path: "/run/reel/mpd.sock"))
        #expect(throws: ConfigurationError.self) { try ListenAddress(parsing: "6600") }
        #expect(throws: ConfigurationError.self) { try ListenAddress(parsing: "host:0") }
        #expect(throws: ConfigurationError.self) { try ListenAddress(parsing: "::1:6600") }
        #expect(ListenAddress.tcp(host: "::1", port: 6600).description == "[::1]:6600")
    }
}
