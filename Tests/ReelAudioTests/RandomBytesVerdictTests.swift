import Foundation
import Testing
@testable import ReelAudio
import ReelModel
import ReelTestSupport

/// Bytes that are no audio format are `unsupported_format` however a decoder's guess at them
/// goes: FFmpeg's probe takes about one file of random bytes in 20 for MP3 at 1 of 100, whose
/// header read then fails with EINVAL, and libsndfile takes one in some 5,000 for MPEG audio
/// from its first 11 bits. Neither guess is a format, so neither failure is a corrupt file.
@Suite struct RandomBytesVerdictTests {
    /// The same 400 files of noise every run (a fixed seed), each 20,000 bytes.
    @Test func noiseIsNeverACorruptFile() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SeededGenerator(seed: 0x9E37_79B9_7F4A_7C15)
        func noise(_ count: Int) -> Data {
            let words = (0..<(count + 7) / 8).map { _ in random.next() }
            return words.withUnsafeBytes { Data($0.prefix(count)) }
        }
        var wrong: [String] = []
        for index in 0..<400 {
            let path = directory.appendingPathComponent("noise-\(index).wav").path
            try noise(20000).write(to: URL(fileURLWithPath: path))
            wrong += verdict(path)
        }
        #expect(wrong.count == 0, "\(wrong.count) of 400 files of noise: \(wrong.prefix(3))")
    }

    /// An MPEG-1 Layer II frame header, then noise: libsndfile's MPEG guess, with no frames.
    @Test func anMPEGFrameHeaderBeforeNoiseIsNotAnAudioFile() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("header.wav").path
        try (Data([0xFF, 0xFC, 0xC0, 0xA8]) + Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }))
            .write(to: URL(fileURLWithPath: path))
        let wrong = verdict(path)
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// What is wrong with the verdict opening `path` gives: nothing when it is
    /// `unsupported_format` naming the file.
    private func verdict(_ path: String) -> [String] {
        do {
            _ = try AudioFileOpener.open(path: path)
            return ["\(path) opened"]
        } catch {
            guard let error = error as? ReelError else { return ["\(error)"] }
            if error.reason == .unsupportedFormat, error.message.contains(path) { return [] }
            return ["\(error.reason): \(error.message)"]
        }
    }
}
