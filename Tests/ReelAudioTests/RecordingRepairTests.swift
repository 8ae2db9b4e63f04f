import Foundation
import ReelAudio
import ReelModel
import Testing

/// Files cut off the way `kill -9`, a power cut or a full disk leaves them are repaired so that
/// libsndfile and other tools read them, losing at most what was never written.
@Suite struct RecordingRepairTests {
    let directory = TestAudio.temporaryDirectory()

    /// Writes `seconds` of a tone as the recorder does (live), and copies the file as it is on
    /// disk before the writer is closed: what a killed process leaves behind.
    func cutOffRecording(codec: String, seconds: Double, rate: Int = 48000, quiet: Bool = false) throws
        -> (path: String, samples: [Int16])
    {
        let live = directory.appendingPathComponent("live.\(codec)").path
        let copy = directory.appendingPathComponent("killed-\(UUID().uuidString).\(codec)").path
        // A tone with some noise, like a microphone: lossy encoders fill their pages at a
        // realistic rate.
        // realistic rate. `quiet`: digital silence, the slowest to fill a page.
        var generator = SystemRandomNumberGenerator()
        let samples = quiet
            ? [Int16](repeating: 0, count: Int(seconds * Double(rate)))
            : TestAudio.toneSamples(seconds: seconds, rate: rate, channels: 1).map { sample in
                sample &+ Int16.random(in: -1000...1000, using: &generator)
            }
        let writer = try CaptureEngine.liveWriter(
            CaptureRequest(path: live, codec: codec, format: PCMFormat(sample: .s16, sampleRate: rate, channels: 1)))
        let chunk = rate / 10
        try samples.withUnsafeBytes { raw in
            var frame = 0
            while frame < samples.count {
                let frames = min(chunk, samples.count - frame)
                try writer.write(raw.baseAddress! + frame * 2, frames: frames)
                frame += frames
            }
        }
        try writer.sync()
        try FileManager.default.copyItem(atPath: live, toPath: copy)
        try writer.close()
        try FileManager.default.removeItem(atPath: live)
        return (copy, samples)
    }

    func decodeAll(_ path: String) throws -> [Int16] {
        let reader = try AudioFileOpener.open(path: path)
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096 * reader.pcmFormat.channels)
        while true {
            let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            if frames == 0 { break }
            samples.append(contentsOf: chunk[0..<(frames * reader.pcmFormat.channels)])
        }
        return samples
    }

    func cut(_ path: String, dropping bytes: Int) throws {
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(truncate(path, off_t(size - bytes)) == 0)
    }

    /// sox reads the file (it is the strictest common reader of WAV headers) and finds `frames`.
    func soxFrames(_ path: String) throws -> Int? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/soxi")
        process.arguments = ["-s", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(arguments: [0, 1, 777])
    func wavKilledMidRecordingKeepsEveryWrittenFrame(droppedBytes: Int) throws {
        let (path, samples) = try cutOffRecording(codec: "wav", seconds: 2)
        try cut(path, dropping: droppedBytes)
        let outcome = try RecordingRepair.repair(path: path, codec: "wav")
        let expected = samples.count - (droppedBytes + 1) / 2
        #expect(outcome.frames == Int64(expected))
        #expect(outcome.format == AudioFormat(codec: "wav", sampleRate: 48000, channels: 1))
        let decoded = try decodeAll(path)
        #expect(decoded.count == expected)
        #expect(decoded == Array(samples[0..<expected]), "the repaired samples differ from those written")
        #expect(try soxFrames(path) == expected)
    }

    @Test(arguments: [0, 1, 3000])
    func flacKilledMidRecordingKeepsItsCompleteFrames(droppedBytes: Int) throws {
        let (path, samples) = try cutOffRecording(codec: "flac", seconds: 3)
        try cut(path, dropping: droppedBytes)
        let outcome = try RecordingRepair.repair(path: path, codec: "flac")
        // At most the last second is lost (here: the encoder's unfinished block and the cut frames).
        #expect(outcome.frames > Int64(samples.count - 48000), "kept \(outcome.frames) of \(samples.count) frames")
        #expect(outcome.frames <= Int64(samples.count))
        let decoded = try decodeAll(path)
        #expect(decoded.count == Int(outcome.frames))
        #expect(decoded == Array(samples[0..<decoded.count]), "the repaired samples differ from those written")
        // STREAMINFO now holds the count, so readers that trust the header agree.
        let reader = try AudioFileOpener.open(path: path)
        #expect(reader.frameCount == outcome.frames)
        #expect(try soxFrames(path) == Int(outcome.frames))
        try TestAudio.run("/usr/bin/flac", ["--silent", "--test", path])
    }

    @Test func aFinishedFlacIsLeftAsItIs() throws {
        let path = directory.appendingPathComponent("done.flac").path
        let written = try TestAudio.writeTone(to: path, codec: "flac", seconds: 1, rate: 48000, channels: 1)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let outcome = try RecordingRepair.repair(path: path, codec: "flac")
        #expect(outcome.frames == Int64(written.count))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test(arguments: ["ogg", "opus"], [false, true])
    func oggKilledMidRecordingKeepsItsCompletePages(codec: String, quiet: Bool) throws {
        let (path, samples) = try cutOffRecording(codec: codec, seconds: 3, quiet: quiet)
        // A torn last page (a page of silence is a few dozen bytes).
        try cut(path, dropping: 10)
        let outcome = try RecordingRepair.repair(path: path, codec: codec)
        // Pages close every quarter second: well under a second is lost, even in silence.
        #expect(outcome.frames > Int64(samples.count - 24000), "kept \(outcome.frames) of \(samples.count) frames")
        #expect(outcome.format.codec == (codec == "ogg" ? "vorbis" : "opus"))
        let decoded = try decodeAll(path)
        #expect(decoded.count == Int(outcome.frames))
        if codec == "ogg" { #expect(try soxFrames(path) != nil) }
    }

    /// Regression (found by the power-cut test, Tests/PowerCut): libsndfile wrote a FLAC header
    /// only with the first audio and an Opus one only at close, so a power cut in a take's first
    /// second left an empty file, listed but unreadable. The header is on disk from the start.
    @Test(arguments: ["flac", "opus", "wav", "ogg"])
    func aNewTakeIsARepairableFileBeforeAnyAudio(codec: String) throws {
        let path = directory.appendingPathComponent("new.\(codec)").path
        let writer = try CaptureEngine.liveWriter(
            CaptureRequest(path: path, codec: codec, format: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)))
        try writer.sync()
        let copy = directory.appendingPathComponent("cut-\(UUID().uuidString).\(codec)").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try writer.close()
        #expect(RecordingRepair.fileSize(copy) > 0, "\(codec): nothing written before the first audio")
        // An Ogg stream of headers only (Vorbis, Opus) is whole but has no audio page to count:
        // libsndfile and ffmpeg refuse to open it, so only the lossless ones repair to 0 frames.
        if codec == "flac" || codec == "wav" {
            #expect(try RecordingRepair.repair(path: copy, codec: codec).frames == 0)
            #expect(try decodeAll(copy).isEmpty)
        }
    }

    /// An unfinished take whose file never reached the disk becomes a valid take of no frames.
    @Test(arguments: ["flac", "opus", "wav", "vorbis"])
    func anEmptyTakeIsWrittenInEveryFormat(codec: String) throws {
        let ext = codec == "vorbis" ? "ogg" : codec
        let path = directory.appendingPathComponent("empty-\(codec).\(ext)").path
        _ = FileManager.default.createFile(atPath: path, contents: Data())
        try RecordingRepair.writeEmptyTake(path: path, codec: codec, format: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1))
        #expect(RecordingRepair.fileSize(path) > 0)
        // Ogg streams of headers only: see above.
        if codec == "flac" || codec == "wav" {
            #expect(try RecordingRepair.repair(path: path, codec: ext).frames == 0)
            let reader = try AudioFileOpener.open(path: path)
            #expect(reader.pcmFormat.sampleRate == 48000)
            #expect(try decodeAll(path).isEmpty)
        }
    }

    @Test func aFileWithNoAudioAtAllIsCorrupt() throws {
        let path = directory.appendingPathComponent("empty.ogg").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("OggS".utf8))
        #expect(throws: ReelError.self) { try RecordingRepair.repair(path: path, codec: "ogg") }
        let flac = directory.appendingPathComponent("empty.flac").path
        _ = FileManager.default.createFile(atPath: flac, contents: Data())
        #expect(throws: ReelError.self) { try RecordingRepair.repair(path: flac, codec: "flac") }
    }
}
