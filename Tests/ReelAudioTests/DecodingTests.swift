import Foundation
import ReelAudio
import ReelModel
import Testing

/// Every supported format decodes through the real libsndfile / libmpg123.
@Suite struct DecodingTests {
    let directory = TestAudio.temporaryDirectory()

    func decodeAll(_ reader: AudioFileReader) throws -> [Int16] {
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096 * reader.pcmFormat.channels)
        while true {
            let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            if frames == 0 { break }
            samples.append(contentsOf: chunk[0..<(frames * reader.pcmFormat.channels)])
        }
        return samples
    }

    @Test(arguments: ["wav", "flac"])
    func losslessFormatsDecodeSampleExact(codec: String) throws {
        let path = directory.appendingPathComponent("tone.\(codec)").path
        let written = try TestAudio.writeTone(to: path, codec: codec, seconds: 1.5)
        let reader = try AudioFileOpener.open(path: path)
        #expect(reader.format == AudioFormat(codec: codec, sampleRate: 44100, channels: 2))
        #expect(reader.frameCount == 66150)
        let decoded = try decodeAll(reader)
        let same = decoded == written
        #expect(decoded.count == written.count)
        #expect(same, "decoded samples differ from the written ones")
    }

    @Test(arguments: [("ogg", "vorbis", 44100), ("opus", "opus", 48000), ("mp3", "mp3", 44100)])
    func lossyFormatsDecodeWithTheirLength(file: String, codec: String, rate: Int) throws {
        let path = directory.appendingPathComponent("tone.\(file)").path
        try TestAudio.writeTone(to: path, codec: file, seconds: 2, rate: rate)
        let reader = try AudioFileOpener.open(path: path)
        #expect(reader.format.codec == codec)
        #expect(reader.format.sampleRate == rate)
        let decoded = try decodeAll(reader)
        let seconds = Double(decoded.count / 2) / Double(rate)
        #expect(abs(seconds - 2) < 0.06, "decoded \(seconds) s")
        #expect(abs((reader.duration ?? 0) - seconds) < 0.001)
        // The left channel is still a 440 Hz tone: count rising zero crossings in the middle second.
        let left = stride(from: 0, to: decoded.count, by: 2).map { decoded[$0] }
        let middle = left[(rate / 2)..<(rate / 2 + rate)]
        let crossings = zip(middle, middle.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect(abs(crossings - 440) <= 2, "\(crossings) crossings")
    }

    @Test func vbrMP3WithoutXingHeaderPlaysItsWholeLength() throws {
        let path = directory.appendingPathComponent("noxing.mp3").path
        try TestAudio.writeTone(to: path, codec: "mp3-noxing", seconds: 10)
        let reader = try AudioFileOpener.open(path: path)
        let decoded = try decodeAll(reader)
        let seconds = Double(decoded.count / 2) / 44100
        #expect(abs(seconds - 10) < 0.1, "decoded \(seconds) s")
        #expect(waitForFinalLength(reader))
        #expect(abs((reader.duration ?? 0) - 10) < 0.1)
    }

    @Test(arguments: ["wav", "flac", "opus", "mp3"])
    func seekIsSampleExact(codec: String) throws {
        let path = directory.appendingPathComponent("seek.\(codec)").path
        let rate = codec == "opus" ? 48000 : 44100
        try TestAudio.writeTone(to: path, codec: codec, seconds: 3, rate: rate)
        let straight = try decodeAll(try AudioFileOpener.open(path: path))
        let reader = try AudioFileOpener.open(path: path)
        let frame = 1 * rate + 1234
        try reader.seek(to: Int64(frame))
        let afterSeek = try decodeAll(reader)
        // The position is exact in every format: what remains is the rest of the file.
        #expect(afterSeek.count == straight.count - frame * 2)
        // Opus decodes in floating point: a seek may differ from a straight decode by a rounding
        // step. MP3 is exact (MP3SeekTests tries harder cases).
        let tolerance = codec == "opus" ? 2 : 0
        let expected = straight[(frame * 2)..<(frame * 2 + 2000)]
        let worst = zip(afterSeek[0..<2000], expected).map { abs(Int($0) - Int($1)) }.max() ?? Int.max
        #expect(worst <= tolerance, "a sample after the seek differs by \(worst)")
    }

    @Test func missingFileIsNotFound() {
        #expect(throws: ReelError.self) { try AudioFileOpener.open(path: "/nonexistent/a.flac") }
        do {
            _ = try AudioFileOpener.open(path: "/nonexistent/a.flac")
        } catch let error as ReelError {
            #expect(error.reason == .notFound)
            #expect(error.message.contains("/nonexistent/a.flac"))
        } catch {}
    }

    @Test func textFileIsUnsupported() throws {
        let path = directory.appendingPathComponent("notes.txt").path
        try "hello, not audio\n".write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try AudioFileOpener.open(path: path)
            Issue.record("a text file opened as audio")
        } catch let error as ReelError {
            #expect(error.reason == .unsupportedFormat)
        }
    }

    @Test func directoryIsRefused() {
        do {
            _ = try AudioFileOpener.open(path: directory.path)
            Issue.record("a directory opened as audio")
        } catch let error as ReelError {
            #expect(error.reason == .unsupportedFormat)
            #expect(error.message.contains("not a regular file"))
        } catch {}
    }
}
