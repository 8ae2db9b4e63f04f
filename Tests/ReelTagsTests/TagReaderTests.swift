// TagReader on files tagged by Debian's own tools: every tag read back as written, pictures,
// files without tags, and files that are not audio or are broken.

import Foundation
import ReelModel
import Testing

@testable import ReelTags

@Suite struct TagReaderTests {
    let directory = TaggedFiles.temporaryDirectory()
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    // Non-ASCII in every tag that is text: accents, Japanese, a character outside the BMP.
    static let expected = TrackTags(
        title: "Été à Tōkyō 日本の夏", artist: "Sigur Rós", album: "Ágætis byrjun 𝄞",
        albumArtist: "Various Ärtists", track: 3, disc: 1, date: "1997-03-12", genre: "Musique concrète")

    @Test func flacTagsAndPictures() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("tagged.flac")
        try TaggedFiles.flac(file, seconds: 1.5, rate: 48000, channels: 2)
        let front = TaggedFiles.png(width: 3, height: 2, rgb: (200, 10, 10))
        let back = TaggedFiles.png(width: 1, height: 1, rgb: (0, 0, 255))
        try TaggedFiles.write(front, to: path("front.png"))
        try TaggedFiles.write(back, to: path("back.png"))
        let e = Self.expected
        try TaggedFiles.run(
            "/usr/bin/metaflac",
            [
                "--set-tag=TITLE=\(e.title!)", "--set-tag=ARTIST=\(e.artist!)", "--set-tag=ALBUM=\(e.album!)",
                "--set-tag=ALBUMARTIST=\(e.albumArtist!)", "--set-tag=TRACKNUMBER=3/12", "--set-tag=DISCNUMBER=1/2",
                "--set-tag=DATE=\(e.date!)", "--set-tag=GENRE=\(e.genre!)",
                // The back cover first: picture() gives the front one all the same.
                "--import-picture-from=4||back||\(path("back.png"))",
                "--import-picture-from=3||front||\(path("front.png"))", file,
            ])

        let audio = try TagReader.read(path: file)
        #expect(audio.tags == e)
        #expect(audio.codec == "flac")
        #expect(audio.sampleRate == 48000)
        #expect(audio.channels == 2)
        #expect(abs((audio.duration ?? 0) - 1.5) < 0.01)
        #expect(audio.hasEmbeddedCover)

        let picture = try #require(try TagReader.picture(path: file))
        #expect(picture.bytes == front)
        #expect(picture.mimeType == "image/png")
    }

    @Test func mp3TagsAndPicture() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("tagged.mp3")
        try TaggedFiles.mp3(file, seconds: 2, rate: 44100, channels: 1)
        let cover = TaggedFiles.jpegHeaders(width: 4, height: 4)
        try TaggedFiles.write(cover, to: path("cover.jpg"))
        let e = Self.expected
        // eyeD3 writes ID3v2.4, UTF-8: TPE2 (album artist), TRCK 3/12, TPOS 1/2, TDRC, TCON, APIC.
        try TaggedFiles.run(
            "/usr/bin/eyeD3",
            [
                "--quiet", "--to-v2.4", "-t", e.title!, "-a", e.artist!, "-A", e.album!, "-b", e.albumArtist!,
                "-n", "3", "-N", "12", "-d", "1", "-D", "2", "--recording-date", e.date!, "-G", e.genre!,
                "--add-image", "\(path("cover.jpg")):FRONT_COVER", file,
            ])

        let audio = try TagReader.read(path: file)
        #expect(audio.tags == e)
        #expect(audio.codec == "mp3")
        #expect(audio.sampleRate == 44100)
        #expect(audio.channels == 1)
        #expect(abs((audio.duration ?? 0) - 2) < 0.1)
        #expect(audio.hasEmbeddedCover)

        let picture = try #require(try TagReader.picture(path: file))
        #expect(picture.bytes == cover)
        #expect(picture.mimeType == "image/jpeg")
    }

    @Test func mp3ID3v23FromLame() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("lame.mp3")
        let source = path("lame.wav")
        try TaggedFiles.wav(source, seconds: 1)
        let cover = TaggedFiles.png(width: 2, height: 2, rgb: (255, 255, 0))
        try TaggedFiles.write(cover, to: path("cover.png"))
        let e = Self.expected
        // lame writes ID3v2.3 (UTF-16 text, the year in TYER, the picture in APIC).
        try TaggedFiles.run(
            "/usr/bin/lame",
            [
                "--quiet", "--id3v2-only", "--id3v2-utf16", "--tt", e.title!, "--ta", e.artist!, "--tl", e.album!,
                "--ty", "1997", "--tn", "3/12", "--tg", e.genre!, "--tv", "TPE2=\(e.albumArtist!)", "--tv", "TPOS=1/2",
                "--ti", path("cover.png"), source, file,
            ])

        let audio = try TagReader.read(path: file)
        var tags = e
        tags.date = "1997"
        #expect(audio.tags == tags)
        #expect(audio.codec == "mp3")
        #expect(audio.hasEmbeddedCover)
        let picture = try #require(try TagReader.picture(path: file))
        #expect(picture.bytes == cover)
        #expect(picture.mimeType == "image/png")
    }

    @Test func oggVorbisTagsAndPicture() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("tagged.ogg")
        let cover = TaggedFiles.png(width: 2, height: 2, rgb: (0, 128, 0))
        let e = Self.expected
        // A picture with no MIME type: the reader tells PNG from its bytes. Two ARTIST comments
        // come joined with "; ".
        try TaggedFiles.vorbis(
            file, seconds: 1,
            comments: [
                "TITLE=\(e.title!)", "ARTIST=\(e.artist!)", "ARTIST=Hilmar Örn", "ALBUM=\(e.album!)",
                "ALBUMARTIST=\(e.albumArtist!)", "TRACKNUMBER=03", "DISCNUMBER=1", "DATE=\(e.date!)",
                "GENRE=\(e.genre!)",
                "METADATA_BLOCK_PICTURE=\(TaggedFiles.metadataBlockPicture(mimeType: "", bytes: cover))",
            ])

        let audio = try TagReader.read(path: file)
        var tags = e
        tags.artist = "Sigur Rós; Hilmar Örn"
        #expect(audio.tags == tags)
        #expect(audio.codec == "vorbis")
        #expect(audio.sampleRate == 44100)
        #expect(audio.channels == 2)
        #expect(abs((audio.duration ?? 0) - 1) < 0.01)
        #expect(audio.hasEmbeddedCover)

        let picture = try #require(try TagReader.picture(path: file))
        #expect(picture.bytes == cover)
        #expect(picture.mimeType == "image/png")
    }

    @Test func opusTagsAndPicture() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("tagged.opus")
        let cover = TaggedFiles.png(width: 5, height: 3, rgb: (1, 2, 3))
        try TaggedFiles.write(cover, to: path("cover.png"))
        let e = Self.expected
        try TaggedFiles.opus(
            file, seconds: 1, rate: 44100,
            options: [
                "--title", e.title!, "--artist", e.artist!, "--album", e.album!, "--date", e.date!,
                "--genre", e.genre!, "--comment", "ALBUMARTIST=\(e.albumArtist!)", "--comment", "TRACKNUMBER=3/12",
                "--comment", "DISCNUMBER=1/2", "--picture", path("cover.png"),
            ])

        let audio = try TagReader.read(path: file)
        #expect(audio.tags == e)
        #expect(audio.codec == "opus")
        #expect(audio.sampleRate == 48000)  // as Opus decodes, whatever the source's rate
        #expect(audio.channels == 2)
        #expect(abs((audio.duration ?? 0) - 1) < 0.05)
        #expect(audio.hasEmbeddedCover)

        let picture = try #require(try TagReader.picture(path: file))
        #expect(picture.bytes == cover)
        #expect(picture.mimeType == "image/png")
    }

    /// `ffmpeg -metadata` for every tag of `expected`, as its muxers write them (MP4 atoms, APEv2
    /// for WavPack, ASF attributes for WMA).
    static var ffmpegTags: [String] {
        let e = expected
        return [
            "-metadata", "title=\(e.title!)", "-metadata", "artist=\(e.artist!)", "-metadata", "album=\(e.album!)",
            "-metadata", "album_artist=\(e.albumArtist!)", "-metadata", "track=3/12", "-metadata", "disc=1/2",
            "-metadata", "date=\(e.date!)", "-metadata", "genre=\(e.genre!)",
        ]
    }

    @Test func mp4TagsAndCoverPicture() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.wav(path("source.wav"), seconds: 1.5)
        let cover = TaggedFiles.png(width: 3, height: 2, rgb: (10, 200, 10))
        try TaggedFiles.write(cover, to: path("cover.png"))
        let file = path("tagged.m4a")
        try TaggedFiles.run(
            "/usr/bin/ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-i", path("source.wav"), "-i", path("cover.png"), "-map", "0", "-map", "1",
             "-c:a", "aac", "-c:v", "copy", "-disposition:v", "attached_pic"] + Self.ffmpegTags + [file])
        let audio = try TagReader.read(path: file)
        var expected = Self.expected
        expected.date = "1997"  // an MP4's ©day holds what ffmpeg wrote of the date: its year
        #expect(audio.tags.title == expected.title && audio.tags.artist == expected.artist && audio.tags.album == expected.album)
        #expect(audio.tags.albumArtist == expected.albumArtist && audio.tags.genre == expected.genre)
        #expect(audio.tags.track == 3 && audio.tags.disc == 1)
        #expect(audio.tags.date?.hasPrefix("1997") == true, "\(String(describing: audio.tags.date))")
        #expect(audio.sampleRate == 44100 && audio.channels == 2)
        #expect(abs((audio.duration ?? 0) - 1.5) < 0.03)
        #expect(audio.hasEmbeddedCover)
        let picture = try #require(try TagReader.picture(path: file))
        #expect(picture.bytes == cover)
        #expect(picture.mimeType == "image/png")
    }

    /// (TTA is left out: ffmpeg's TTA muxer writes an APEv2 tag, which TagLib 1.13 does not read
    /// in a TrueAudio file; such files are listed by their names.)
    @Test(arguments: [("wavpack", "wv"), ("alac", "m4a"), ("wmav2", "wma")])
    func tagsOfTheFormatsFFmpegDecodes(codec: String, suffix: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.wav(path("source.wav"), seconds: 1)
        let file = path("tagged.\(suffix)")
        try TaggedFiles.run(
            "/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", path("source.wav"), "-c:a", codec] + Self.ffmpegTags + [file])
        let audio = try TagReader.read(path: file)
        #expect(audio.tags.title == Self.expected.title, "\(suffix): \(audio.tags)")
        #expect(audio.tags.artist == Self.expected.artist, "\(suffix): \(audio.tags)")
        #expect(audio.tags.album == Self.expected.album, "\(suffix): \(audio.tags)")
        #expect(audio.tags.track == 3, "\(suffix): \(audio.tags)")
        #expect(abs((audio.duration ?? 0) - 1) < 0.1, "\(suffix): \(String(describing: audio.duration))")
    }

    @Test func filesWithoutTags() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.wav(path("plain.wav"), seconds: 0.5, rate: 22050, channels: 1)
        try TaggedFiles.flac(path("plain.flac"), seconds: 0.5)
        try TaggedFiles.mp3(path("plain.mp3"), seconds: 0.5)
        try TaggedFiles.vorbis(path("plain.ogg"), seconds: 0.5)
        try TaggedFiles.opus(path("plain.opus"), seconds: 0.5)

        let wav = try TagReader.read(path: path("plain.wav"))
        #expect(wav == ScannedAudio(tags: TrackTags(), codec: "wav", sampleRate: 22050, channels: 1, duration: 0.5, hasEmbeddedCover: false))
        for (name, codec) in [("plain.flac", "flac"), ("plain.mp3", "mp3"), ("plain.ogg", "vorbis"), ("plain.opus", "opus")] {
            let audio = try TagReader.read(path: path(name))
            #expect(audio.tags == TrackTags(), "\(name)")
            #expect(audio.codec == codec)
            #expect(!audio.hasEmbeddedCover, "\(name)")
            #expect(try TagReader.picture(path: path(name)) == nil, "\(name)")
        }
    }

    @Test func emptyAndOddValues() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("odd.flac")
        try TaggedFiles.flac(file, seconds: 0.2)
        try TaggedFiles.run(
            "/usr/bin/metaflac",
            [
                "--set-tag=TITLE=", "--set-tag=ARTIST=   ", "--set-tag=ARTIST=", "--set-tag=ALBUM= Spaced ",
                "--set-tag=TRACKNUMBER=A1", "--set-tag=DISCNUMBER= 2 of 3", "--set-tag=DATE=1997",
                "--set-tag=ALBUM ARTIST=Named With A Space", file,
            ])
        let tags = try TagReader.read(path: file).tags
        #expect(
            tags
                == TrackTags(
                    title: nil, artist: nil, album: " Spaced ", albumArtist: "Named With A Space", track: nil, disc: 2,
                    date: "1997", genre: nil))
    }

    @Test func flacInAnMP3sName() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("really-flac.mp3")
        try TaggedFiles.flac(file, seconds: 0.2)
        try TaggedFiles.run("/usr/bin/metaflac", ["--set-tag=TITLE=Misnamed", file])
        let audio = try TagReader.read(path: file)
        #expect(audio.codec == "flac")
        #expect(audio.tags.title == "Misnamed")
    }

    // MARK: - Errors

    @Test func missingFile() {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("nowhere/missing.flac")
        for error in [readError(file), pictureError(file)] {
            #expect(error?.reason == .notFound)
            #expect(error?.message.contains(file) == true)
        }
    }

    @Test func aDirectory() {
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = readError(directory.path)
        #expect(error?.reason == .ioError)
        #expect(error?.message.contains(directory.path) == true)
        #expect(error?.message.contains("directory") == true)
    }

    @Test func notAudio() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.write(Array("A shopping list, not a song.\n".utf8), to: path("notes.txt"))
        try TaggedFiles.write(TaggedFiles.png(width: 2, height: 2, rgb: (9, 9, 9)), to: path("cover.png"))
        for name in ["notes.txt", "cover.png"] {
            for error in [readError(path(name)), pictureError(path(name))] {
                #expect(error?.reason == .unsupportedFormat, "\(name)")
                #expect(error?.message.contains(path(name)) == true)
            }
        }
    }

    @Test func brokenFiles() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        // A FLAC file cut inside its STREAMINFO block.
        try TaggedFiles.flac(path("whole.flac"), seconds: 0.5)
        let whole = try Data(contentsOf: URL(fileURLWithPath: path("whole.flac")))
        try whole.prefix(20).write(to: URL(fileURLWithPath: path("cut.flac")))
        // Text where an MP3, an Ogg Vorbis file and a WAV should be.
        let text = Array(String(repeating: "Not audio at all. ", count: 200).utf8)
        for name in ["text.mp3", "text.ogg", "text.wav"] { try TaggedFiles.write(text, to: path(name)) }
        // A WAV whose header says RIFF/WAVE but has no fmt chunk.
        try TaggedFiles.write(Array("RIFF".utf8) + [4, 0, 0, 0] + Array("WAVE".utf8), to: path("headless.wav"))
        try TaggedFiles.write([], to: path("empty.flac"))

        for name in ["cut.flac", "text.mp3", "text.ogg", "text.wav", "headless.wav", "empty.flac"] {
            let error = readError(path(name))
            #expect(error?.reason == .corruptFile, "\(name): \(String(describing: error))")
            #expect(error?.message.contains(path(name)) == true, "\(name)")
            #expect(pictureError(path(name))?.reason == .corruptFile, "\(name)")
        }
        #expect(readError(path("cut.flac"))?.message == "corrupt or truncated FLAC file: \(path("cut.flac")) (its headers cannot be read)")
        #expect(readError(path("empty.flac"))?.message == "empty file: \(path("empty.flac"))")
    }

    // MARK: - Threads

    @Test func manyThreadsAtOnce() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let names = ["a.flac", "b.mp3", "c.ogg", "d.opus"]
        try TaggedFiles.flac(path(names[0]), seconds: 0.3)
        try TaggedFiles.mp3(path(names[1]), seconds: 0.3)
        try TaggedFiles.vorbis(path(names[2]), seconds: 0.3, comments: ["TITLE=Ünïcode", "ARTIST=A", "ARTIST=B"])
        try TaggedFiles.opus(path(names[3]), seconds: 0.3, options: ["--title", "Opus 日本"])
        try TaggedFiles.run("/usr/bin/metaflac", ["--set-tag=TITLE=Flac", "--set-tag=TRACKNUMBER=9", path(names[0])])
        try TaggedFiles.run("/usr/bin/eyeD3", ["--quiet", "-t", "Mp3", "-n", "4", path(names[1])])
        let files = names.map(path)
        let expected = try files.map { try TagReader.read(path: $0) }

        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 400) { index in
            let file = files[index % files.count]
            do {
                let audio = try TagReader.read(path: file)
                _ = try TagReader.picture(path: file)
                results.add(audio == expected[index % files.count])
            } catch {
                results.add(false)
            }
        }
        #expect(results.count == 400)
        #expect(results.wrong == 0)
    }

    // MARK: - Values

    @Test func leadingNumbers() {
        #expect(TagReader.leadingNumber("3/12") == 3)
        #expect(TagReader.leadingNumber("03") == 3)
        #expect(TagReader.leadingNumber(" 7 ") == 7)
        #expect(TagReader.leadingNumber("12 of 14") == 12)
        #expect(TagReader.leadingNumber("A1") == nil)
        #expect(TagReader.leadingNumber("/12") == nil)
        #expect(TagReader.leadingNumber("") == nil)
        #expect(TagReader.leadingNumber(nil) == nil)
        #expect(TagReader.leadingNumber("99999999999999999999") == nil)
    }

    @Test func mimeTypes() {
        let png = TaggedFiles.png(width: 1, height: 1, rgb: (0, 0, 0))
        #expect(TagReader.mimeType(tagged: "image/png", bytes: []) == "image/png")
        #expect(TagReader.mimeType(tagged: "image/jpg", bytes: []) == "image/jpeg")
        #expect(TagReader.mimeType(tagged: "", bytes: png) == "image/png")
        #expect(TagReader.mimeType(tagged: nil, bytes: [0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        #expect(TagReader.mimeType(tagged: "png", bytes: [1, 2, 3]) == "image/png")
        #expect(TagReader.mimeType(tagged: "image/", bytes: Array("GIF89a".utf8)) == "image/gif")
        #expect(TagReader.mimeType(tagged: nil, bytes: [1, 2, 3]) == "application/octet-stream")
    }

    // MARK: -

    private func readError(_ file: String) -> ReelError? {
        do {
            _ = try TagReader.read(path: file)
            return nil
        } catch {
            return error
        }
    }

    private func pictureError(_ file: String) -> ReelError? {
        do {
            _ = try TagReader.picture(path: file)
            return nil
        } catch {
            return error
        }
    }
}

private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var seen = 0
    private var mismatches = 0

    func add(_ right: Bool) {
        lock.lock()
        defer { lock.unlock() }
        seen += 1
        if !right { mismatches += 1 }
    }

    var count: Int { lock.withLock { seen } }
    var wrong: Int { lock.withLock { mismatches } }
}
