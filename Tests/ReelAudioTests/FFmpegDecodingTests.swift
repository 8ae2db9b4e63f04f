// FFmpeg's decoders through the codec registry: lossless formats byte-exact, AAC exactly the
// length its container declares, seeks sample-exact, bad files refused with a reason.

import Foundation
import ReelAudio
import ReelModel
import Testing

@Suite struct FFmpegDecodingTests {
    /// A 16-bit stereo source no codec can guess: a rising sweep with noise, `seconds` long.
    static func source(in directory: URL, seconds: Double = 3, rate: Int = 44100, bits: Int = 16) throws -> String {
        let path = directory.appendingPathComponent("source-\(bits).wav").path
        try TestAudio.run(
            "/usr/bin/sox",
            ["-n", "-r", "\(rate)", "-c", "2", "-b", "\(bits)", path, "synth", "\(seconds)", "sine", "100-8000", "whitenoise",
             "remix", "1,2", "1", "vol", "0.4"])
        return path
    }

    static func ffmpeg(_ arguments: [String]) throws {
        try TestAudio.run("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + arguments)
    }

    /// Every frame of a file, as the reader puts them out (16- or 32-bit), widened to Int32.
    static func decode(_ path: String) throws -> (format: PCMFormat, samples: [Int32], reader: AudioFileReader) {
        let reader = try AudioFileOpener.open(path: path)
        return (reader.pcmFormat, try samples(reader), reader)
    }

    static func samples(_ reader: AudioFileReader, frames limit: Int = .max) throws -> [Int32] {
        let format = reader.pcmFormat
        var all: [Int32] = []
        let chunk = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk * format.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        while all.count / format.channels < limit {
            let frames = try reader.read(into: buffer, frames: min(chunk, limit - all.count / format.channels))
            if frames == 0 { break }
            let count = frames * format.channels
            switch format.sample {
            case .s16: all += UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: Int16.self), count: count).map(Int32.init)
            case .s32: all += UnsafeBufferPointer(start: buffer.assumingMemoryBound(to: Int32.self), count: count)
            }
        }
        return all
    }

    /// Where `text` first occurs in `bytes` at or after `start`.
    static func offset(of text: String, in bytes: [UInt8], from start: Int) -> Int? {
        let marker = Array(text.utf8)
        guard bytes.count >= marker.count, start <= bytes.count - marker.count else { return nil }
        return (start...(bytes.count - marker.count)).first { Array(bytes[$0..<($0 + marker.count)]) == marker }
    }

    static func ffprobe(_ path: String, _ entry: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        process.arguments = ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=\(entry)", "-of", "default=nw=1:nk=1", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func everyFFmpegEntryOfTheRegistryIsADecoderOfTheInstalledFFmpeg() throws {
        for codec in CodecRegistry.codecs {
            guard case .ffmpeg(let names) = codec.decoder else { continue }
            #expect(names.allSatisfy { FFmpegReader.hasDecoder($0) }, "\(codec.name): not all of \(names) are in the installed FFmpeg")
        }
    }

    @Test(arguments: [("alac", "m4a", 16), ("wavpack", "wv", 16), ("tta", "tta", 16), ("alac", "m4a", 24), ("wavpack", "wv", 24)])
    func losslessFormatsDecodeByteExact(codec: String, suffix: String, bits: Int) throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory, bits: bits)
        let path = directory.appendingPathComponent("encoded-\(bits).\(suffix)").path
        try Self.ffmpeg(["-i", source, "-c:a", codec] + (codec == "alac" && bits == 24 ? ["-sample_fmt", "s32p"] : []) + [path])
        let expected = try Self.decode(source)
        let decoded = try Self.decode(path)
        #expect(decoded.reader.format.codec == codec)
        #expect(decoded.format == expected.format, "\(decoded.format) vs the source's \(expected.format)")
        #expect(decoded.reader.frameCount == Int64(3 * 44100))
        #expect(decoded.samples.count == expected.samples.count)
        #expect(decoded.samples == expected.samples, "the decoded samples differ from the source's")
    }

    @Test(arguments: [("alac", "m4a"), ("wavpack", "wv"), ("tta", "tta")])
    func aSeekInALosslessFileLandsOnTheSample(codec: String, suffix: String) throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory)
        let path = directory.appendingPathComponent("seek.\(suffix)").path
        try Self.ffmpeg(["-i", source, "-c:a", codec, path])
        let expected = try Self.decode(source).samples
        let reader = try AudioFileOpener.open(path: path)
        for frame in [0, 1, 4095, 4096, 50_000, 99_999, 132_299] as [Int64] {
            try reader.seek(to: frame)
            let got = try Self.samples(reader, frames: 1000)
            let start = Int(frame) * 2
            let want = Array(expected[start..<min(start + 2000, expected.count)])
            #expect(got == want, "\(codec): a seek to \(frame) does not land on that sample")
        }
    }

    @Test func anAACFileIsExactlyAsLongAsItsContainerSaysAndMatchesFFmpegsOwnDecode() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory)
        let path = directory.appendingPathComponent("three-seconds.m4a").path
        try Self.ffmpeg(["-i", source, "-c:a", "aac", "-b:a", "160k", path])
        let declared = try #require(Int(try Self.ffprobe(path, "duration_ts")))
        #expect(declared == 132_300)
        let decoded = try Self.decode(path)
        #expect(decoded.reader.format.codec == "aac")
        #expect(decoded.format.sample == .s16)
        #expect(decoded.reader.frameCount == Int64(declared))
        #expect(decoded.samples.count == declared * 2, "\(decoded.samples.count / 2) frames, the container says \(declared)")
        // FFmpeg's own decode drops the priming too (and keeps the padding, after these frames).
        let raw = directory.appendingPathComponent("ffmpeg.raw").path
        try Self.ffmpeg(["-i", path, "-f", "s16le", "-acodec", "pcm_s16le", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        let theirs = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(theirs.count >= decoded.samples.count)
        var worst: Int32 = 0
        for index in decoded.samples.indices { worst = max(worst, abs(decoded.samples[index] - Int32(theirs[index]))) }
        #expect(worst <= 1, "samples differ from FFmpeg's own decode by up to \(worst)")
    }

    @Test func aLossyFilesFloatSamplesBecome16BitExactlyAsFFmpegsOwnConversionClippingIncluded() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Full scale with noise: AAC's decoder overshoots ±1.0 here and there, so the rounding
        // and the clipping to 16 bits both show.
        let loud = directory.appendingPathComponent("loud.wav").path
        try TestAudio.run(
            "/usr/bin/sox",
            ["-n", "-r", "44100", "-c", "2", "-b", "16", loud, "synth", "2", "sine", "100-8000", "whitenoise", "remix", "1,2", "1",
             "vol", "0.99"])
        let path = directory.appendingPathComponent("loud.m4a").path
        try Self.ffmpeg(["-i", loud, "-c:a", "aac", "-b:a", "128k", path])
        let decoded = try Self.decode(path)
        #expect(decoded.format.sample == .s16)
        // libswresample's float to 16 bits: lrintf (to nearest, ties to even), then clipped.
        let raw = directory.appendingPathComponent("ffmpeg.raw").path
        try Self.ffmpeg(["-i", path, "-f", "s16le", "-acodec", "pcm_s16le", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        let theirs = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }.map { Int32($0) }
        #expect(theirs.count >= decoded.samples.count)
        let clipped = decoded.samples.filter { $0 == Int32(Int16.max) || $0 == Int32(Int16.min) }.count
        #expect(clipped > 0, "no sample reached full scale: the clipping is not exercised")
        let differing = decoded.samples.indices.filter { $0 >= theirs.count || decoded.samples[$0] != theirs[$0] }
        let first = differing.first.map { "sample \($0): \(decoded.samples[$0]) against \($0 < theirs.count ? theirs[$0] : 0)" } ?? ""
        #expect(differing.isEmpty, "\(differing.count) samples differ from FFmpeg's own conversion; \(first)")
    }

    @Test func threeAACFilesCutFromOneSweepJoinToExactlyTheSourcesLength() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sweep = directory.appendingPathComponent("sweep.wav").path
        try TestAudio.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", sweep, "synth", "6", "sine", "200-2000", "vol", "0.5"])
        var total = 0
        var joined: [Int32] = []
        // Cut at frames that are no multiple of AAC's 1024.
        let cuts = [(0, 100_001), (100_001, 170_003), (170_003, 264_600)]
        for (number, (from, to)) in cuts.enumerated() {
            let part = directory.appendingPathComponent("part\(number).wav").path
            try TestAudio.run("/usr/bin/sox", [sweep, part, "trim", "\(from)s", "\(to - from)s"])
            let encoded = directory.appendingPathComponent("part\(number).m4a").path
            // The movie's timescale the sample rate (as iTunes writes it): FFmpeg's default, 1000,
            // rounds the edit list's length to a millisecond (100,001 frames are declared 99,975).
            try Self.ffmpeg(["-i", part, "-c:a", "aac", "-b:a", "192k", "-movie_timescale", "44100", encoded])
            #expect(try Self.ffprobe(encoded, "duration_ts") == "\(to - from)")
            let decoded = try Self.decode(encoded)
            #expect(decoded.samples.count == (to - from) * 2, "part \(number): \(decoded.samples.count / 2) frames, not \(to - from)")
            joined += decoded.samples
            total += to - from
        }
        #expect(joined.count == total * 2)
        let original = try Self.decode(sweep).samples
        func largestStep(_ samples: [Int32]) -> Int32 {
            var largest: Int32 = 0
            for index in stride(from: 2, to: samples.count, by: 1) { largest = max(largest, abs(samples[index] - samples[index - 2])) }
            return largest
        }
        let signalStep = largestStep(original)
        for (from, _) in cuts.dropFirst() {
            for channel in 0..<2 {
                let step = abs(joined[from * 2 + channel] - joined[(from - 1) * 2 + channel])
                #expect(step <= signalStep + signalStep / 4, "a step of \(step) at the join at \(from), the signal's largest is \(signalStep)")
            }
        }
    }

    @Test func aSeekInAnAACFileLandsOnTheFrameAsked() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sweep = directory.appendingPathComponent("sweep.wav").path
        try TestAudio.run("/usr/bin/sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", sweep, "synth", "4", "sine", "200-2000", "vol", "0.5"])
        let path = directory.appendingPathComponent("sweep.m4a").path
        try Self.ffmpeg(["-i", sweep, "-c:a", "aac", "-b:a", "192k", path])
        let whole = try Self.decode(path).samples
        let reader = try AudioFileOpener.open(path: path)
        for frame in [0, 777, 44_100, 100_000, 170_000] as [Int64] {
            try reader.seek(to: frame)
            let got = try Self.samples(reader, frames: 2000)
            let start = Int(frame) * 2
            let want = Array(whole[start..<(start + 4000)])
            // Decoded again from 8,192 frames before the target: the same samples as played
            // through, to within what a decoder started afresh differs by (its noise substitution
            // and float state: up to 8 of 16,384 here); a frame off would differ by thousands.
            var worst: Int32 = 0
            for index in got.indices { worst = max(worst, abs(got[index] - want[index])) }
            #expect(got.count == want.count)
            #expect(worst <= 16, "a seek to \(frame) lands off the frame (differs by up to \(worst))")
        }
        // Past the end: nothing more.
        try reader.seek(to: 176_400)
        #expect(try Self.samples(reader).isEmpty)
    }

    /// Two ADTS streams one after the other, stereo then mono (as `cat a.aac b.aac` makes): the
    /// stereo part plays, then the read fails naming the file, and so does every read after it
    /// (the mono frame was handed to the converter as stereo: a crash), until a seek back.
    @Test func aStreamWhoseChannelsChangeInTheMiddlePlaysItsFirstPartThenFailsNamingTheFile() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory, seconds: 1)
        let stereo = directory.appendingPathComponent("stereo.aac").path
        let mono = directory.appendingPathComponent("mono.aac").path
        try Self.ffmpeg(["-i", source, "-c:a", "aac", "-f", "adts", stereo])
        try Self.ffmpeg(["-i", source, "-ac", "1", "-c:a", "aac", "-f", "adts", mono])
        let path = directory.appendingPathComponent("stereo-then-mono.aac").path
        try (try Data(contentsOf: URL(fileURLWithPath: stereo)) + Data(contentsOf: URL(fileURLWithPath: mono)))
            .write(to: URL(fileURLWithPath: path))
        let stereoFrames = try Self.decode(stereo).samples.count / 2

        let reader = try AudioFileOpener.open(path: path)
        #expect(reader.pcmFormat.channels == 2)
        let chunk = 1000
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk * reader.pcmFormat.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        var played = 0
        var failure: ReelError?
        while failure == nil {
            do throws(ReelError) {
                let frames = try reader.read(into: buffer, frames: chunk)
                if frames == 0 { break }
                played += frames
            } catch {
                failure = error
            }
        }
        #expect(played == stereoFrames, "played \(played) frames of the stereo part's \(stereoFrames)")
        let error = try #require(failure, "the mono part played as stereo")
        #expect(error.reason == .corruptFile && error.message.contains(path), "\(error)")
        for _ in 0..<3 {
            #expect(throws: ReelError.self) { _ = try reader.read(into: buffer, frames: chunk) }
        }
        // Back to the start: the stereo part plays again.
        try reader.seek(to: 0)
        #expect(try Self.samples(reader, frames: 2000).count == 4000)
    }

    /// An ALAC file whose magic cookie says 1 Hz (FFmpeg takes the rate from it): refused as
    /// corrupt, naming the file and the rate, rather than played at 1 Hz.
    @Test func anALACFileAtOneHertzIsRefusedAsCorrupt() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory, seconds: 0.5)
        let good = directory.appendingPathComponent("good.m4a").path
        try Self.ffmpeg(["-i", source, "-c:a", "alac", good])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        // stsd's sample entry `alac`, then inside it the cookie box `alac`: version and flags,
        // frame length, 6 bytes, max run, max frame bytes, average bit rate, then the rate.
        let stsd = try #require(Self.offset(of: "stsd", in: bytes, from: 0))
        let entry = try #require(Self.offset(of: "alac", in: bytes, from: stsd))
        let cookie = try #require(Self.offset(of: "alac", in: bytes, from: entry + 4))
        let rate = cookie + 4 + 4 + 20
        #expect(Array(bytes[rate..<(rate + 4)]) == [0, 0, 0xAC, 0x44], "the cookie's rate is not 44100")
        let path = directory.appendingPathComponent("one-hertz.m4a").path
        try Data(bytes[..<rate] + [0, 0, 0, 1] + bytes[(rate + 4)...]).write(to: URL(fileURLWithPath: path))
        #expect(try AudioFileOpener.open(path: good).pcmFormat.sampleRate == 44100)
        let error = try #require(throws: ReelError.self) { _ = try AudioFileOpener.open(path: path) }
        #expect(error.reason == .corruptFile, "\(error)")
        #expect(error.message.contains(path) && error.message.contains("at 1 Hz"), "\(error.message)")
    }

    /// The process's peak address space (VmPeak), in bytes.
    static func peakAddressSpace() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmPeak:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
    }

    /// An MP4 whose `stco` claims 2^27 chunk offsets (1 GiB of them) and holds one: refused as
    /// corrupt, naming the file, without FFmpeg reserving the gigabyte first (the process's peak
    /// address space does not grow by it).
    @Test func anMP4WhoseChunkTableClaimsAGigabyteIsRefusedWithoutReservingIt() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory, seconds: 0.5)
        let good = directory.appendingPathComponent("good.m4a").path
        try Self.ffmpeg(["-i", source, "-c:a", "aac", good])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        // `stco`, version and flags, then the number of entries.
        let count = try #require(Self.offset(of: "stco", in: bytes, from: 0)) + 8
        #expect(Array(bytes[count..<(count + 4)]) == [0, 0, 0, 1], "the file has \(bytes[count..<(count + 4)]) chunks")
        let path = directory.appendingPathComponent("huge-stco.m4a").path
        try Data(bytes[..<count] + [0x08, 0, 0, 0x01] + bytes[(count + 4)...]).write(to: URL(fileURLWithPath: path))

        let before = try Self.peakAddressSpace()
        let error = try #require(throws: ReelError.self) { _ = try AudioFileOpener.open(path: path) }
        let grown = try Self.peakAddressSpace() - before
        #expect(grown < 512 << 20, "the peak address space grew by \(grown >> 20) MiB")
        #expect(error.reason == .corruptFile, "\(error)")
        #expect(error.message.contains(path) && error.message.contains("512 MiB"), "\(error.message)")
    }

    /// A FLAC header of zeros (no rate) before 20 KB of noise: libsndfile knows it as a broken
    /// FLAC file, and that verdict stands over FFmpeg's (which passes over an audio stream
    /// without a rate, and so finds no audio in it).
    @Test func aBrokenFileLibsndfileKnowsKeepsItsCorruptVerdictOverFFmpegs() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var state: UInt32 = 0x1234_5678
        let noise = (0..<20000).map { _ -> UInt8 in
            state ^= state << 13; state ^= state >> 17; state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
        let path = directory.appendingPathComponent("noise.flac").path
        try Data(Array("fLaC".utf8) + [0x80, 0, 0, 34] + [UInt8](repeating: 0, count: 34) + noise).write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: ReelError.self) { _ = try AudioFileOpener.open(path: path) }
        #expect(error.reason == .corruptFile, "\(error)")
        #expect(error.message.contains(path), "\(error.message)")
    }

    @Test func badFilesAreRefusedWithAReasonNamingTheFile() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try Self.source(in: directory)
        let good = directory.appendingPathComponent("good.m4a").path
        try Self.ffmpeg(["-i", source, "-c:a", "aac", good])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        func file(_ name: String, _ data: Data) throws -> String {
            let path = directory.appendingPathComponent(name).path
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }
        let video = directory.appendingPathComponent("video-only.mp4").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x64:rate=5", "-t", "1", "-c:v", "mpeg4", video])
        var hugeHeader = Data("ftypM4A ".utf8)
        hugeHeader.insert(contentsOf: [0x7F, 0xFF, 0xFF, 0xF0], at: 0)
        hugeHeader += Data(repeating: 0x41, count: 4096)
        let cases: [(String, Set<ErrorReason>)] = [
            (try file("truncated.m4a", bytes.prefix(bytes.count / 3)), [.corruptFile, .unsupportedFormat]),
            (video, [.unsupportedFormat]),
            (try file("lying.m4a", Data("this is text, not an MP4 file at all".utf8)), [.unsupportedFormat]),
            (try file("empty.m4a", Data()), [.unsupportedFormat, .corruptFile]),
            (try file("huge-header.m4a", hugeHeader), [.unsupportedFormat, .corruptFile]),
        ]
        for (path, reasons) in cases {
            do {
                let reader = try AudioFileOpener.open(path: path)
                // A file cut short may open (its header is whole): it then plays what is there, and ends.
                _ = try Self.samples(reader)
                #expect(path.hasSuffix("truncated.m4a"), "\(path) opened")
            } catch let error as ReelError {
                #expect(reasons.contains(error.reason), "\(path): \(error.reason) \(error.message)")
                #expect(error.message.contains(path), "\(error.message)")
            }
        }
    }
}
