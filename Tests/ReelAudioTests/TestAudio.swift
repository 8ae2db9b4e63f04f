// Test audio made on the spot: tones whose frequency and length are known.

import Foundation
import ReelAudio
import ReelModel
import Testing
import ReelTestSupport

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

    /// Writes a tone with libsndfile (`wav`, `flac`, `ogg`, `opus`) or lame: `mp3` (VBR, with
    /// LAME's Xing tag), `mp3-cbr` (128 kb/s, with LAME's Info tag), and each of them without its
    /// tag (`mp3-noxing`, `mp3-cbr-noxing`), and `mp3-xing-only` (a Xing tag without LAME's
    /// extension: no encoder delay or padding, as other encoders write it). Returns the samples
    /// written.
    @discardableResult
    static func writeTone(
        to path: String, codec: String, seconds: Double, rate: Int = 44100, channels: Int = 2,
        amplitude: Double = 0.5
    ) throws -> [Int16] {
        let samples = toneSamples(seconds: seconds, rate: rate, channels: channels, amplitude: amplitude)
        if codec.hasPrefix("mp3") {
            let wav = path + ".src.wav"
            try writeTone(to: wav, codec: "wav", seconds: seconds, rate: rate, channels: channels, amplitude: amplitude)
            defer { try? FileManager.default.removeItem(atPath: wav) }
            var arguments = ["--quiet"] + (codec.hasPrefix("mp3-cbr") ? ["-b", "128"] : ["-V", "4"])
            if codec.hasSuffix("-noxing") { arguments.append("-t") }
            try run("/usr/bin/lame", arguments + [wav, path])
            if codec == "mp3-xing-only" {
                // LAME's extension (36 bytes from "LAME") follows the Xing fields in the first frame.
                var data = try Data(contentsOf: URL(fileURLWithPath: path))
                let lame = try #require(data.prefix(1000).range(of: Data("LAME".utf8)))
                data.replaceSubrange(lame.lowerBound..<(lame.lowerBound + 36), with: Data(count: 36))
                try data.write(to: URL(fileURLWithPath: path))
            }
            return samples
        }
        let writer = try SndFileWriter(
            path: path, codec: codec, format: PCMFormat(sample: .s16, sampleRate: rate, channels: channels))
        try samples.withUnsafeBytes { raw in
            try writer.write(raw.baseAddress!, frames: samples.count / channels)
        }
        try writer.close()
        return samples
    }

    /// Encodes `samples` (16-bit, interleaved) with lame and `lameArguments` (`-V 4`, `-b 128`;
    /// `-t` for no Xing/Info tag).
    static func encodeMP3(
        _ samples: [Int16], to path: String, rate: Int = 44100, channels: Int = 2, lameArguments: [String]
    ) throws {
        let wav = path + ".src.wav"
        let writer = try SndFileWriter(
            path: wav, codec: "wav", format: PCMFormat(sample: .s16, sampleRate: rate, channels: channels))
        try samples.withUnsafeBytes { raw in
            try writer.write(raw.baseAddress!, frames: samples.count / channels)
        }
        try writer.close()
        defer { try? FileManager.default.removeItem(atPath: wav) }
        try run("/usr/bin/lame", ["--quiet"] + lameArguments + [wav, path])
    }

    /// Material whose bitrate varies when encoded as VBR, the same for a seed every run:
    /// sections of 0.5 to 4 s, each silence, a tone, a chord or noise, at a level from -40 to
    /// -3 dBFS.
    static func variedSamples(seconds: Double, seed: UInt64, rate: Int = 44100, channels: Int = 2) -> [Int16] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func random() -> Double {  // xorshift64*, in [0, 1)
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return Double((state &* 2_685_821_657_736_338_717) >> 11) / Double(1 << 53)
        }
        let total = Int(seconds * Double(rate))
        var samples = [Int16](repeating: 0, count: total * channels)
        var frame = 0
        while frame < total {
            let length = min(Int((0.5 + random() * 3.5) * Double(rate)), total - frame)
            let kind = Int(random() * 4)
            let amplitude = pow(10, (-40 + random() * 37) / 20)
            let base = 110 + random() * 800
            for index in 0..<length {
                let t = Double(index) / Double(rate)
                for channel in 0..<channels {
                    var value = 0.0
                    switch kind {
                    case 0: value = 0
                    case 1: value = sin(2 * .pi * (base + Double(channel) * 3) * t)
                    case 2: value = (sin(2 * .pi * base * t) + sin(2 * .pi * base * 1.26 * t) + sin(2 * .pi * base * 1.5 * t)) / 3
                    default: value = random() * 2 - 1
                    }
                    samples[(frame + index) * channels + channel] = Int16(max(-1, min(1, value * amplitude)) * 32767)
                }
            }
            frame += length
        }
        return samples
    }

    /// Writes `source`'s bytes `copies` times over to `path`. For an MP3 without a tag, a stream
    /// `copies` times as long (LAME starts each stream with an empty bit reservoir, so each copy
    /// decodes as the first did).
    static func repeatFile(_ source: String, copies: Int, to path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        var whole = Data(capacity: data.count * copies)
        for _ in 0..<copies { whole.append(data) }
        try whole.write(to: URL(fileURLWithPath: path))
    }

    static func run(_ executable: String, _ arguments: [String]) throws { try TestTool.run(executable, arguments) }

    /// Every frame from the reader's position to the end of the file, interleaved.
    static func decodeAll(_ reader: AudioFileReader) throws -> [Int16] {
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096 * reader.pcmFormat.channels)
        while true {
            let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            if frames == 0 { break }
            samples.append(contentsOf: chunk[0..<(frames * reader.pcmFormat.channels)])
        }
        return samples
    }
}

/// Waits until the reader's frame count is final (an MP3's background scan ended).
func waitForFinalLength(_ reader: AudioFileReader) -> Bool {
    waitUntil { reader.frameCountIsFinal }
}
