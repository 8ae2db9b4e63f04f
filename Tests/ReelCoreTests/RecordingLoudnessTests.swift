import Foundation
import Glibc
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import ReelRuntime
import Testing

/// A take's ReplayGain through the core: a 1 kHz sine at −20 dBFS recorded for 2 s keeps its
/// gain to −18 LUFS (+2 dB) with its item, and the player shows it when the recording plays in
/// track mode.
@Suite struct RecordingLoudnessTests {
    /// A capture device that hands out a stereo 1 kHz sine at −20 dBFS, unpaced.
    final class SineInput: PCMInput, @unchecked Sendable {
        let name = "sine"
        private let position = Locked(0)
        private var rate = 48000
        private var channels = 2

        func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
            rate = format.sampleRate
            channels = format.channels
            return PCMConfiguration(format: format, periodFrames: 480, bufferFrames: 1920)
        }

        func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
            let samples = buffer.assumingMemoryBound(to: Int16.self)
            let amplitude = 32767 * pow(10, -20.0 / 20)
            let start = position.withLock { value -> Int in
                defer { value += frames }
                return value
            }
            for frame in 0..<frames {
                let value = Int16((amplitude * sin(2 * Double.pi * 1000 * Double(start + frame) / Double(rate))).rounded())
                for channel in 0..<channels { samples[frame * channels + channel] = value }
            }
            usleep(2000)
            return frames
        }

        func prepare() -> Int32 { 0 }
        func resume() -> Int32 { 0 }
        func drop() {}
        func wait(timeoutMilliseconds: Int) -> Int32 { 0 }
        func close() {}
    }

    @Test func aTakeKeepsItsGainToMinus18LUFS() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let core = try ReelCore(
            dataDirectory: directory + "/data", output: ALSAOutput(name: "null"), timing: PCMTiming(),
            input: SineInput(), captureTiming: PCMTiming(), recording: RecordingDefaults(), mediaRoots: [],
            logger: Logger(label: "test"))
        defer { core.shutdown() }
        let started = Awaited<Result<RecorderState, ReelError>>()
        core.recorder.start(RecordingRequest(name: "sine", codec: "flac", sampleRate: 48000, channels: 2, maxDuration: 2)) {
            started.put($0)
        }
        _ = try #require(started.get()).get()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, core.recorder.state.state != .idle { usleep(20_000) }
        let item = try #require(core.recorder.state.item)
        let info = try #require(try core.library.store.replayGain(ofRecording: item.id))
        let gain = try #require(info.track)
        #expect(abs(gain.gain - 2) < 0.1, "a -20 dBFS sine kept \(gain.gain) dB")
        #expect(abs((gain.peak ?? 0) - 0.1) < 0.001)

        // Played in track mode, the recording gets it.
        let set = Awaited<Result<MixerState, ReelError>>()
        core.mixer.setReplayGain(mode: .track) { set.put($0) }
        _ = try #require(set.get()).get()
        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(.recording(.id(item.id)), at: nil, afterCurrent: false) { added.put($0) }
        let entry = try #require(try added.get()?.get().first)
        let loaded = Awaited<Result<PlayerState, ReelError>>()
        core.player.load(entry: entry.id, position: 0.5, playing: false) { loaded.put($0) }
        let state = try #require(loaded.get()).get()
        #expect(state.state == .paused)
        #expect(abs((core.player.state.gain ?? 0) - gain.gain) < 1e-9, "the player shows \(String(describing: core.player.state.gain))")
    }
}
