// ReplayGain tags read from each tag family, written by the tools people use: metaflac's own
// analysis (Vorbis comments), eyeD3 (ID3v2 TXXX), opusenc (Opus R128_*), ffmpeg (WavPack's APE
// tag), mutagen (an MP3's APE tag, MP4 freeform atoms).

import Foundation
import ReelModel
import Testing

@testable import ReelTags

@Suite struct ReplayGainTagTests {
    let directory = TaggedFiles.temporaryDirectory()
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// metaflac --show-tag's value of `name`.
    func metaflacTag(_ name: String, of file: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/metaflac")
        process.arguments = ["--show-tag=\(name)", file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.split(separator: "\n").first?.split(separator: "=", maxSplits: 1).last ?? "")
    }

    @Test func flacAnalysedByMetaflac() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.flac(path("a.flac"), seconds: 1)
        try TaggedFiles.flac(path("b.flac"), seconds: 2)
        try TaggedFiles.run("/usr/bin/metaflac", ["--add-replay-gain", path("a.flac"), path("b.flac")])
        let info = try TagReader.read(path: path("a.flac")).replayGain
        let track = try #require(info.track)
        let album = try #require(info.album)
        #expect(track.gain == ReplayGainInfo.parseGain(try metaflacTag("REPLAYGAIN_TRACK_GAIN", of: path("a.flac"))))
        #expect(track.peak == ReplayGainInfo.parsePeak(try metaflacTag("REPLAYGAIN_TRACK_PEAK", of: path("a.flac"))))
        #expect(album.gain == ReplayGainInfo.parseGain(try metaflacTag("REPLAYGAIN_ALBUM_GAIN", of: path("a.flac"))))
        // The sine is at half scale: its peak is about 0.5.
        #expect(abs((track.peak ?? 0) - 0.5) < 0.01)
    }

    @Test func lowerCaseVorbisCommentsAndNoPeak() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.vorbis(
            path("a.ogg"), comments: ["replaygain_track_gain=+3.25 dB", "replaygain_album_gain=-1.5 dB", "replaygain_album_peak=1.2"])
        let info = try TagReader.read(path: path("a.ogg")).replayGain
        #expect(info.track == ReplayGainValue(gain: 3.25, peak: nil))
        #expect(info.album == ReplayGainValue(gain: -1.5, peak: 1.2))
    }

    @Test func mp3ID3v2UserTextFrames() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("a.mp3")
        try TaggedFiles.mp3(file)
        try TaggedFiles.run(
            "/usr/bin/eyeD3",
            ["--quiet", "--user-text-frame", "REPLAYGAIN_TRACK_GAIN:-7.12 dB", "--user-text-frame", "REPLAYGAIN_TRACK_PEAK:0.912",
             "--user-text-frame", "replaygain_album_gain:-8.00 dB", "--user-text-frame", "replaygain_album_peak:0.999", file])
        let info = try TagReader.read(path: file).replayGain
        #expect(info.track == ReplayGainValue(gain: -7.12, peak: 0.912))
        #expect(info.album == ReplayGainValue(gain: -8, peak: 0.999))
    }

    @Test func mp3APETagBesideID3v2() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("a.mp3")
        try TaggedFiles.mp3(file)
        try TaggedFiles.run("/usr/bin/eyeD3", ["--quiet", "--title", "Only a title in ID3v2", file])
        try mutagen(
            """
            import mutagen.apev2, sys
            tag = mutagen.apev2.APEv2()
            tag['REPLAYGAIN_TRACK_GAIN'] = '-4.40 dB'
            tag['REPLAYGAIN_TRACK_PEAK'] = '0.700000'
            tag.save(sys.argv[1])
            """, file)
        let audio = try TagReader.read(path: file)
        #expect(audio.tags.title == "Only a title in ID3v2")
        #expect(audio.replayGain.track == ReplayGainValue(gain: -4.4, peak: 0.7))
        #expect(audio.replayGain.album == nil)
    }

    @Test func wavPackAPETagFromFFmpeg() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.wav(path("source.wav"))
        let file = path("a.wv")
        try TaggedFiles.run(
            "/usr/bin/ffmpeg",
            ["-hide_banner", "-loglevel", "error", "-i", path("source.wav"), "-c:a", "wavpack",
             "-metadata", "REPLAYGAIN_ALBUM_GAIN=2.00 dB", "-metadata", "REPLAYGAIN_ALBUM_PEAK=0.25", file])
        let info = try TagReader.read(path: file).replayGain
        #expect(info.album == ReplayGainValue(gain: 2, peak: 0.25))
        #expect(info.track == nil)
    }

    @Test func mp4FreeformAtoms() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.wav(path("source.wav"))
        let file = path("a.m4a")
        try TaggedFiles.run(
            "/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", path("source.wav"), "-c:a", "aac", file])
        try mutagen(
            """
            import mutagen.mp4, sys
            f = mutagen.mp4.MP4(sys.argv[1])
            f['----:com.apple.iTunes:replaygain_track_gain'] = [b'-9.87 dB']
            f['----:com.apple.iTunes:replaygain_track_peak'] = [b'0.950000']
            f['----:com.apple.iTunes:REPLAYGAIN_ALBUM_GAIN'] = [b'-10.50 dB']
            f.save()
            """, file)
        let info = try TagReader.read(path: file).replayGain
        #expect(info.track == ReplayGainValue(gain: -9.87, peak: 0.95))
        #expect(info.album == ReplayGainValue(gain: -10.5, peak: nil))
    }

    /// Opus: R128 gains are Q7.8 dB to −23 LUFS; Reel shows them to −18 LUFS (5 dB more).
    @Test func opusR128Gains() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("a.opus")
        try TaggedFiles.opus(file, options: ["--comment", "R128_TRACK_GAIN=-1280", "--comment", "R128_ALBUM_GAIN=384"])
        let info = try TagReader.read(path: file).replayGain
        #expect(info.track == ReplayGainValue(gain: -5 + 5, peak: nil))
        #expect(info.album == ReplayGainValue(gain: 1.5 + 5, peak: nil))
    }

    /// REPLAYGAIN_* wins over R128_* when a file has both; garbage is no gain.
    @Test func replayGainTagsBeforeR128AndGarbageIgnored() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = path("a.opus")
        try TaggedFiles.opus(
            file, options: ["--comment", "REPLAYGAIN_TRACK_GAIN=-2.00 dB", "--comment", "R128_TRACK_GAIN=-1280",
                            "--comment", "REPLAYGAIN_ALBUM_GAIN=loud", "--comment", "R128_ALBUM_GAIN=x"])
        let info = try TagReader.read(path: file).replayGain
        #expect(info.track == ReplayGainValue(gain: -2, peak: nil))
        #expect(info.album == nil)
    }

    @Test func untaggedFileHasNoGain() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try TaggedFiles.flac(path("a.flac"))
        #expect(try TagReader.read(path: path("a.flac")).replayGain == .none)
    }

    func mutagen(_ script: String, _ file: String) throws {
        try TaggedFiles.run("/usr/bin/python3", ["-c", script, file])
    }
}
