// Playlist files of a music folder read as written: M3U lines and PLS FileN= entries.
import ReelStreamFormats
import Testing

@Suite struct LocalPlaylistTests {
    @Test func m3uEntriesAreItsLinesWithoutCommentsOrBlanks() throws {
        let text = "#EXTM3U\r\n#EXTINF:12,Title\r\n01 Dawn.flac\r\n\r\n  ../Other/02.flac  \n/abs/x.flac\nhttp://radio.example/s\n"
        let entries = try readLocalPlaylist(Array(text.utf8), format: .m3u)
        #expect(entries.map(\.location) == ["01 Dawn.flac", "../Other/02.flac", "/abs/x.flac", "http://radio.example/s"])
        #expect(entries.map(\.line) == [3, 5, 6, 7])
        #expect(entries.allSatisfy { $0.problem == nil })
    }

    @Test func plsEntriesGoByTheirNumber() throws {
        let text = "[playlist]\nFile2=b.flac\nTitle1=A\nfile1=a.flac\nNumberOfEntries=9\nVersion=2\n"
        #expect(try readLocalPlaylist(Array(text.utf8), format: .pls).map(\.location) == ["a.flac", "b.flac"])
        #expect(throws: StreamFormatError.self) { try readLocalPlaylist(Array("just text\n".utf8), format: .pls) }
    }

    @Test func aLineTooLongIsReportedAndTooManyBytesRefused() throws {
        let limits = PlaylistLimits(maximumBytes: 100, maximumEntries: 10, maximumLineLength: 20)
        let entries = try readLocalPlaylist(Array("ok.flac\n\(String(repeating: "x", count: 30))\n".utf8), format: .m3u, limits: limits)
        #expect(entries.count == 2 && entries[1].problem != nil && entries[1].location.isEmpty)
        #expect(throws: StreamFormatError.self) {
            try readLocalPlaylist(Array(String(repeating: "a\n", count: 60).utf8), format: .m3u, limits: limits)
        }
    }

    @Test func theFormatIsTheNamesSuffix() {
        #expect(localPlaylistFormat(ofName: "A/list.M3U") == .m3u)
        #expect(localPlaylistFormat(ofName: "list.m3u8") == .m3u)
        #expect(localPlaylistFormat(ofName: "radio.pls") == .pls)
        #expect(localPlaylistFormat(ofName: "list.xspf") == nil)
        #expect(localPlaylistFormat(ofName: "m3u") == nil)
    }
}
