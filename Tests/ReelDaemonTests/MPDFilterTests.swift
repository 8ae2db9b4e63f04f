import Testing

@testable import ReelDaemon

@Suite struct MPDFilterTests {
    static let kindOfBlue = MPDSongFields(
        uri: "Recordings/Jazz/So What.flac",
        tags: [.artist: "Miles Davis", .album: "Kind of Blue", .title: "So What", .genre: "Jazz", .date: "1959"],
        lastModified: 1_795_341_600)
    static let untagged = MPDSongFields(uri: "Recordings/Memo 1.ogg")

    func filter(_ arguments: [String], foldCase: Bool = false) throws -> MPDFilter {
        let (filter, consumed) = try MPDFilter.parse(arguments, foldCase: foldCase)
        #expect(consumed == arguments.count)
        return filter
    }

    func matches(_ arguments: [String], foldCase: Bool = false, _ song: MPDSongFields = kindOfBlue) throws -> Bool {
        try filter(arguments, foldCase: foldCase).matches(song)
    }

    /// The one-expression form, as clients send it.
    func matches(_ expression: String, foldCase: Bool = false, _ song: MPDSongFields = kindOfBlue) throws -> Bool {
        try matches([expression], foldCase: foldCase, song)
    }

    /// The ACK a parse answers; nil when it parses.
    func failure(_ arguments: [String], foldCase: Bool = false) -> MPDAck? {
        do {
            _ = try MPDFilter.parse(arguments, foldCase: foldCase)
            return nil
        } catch {
            return error
        }
    }

    // MARK: The old form

    @Test func oldFormFindComparesWholeValuesWithCase() throws {
        #expect(try matches(["Artist", "Miles Davis"]))
        #expect(try matches(["artist", "Miles Davis"]))
        #expect(try !matches(["Artist", "miles davis"]))
        #expect(try !matches(["Artist", "Miles"]))
        #expect(try matches(["Artist", "Miles Davis", "Album", "Kind of Blue"]))
        #expect(try !matches(["Artist", "Miles Davis", "Album", "Sketches of Spain"]))
        #expect(try matches(["any", "Kind of Blue"]))
        #expect(try !matches(["any", "Kind"]))
        #expect(try matches(["file", "Recordings/Jazz/So What.flac"]))
        #expect(try matches(["filename", "Recordings/Jazz/So What.flac"]))
        #expect(try !matches(["file", "So What.flac"]))
    }

    @Test func oldFormSearchFindsSubstringsIgnoringCase() throws {
        #expect(try matches(["artist", "davis"], foldCase: true))
        #expect(try matches(["ARTIST", "MILES DAVIS"], foldCase: true))
        #expect(try matches(["any", "blue"], foldCase: true))
        #expect(try matches(["file", "jazz/so"], foldCase: true))
        #expect(try matches(["title", "what", "genre", "JAZZ"], foldCase: true))
        #expect(try !matches(["title", "blue"], foldCase: true))
        // An empty value is in every value, and a missing tag is empty.
        #expect(try matches(["artist", ""], foldCase: true))
        #expect(try matches(["artist", ""], foldCase: true, Self.untagged))
    }

    @Test func oldFormBaseAndModifiedSince() throws {
        #expect(try matches(["base", "Recordings/Jazz"]))
        #expect(try matches(["base", "Recordings"]))
        #expect(try matches(["base", "Recordings/Jazz/So What.flac"]))
        #expect(try !matches(["base", "Recordings/Ja"]))
        #expect(try !matches(["base", "Other"]))
        #expect(try matches(["modified-since", "1795341600"]))
        #expect(try !matches(["modified-since", "1795341601"]))
        #expect(try matches(["modified-since", "2026-11-22T10:00:00Z"]))
        #expect(try !matches(["modified-since", "2026-11-22T10:00:01Z"]))
        #expect(try !matches(["modified-since", "0"], Self.untagged))
    }

    @Test func pairsAndExpressionsMix() throws {
        #expect(try matches(["Artist", "Miles Davis", "(Album == 'Kind of Blue')", "Genre", "Jazz"]))
        #expect(try !matches(["Artist", "Miles Davis", "(Album != 'Kind of Blue')"]))
        #expect(try matches(["(Artist == 'Miles Davis')", "(Title starts_with 'So')"]))
    }

    // MARK: Expression operators

    @Test func equality() throws {
        #expect(try matches("(Artist == 'Miles Davis')"))
        #expect(try !matches("(Artist == 'miles davis')"))
        #expect(try matches("(Artist == 'miles davis')", foldCase: true))
        #expect(try !matches("(Artist == 'Miles')", foldCase: true))
        #expect(try matches("(Artist != 'John Coltrane')"))
        #expect(try !matches("(Artist != 'Miles Davis')"))
        #expect(try matches("(Artist != 'miles davis')"))
        #expect(try !matches("(Artist != 'miles davis')", foldCase: true))
    }

    @Test func containsAndStartsWith() throws {
        #expect(try matches("(Album contains 'of Bl')"))
        #expect(try !matches("(Album contains 'of bl')"))
        #expect(try matches("(Album contains 'OF BL')", foldCase: true))
        #expect(try matches("(Album !contains 'Spain')"))
        #expect(try !matches("(Album !contains 'Blue')"))
        #expect(try matches("(Album starts_with 'Kind')"))
        #expect(try !matches("(Album starts_with 'Blue')"))
        #expect(try !matches("(Album starts_with 'kind')"))
        #expect(try matches("(Album starts_with 'kind')", foldCase: true))
        #expect(try matches("(Album !starts_with 'Blue')"))
        #expect(try !matches("(Album !starts_with 'Kind')"))
        // The operator words in any case.
        #expect(try matches("(Album CONTAINS 'Blue')"))
        #expect(try matches("(Album Starts_With 'Kind')"))
    }

    @Test func explicitCaseOperatorsOverrideTheCommand() throws {
        for foldCase in [false, true] {
            #expect(try matches("(Artist eq_cs 'Miles Davis')", foldCase: foldCase))
            #expect(try !matches("(Artist eq_cs 'miles davis')", foldCase: foldCase))
            #expect(try matches("(Artist eq_ci 'MILES DAVIS')", foldCase: foldCase))
            #expect(try matches("(Artist !eq_cs 'miles davis')", foldCase: foldCase))
            #expect(try !matches("(Artist !eq_ci 'miles davis')", foldCase: foldCase))
            #expect(try matches("(Album contains_cs 'Blue')", foldCase: foldCase))
            #expect(try !matches("(Album contains_cs 'blue')", foldCase: foldCase))
            #expect(try matches("(Album contains_ci 'BLUE')", foldCase: foldCase))
            #expect(try matches("(Album !contains_cs 'blue')", foldCase: foldCase))
            #expect(try !matches("(Album !contains_ci 'blue')", foldCase: foldCase))
            #expect(try matches("(Album starts_with_cs 'Kind')", foldCase: foldCase))
            #expect(try !matches("(Album starts_with_cs 'kind')", foldCase: foldCase))
            #expect(try matches("(Album starts_with_ci 'KIND')", foldCase: foldCase))
            #expect(try matches("(Album !starts_with_cs 'kind')", foldCase: foldCase))
            #expect(try !matches("(Album !starts_with_ci 'kind')", foldCase: foldCase))
        }
    }

    @Test func regularExpressions() throws {
        #expect(try matches("(Title =~ '^So W.at$')"))
        #expect(try matches("(Album =~ 'of')"))
        #expect(try !matches("(Title =~ '^so')"))
        #expect(try matches("(Title =~ '^so')", foldCase: true))
        #expect(try matches("(Date =~ '19[5-6][0-9]')"))
        #expect(try matches("(Title !~ 'Blue')"))
        #expect(try !matches("(Title !~ 'What')"))
        #expect(try matches("(file =~ '\\\\.flac$')"))
        #expect(try !matches("(Composer =~ '.*')"))
        #expect(try matches("(Composer !~ 'x')"))
        #expect(try matches("(any =~ '^Kind')"))
    }

    @Test func uriBaseAndModifiedSince() throws {
        #expect(try matches("(file == 'Recordings/Jazz/So What.flac')"))
        #expect(try matches("(FILE starts_with 'Recordings/')"))
        #expect(try matches("(filename contains 'So What')"))
        #expect(try !matches("(file != 'Recordings/Jazz/So What.flac')"))
        #expect(try matches("(base 'Recordings/Jazz')"))
        #expect(try matches("(base 'Recordings/')"))
        #expect(try !matches("(base 'Recordings/Jazz/So')"))
        #expect(try matches("(base '')"))
        #expect(try matches("(modified-since '1795341600')"))
        #expect(try matches("(modified-since '2026-11-22')"))
        #expect(try !matches("(modified-since '2026-11-22T10:00:01Z')"))
        #expect(try matches("(modified-since '2026-11-22T11:00:00+01:00')"))
        #expect(try !matches("(modified-since \"2026-11-22T10:00:00-01:00\")"))
        #expect(try !matches("(modified-since '1970-01-01')", Self.untagged))
    }

    @Test func baseForWhereTheSearchStarts() throws {
        #expect(try filter(["Artist", "x", "base", "Recordings/Jazz"]).base == "Recordings/Jazz")
        #expect(try filter(["((Artist == 'x') AND ((base 'Recordings') AND (base 'Other')))"]).base == "Recordings")
        #expect(try filter(["(!(base 'Recordings'))"]).base == nil)
        #expect(try filter(["(Artist == 'x')"]).base == nil)
        #expect(try filter(["(base '')"]).base == "")
    }

    @Test func anyLooksAtEveryTagButNotTheURI() throws {
        #expect(try matches("(any == 'Jazz')"))
        #expect(try matches("(any contains 'blue')", foldCase: true))
        #expect(try !matches("(any == 'Recordings/Jazz/So What.flac')"))
        #expect(try matches("(any != 'John Coltrane')"))
        #expect(try !matches("(any != 'Jazz')"))
        #expect(try !matches("(any == '')"))
        #expect(try !matches("(any == '')", Self.untagged))
    }

    // MARK: Missing tags

    @Test func aMissingTagIsAnEmptyOne() throws {
        #expect(try matches("(Composer == '')"))
        #expect(try !matches("(Composer != '')"))
        #expect(try !matches("(Composer == 'Bill Evans')"))
        #expect(try matches("(Composer != 'Bill Evans')"))
        #expect(try !matches("(Artist == '')"))
        #expect(try matches("(Artist != '')"))
        #expect(try matches("(Artist == '')", Self.untagged))
        #expect(try !matches("(Artist != '')", Self.untagged))
        #expect(try matches("(Artist != 'Miles Davis')", Self.untagged))
        // An empty value in the song's tags is no tag, as MPD never stores one.
        let empty = MPDSongFields(uri: "a.ogg", tags: [.artist: ""])
        #expect(try matches("(Artist == '')", empty))
        #expect(try !matches("(any == '')", empty))
        // Tags Reel does not report, in any case, parse.
        #expect(try matches("(MUSICBRAINZ_TRACKID == '')"))
        #expect(try matches("(musicbrainz_trackid == '')"))
        #expect(try matches(["Name", ""]))
        #expect(try !matches(["Name", "x"]))
    }

    @Test func albumArtistFallsBackToArtist() throws {
        #expect(try matches("(AlbumArtist == 'Miles Davis')"))
        #expect(try !matches("(AlbumArtist == '')"))
        #expect(try matches("(AlbumArtistSort == 'Miles Davis')"))
        #expect(try matches("(ArtistSort == 'Miles Davis')"))
        #expect(try matches("(AlbumSort == 'Kind of Blue')"))
        #expect(try matches("(TitleSort starts_with 'So')"))
        var compilation = Self.kindOfBlue
        compilation.tags[.albumArtist] = "Various Artists"
        #expect(try !matches("(AlbumArtist == 'Miles Davis')", compilation))
        #expect(try matches("(AlbumArtist == 'Various Artists')", compilation))
        #expect(try matches("(AlbumArtistSort == 'Various Artists')", compilation))
        #expect(try matches("(AlbumArtist == '')", Self.untagged))
    }

    // MARK: Structure

    @Test func negationAndConjunction() throws {
        #expect(try matches("(!(Artist == 'John Coltrane'))"))
        #expect(try !matches("(!(Artist == 'Miles Davis'))"))
        #expect(try matches("(!(!(Artist == 'Miles Davis')))"))
        #expect(try matches("((Artist == 'Miles Davis') AND (Album == 'Kind of Blue'))"))
        #expect(try !matches("((Artist == 'Miles Davis') AND (Album == 'Milestones'))"))
        #expect(try matches("((Artist == 'Miles Davis') AND (Genre == 'Jazz') AND (Date == '1959'))"))
        #expect(try !matches("((Artist == 'Miles Davis') AND (Genre == 'Jazz') AND (Date == '1958'))"))
        #expect(try matches("((Artist == 'Miles Davis'))"))
        #expect(
            try matches(
                "((Artist == 'Miles Davis') AND (!(Album == 'Milestones')) AND ((Genre == 'Jazz') AND (Date starts_with '19')))"))
        #expect(try !matches("(!((Artist == 'Miles Davis') AND (Genre == 'Jazz')))"))
        #expect(try matches("(!((Artist == 'Miles Davis') AND (Genre == 'Rock')))"))
    }

    @Test func tagNamesInAnyCase() throws {
        #expect(try matches("(title == 'So What')"))
        #expect(try matches("(Title == 'So What')"))
        #expect(try matches("(TITLE == 'So What')"))
        #expect(try matches("(albumartist == 'Miles Davis')"))
        #expect(try matches(["tItLe", "So What"]))
    }

    @Test func whitespaceInsideExpressions() throws {
        #expect(try matches("(Artist=='Miles Davis')"))
        #expect(try matches("(  Artist \t ==   'Miles Davis'   )"))
        #expect(try matches("( ( Artist == 'Miles Davis' )  AND\t( Genre == 'Jazz' ) )"))
        #expect(try matches("( ! ( Artist == 'x' ) )"))
        #expect(try matches("(Artist == 'Miles Davis') "))
        #expect(try matches("(base'Recordings')"))
    }

    @Test func quotingAndEscapes() throws {
        let song = MPDSongFields(uri: "a.ogg", tags: [.artist: #"foo'bar""#, .title: #"back\slash"#])
        // MPD's own example: (Artist == "foo\'bar\"").
        #expect(try matches(#"(Artist == "foo\'bar\"")"#, song))
        #expect(try matches(#"(Artist == 'foo\'bar"')"#, song))
        #expect(try matches(#"(Artist == "foo'bar\"")"#, song))
        #expect(try matches(#"(Title == 'back\\slash')"#, song))
        #expect(try matches(#"(Title == 'b\a\c\k\\slash')"#, song))
        #expect(try matches(#"(Title contains "\\")"#, song))
        #expect(try matches(#"(Title == "back\slash")"#, MPDSongFields(uri: "a", tags: [.title: "backslash"])))
    }

    @Test func nonASCIIValues() throws {
        let song = MPDSongFields(
            uri: "Recordings/Chanson/Élodie.ogg", tags: [.artist: "Élodie Frégé", .title: "Don’t Stop – Live"])
        #expect(try matches(["Artist", "Élodie Frégé"], song))
        #expect(try !matches(["Artist", "élodie frégé"], song))
        #expect(try matches(["artist", "élodie"], foldCase: true, song))
        #expect(try matches(["artist", "FRÉGÉ"], foldCase: true, song))
        #expect(try matches("(Artist eq_ci 'ÉLODIE FRÉGÉ')", song))
        #expect(try matches("(file contains 'élodie')", foldCase: true, song))
        #expect(try matches("(Artist starts_with 'É')", song))
        #expect(try matches("(Artist =~ '^É.odie')", song))
        #expect(try matches("(Artist =~ '^é')", foldCase: true, song))
        // Decomposed é (e + U+0301): the same text for search, other bytes for find (as MPD).
        #expect(try matches(["artist", "e\u{301}lodie"], foldCase: true, song))
        #expect(try !matches(["Artist", "E\u{301}lodie Fre\u{301}ge\u{301}"], song))
        // Typographic quotes and dashes read as ASCII when searching.
        #expect(try matches(["title", "don't stop - live"], foldCase: true, song))
        #expect(try !matches(["Title", "Don't Stop – Live"], song))
    }

    // MARK: Where the filter ends

    @Test func consumedStopsAtTrailingOptions() throws {
        func consumed(_ arguments: [String], allowEmpty: Bool = false) throws -> Int {
            try MPDFilter.parse(arguments, foldCase: false, allowEmpty: allowEmpty).consumed
        }
        #expect(try consumed(["(Artist == 'x')", "sort", "Title"]) == 1)
        #expect(try consumed(["(Artist == 'x')", "sort", "-Title", "window", "0:10"]) == 1)
        #expect(try consumed(["(Artist == 'x')", "window", "0:10"]) == 1)
        #expect(try consumed(["Artist", "x", "Album", "y", "window", "2:"]) == 4)
        #expect(try consumed(["Artist", "x", "position", "0"]) == 2)
        #expect(try consumed(["(Artist == 'x')", "group", "Album", "group", "Date"]) == 1)
        // A value that is an option's word stays the filter's.
        #expect(try consumed(["Artist", "sort"]) == 2)
        #expect(try consumed(["Title", "window", "sort", "Artist"]) == 2)
        // No filter at all.
        #expect(try consumed(["group", "Artist"], allowEmpty: true) == 0)
        #expect(try consumed([], allowEmpty: true) == 0)
        #expect(try MPDFilter.parse([], foldCase: false, allowEmpty: true).filter.matches(Self.untagged))
        #expect(failure(["sort", "Title"])?.message == "Incorrect number of filter arguments")
        // Words that only look like options are a filter (and MPD's error).
        #expect(failure(["sort", "Title", "Artist", "x"])?.message == "Unknown filter type")
        #expect(failure(["Artist", "x", "sort"])?.message == "Incorrect number of filter arguments")
    }

    // MARK: Errors

    @Test(arguments: [
        ([String](), "Incorrect number of filter arguments"),
        (["Artist"], "Incorrect number of filter arguments"),
        (["Artist", "x", "Album"], "Incorrect number of filter arguments"),
        (["Nope", "x"], "Unknown filter type"),
        (["Base", "x"], "Unknown filter type"),
        (["base", ""], "Bad URI"),
        (["base", "/Recordings"], "Bad URI"),
        (["base", "Recordings/"], "Bad URI"),
        (["base", "Recordings//Jazz"], "Bad URI"),
        (["base", "Recordings/../etc"], "Bad URI"),
        (["base", "./Recordings"], "Bad URI"),
        (["modified-since", "soon"], "Failed to parse date"),
        (["prio", "3"], "Unsupported filter type: prio"),
        (["(Nope == 'x')"], "Unknown filter type: Nope"),
        (["(Base 'x')"], "Unknown filter type: Base"),
        (["(== 'x')"], "Word expected"),
        (["("], "Word expected"),
        (["(Artist == x)"], "Quoted string expected"),
        (["(Artist == 'x"], "Closing quote not found"),
        (["(Artist == \"x'"], "Closing quote not found"),
        (["(Artist == 'x\\"], "Closing quote not found"),
        (["(Artist == 'x\\'"], "Closing quote not found"),
        (["(Artist == 'x'"], "')' expected"),
        (["(Artist == 'x' AND (Album == 'y'))"], "')' expected"),
        (["(Artist = 'x')"], "Unknown filter operator: = 'x')"),
        (["(Artist)"], "Unknown filter operator: )"),
        (["(Artist"], "Unknown filter operator: "),
        (["(Artist contains'x')"], "Unknown filter operator: contains'x')"),
        (["(Artist like 'x')"], "Unknown filter operator: like 'x')"),
        (["(Artist == 'x') junk"], "Unparsed garbage after expression"),
        (["(Artist == 'x'))"], "Unparsed garbage after expression"),
        (["((Artist == 'x') OR (Album == 'y'))"], "'AND' expected"),
        (["((Artist == 'x') and (Album == 'y'))"], "'AND' expected"),
        (["((Artist == 'x') (Album == 'y'))"], "Word expected"),
        (["((Artist == 'x') AND Album == 'y')"], "'(' expected"),
        (["((Artist == 'x') AND (Album == 'y')"], "Word expected"),
        (["(!Artist == 'x')"], "'(' expected"),
        (["(!(Artist == 'x')"], "')' expected"),
        (["(!(Artist == 'x') AND (Album == 'y'))"], "')' expected"),
        (["(base Recordings)"], "Quoted string expected"),
        (["(base 'Recordings'"], "')' expected"),
        (["(modified-since 2026)"], "Quoted string expected"),
        (["(modified-since 'yesterday')"], "Failed to parse date"),
        (["(modified-since '2026-11-22Tx')"], "Failed to parse time of day"),
        (["(modified-since '2026-11-22T10:')"], "Failed to parse time of day"),
        (["(modified-since '2026-11-22T10:00:00Q')"], "Garbage at end of time stamp"),
        (["(modified-since '2026-11-22T10:00+1')"], "Failed to parse time zone offset"),
        (["(modified-since '2026-11-22T10:00+01:5')"], "Failed to parse time zone offset"),
        (["(modified-since '2026-11-22T10:00+14')"], "Time offset hours out of range"),
        (["(modified-since '2026-11-22T10:00+0160')"], "Time offset minutes out of range"),
        (["(AudioFormat == '44100:16:2')"], "Unsupported filter type: AudioFormat"),
        (["(audioformat =~ '*:16:*')"], "Unsupported filter type: audioformat"),
        (["(added-since '2026-01-01')"], "Unsupported filter type: added-since"),
        (["(prio >= 42)"], "Unsupported filter type: prio"),
    ])
    func errors(arguments: [String], message: String) {
        let ack = failure(arguments)
        #expect(ack == MPDAck(.argument, message), "\(arguments)")
        #expect(failure(arguments, foldCase: true) == MPDAck(.argument, message), "\(arguments)")
    }

    @Test func badRegularExpressions() {
        for pattern in ["(", "[a-", "*x", "(?<=a)b"] {
            let ack = failure(["(Title =~ '\(pattern)')"])
            #expect(ack?.code == .argument)
            #expect(ack?.message.hasPrefix("Error in regex: ") == true, "\(pattern): \(String(describing: ack))")
        }
    }

    @Test func quotedValuesUpToMPDsLimit() throws {
        let longest = String(repeating: "x", count: 4095)
        let song = MPDSongFields(uri: "a", tags: [.title: longest])
        #expect(try matches("(Title == '\(longest)')", song))
        #expect(failure(["(Title == '\(longest)x')"]) == MPDAck(.argument, "Quoted value is too long"))
    }

    // MARK: Time stamps

    @Test(arguments: [
        ("1795341600", 1_795_341_600),
        ("0", 0),
        ("2026", 2026),  // no month: not a date, so seconds (as MPD)
        ("1970-01-01", 0),
        ("2026-11-22", 1_795_305_600),
        ("20261122", 1_795_305_600),
        ("2026-11", 1_793_491_200),
        ("2026-11-22T10:00:00Z", 1_795_341_600),
        ("2026-11-22T10:00:00", 1_795_341_600),
        ("2026-11-22T10:00", 1_795_341_600),
        ("2026-11-22T10", 1_795_341_600),
        ("2026-11-22T1030", 1_795_343_400),
        ("2026-11-22T103000Z", 1_795_343_400),
        ("2026-11-22T10:00:00+01:00", 1_795_338_000),
        ("2026-11-22T10:00:00+0100", 1_795_338_000),
        ("2026-11-22T10:00:00+01", 1_795_338_000),
        ("2026-11-22T10:00:00-05:30", 1_795_361_400),
        ("2026-02-31", 1_772_496_000),
        ("1969-07-20T20:17:40Z", -14_182_940),
    ] as [(String, Int64)])
    func timeStamps(text: String, seconds: Int64) throws {
        #expect(try MPDFilter.TimeStamp.parse(text) == seconds)
    }

    // MARK: Sharing

    @Test func oneFilterMatchesFromManyTasks() async throws {
        let shared = try filter(["((Title =~ '^So') AND (Album contains_ci 'blue'))"])
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<200).allSatisfy { _ in shared.matches(Self.kindOfBlue) } }
            }
            var all: [Bool] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}
