import ReelStreamFormats
import Testing

private func stations(_ text: String, _ format: PlaylistFormat, url: String? = "http://radio.example/lists/x.m3u")
    throws(StreamFormatError) -> StationPlaylist
{
    switch try parseStationPlaylist(Array(text.utf8), format: format, url: url) {
    case .stations(let list): return list
    case .hls: throw StreamFormatError(.malformed, "unexpectedly HLS")
    }
}

@Suite struct PlaylistDetectionTests {
    @Test(arguments: [
        ("http://a/x", "audio/x-mpegurl", PlaylistFormat.m3u), ("http://a/x", "audio/mpegurl", .m3u),
        ("http://a/x", "application/vnd.apple.mpegurl", .m3u), ("http://a/x", "audio/x-scpls", .pls),
        ("http://a/x", "application/xspf+xml; charset=utf-8", .xspf), ("http://a/x.pls", "text/plain", .pls),
        ("http://a/x.M3U?token=1", nil, .m3u), ("http://a/x.xspf#frag", "application/octet-stream", .xspf),
        ("http://a/live.m3u8", nil, .m3u),
    ] as [(String, String?, PlaylistFormat)])
    func playlists(url: String, contentType: String?, expected: PlaylistFormat) {
        #expect(playlistFormat(url: url, contentType: contentType) == expected)
    }

    @Test(arguments: [
        ("http://a/stream.mp3", "audio/mpeg"), ("http://a/x.m3u", "audio/mpeg"), ("http://a/x", nil),
        ("http://a/dir.pls/stream", nil), ("http://a/x", "audio/aacp"), ("http://a/x.mp3?list.pls", nil),
    ] as [(String, String?)])
    func streams(url: String, contentType: String?) {
        #expect(playlistFormat(url: url, contentType: contentType) == nil)
    }

    @Test func sniffing() {
        #expect(sniffPlaylistFormat(Array("\u{FEFF}#EXTM3U\n".utf8)) == .m3u)
        #expect(sniffPlaylistFormat(Array("\n[Playlist]\nFile1=x".utf8)) == .pls)
        #expect(sniffPlaylistFormat(Array("<?xml version=\"1.0\"?><playlist xmlns=\"http://xspf.org/ns/0/\">".utf8)) == .xspf)
        #expect(sniffPlaylistFormat([0xFF, 0xFB, 0x90, 0x00]) == nil)
        #expect(sniffPlaylistFormat(Array("<!DOCTYPE html><html>".utf8)) == nil)
    }

    @Test func hlsIsToldFromAStationList() throws {
        let media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:1\n#EXTINF:6.0,\nseg1.ts\n"
        let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=128000,CODECS=\"mp4a.40.2\"\naudio.m3u8\n"
        let stationList = "#EXTM3U\n#EXTINF:-1,Radio One\nhttp://one.example/live\n"
        #expect(isHLSPlaylist(Array(media.utf8)))
        #expect(isHLSPlaylist(Array(master.utf8)))
        #expect(!isHLSPlaylist(Array(stationList.utf8)))
        #expect(try parseStationPlaylist(Array(media.utf8), format: .m3u, url: "http://a/live.m3u8") == .hls)
        #expect(try parseStationPlaylist(Array(master.utf8), format: .m3u, url: "http://a/live.m3u8") == .hls)
        #expect(try stations(stationList, .m3u).entries.count == 1)
    }
}

@Suite struct URLReferenceTests {
    // RFC 3986, 5.4.1 (normal examples), base http://a/b/c/d;p?q
    @Test(arguments: [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"), (";x", "http://a/b/c/;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
        ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("g.", "http://a/b/c/g."), ("g/../h", "http://a/b/c/h"), ("https://x/y", "https://x/y"),
    ])
    func rfc3986Examples(reference: String, expected: String) {
        #expect(resolveURL(reference, against: "http://a/b/c/d;p?q") == expected)
    }

    @Test func schemes() {
        #expect(urlScheme("HTTP://x") == "http")
        #expect(urlScheme("/music/a.mp3") == nil)
        #expect(urlScheme("C:\\Music\\a.mp3") == "c")
        #expect(isHTTPURL("https://radio.example:8000/live"))
        #expect(!isHTTPURL("http:///nohost"))
        #expect(!isHTTPURL("file:///etc/passwd"))
    }
}

@Suite struct M3UTests {
    @Test func extendedM3UWithTitlesAndRelativeEntries() throws {
        let list = try stations(
            """
            #EXTM3U
            #EXTINF:-1 tvg-name="Jazz, Blues" tvg-logo="x.png",Jazz FM
            http://jazz.example:8000/live.mp3

            #EXTINF:123,Podcast Episode
            ../pods/ep1.mp3
            # a comment
            stream.aac
            """, .m3u)
        #expect(list.entries == [
            PlaylistEntry(location: "http://jazz.example:8000/live.mp3", title: "Jazz FM"),
            PlaylistEntry(location: "http://radio.example/pods/ep1.mp3", title: "Podcast Episode", duration: 123),
            PlaylistEntry(location: "http://radio.example/lists/stream.aac"),
        ])
        #expect(list.skipped.isEmpty)
    }

    @Test func crLfAndPlainM3U() throws {
        let list = try stations("http://a.example/1\r\nhttp://a.example/2\rhttp://a.example/3", .m3u)
        #expect(list.entries.map(\.location) == ["http://a.example/1", "http://a.example/2", "http://a.example/3"])
    }

    @Test func otherSchemesAndLocalPathsAreSkippedAndNamed() throws {
        let list = try stations("file:///etc/passwd\nC:\\Music\\x.mp3\nhttp://ok.example/\nsmb://nas/x\n", .m3u, url: "http://h/x.m3u")
        #expect(list.entries.map(\.location) == ["http://ok.example/"])
        #expect(list.skipped.map(\.line) == [1, 2, 4])
        #expect(list.skipped[0].reason.contains("file:///etc/passwd"))
    }

    @Test func relativeEntriesWithoutABaseAreSkipped() throws {
        #expect(throws: StreamFormatError.self) { try stations("stream.mp3\n", .m3u, url: nil) }
    }

    @Test func noUsableEntryIsAClearError() {
        do {
            _ = try stations("#EXTM3U\n# nothing\n", .m3u)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.message.contains("lists no http or https stream"))
        }
    }

    @Test func sizeAndEntryBounds() throws {
        let big = [UInt8](repeating: UInt8(ascii: "a"), count: PlaylistLimits.station.maximumBytes + 1)
        #expect(throws: StreamFormatError(.tooLarge, "the playlist is larger than \(PlaylistLimits.station.maximumBytes) bytes")) {
            try parseStationPlaylist(big, format: .m3u, url: nil)
        }
        let limits = PlaylistLimits(maximumBytes: 1 << 20, maximumEntries: 3, maximumLineLength: 40)
        let text = (1...10).map { "http://e.example/\($0)" }.joined(separator: "\n") + "\nhttp://e.example/" + String(repeating: "x", count: 50)
        guard case .stations(let list) = try parseStationPlaylist(Array(text.utf8), format: .m3u, url: nil, limits: limits) else {
            Issue.record("not stations")
            return
        }
        #expect(list.entries.count == 3)
        #expect(list.skipped.last?.reason.contains("more than 3 entries") == true)
    }

    @Test func writerRoundTrips() throws {
        let entries = [
            PlaylistEntry(location: "http://a.example/live", title: "Radio A"),
            PlaylistEntry(location: "http://b.example/ep.mp3", title: "Ep, 1", duration: 61),
            PlaylistEntry(location: "http://c.example/"),
        ]
        let bytes = try writeM3U(entries)
        #expect(String(decoding: bytes, as: UTF8.self) == "#EXTM3U\n#EXTINF:-1,Radio A\nhttp://a.example/live\n#EXTINF:61,Ep, 1\nhttp://b.example/ep.mp3\nhttp://c.example/\n")
        guard case .stations(let list) = try parseStationPlaylist(bytes, format: .m3u, url: nil) else {
            Issue.record("not stations")
            return
        }
        #expect(list.entries == entries)
        #expect(throws: StreamFormatError.self) { try writeM3U([PlaylistEntry(location: "http://a/\nhttp://b/")]) }
    }
}

@Suite struct PLSTests {
    @Test func plsByNumberWithTitles() throws {
        let list = try stations(
            """
            [playlist]
            NumberOfEntries=5
            File2=http://two.example/
            Title2=Second
            file1 = http://one.example/live
            Title1=First; the best
            Length1=-1
            File3=relative/three.mp3
            Length3=30
            Version=2
            """, .pls, url: "http://h.example/dir/list.pls")
        #expect(list.entries == [
            PlaylistEntry(location: "http://one.example/live", title: "First; the best"),
            PlaylistEntry(location: "http://two.example/", title: "Second"),
            PlaylistEntry(location: "http://h.example/dir/relative/three.mp3", duration: 30),
        ])
    }

    @Test func notAPLS() {
        #expect(throws: StreamFormatError.self) { try stations("<html>hello</html>", .pls) }
    }

    @Test func hugeIndexIsIgnored() throws {
        let list = try stations("[playlist]\nFile99999999999999999999=http://x.example/\nFile1=http://y.example/\n", .pls)
        #expect(list.entries.map(\.location) == ["http://y.example/"])
    }
}

@Suite struct XSPFTests {
    @Test func tracksWithLocationsAndTitles() throws {
        let list = try stations(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a station list -->
            <playlist version="1" xmlns="http://xspf.org/ns/0/">
              <title>Stations</title>
              <trackList>
                <track><location>http://one.example/live?a=1&amp;b=2</location><title>One &amp; Only</title></track>
                <track>
                  <title><![CDATA[Two <live>]]></title>
                  <location>  two.ogg </location>
                  <duration>61000</duration>
                </track>
                <track><title>No location</title></track>
                <track><location>caf&#xE9;.mp3</location></track>
              </trackList>
            </playlist>
            """, .xspf, url: "http://h.example/x.xspf")
        #expect(list.entries == [
            PlaylistEntry(location: "http://one.example/live?a=1&b=2", title: "One & Only"),
            PlaylistEntry(location: "http://h.example/two.ogg", title: "Two <live>", duration: 61),
            PlaylistEntry(location: "http://h.example/café.mp3"),
        ])
        #expect(list.skipped == [SkippedPlaylistEntry(line: 3, reason: "track 3 has no usable <location>")])
    }

    @Test func entitiesAreNeverExpanded() throws {
        let bomb = """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
            <playlist><trackList><track><location>http://x.example/&lol2;</location></track></trackList></playlist>
            """
        let list = try stations(bomb, .xspf)
        #expect(list.entries.map(\.location) == ["http://x.example/&lol2;"])
    }

    @Test(arguments: ["<playlist><trackList><track><location>http://x", "<playlist", "no xml at all", "<!-- never closed"])
    func brokenXMLIsAnError(text: String) {
        #expect(throws: StreamFormatError.self) { try stations(text, .xspf) }
    }

    @Test func deepNestingIsRefused() {
        let text = "<playlist>" + String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100) + "</playlist>"
        #expect(throws: StreamFormatError(.malformed, "the XSPF playlist nests elements deeper than 64")) {
            try stations(text, .xspf)
        }
    }
}

@Suite struct StoredPlaylistTests {
    @Test func mpdFormatRoundTripsByteForByte() throws {
        var bytes = Array("#EXTM3U\nArtist/Album/01 Song.flac\n\nhttp://radio.example/live\nRecordings/2026/take.flac\n".utf8)
        bytes += [0x62, 0x61, 0x64, 0xFF, 0x0A]  // not UTF-8: kept and reported
        bytes += Array("with NUL".utf8) + [0x00, 0x0A]
        let playlist = try StoredPlaylist(reading: bytes)
        #expect(playlist.entries == ["Artist/Album/01 Song.flac", "http://radio.example/live", "Recordings/2026/take.flac"])
        #expect(playlist.brokenLines.map(\.line) == [6, 7])
        #expect(playlist.brokenLines.map(\.reason) == ["not valid UTF-8", "holds a NUL byte"])
        #expect(try playlist.encoded() == bytes)
        #expect(try StoredPlaylist(reading: Array("a\r\n\r\nb".utf8)).encoded() == Array("a\n\nb\n".utf8))
    }

    @Test func writesOneEntryALine() throws {
        let playlist = StoredPlaylist(entries: ["a/b.mp3", "http://x.example/"])
        #expect(try playlist.encoded() == Array("a/b.mp3\nhttp://x.example/\n".utf8))
        #expect(try StoredPlaylist(reading: Array("a/b.mp3\r\nhttp://x.example/\r\n".utf8)).entries == playlist.entries)
    }

    @Test(arguments: ["two\nlines", "#comment", "", "  ", "nul\u{0}"])
    func entriesThatWouldReadBackDifferentlyAreRefused(entry: String) {
        #expect(throws: StreamFormatError.self) { try StoredPlaylist(entries: [entry]).encoded() }
    }

    @Test func tooManyEntriesIsAnErrorNotACut() {
        let limits = PlaylistLimits(maximumBytes: 1 << 20, maximumEntries: 2, maximumLineLength: 100)
        #expect(throws: StreamFormatError.self) { try StoredPlaylist(reading: Array("a\nb\nc\n".utf8), limits: limits) }
        #expect((try? StoredPlaylist(reading: Array("a\nb\n".utf8), limits: limits))?.entries == ["a", "b"])
    }
}

@Suite struct PlaylistFuzzFindingsTests {
    /// Found by scripts/fuzz-stream-formats: a control byte at the end of an entry decoded to a
    /// trailing space that a written M3U lost on reading back.
    @Test func controlBytesAtTheEndOfAnEntryAreTrimmed() throws {
        let bytes = Array("#EXTM3U\nhttp://a.example/str".utf8) + [0x00, 0x01] + [0x0A]
        guard case .stations(let list) = try parseStationPlaylist(bytes, format: .m3u, url: nil) else {
            Issue.record("not stations")
            return
        }
        #expect(list.entries.map(\.location) == ["http://a.example/str"])
        guard case .stations(let again) = try parseStationPlaylist(try writeM3U(list.entries), format: .m3u, url: nil) else {
            Issue.record("not stations")
            return
        }
        #expect(again.entries == list.entries)
    }
}
