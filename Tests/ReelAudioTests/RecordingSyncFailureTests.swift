import Foundation
import Glibc
import Logging
@testable import ReelAudio
import ReelModel
import Testing

/// A disk that refuses what was written (fsync answers EIO): the writer says so, naming the file,
/// and the capture engine ends the take with that error instead of answering it as saved. And
/// libFLAC's compression level reaches the encoder.
@Suite struct RecordingSyncFailureTests {
    let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)

    static let failingSync: @Sendable (Int32) -> Int32 = { _ in
        errno = EIO
        return -1
    }

    func scratch() throws -> String {
        let directory = NSTemporaryDirectory() + "reel-sync-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A second of a tone with a little noise, 16-bit mono.
    func second() -> [Int16] {
        var generator = SystemRandomNumberGenerator()
        return (0..<48000).map { index in
            Int16(sin(Double(index) * 2 * .pi * 440 / 48000) * 12000) &+ Int16.random(in: -300...300, using: &generator)
        }
    }

    @Test(arguments: ["flac", "wav", "opus"])
    func aSyncTheDiskRefusesIsAnErrorNamingTheFile(codec: String) throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.\(codec)"
        let writer = try SndFileWriter(path: path, codec: codec, format: format, live: true, fsync: Self.failingSync)
        let samples = second()
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frames: samples.count) }
        let message = "cannot sync \(path) to the disk: Input/output error; what was recorded may not be on it"
        #expect(throws: ReelError(.ioError, message)) { try writer.sync() }
        #expect(throws: ReelError(.ioError, message)) { try writer.close() }
        try writer.close()  // closed already: nothing more to say
    }

    @Test(arguments: ["flac", "wav", "opus"])
    func aDiskThatTakesItSaysNothing(codec: String) throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/take.\(codec)"
        let writer = try SndFileWriter(path: path, codec: codec, format: format, live: true)
        let samples = second()
        try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frames: samples.count) }
        try writer.sync()
        try writer.close()
        let reader = try AudioFileOpener.open(path: path)
        #expect(reader.format.sampleRate == 48000)
    }

    @Test func theFLACCompressionLevelReachesTheEncoder() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let samples = (0..<5).flatMap { _ in second() }
        var sizes: [Int: Int] = [:]
        let before = SndFileWriter.flacCompressionLevel
        defer { SndFileWriter.flacCompressionLevel = before }
        for level in [0, 8] {
            SndFileWriter.flacCompressionLevel = level
            let path = directory + "/level\(level).flac"
            let writer = try SndFileWriter(path: path, codec: "flac", format: format)
            try samples.withUnsafeBytes { try writer.write($0.baseAddress!, frames: samples.count) }
            try writer.close()
            sizes[level] = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            let reader = try AudioFileOpener.open(path: path)
            #expect(reader.knownDuration?.seconds == 5, "level \(level) decodes whole")
            // The recorder's FLAC takes (libFLAC directly) are opened at the configured level too.
            let recording = try #require(CodecRegistry.recordingCodec("flac")?.recording)
            let take = try recording.makeWriter(directory + "/take\(level).flac", format, true)
            #expect((take as? FLACWriter)?.level == level)
            try take.close()
        }
        #expect(try #require(sizes[8]) < (try #require(sizes[0])), "level 8 compresses more than level 0: \(sizes)")
        SndFileWriter.flacCompressionLevel = 42
        #expect(SndFileWriter.flacCompressionLevel == 8, "clamped to libFLAC's 0…8")
    }
}

/// The capture engine when the disk refuses a sync or the close's sync.
extension CaptureEngineTests {
    @Test func aSyncTheDiskRefusesEndsTheSessionWithTheError() throws {
        let device = FakeInput()
        device.script { $0.readDelayMicroseconds = 10_000 }
        let writer = MemoryWriter()
        let failure = ReelError(.ioError, "cannot sync /x to the disk: Input/output error; what was recorded may not be on it")
        writer.script {
            $0.syncFailure = failure
            $0.failSyncsAfter = 1  // the sync at the take's open goes through
        }
        let engine = engine(device, writer, syncInterval: 0.1)
        let ending = try runToEnd(engine, CaptureRequest(path: "/x", codec: "wav", format: format), timeout: 20)
        #expect(ending == .failed(failure))
        #expect(engine.snapshot.error == failure)
        #expect(writer.state.closed)
        #expect(!device.state.isOpen)
    }

    @Test func aCloseTheDiskRefusesIsTheStopsError() throws {
        let device = FakeInput()
        device.script { $0.readDelayMicroseconds = 1000 }
        let writer = MemoryWriter()
        let failure = ReelError(.ioError, "cannot sync /x to the disk: Input/output error; what was recorded may not be on it")
        writer.script {
            $0.syncFailure = failure
            $0.failSyncsAfter = 1_000_000  // only the close's sync fails
        }
        let engine = engine(device, writer)
        try engine.start(CaptureRequest(path: "/x", codec: "wav", format: format), onProgress: { _ in }, onEnd: { _ in })
        usleep(200_000)
        let final = engine.stop()
        #expect(final.error == failure)
        #expect(writer.state.closed)
    }
}
