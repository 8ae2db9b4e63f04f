// The entries of a stored playlist read in one pass over its bytes: the same lines, breaks and
// errors as StoredPlaylist(reading:), each distinct line made a string once.
import ReelStreamFormats
import Testing

@Suite struct StoredPlaylistEntriesTests {
    /// Both readings of `bytes` agree: entries, broken lines (number and reason), and the
    /// distinct lines are each entry's bytes once, in first-line order.
    func expectSameReading(_ bytes: [UInt8], limits: PlaylistLimits = .stored, sourceLocation: SourceLocation = #_sourceLocation) {
        let whole = Result { () throws(StreamFormatError) in try StoredPlaylist(reading: bytes, limits: limits) }
        let fast = Result { () throws(StreamFormatError) in try StoredPlaylistEntries(reading: bytes, limits: limits) }
        switch (whole, fast) {
        case (.success(let whole), .success(let fast)):
            #expect(fast.entries == whole.entries, "\(bytes)", sourceLocation: sourceLocation)
            #expect(fast.brokenLines.map(\.line) == whole.brokenLines.map(\.line), "\(bytes)", sourceLocation: sourceLocation)
            #expect(fast.brokenLines.map(\.reason) == whole.brokenLines.map(\.reason), "\(bytes)", sourceLocation: sourceLocation)
            #expect(fast.distinctOfEntry.map { fast.distinct[$0] } == fast.entries, sourceLocation: sourceLocation)
            // Distinct by their bytes (two spellings of "é" are two lines, though equal strings).
            var firsts: [[UInt8]] = []
            var seen: Set<[UInt8]> = []
            for entry in whole.entries where seen.insert(Array(entry.utf8)).inserted { firsts.append(Array(entry.utf8)) }
            #expect(fast.distinct.map { Array($0.utf8) } == firsts, sourceLocation: sourceLocation)
            #expect(fast.allASCII == whole.entries.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }, sourceLocation: sourceLocation)
        case (.failure(let whole), .failure(let fast)):
            #expect(fast == whole, sourceLocation: sourceLocation)
        default:
            Issue.record("one reading failed, the other did not: \(whole) / \(fast)", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [
        "",
        "\n",
        "a",
        "a\n",
        "a\nb",
        "a\r\nb\r\n",
        "a\rb\r",
        "a\r\r\nb",
        "\u{FEFF}a\nb\n",
        "\u{FEFF}",
        "\u{FEFF}\u{FEFF}a\n",
        "#EXTM3U\n#EXTINF:123,Artist - Title\nA/01.flac\n",
        "a\n\n \n\t\n \t \nb\n",
        " a\n\tb \n",
        "A/01.flac\nA/02.flac\nA/01.flac\r\nA/02.flac",
        "Caf\u{E9}/01.flac\nCafe\u{301}/01.flac\n",
        "http://radio.example/live\nRecordings/2026/take.flac\n/srv/music/A/01.flac\nfile:///tmp/x.wav\n",
    ])
    func readsWhatAStoredPlaylistReads(text: String) {
        expectSameReading(Array(text.utf8))
    }

    @Test func brokenLinesAreListedEveryTimeTheyRepeat() throws {
        var bytes = Array("ok\n".utf8)
        bytes += [0x62, 0xFF, 0x0A, 0x62, 0xFF, 0x0D, 0x0A]  // not UTF-8, twice
        bytes += Array("nul".utf8) + [0x00, 0x0A] + Array("nul".utf8) + [0x00]
        bytes += [0x0A, 0x80]  // a last line without a break, not UTF-8
        expectSameReading(bytes)
        let read = try StoredPlaylistEntries(reading: bytes)
        #expect(read.entries == ["ok"])
        #expect(read.brokenLines.map(\.line) == [2, 3, 4, 5, 6])
        #expect(read.brokenLines.map(\.reason) == ["not valid UTF-8", "not valid UTF-8", "holds a NUL byte", "holds a NUL byte", "not valid UTF-8"])
    }

    @Test func repeatedLinesAreOneDistinctLine() throws {
        let read = try StoredPlaylistEntries(reading: Array("b/2.flac\na/1.flac\r\nb/2.flac\na/1.flac".utf8))
        #expect(read.distinct == ["b/2.flac", "a/1.flac"])
        #expect(read.distinctOfEntry == [0, 1, 0, 1])
        #expect(read.allASCII)
        #expect(try StoredPlaylistEntries(reading: Array("Caf\u{E9}.flac\n".utf8)).allASCII == false)
    }

    /// Thousands of distinct lines (the table of lines grows many times), each repeated later.
    @Test func manyDistinctLinesAreEachFoundAgain() throws {
        let distinct = (0..<5000).map { "Artist \($0 % 97)/Album \($0)/\($0 % 13) Title.flac" }
        let lines = distinct + distinct.reversed() + distinct
        let bytes = Array(lines.joined(separator: "\n").utf8)
        expectSameReading(bytes)
        let read = try StoredPlaylistEntries(reading: bytes)
        #expect(read.distinct == distinct)
        #expect(read.distinctOfEntry == Array(0..<5000) + (0..<5000).reversed() + Array(0..<5000))
    }

    @Test func limitsAreTheStoredPlaylistsLimits() {
        let limits = PlaylistLimits(maximumBytes: 64, maximumEntries: 2, maximumLineLength: 8)
        expectSameReading(Array("a\nb\nc\n".utf8), limits: limits)
        expectSameReading(Array("a\na\na\n".utf8), limits: limits)
        expectSameReading(Array("a\nb\n#c\n\n".utf8), limits: limits)
        expectSameReading(Array("123456789\nab\n12345678\n".utf8), limits: limits)
        expectSameReading(Array(repeating: UInt8(ascii: "a"), count: 65), limits: limits)
        #expect(throws: StreamFormatError.self) { try StoredPlaylistEntries(reading: Array("a\nb\nc\n".utf8), limits: limits) }
        #expect((try? StoredPlaylistEntries(reading: Array("a\nb\n".utf8), limits: limits))?.entries == ["a", "b"])
    }

    /// Random files of the bytes that matter (breaks, blanks, `#`, NUL, bytes above ASCII, a
    /// BOM, repeated lines), read both ways. Seeded: the same files every run.
    @Test func randomFilesReadAsAStoredPlaylistReads() {
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("b/".utf8), Array("A/01.flac".utf8), [0x0A], [0x0D], [0x0D, 0x0A], [0x20], [0x09],
            [UInt8(ascii: "#")], [0x00], [0xFF], [0xC3, 0xA9], [0xC3], [0xEF, 0xBB, 0xBF], Array("http://x/".utf8),
            Array("12345678".utf8),
        ]
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        let small = PlaylistLimits(maximumBytes: 4096, maximumEntries: 12, maximumLineLength: 20)
        for round in 0..<4000 {
            var bytes: [UInt8] = []
            for _ in 0..<next(round % 2 == 0 ? 30 : 200) { bytes += pieces[next(pieces.count)] }
            expectSameReading(bytes, limits: round % 2 == 0 ? small : .stored)
        }
    }
}
