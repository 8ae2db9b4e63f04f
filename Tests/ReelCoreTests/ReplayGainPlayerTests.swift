import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import Testing

/// ReplayGain through the core: the player shows the gain the settings give the loaded track
/// (`PlayerState.gain`), `auto` follows random, and the settings survive a restart.
@Suite struct ReplayGainPlayerTests {
    /// A FLAC file tagged with track gain −6 dB and album gain −9 dB.
    func taggedFLAC(in directory: String) throws -> String {
        let wav = directory + "/tagged.wav"
        try writeWAV(wav, frames: 8000 * 30)
        let flac = directory + "/tagged.flac"
        for (tool, arguments) in [
            ("/usr/bin/flac", ["--silent", "--force", "-o", flac, wav]),
            ("/usr/bin/metaflac", ["--set-tag=REPLAYGAIN_TRACK_GAIN=-6.00 dB", "--set-tag=REPLAYGAIN_ALBUM_GAIN=-9.00 dB", flac]),
        ] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(tool) failed")
        }
        return flac
    }

    func set(_ core: ReelCore, mode: ReplayGainMode? = nil, preamp: Double? = nil) throws -> MixerState {
        let done = Awaited<Result<MixerState, ReelError>>()
        core.mixer.setReplayGain(mode: mode, preamp: preamp) { done.put($0) }
        return try #require(done.get()).get()
    }

    /// Waits (up to 10 s) for the player to show `expected`.
    func gainShown(_ core: ReelCore, _ expected: Double?) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        func shown() -> Bool {
            let gain = core.player.state.gain
            guard let expected else { return gain == nil }
            return gain.map { abs($0 - expected) < 1e-6 } ?? false
        }
        while Date() < deadline, !shown() { usleep(10_000) }
        return shown()
    }

    @Test func theGainShownFollowsTheModeAndRandom() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        let file = try taggedFLAC(in: directory)
        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(.file(file), at: nil, afterCurrent: false) { added.put($0) }
        let entry = try #require(try added.get()?.get().first)
        let loaded = Awaited<Result<PlayerState, ReelError>>()
        core.player.load(entry: entry.id, position: 1, playing: false) { loaded.put($0) }
        #expect(try loaded.get()?.get().state == .paused)
        #expect(core.player.state.gain == nil, "ReplayGain is off by default")
        #expect(core.mixer.state.replayGain == ReplayGainSettings())

        #expect(try set(core, mode: .track).replayGain.mode == .track)
        #expect(gainShown(core, -6))
        _ = try set(core, mode: .album)
        #expect(gainShown(core, -9))
        _ = try set(core, preamp: 2)
        #expect(gainShown(core, -7))
        _ = try set(core, mode: .auto, preamp: 0)
        #expect(gainShown(core, -9))
        _ = core.player.setQueueOptions(random: true)
        #expect(gainShown(core, -6), "auto plays the track gain at random")
        _ = core.player.setQueueOptions(random: false)
        #expect(gainShown(core, -9))
        _ = try set(core, mode: .off)
        #expect(gainShown(core, nil))
    }

    /// A file of a music folder: the scan keeps its tags' gain in the index, where the player
    /// takes it (no tag read when it plays).
    @Test func theScanKeepsAMusicFilesGainInTheIndex() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/Music", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = try taggedFLAC(in: directory + "/Music")
        let core = try ReelCore(
            dataDirectory: directory + "/data", output: ALSAOutput(name: "null"), timing: PCMTiming(),
            input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
            mediaRoots: [], musicDirectories: [directory + "/Music"], logger: Logger(label: "test"))
        defer { core.shutdown() }
        core.start(resume: .no)
        let index = MusicIndex(store: core.library.store)
        let deadline = Date().addingTimeInterval(30)
        var indexed: ReplayGainInfo?
        while Date() < deadline, indexed == nil {
            indexed = try? index.replayGain(root: directory + "/Music", relativePath: "tagged.flac")
            if indexed == nil { usleep(20_000) }
        }
        #expect(indexed == ReplayGainInfo(track: ReplayGainValue(gain: -6), album: ReplayGainValue(gain: -9)))
        _ = try set(core, mode: .album)
        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(.file(file), at: nil, afterCurrent: false) { added.put($0) }
        let entry = try #require(try added.get()?.get().first)
        let loaded = Awaited<Result<PlayerState, ReelError>>()
        core.player.load(entry: entry.id, position: 1, playing: false) { loaded.put($0) }
        _ = try #require(loaded.get()).get()
        #expect(gainShown(core, -9))
    }

    @Test func outOfRangePreampsAreRefusedAndChangeNothing() throws {
        let (core, _) = try makeCore()
        defer { core.shutdown() }
        let done = Awaited<Result<MixerState, ReelError>>()
        core.mixer.setReplayGain(mode: .track, preamp: 16) { done.put($0) }
        guard case .failure(let error) = try #require(done.get()) else {
            Issue.record("a preamp of 16 dB was taken")
            return
        }
        #expect(error.reason == .outOfRange)
        #expect(error.message.contains("preamp"))
        #expect(core.mixer.state.replayGain.mode == .off)
    }

    @Test func theSettingsSurviveARestart() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            let core = try makeCore(at: directory)
            core.start(resume: .no)
            _ = try set(core, mode: .album, preamp: -2.5)
            core.shutdown()
        }
        let core = try makeCore(at: directory)
        defer { core.shutdown() }
        core.start(resume: .no)
        #expect(core.mixer.state.replayGain == ReplayGainSettings(mode: .album, preamp: -2.5))
    }
}
