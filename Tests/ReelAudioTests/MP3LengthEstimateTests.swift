import Foundation
import ReelModel
import Testing

@testable import ReelAudio

/// The length an MP3 without a Xing/Info tag opens with, before its frames are counted: from the
/// bytes of its stream (tags left out) and the density of frames in windows spread over it.
@Suite struct MP3LengthEstimateTests {
    let directory = TestAudio.temporaryDirectory()

    /// The estimate and the exact count (a scan of every frame) of the file at `path`.
    func estimateAndCount(_ path: String) throws -> (estimate: Int64, exact: Int64) {
        let layout = try #require(MP3Layout.read(path: path))
        let estimate = try #require(MP3LengthEstimate.read(path: path, layout: layout).estimate?.frames)
        let exact = try #require(try Mpg123Reader(path: path, lengthScan: .atOpen).frameCount)
        return (estimate, exact)
    }

    /// MPEG-1, -2 and -2.5 at a constant bitrate: exact to a frame, padding or not.
    @Test(arguments: [(44100, ["-b", "128"]), (44100, ["-b", "320"]), (22050, ["-b", "64"]), (11025, ["-b", "32"])])
    func constantBitrateIsExactToAFrame(rate: Int, arguments: [String]) throws {
        let path = directory.appendingPathComponent("cbr-\(rate)-\(arguments[1]).mp3").path
        let samples = TestAudio.toneSamples(seconds: 40, rate: rate, channels: 2)
        try TestAudio.encodeMP3(samples, to: path, rate: rate, lameArguments: arguments + ["-t"])
        let (estimate, exact) = try estimateAndCount(path)
        let perFrame: Int64 = rate > 32000 ? 1152 : 576
        #expect(abs(estimate - exact) <= perFrame, "estimate \(estimate), exact \(exact) frames")
    }

    /// ID3v2 before the stream (a cover of 300 kB), APEv2, Lyrics3 and ID3v1 after it: the
    /// estimate is that of the stream alone.
    @Test func tagsAtBothEndsAreLeftOut() throws {
        let plain = directory.appendingPathComponent("plain.mp3").path
        try TestAudio.encodeMP3(
            TestAudio.toneSamples(seconds: 40, rate: 44100, channels: 2), to: plain, lameArguments: ["-b", "128", "-t"])
        let audio = try Data(contentsOf: URL(fileURLWithPath: plain))
        func syncsafe(_ n: Int) -> [UInt8] { [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)] }
        let id3v2 = Array("ID3".utf8) + [4, 0, 0] + syncsafe(300_000) + [UInt8](repeating: 0, count: 300_000)
        let tagged = directory.appendingPathComponent("tagged.mp3").path
        try (Data(id3v2) + audio + Data(Self.apeTag(items: 3000) + Self.lyrics3(text: "words") + Self.id3v1()))
            .write(to: URL(fileURLWithPath: tagged))
        let (plainEstimate, exact) = try estimateAndCount(plain)
        let (taggedEstimate, taggedExact) = try estimateAndCount(tagged)
        #expect(taggedExact == exact)
        #expect(abs(taggedEstimate - plainEstimate) <= 1152, "with tags \(taggedEstimate), without \(plainEstimate)")
        #expect(abs(taggedEstimate - exact) <= 1152)
    }

    /// Varied material (sections of silence, tones, chords and noise at many levels, whose
    /// bitrates are up to 10× apart: harder than music), VBR, starting with silence, whose first
    /// frame is the smallest there is: the estimate stays within 10 % (2.5 % RMS over 30 such
    /// files) where the first frame's bitrate over the file's size (what MPD and libmpg123 do)
    /// is off several times over.
    @Test(arguments: [(UInt64(1), ["-V", "4"]), (UInt64(2), ["-V", "0"]), (UInt64(3), ["-V", "7"])])
    func variableBitrateIsWithinAFewPercent(seed: UInt64, arguments: [String]) throws {
        let path = directory.appendingPathComponent("vbr-\(seed).mp3").path
        let samples = [Int16](repeating: 0, count: 44100 * 2) + TestAudio.variedSamples(seconds: 180, seed: seed)
        try TestAudio.encodeMP3(samples, to: path, lameArguments: arguments + ["-t"])
        let (estimate, exact) = try estimateAndCount(path)
        let error = Double(estimate - exact) / Double(exact)
        let layout = try #require(MP3Layout.read(path: path))
        let firstFrame = Double(layout.fileSize) / layout.firstFrame.nominalLength * 1152
        let firstFrameError = (firstFrame - Double(exact)) / Double(exact)
        print("MP3 estimate, seed \(seed) lame \(arguments.joined(separator: " ")): exact \(exact) frames, estimate \(estimate) (\(String(format: "%+.2f", error * 100)) %), first frame \(Int(firstFrame)) (\(String(format: "%+.1f", firstFrameError * 100)) %)")
        #expect(abs(error) < 0.1, "estimate \(estimate), exact \(exact): \(error * 100) %")
        #expect(abs(firstFrameError) > 3 * abs(error))
    }

    // MARK: The parts, on bytes made here

    /// A frame of MPEG-1 Layer III, 128 kb/s, 44.1 kHz: 417 bytes (418 with padding).
    static func frame(padding: Bool = false) -> [UInt8] {
        [0xFF, 0xFB, padding ? 0x92 : 0x90, 0x00] + [UInt8](repeating: 0x55, count: padding ? 414 : 413)
    }

    @Test func framesAreCountedAfterJunkAndNotFoundInNoise() throws {
        let first = try #require(MP3FrameHeader(Self.frame(), at: 0))
        let frames = (0..<20).flatMap { Self.frame(padding: $0 % 3 == 0) }
        let junk = [UInt8](repeating: 0xFF, count: 37) + [0x12, 0xFF, 0xFB, 0x90]  // a lone header, no chain
        let found = MP3LengthEstimate.sample(junk + frames, like: first)
        #expect(found.frames == 20)
        #expect(abs(found.bytes - 20 * first.nominalLength) < 1e-9)
        // Frames are taken by where they start: one that ends past the window counts.
        let window = junk.count + 10 * 417 + 5
        #expect(MP3LengthEstimate.sample(junk + frames, starts: window, like: first).frames == 11)
        // Junk between two runs: both are counted.
        #expect(MP3LengthEstimate.sample(frames + junk + frames, like: first).frames == 40)
        // Another rate is another stream.
        let other = try #require(MP3FrameHeader([0xFF, 0xFB, 0x94, 0x00], at: 0))  // 48 kHz
        #expect(MP3LengthEstimate.sample(frames, like: other).frames == 0)
        var generator = SystemRandomNumberGenerator()
        var noise = [UInt8](repeating: 0, count: 1 << 16)
        for index in noise.indices { noise[index] = UInt8.random(in: 0...255, using: &generator) }
        #expect(MP3LengthEstimate.sample(noise, like: first).frames < 3)
    }

    @Test func theStreamEndsBeforeTheTagsAtTheEndInAnyOrder() {
        let audio = (0..<10).flatMap { _ in Self.frame() }
        let tails: [[UInt8]] = [
            [], Self.id3v1(), Self.apeTag(items: 100), Self.apeTag(items: 100, header: false),
            Self.apeTag(items: 50) + Self.id3v1(), Self.lyrics3(text: "la la") + Self.id3v1(),
            Self.apeTag(items: 20) + Self.lyrics3(text: "la") + Self.id3v1(),
            Self.lyrics3(text: "la") + Self.apeTag(items: 20) + Self.id3v1(), Self.id3v1Extended() + Self.id3v1(),
        ]
        for tail in tails {
            let bytes = audio + tail
            let end = MP3LengthEstimate.audioEnd(fileSize: Int64(bytes.count), start: 0) { offset, count in
                Array(bytes[Int(offset)..<min(Int(offset) + count, bytes.count)])
            }
            #expect(end == Int64(audio.count), "tail of \(tail.count) bytes")
        }
        // A size that runs past the start of the stream is not a tag.
        var bogus = Self.apeTag(items: 10)
        bogus[bogus.count - 20] = 0xFF
        bogus[bogus.count - 19] = 0xFF
        let bytes = audio + bogus
        let end = MP3LengthEstimate.audioEnd(fileSize: Int64(bytes.count), start: 0) { offset, count in
            Array(bytes[Int(offset)..<min(Int(offset) + count, bytes.count)])
        }
        #expect(end == Int64(bytes.count))
    }

    static func id3v1() -> [UInt8] { Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125) }

    static func id3v1Extended() -> [UInt8] { Array("TAG+".utf8) + [UInt8](repeating: 0x20, count: 223) }

    /// An APEv2 tag with `items` bytes of items, its header (unless told) and footer.
    static func apeTag(items: Int, header: Bool = true) -> [UInt8] {
        func block(isHeader: Bool) -> [UInt8] {
            func le(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
            let flags: UInt32 = (header ? 0x8000_0000 : 0) | (isHeader ? 0x2000_0000 : 0)
            return Array("APETAGEX".utf8) + le(2000) + le(UInt32(items + 32)) + le(1) + le(flags) + [UInt8](repeating: 0, count: 8)
        }
        return (header ? block(isHeader: true) : []) + [UInt8](repeating: 0x41, count: items) + block(isHeader: false)
    }

    /// A Lyrics3 v2 tag: "LYRICSBEGIN", a field, the six-digit size and "LYRICS200".
    static func lyrics3(text: String) -> [UInt8] {
        let body = Array("LYRICSBEGIN".utf8) + Array("LYR".utf8) + Array(String(format: "%05d", text.utf8.count).utf8) + Array(text.utf8)
        return body + Array(String(format: "%06d", body.count).utf8) + Array("LYRICS200".utf8)
    }
}
