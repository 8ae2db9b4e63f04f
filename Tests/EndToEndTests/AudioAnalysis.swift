// What a recorded file holds, measured with Debian's tools: sndfile-convert decodes every
// format Reel records (sox has no Opus handler), sox measures it.

import Foundation
import ReelTestSupport

struct AudioMeasurement {
    var seconds: Double
    var maximumAmplitude: Double
    var rmsAmplitude: Double
    var roughFrequency: Double
}

enum AudioAnalysis {
    /// Runs a tool; returns its exit status and what it printed on stdout and stderr together.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let outcome = try TestTool.result(tool, arguments)
        return (outcome.status, outcome.allOutput)
    }

    /// Decodes `path` to a 16-bit WAV in the temporary directory with libsndfile's
    /// sndfile-convert (not next to it: its disk may be full).
    static func decodeToWAV(_ path: String) throws -> String {
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("reel-decoded-\(UUID().uuidString).wav").path
        let (status, output) = try run("sndfile-convert", ["-pcm16", path, wav])
        guard status == 0 else { throw TestFailure("sndfile-convert cannot decode \(path): \(output)") }
        return wav
    }

    /// sox's `stat` of the file (decoded first), optionally from `skip` seconds on.
    static func measure(_ path: String, skip: Double = 0) throws -> AudioMeasurement {
        let wav = try decodeToWAV(path)
        defer { try? FileManager.default.removeItem(atPath: wav) }
        var arguments = [wav, "-n"]
        if skip > 0 { arguments += ["trim", "\(skip)"] }
        arguments.append("stat")
        let (status, output) = try run("sox", arguments)
        guard status == 0 else { throw TestFailure("sox stat failed on \(path): \(output)") }
        func value(_ label: String) throws -> Double {
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(label) }),
                  let number = Double(line.split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
            else { throw TestFailure("no \"\(label)\" in sox's stat of \(path): \(output)") }
            return number
        }
        return AudioMeasurement(
            seconds: try value("Length (seconds)"), maximumAmplitude: try value("Maximum amplitude"),
            rmsAmplitude: try value("RMS     amplitude"), roughFrequency: try value("Rough   frequency"))
    }

    /// Frames in the file as libsndfile decodes it (via sndfile-info's header-independent count).
    static func decodedFrames(_ path: String) throws -> Int {
        let wav = try decodeToWAV(path)
        defer { try? FileManager.default.removeItem(atPath: wav) }
        let size = try FileManager.default.attributesOfItem(atPath: wav)[.size] as! Int
        let (status, output) = try run("soxi", ["-s", wav])
        guard status == 0, let frames = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("soxi cannot read \(wav) (\(size) bytes): \(output)")
        }
        return frames
    }

    /// The level a tone was recorded at: the `fraction` quantile (0.999) of the samples'
    /// magnitudes, from `skip` seconds on, in full scale. Unlike the maximum, it does not move for
    /// a few samples of a click: a lossy codec rings for a moment around a discontinuity (a gap in
    /// what the PulseAudio null sink's monitor passed on when that server, which is not real-time,
    /// was starved of CPU), while the level of a tone recorded too loud or too soft moves it.
    static func levelAmplitude(_ path: String, skip: Double, fraction: Double = 0.999) throws -> Double {
        let wav = try decodeToWAV(path)
        defer { try? FileManager.default.removeItem(atPath: wav) }
        let (status, output) = try run("soxi", ["-r", wav])
        guard status == 0, let rate = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("soxi cannot read the rate of \(wav): \(output)")
        }
        let (channelsStatus, channelsOutput) = try run("soxi", ["-c", wav])
        guard channelsStatus == 0, let channels = Int(channelsOutput.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("soxi cannot read the channels of \(wav): \(channelsOutput)")
        }
        let data = try rawSamples(path)
        let skipped = Int(skip * rate) * channels * 2
        guard data.count > skipped + 2 else { throw TestFailure("\(path) is shorter than \(skip) s") }
        var magnitudes: [Int] = []
        magnitudes.reserveCapacity((data.count - skipped) / 2)
        data.withUnsafeBytes { bytes in
            var offset = skipped
            while offset + 1 < bytes.count {
                let sample = Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self))
                magnitudes.append(abs(Int(sample)))
                offset += 2
            }
        }
        magnitudes.sort()
        return Double(magnitudes[min(magnitudes.count - 1, Int(Double(magnitudes.count) * fraction))]) / 32768
    }

    /// The raw 16-bit little-endian samples of a decoded file.
    static func rawSamples(_ path: String) throws -> Data {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("reel-raw-\(UUID().uuidString).raw").path
        let wav = try decodeToWAV(path)
        defer {
            try? FileManager.default.removeItem(atPath: wav)
            try? FileManager.default.removeItem(atPath: raw)
        }
        let (status, output) = try run("sox", [wav, "-t", "raw", "-e", "signed", "-b", "16", "-L", raw])
        guard status == 0 else { throw TestFailure("sox cannot convert \(wav): \(output)") }
        return try Data(contentsOf: URL(fileURLWithPath: raw))
    }
}
