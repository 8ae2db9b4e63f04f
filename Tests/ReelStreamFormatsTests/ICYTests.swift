import ReelStreamFormats
import Testing

/// An ICY stream as a server sends it: `interval` audio bytes, a length byte, the padded block.
private func interleave(audio: [UInt8], interval: Int, blocks: [Int: String]) -> [UInt8] {
    var out: [UInt8] = []
    var index = 0
    var blockNumber = 0
    while index < audio.count {
        let end = min(index + interval, audio.count)
        out += audio[index..<end]
        index = end
        if end % interval == 0 {
            if let text = blocks[blockNumber] {
                var bytes = Array(text.utf8)
                while bytes.count % 16 != 0 { bytes.append(0) }
                out.append(UInt8(bytes.count / 16))
                out += bytes
            } else {
                out.append(0)
            }
            blockNumber += 1
        }
    }
    return out
}

@Suite struct ICYMetadataTests {
    @Test func titleAndURL() throws {
        let metadata = try #require(ICYMetadata(block: Array("StreamTitle='Artist - Song';StreamUrl='http://x/';".utf8)))
        #expect(metadata.streamTitle == "Artist - Song")
        #expect(metadata.streamURL == "http://x/")
        #expect(metadata.fields.count == 2)
    }

    @Test(arguments: [
        ("StreamTitle='Rock 'n' Roll';", "Rock 'n' Roll"),
        ("StreamTitle='Live; Part 2';StreamUrl='';", "Live; Part 2"),
        ("StreamTitle='It's 'a'; b';StreamUrl='';", "It's 'a'; b"),
        ("StreamTitle='Don't Stop';", "Don't Stop"),
        ("StreamTitle='';", ""),
        ("StreamTitle='cut off", "cut off"),
        ("StreamTitle=Unquoted Song;StreamUrl='u';", "Unquoted Song"),
        ("  StreamTitle='padded';   ", "padded"),
        ("streamtitle='lower case name';", "lower case name"),
        ("StreamTitle='Trailing quote'", "Trailing quote"),
        ("StreamTitle='a';junk", "a"),
    ])
    func quotingAsServersSendIt(block: String, title: String) throws {
        var bytes = Array(block.utf8)
        bytes += [0, 0, 0]
        let metadata = try #require(ICYMetadata(block: bytes))
        #expect(metadata.streamTitle == title)
    }

    @Test func latin1AndWindows1252AreDecoded() throws {
        // "Café – Señor" in Windows-1252: é = E9, en dash = 96, ñ = F1.
        var bytes = Array("StreamTitle='Caf".utf8) + [0xE9, 0x20, 0x96, 0x20] + Array("Se".utf8) + [0xF1] + Array("or';".utf8)
        bytes += [0, 0]
        let metadata = try #require(ICYMetadata(block: bytes))
        #expect(metadata.streamTitle == "Café – Señor")
    }

    @Test func utf8IsKept() throws {
        let metadata = try #require(ICYMetadata(block: Array("StreamTitle='Björk — ヨ';".utf8)))
        #expect(metadata.streamTitle == "Björk — ヨ")
    }

    @Test func controlCharactersBecomeSpaces() throws {
        let metadata = try #require(ICYMetadata(block: Array("StreamTitle='a\nb\rc';".utf8)))
        #expect(metadata.streamTitle == "a b c")
    }

    @Test(arguments: [[UInt8](), [0, 0, 0, 0], Array("no fields here".utf8), Array("=';'".utf8), [0xFF, 0xFE, 0x3D]])
    func emptyOrGarbageIsNil(bytes: [UInt8]) {
        #expect(ICYMetadata(block: bytes) == nil)
    }
}

@Suite struct ICYDemuxerTests {
    let audio: [UInt8] = (0..<1000).map { UInt8($0 % 251) }

    func run(_ stream: [UInt8], interval: Int, chunkSizes: [Int]) throws -> (audio: [UInt8], titles: [String?]) {
        var demuxer = try ICYDemuxer(metaInterval: interval)
        var audio: [UInt8] = []
        var titles: [String?] = []
        var index = 0
        var turn = 0
        while index < stream.count {
            let size = max(1, chunkSizes[turn % chunkSizes.count])
            turn += 1
            let end = min(index + size, stream.count)
            for chunk in demuxer.feed(Array(stream[index..<end])) {
                switch chunk {
                case .audio(let bytes): audio += bytes
                case .metadata(let metadata): titles.append(metadata.streamTitle)
                }
            }
            index = end
        }
        return (audio, titles)
    }

    @Test(arguments: [[1], [7], [100], [16000], [3, 1, 250, 17], [4096]])
    func anyChunkingGivesTheSameAudioAndTitles(chunks: [Int]) throws {
        let stream = interleave(audio: audio, interval: 100, blocks: [1: "StreamTitle='One';", 4: "StreamTitle='Two; 2';StreamUrl='';"])
        let result = try run(stream, interval: 100, chunkSizes: chunks)
        #expect(result.audio == audio)
        #expect(result.titles == ["One", "Two; 2"])
    }

    @Test func titleComesBetweenTheRightAudio() throws {
        let stream = interleave(audio: Array(audio.prefix(300)), interval: 100, blocks: [0: "StreamTitle='A';"])
        var demuxer = try ICYDemuxer(metaInterval: 100)
        let chunks = demuxer.feed(stream)
        #expect(chunks.count == 3)
        #expect(chunks[0] == .audio(Array(audio.prefix(100))))
        guard case .metadata(let metadata) = chunks[1] else {
            Issue.record("expected metadata second, got \(chunks)")
            return
        }
        #expect(metadata.streamTitle == "A")
        #expect(chunks[2] == .audio(Array(audio[100..<300])))
        #expect(demuxer.metadataBlocks == 1)
        #expect(demuxer.audioBytes == 300)
    }

    @Test func garbageBlocksAreSkippedAndCounted() throws {
        var stream = Array(audio.prefix(10))
        stream.append(2)
        stream += [UInt8](repeating: 0xFF, count: 32)
        stream += audio[10..<20]
        stream.append(1)
        stream += [UInt8](repeating: 0, count: 16)  // padding only: no change, not counted
        stream += audio[20..<25]
        var demuxer = try ICYDemuxer(metaInterval: 10)
        let chunks = demuxer.feed(stream)
        #expect(chunks == [.audio(Array(audio.prefix(25)))])
        #expect(demuxer.ignoredBlocks == 1)
        #expect(demuxer.metadataBlocks == 0)
    }

    @Test func largestBlockIsRead() throws {
        let text = "StreamTitle='" + String(repeating: "x", count: 4000) + "';"
        var block = Array(text.utf8)
        block += [UInt8](repeating: 0, count: 4080 - block.count)
        let stream = [1, 2, 3] + [255] + block + [4, 5]
        var demuxer = try ICYDemuxer(metaInterval: 3)
        let chunks = demuxer.feed(stream)
        #expect(chunks.count == 3)
        #expect(chunks.last == .audio([4, 5]))
    }

    @Test(arguments: [0, -1, ICYDemuxer.maximumMetaInterval + 1])
    func badIntervalIsRefused(interval: Int) {
        #expect(throws: StreamFormatError.self) { try ICYDemuxer(metaInterval: interval) }
    }
}

@Suite struct ICYHeadersTests {
    @Test func icecastHeaders() {
        var headers = ICYHeaders()
        for line in [
            "HTTP/1.0 200 OK", "Content-Type: audio/mpeg", "icy-name: Reel Test FM\r\n", "icy-genre:Jazz",
            "icy-br: 128", "icy-metaint: 16000", "ice-audio-info: ice-samplerate=44100;ice-bitrate=96;ice-channels=2",
            "icy-description: ", "icy-url: http://example.org/",
        ] {
            headers.take(headerLine: Array(line.utf8))
        }
        #expect(headers.name == "Reel Test FM")
        #expect(headers.genre == "Jazz")
        #expect(headers.bitrate == 128)
        #expect(headers.metaInterval == 16000)
        #expect(headers.description == nil)
        #expect(headers.url == "http://example.org/")
    }

    @Test func audioInfoGivesTheBitrateWithoutIcyBr() {
        var headers = ICYHeaders()
        let kept = headers.take(headerLine: Array("ice-audio-info: ice-samplerate=44100;ice-bitrate=96".utf8))
        #expect(kept)
        #expect(headers.bitrate == 96)
    }

    @Test func latin1Name() {
        var headers = ICYHeaders()
        headers.take(headerLine: Array("icy-name: Radio ".utf8) + [0xC9] + Array("t\u{E9}".utf8))
        // Not valid UTF-8 as a whole (a lone 0xC9): read as Windows-1252.
        #expect(headers.name?.hasPrefix("Radio É") == true)
    }

    @Test(arguments: [("128", 128), ("128,128", 128), (" 64 kbps", 64), ("0", nil), ("abc", nil), ("", nil), ("9999999", nil)] as [(String, Int?)])
    func bitrates(text: String, expected: Int?) {
        #expect(ICYHeaders.parseBitrate(text) == expected)
    }

    @Test(arguments: [("16000", 16000), (" 8192 ", 8192), ("0", nil), ("-5", nil), ("16000x", nil), ("99999999", nil)] as [(String, Int?)])
    func metaIntervals(text: String, expected: Int?) {
        #expect(ICYHeaders.parseMetaInterval(text) == expected)
    }
}
