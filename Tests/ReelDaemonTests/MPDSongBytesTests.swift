// A song's MPD lines written straight into bytes print exactly what the song value prints:
// fields, values with line breaks, numbers, times, tag sets, and listplaylistinfo's repeats.
import NIOCore
import ReelModel
import Testing

@testable import ReelDaemon

@Suite struct MPDSongBytesTests {
    /// A value with its line breaks replaced as the reply did before it was bytes (character
    /// by character: a CR LF is one character).
    static func replacedAsText(_ value: String) -> String {
        value.replacing("\r\n", with: " ").replacing("\n", with: " ").replacing("\r", with: " ")
    }

    @Test func aValuesLineBreaksAreSpacesAsTheTextReplacementMadeThem() {
        let values = [
            "", "plain", "a\nb", "a\rb", "a\r\nb", "\r\n\r\n", "\n\r", "\r\r\n\n", "end\r", "\nstart",
            "é\u{301}\ncombined", "x\r\n\u{301}y", "\u{1F3B5}\r\u{1F3B6}", String(repeating: "long ", count: 30) + "\n",
        ]
        for value in values {
            var response = MPDResponse()
            response.field("Title", value)
            #expect(response.text == "Title: \(Self.replacedAsText(value))\n", "\(value.debugDescription)")
        }
    }

    /// The 8-byte scan for line breaks finds a CR or an LF at every place of values of every
    /// length up to 40 (whole words, the last partial word, both at once), and no other byte
    /// (each of the 256 values in every place): what the two `memchr` calls found.
    @Test func theLineBreakScanFindsACROrLFAtEveryPlaceAndNothingElse() {
        for length in 0...40 {
            let plain = [UInt8](repeating: UInt8(ascii: "a"), count: length)
            plain.withUnsafeBytes { #expect(!MPDLines.hasLineBreak($0)) }
            for place in 0..<length {
                for byte in UInt8.min...UInt8.max {
                    var bytes = plain
                    bytes[place] = byte
                    let expected = byte == 0x0A || byte == 0x0D
                    let found = bytes.withUnsafeBytes { MPDLines.hasLineBreak($0) }
                    if found != expected { Issue.record("length \(length), byte \(byte) at \(place): \(found)") }
                }
            }
        }
        // Bytes just around CR and LF, and high bytes (UTF-8), in every word: none is one.
        let near: [UInt8] = [0x00, 0x09, 0x0B, 0x0C, 0x0E, 0x1A, 0x1D, 0x8A, 0x8D, 0xFF]
        let mixed = (0..<37).map { near[$0 % near.count] }
        mixed.withUnsafeBytes { #expect(!MPDLines.hasLineBreak($0)) }
        // Through a value: written as it is, or with its breaks as spaces.
        for value in [String(repeating: "ü", count: 20), String(repeating: "x", count: 23) + "\r", "1234567\n"] {
            var response = MPDResponse()
            response.field("Title", value)
            #expect(response.text == "Title: \(Self.replacedAsText(value))\n")
        }
    }

    @Test func numbersAreWrittenAsStringWritesThem() {
        for value in [0, 1, 9, 10, 99, 100, -1, -10, 44100, 1_234_567_890, Int.max, Int.min, Int.min + 1] {
            var response = MPDResponse()
            response.field("Pos", value)
            #expect(response.text == "Pos: \(value)\n")
        }
        for seconds in [0, 0.0004, 0.0005, 0.005, 1, 61.5, 12.3456, 3599.9995, -3, .nan, .infinity, 1e300] {
            var response = MPDResponse()
            response.field("duration", seconds: seconds)
            #expect(response.text == "duration: \(MPDResponse.milliseconds(seconds))\n", "\(seconds)")
        }
    }

    @Test func aTimeIsWrittenAsGmtimeGivesIt() {
        var samples = [
            0, 1, -1, 59, 86_399, 86_400, -86_400, -86_401, 951_782_400, 951_868_800, 1_795_341_600,
            4_107_542_399, 4_107_542_400, 253_402_300_799, 253_402_300_800, -2_208_988_800, -62_135_596_800,
        ]
        // Every day over a few years round two leap days (1999…2001), at a time that moves.
        samples += (0..<1200).map { 915_148_800 + $0 * 86_400 + $0 * 37 % 86_400 }
        for seconds in samples {
            var response = MPDResponse()
            response.writeLines(atMost: MPDLines.isoTimeBytes) { $0.write(isoTime: seconds) }
            #expect(response.text == isoTime(seconds), "\(seconds)")
        }
    }

    @Test func repeatedLinesAreTheBytesWrittenBefore() {
        var response = MPDResponse()
        response.field("file", "a.flac")
        let start = response.count
        response.field("file", "b.flac")
        response.field("Time", 3)
        let end = response.count
        response.field("file", "c.flac")
        response.repeatLines(start..<end)
        response.repeatLines(0..<start)
        response.repeatLines(end..<end)
        #expect(response.text == "file: a.flac\nfile: b.flac\nTime: 3\nfile: c.flac\nfile: b.flac\nTime: 3\nfile: a.flac\n")
        // Past the buffer's room: it grows, the bytes are the same.
        var big = MPDResponse()
        for index in 0..<3000 { big.field("file", "song \(index).flac") }
        let whole = big.count
        big.repeatLines(0..<whole)
        big.repeatLines(0..<whole)
        let text = big.text
        #expect(text.count == whole * 3)
        #expect(text.hasSuffix("file: song 2999.flac\n") && text.dropLast(whole).hasSuffix("file: song 2999.flac\n"))
    }

    @Test func aTagSetAnswersForEveryTagAsItsNamesDo() {
        var set = MPDTagSet.all
        for tag in MPDTag.allCases { #expect(set.contains(tag)) }
        set.disable(["Title", "Disc"])
        #expect(!set.contains(.title) && !set.contains(.disc) && set.contains(.artist))
        #expect(!set.names.contains("Title") && set.names.contains("Artist"))
        set = .none
        for tag in MPDTag.allCases { #expect(!set.contains(tag)) }
        set.enable(["AlbumArtist", "Name", "MUSICBRAINZ_TRACKID"])
        #expect(MPDTag.allCases.filter(set.contains) == [.albumArtist, .name])
        #expect(set == { var other = MPDTagSet.none; other.enable(["Name", "AlbumArtist", "MUSICBRAINZ_TRACKID"]); return other }())
    }

    static func track(
        _ path: String, id: Int64 = 1, root: String = "/home/pi/Music", tags: TrackTags = TrackTags(),
        codec: String = "flac", duration: Double? = 61.5, modified: Double = 1_795_341_600.75
    ) -> MusicTrack {
        MusicTrack(
            id: id, root: root, relativePath: path, size: 10, modified: modified,
            audio: ScannedAudio(
                tags: tags, codec: codec, sampleRate: 44100, channels: 2, duration: duration, hasEmbeddedCover: false))
    }

    static let tracks: [MusicTrack] = [
        track("A/01 Dawn.flac", tags: TrackTags(title: "Dawn", artist: "Alpha", album: "", track: 3, date: "2001", genre: "Rock")),
        track(
            "B/all.mp3", id: 2,
            tags: TrackTags(
                title: "T", artist: "A", album: "Al", albumArtist: "AA", track: 12, disc: 2, date: "1997-03-12", genre: "G"),
            codec: "mp3", duration: 0.0005),
        track("C/line\nbreak\r\n.ogg", id: 3, tags: TrackTags(title: "one\rtwo", artist: "x\r\ny"), codec: "vorbis", duration: nil),
        track("D/untagged.wav", id: 4, codec: "wav", modified: -1.5),
        track("E/other root.opus", id: 5, root: "/mnt/usb", codec: "opus", duration: 3599.9996),
        track("", id: 6, root: "/mnt/usb"),
        // Every number at its widest, every tag set and long: the room made for the song holds it.
        MusicTrack(
            id: 7, root: "/home/pi/Music", relativePath: String(repeating: "deep/", count: 200) + "x.flac", size: 1,
            modified: 9e15,
            audio: ScannedAudio(
                tags: TrackTags(
                    title: String(repeating: "t\r\n", count: 300), artist: "a", album: "b", albumArtist: "c",
                    track: Int.min, disc: Int.max, date: "d", genre: String(repeating: "g", count: 5000)),
                codec: "opus", sampleRate: Int.min, channels: Int.max, duration: 9e15, hasEmbeddedCover: true)),
    ]

    @Test func aMusicFileWrittenFromItsTrackIsItsSongByteForByte() {
        var someTags = MPDTagSet.none
        someTags.enable(["Title", "Track", "Genre"])
        for roots in [["/home/pi/Music"], ["/home/pi/Music", "/mnt/usb"], []] {
            let view = MPDLibraryView(recordingsDirectory: "Recordings", musicRoots: roots)
            for tags in [MPDTagSet.all, .none, someTags] {
                for track in Self.tracks {
                    var direct = MPDResponse()
                    view.write(track, tags: tags, into: &direct)
                    var viaSong = MPDResponse()
                    view.song(of: track).write(into: &viaSong, tags: tags)
                    #expect(direct.text == viaSong.text, "\(roots) \(track.relativePath.debugDescription)")
                    #expect(direct.text.hasPrefix("file: "))
                }
            }
        }
    }

    @Test func listplaylistinfoWritesARepeatedFileAsItsFirstLines() {
        let view = MPDLibraryView(recordingsDirectory: "Recordings", musicRoots: ["/home/pi/Music", "/mnt/usb"])
        let targets: [PlaylistEntry.Target] = Self.tracks.map { .music($0) } + [.url("http://radio.example/live"), .missing, .file("/tmp/x.flac")]
        // Every target several times, in a shuffled order; one id named again by another line
        // with a changed track (as a move between two roots' reads could give).
        var entries: [PlaylistEntry] = []
        for _ in 0..<4 {
            for (number, target) in targets.enumerated() {
                let position = entries.count
                // One line per target, as the core lists them (the same line, the same target).
                entries.append(PlaylistEntry(position: position, uri: "line \(number)", target: target))
            }
            entries.reverse()
        }
        var changed = Self.tracks[0]
        changed.audio.tags.title = "Changed"
        entries.append(PlaylistEntry(position: entries.count, uri: "changed", target: .music(changed)))
        var response = MPDResponse()
        MPDPlaylistCommands.writeSongs(of: entries, view: view, tags: .all, into: &response)
        var expected = MPDResponse()
        for entry in entries { MPDPlaylistCommands.song(of: entry, view: view).write(into: &expected, tags: .all) }
        #expect(response.text == expected.text)
        #expect(response.text.hasSuffix("Title: Changed\nTrack: 3\nGenre: Rock\nDate: 2001\nTime: 62\nduration: 61.500\n"))
    }

    @Test func filesWhoseIdsLieFarApartAreRepeatedToo() {
        // Ids far apart (and at the ends of Int64) are kept in a dictionary, not a table.
        let view = MPDLibraryView(recordingsDirectory: "Recordings", musicRoots: ["/home/pi/Music"])
        for ids in [[Int64.min, -5, 7, Int64.max], [1, 1_000_000], [42]] {
            let tracks = ids.map { Self.track("A/\($0).flac", id: $0, tags: TrackTags(title: "Song \($0)")) }
            var entries: [PlaylistEntry] = []
            for round in 0..<3 {
                for track in tracks {
                    // The same file by another line too (its lines are written again, the same).
                    let line = round == 2 ? "/home/pi/Music/" + track.relativePath : track.relativePath
                    entries.append(PlaylistEntry(position: entries.count, uri: line, target: .music(track)))
                }
            }
            var response = MPDResponse()
            MPDPlaylistCommands.writeSongs(of: entries, view: view, tags: .all, into: &response)
            var expected = MPDResponse()
            for track in tracks + tracks + tracks { view.song(of: track).write(into: &expected, tags: .all) }
            #expect(response.text == expected.text, "\(ids)")
        }
    }
}
