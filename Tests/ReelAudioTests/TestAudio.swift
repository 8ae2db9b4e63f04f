// Test audio made on the spot: tones whose frequency and length are known.

import Foundation
import ReelAudio
import ReelModel

enum TestAudio {
    /// A fresh temporary directory, removed by the caller's `defer`.
    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// 16-bit interleaved samples of a sine tone; channel c is offset by c*100 Hz so channels differ.
    static func toneSamples(seconds: Double, rate: Int, channels: Int, frequency: Double = 440, amplitude: Double = 0.5)
        -> [Int16]
    {
        let frames = Int(seconds * Double(rate))
        var samples = [Int16](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            for channel in 0..<channels {
                let f = frequency + Double(channel) * 100
                let value = amplitude * sin(2 * Double.pi * f * Double(frame) / Double(rate))
                samples[frame * channels + channel] = Int16(value * 32767)
            }
        }
        return samples
    }

    /// Writes a tone with libsndfile (`wav`, `flac`, `ogg`, `opus`) or lame (`mp3`, `mp3-noxing`
    /// for a VBR file without a Xing/Info header). Returns the samples written.
    @discardableResult
    static func writeTone(
        to path: String, codec: String, seconds: Double, rate: Int = 44100, channels: Int = 2
    ) throws -> [Int16] {
        let samples = toneSamples(seconds: seconds, rate: rate, channels: channels)
        if codec.hasPrefix("mp3") {
            let wav = path + ".src.wav"
            try writeTone(to: wav, codec: "wav", seconds: seconds, rate: rate, channels: channels)
            defer { try? FileManager.default.removeItem(atPath: wav) }
            var arguments = ["--quiet", "-V", "4"]
            if codec == "mp3-noxing" { arguments.append("-t") }
            try run("/usr/bin/lame", arguments + [wav, path])
            return samples
        }
        let writer = try SndFileWriter(
            path: path, codec: codec, format: PCMFormat(sample: .s16, sampleRate: rate, channels: channels))
        try samples.withUnsafeBytes { raw in
            try writer.write(raw.baseAddress!, frames: samples.count / channels)
        }
        writer.close()
        return samples
    }

    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ReelError(.ioError, "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
    }
}
