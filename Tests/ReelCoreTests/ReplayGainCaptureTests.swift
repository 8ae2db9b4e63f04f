import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelModel
import ReelTestSupport
import Testing

/// The test: two FLAC sines at −6 and −20 dBFS, tagged by `metaflac --add-replay-gain`,
/// played from the queue through the core and captured with ALSA's `file` plugin. `track`: the
/// two come out equally loud (RMS within 0.3 dB); `album`: both get the album gain; `off`: the
/// samples are the files', byte for byte. The join between them stays sample-exact.
@Suite(.serialized) struct ReplayGainCaptureTests {
    static let seconds = 3
    static let rate = 44100

    /// The two tagged FLAC files and the 16-bit samples they hold.
    struct Fixture {
        var files: [String]
        var sources: [[Int16]]
    }

    func fixture(in directory: String) throws -> Fixture {
        var files: [String] = []
        var sources: [[Int16]] = []
        for (name, level) in [("loud", "-6"), ("quiet", "-20")] {
            let wav = "\(directory)/\(name).wav"
            let flac = "\(directory)/\(name).flac"
            try TestTool.run("/usr/bin/sox", ["-n", "-r", "\(Self.rate)", "-c", "2", "-b", "16", wav, "synth", "\(Self.seconds)", "sine", "1000", "gain", level])
            try TestTool.run("/usr/bin/flac", ["--silent", "--force", "-o", flac, wav])
            sources.append(try decode(wav))
            files.append(flac)
        }
        try TestTool.run("/usr/bin/metaflac", ["--add-replay-gain"] + files)
        return Fixture(files: files, sources: sources)
    }

    func decode(_ path: String) throws -> [Int16] {
        let reader = try SndFileReader(path: path)
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096 * 2)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            if count == 0 { break }
            samples += chunk[0..<(count * 2)]
        }
        return samples
    }

    /// Plays both files from the queue in `mode` and returns what the device got; with a
    /// hardware `mixer`, its volume set to `volume` first.
    func capture(
        _ fixture: Fixture, mode: ReplayGainMode, directory: String, mixer: MixerSettings = MixerSettings(), volume: Int? = nil
    ) throws -> [Int16] {
        let out = "\(directory)/out-\(mode.rawValue)-\(mixer.kind).raw"
        let (core, _) = try makeCore(mediaRoots: [directory], output: ALSAOutput(name: "file:FILE=\(out),FORMAT=raw"), mixer: mixer)
        defer { core.shutdown() }
        if let volume {
            let turned = Awaited<Result<MixerState, ReelError>>()
            core.mixer.setVolume(volume) { turned.put($0) }
            let state = try #require(turned.get()).get()
            #expect(state.kind == mixer.kind && state.volume == volume, "\(state)")
        }
        let set = Awaited<Result<MixerState, ReelError>>()
        core.mixer.setReplayGain(mode: mode) { set.put($0) }
        #expect(try #require(set.get()).get().replayGain.mode == mode)
        var ids: [Int] = []
        for file in fixture.files {
            let added = Awaited<Result<[QueueEntry], ReelError>>()
            core.player.add(.file(file), at: nil, afterCurrent: false) { added.put($0) }
            ids.append(try #require(try added.get()?.get().first).id)
        }
        let played = Awaited<Result<PlayerState, ReelError>>()
        core.player.play(entry: ids[0]) { played.put($0) }
        _ = try #require(played.get()).get()
        // The queue ends once both played (no current entry, stopped).
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, !(core.player.state.state == .stopped && core.player.queueChanges.latest.value.current == nil) {
            usleep(10_000)
        }
        #expect(core.player.state.state == .stopped)
        return try Data(contentsOf: URL(fileURLWithPath: out)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// RMS in dBFS of `samples`, leaving out the first and last 100 ms (a gain ramp at the join).
    func rms(_ samples: ArraySlice<Int16>) -> Double {
        let margin = Self.rate / 10 * 2
        let body = samples.dropFirst(margin).dropLast(margin)
        let sum = body.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 10 * log10(sum / Double(body.count)) - 20 * log10(32768)
    }

    /// The gain metaflac wrote (`track` or `album`).
    func tagged(_ file: String, _ name: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/metaflac")
        process.arguments = ["--show-tag=REPLAYGAIN_\(name.uppercased())_GAIN", file]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let value = text.split(separator: "=", maxSplits: 1).last.map { String($0.split(separator: "\n")[0]) } ?? ""
        return try #require(ReplayGainInfo.parseGain(value), "metaflac says \(text)")
    }

    @Test func trackModeMakesBothEquallyLoudAlbumAppliesTheAlbumGainOffIsBitExact() throws {
        let directory = NSTemporaryDirectory() + "reel-rg-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixture = try fixture(in: directory)
        let frames = Self.seconds * Self.rate
        let sourceLevels = fixture.sources.map { rms($0[...]) }
        #expect(abs(sourceLevels[0] - sourceLevels[1] - 14) < 0.1, "the fixtures are \(sourceLevels) dBFS")

        let off = try capture(fixture, mode: .off, directory: directory)
        #expect(off == fixture.sources[0] + fixture.sources[1], "off changed the samples")

        let track = try capture(fixture, mode: .track, directory: directory)
        #expect(track.count == 2 * frames * 2, "the join lost or added frames: \(track.count / 2) of \(2 * frames)")
        guard track.count == 2 * frames * 2 else { return }
        let trackLevels = [rms(track[0..<(frames * 2)]), rms(track[(frames * 2)...])]
        #expect(abs(trackLevels[0] - trackLevels[1]) <= 0.3, "track mode: \(trackLevels) dBFS")
        // Each is its source moved by its own track gain.
        for index in 0..<2 {
            let gain = try tagged(fixture.files[index], "track")
            #expect(abs(trackLevels[index] - (sourceLevels[index] + gain)) < 0.05, "track \(index): \(trackLevels[index]) dBFS")
        }

        let album = try capture(fixture, mode: .album, directory: directory)
        #expect(album.count == 2 * frames * 2)
        guard album.count == 2 * frames * 2 else { return }
        let albumLevels = [rms(album[0..<(frames * 2)]), rms(album[(frames * 2)...])]
        let albumGain = try tagged(fixture.files[0], "album")
        #expect(try tagged(fixture.files[1], "album") == albumGain)
        for index in 0..<2 {
            #expect(abs(albumLevels[index] - (sourceLevels[index] + albumGain)) < 0.05, "album \(index): \(albumLevels[index]) dBFS")
        }
        #expect(abs(albumLevels[0] - albumLevels[1] - 14) < 0.1, "album mode keeps the 14 dB between them")
    }
}
