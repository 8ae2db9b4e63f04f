import Foundation
import Logging
import ReelAudio
import ReelCore

/// A core on a temporary data directory with ALSA's `null` devices (or `output`, e.g. a device
/// that plays at the speed of the music): real decoding and a real library, no sound card, no
/// socket.
func makeCore(
    mediaRoots: [String] = [], output: PCMOutput = ALSAOutput(name: "null"), mixer: MixerSettings = MixerSettings()
) throws -> (ReelCore, String) {
    let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let core = try ReelCore(
        dataDirectory: directory + "/data", output: output, timing: PCMTiming(),
        input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
        mediaRoots: mediaRoots, mixer: mixer, logger: Logger(label: "test"))
    return (core, directory)
}

/// A core on `directory`'s data directory (to restart one on the same data), not started.
func makeCore(at directory: String) throws -> ReelCore {
    try ReelCore(
        dataDirectory: directory + "/data", output: ALSAOutput(name: "null"), timing: PCMTiming(),
        input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
        mediaRoots: [], logger: Logger(label: "test"))
}

/// A 16-bit mono WAV of `frames` frames of a ramp at 8 kHz.
func writeWAV(_ path: String, frames: Int = 8000) throws {
    var data = Data()
    func le<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
    data.append(contentsOf: Array("RIFF".utf8)); le(UInt32(36 + frames * 2))
    data.append(contentsOf: Array("WAVEfmt ".utf8)); le(UInt32(16)); le(UInt16(1)); le(UInt16(1))
    le(UInt32(8000)); le(UInt32(16000)); le(UInt16(2)); le(UInt16(16))
    data.append(contentsOf: Array("data".utf8)); le(UInt32(frames * 2))
    for index in 0..<frames { le(Int16(truncatingIfNeeded: index * 7)) }
    try data.write(to: URL(fileURLWithPath: path))
}

/// Waits for a reply closure's result.
final class Awaited<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Value?

    func put(_ value: Value) {
        condition.lock()
        self.value = value
        condition.signal()
        condition.unlock()
    }

    func get(timeout: Double = 10) -> Value? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while value == nil, condition.wait(until: deadline) {}
        return value
    }
}
