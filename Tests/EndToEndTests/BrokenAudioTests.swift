import Foundation
import Glibc
import ReelProtocol
import ReelTestSupport
import Testing

/// A corpus of broken and hostile "audio" files, played and imported: each gets a clear error
/// (or, where the audio in it really decodes, plays what is there), nothing crashes or hangs,
/// and a failed import leaves nothing behind.
@Suite struct BrokenAudioTests {
    enum Expected: Equatable {
        case refused(String)
        /// The header lies but the data decodes: it plays what is really there.
        case decodes(seconds: Double)
    }

    /// Writes the corpus into `directory`; returns (name, path, what each must give).
    func corpus(in directory: URL) throws -> [(String, String, Expected)] {
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func write(_ name: String, _ bytes: [UInt8]) -> String {
            FileManager.default.createFile(atPath: path(name), contents: Data(bytes))
            return path(name)
        }
        var random = SystemRandomNumberGenerator()
        func noise(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        func le16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        let fmt: [UInt8] = Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(48000) + le32(96000) + le16(2) + le16(16)
        func wavHeader(dataBytes: UInt32) -> [UInt8] {
            Array("RIFF".utf8) + le32(0xFFFF_FFFF) + Array("WAVE".utf8) + fmt + Array("data".utf8) + le32(dataBytes)
        }
        let flacHeader: [UInt8] = Array("fLaC".utf8) + [0x80, 0, 0, 34] + [UInt8](repeating: 0, count: 34)

        let good = path("good.flac")
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", good, "synth", "3", "sine", "440"])
        let goodBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: good)))
        let directoryPath = path("folder.wav")
        try FileManager.default.createDirectory(atPath: directoryPath, withIntermediateDirectories: true)
        let fifo = path("fifo.wav")
        #expect(mkfifo(fifo, 0o644) == 0)

        return [
            ("zero bytes", write("empty.wav", []), .refused("unsupported_format")),
            ("a WAV cut inside its header", write("cut.wav", Array(wavHeader(dataBytes: 100)[0..<30])), .refused("corrupt_file")),
            ("a FLAC cut after 3000 bytes", write("cut.flac", Array(goodBytes[0..<3000])), .refused("corrupt_file")),
            ("random bytes", write("random.wav", noise(20000)), .refused("unsupported_format")),
            // FFmpeg guesses "lyrics" (at 5 of 100) for anything starting with '[': a guess, not a
            // format (random bytes start so once in 256 runs).
            ("random bytes after a bracket", write("bracket.wav", [UInt8(ascii: "[")] + noise(20000)), .refused("unsupported_format")),
            ("random bytes after a FLAC header", write("noise.flac", flacHeader + noise(20000)), .refused("corrupt_file")),
            ("a WAV claiming 2^32 frames holding 0.1 s",
             write("huge.wav", wavHeader(dataBytes: 0xFFFF_FFFF) + [UInt8](repeating: 0, count: 9600)), .decodes(seconds: 0.1)),
            ("random samples after a valid WAV header", write("hiss.wav", wavHeader(dataBytes: 20000) + noise(20000)),
             .decodes(seconds: 10000.0 / 48000)),
            ("a directory", directoryPath, .refused("unsupported_format")),
            ("a FIFO", fifo, .refused("unsupported_format")),
            ("/dev/zero", "/dev/zero", .refused("unsupported_format")),
        ]
    }

    @Test func everyBrokenFileGetsAClearAnswerAtPlayAndAtImport() throws {
        let daemon = try DaemonProcess()
        let files = try corpus(in: daemon.directory)
        let client = try daemon.client()
        var imported = 0
        for (label, path, expected) in files {
            for method in ["player.play", "library.import"] {
                let outcome = try client.call(method, ["file": .string(path)], timeout: 10)
                switch (expected, outcome) {
                case (.refused(let reason), .failure(let error)):
                    #expect(error.data?["reason"]?.stringValue == reason, "\(label), \(method): \(error)")
                    #expect(error.message.contains(path), "\(label), \(method): the message names the file: \(error.message)")
                case (.decodes(let seconds), .success(let value)):
                    let duration = method == "player.play" ? value["duration"] : value["duration"]
                    #expect(abs((duration?.doubleValue ?? -1) - seconds) < 0.001, "\(label), \(method): \(value)")
                    if method == "library.import" { imported += 1 }
                default:
                    Issue.record("\(label), \(method): expected \(expected), got \(outcome)")
                }
            }
        }
        // Still answering, and only the files that decode were imported: no partial copies left.
        #expect(try client.result("daemon.info")["version"] != nil)
        #expect(try client.result("library.list")["items"]?.arrayValue?.count == imported)
        let audio = try FileManager.default.contentsOfDirectory(atPath: daemon.directory.path + "/data/audio")
        #expect(audio.count == imported, "audio/ holds \(audio)")
        _ = try? client.result("player.stop")
    }

    @Test func aMissingFileIsNotFound() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        for method in ["player.play", "library.import"] {
            guard case .failure(let error) = try client.call(method, ["file": "/no/such/file.flac"]) else {
                Issue.record("\(method) of a missing file succeeded")
                continue
            }
            #expect(error.data?["reason"] == .string("not_found"))
        }
    }
}
