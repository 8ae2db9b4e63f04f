// Recording what plays through the core: a session's features (segments here) work for the
// player's tap as for the capture device.

import Foundation
import ReelAudio
import ReelCore
import ReelModel
import Testing

@Suite struct RecordingWhatPlaysTests {
    /// A 3.5 s file played while `source: "player"` records in 1 s segments: four takes
    /// (1, 1, 1, 0.5 s) whose samples join into the file's, sample for sample.
    @Test func segmentsOfWhatPlaysJoinIntoTheFile() throws {
        let (core, directory) = try makeCore()
        defer {
            core.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let file = directory + "/ramp.wav"
        try writeWAV(file, frames: 28_000)
        var request = RecordingRequest(name: "Air", codec: "wav", sampleRate: 8000, channels: 1)
        request.source = .player
        request.segmentSeconds = 1
        let started = Awaited<Result<RecorderState, ReelError>>()
        core.recorder.start(request) { started.put($0) }
        let state = try #require(try started.get()?.get())
        #expect(state.state == .recording)
        let played = Awaited<Result<PlayerState, ReelError>>()
        core.player.play(.file(file)) { played.put($0) }
        #expect((try? played.get()?.get()) != nil)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, core.recorder.state.elapsed < 3.5 { usleep(10_000) }
        #expect(core.recorder.state.elapsed == 3.5)
        let stopped = Awaited<Result<Item?, ReelError>>()
        core.recorder.stop { stopped.put($0) }
        let last = try #require(try stopped.get()?.get())
        #expect(last.name == "Air 004")
        // The takes' files, oldest first (ids are time-ordered).
        let audio = directory + "/data/audio"
        let files = try FileManager.default.contentsOfDirectory(atPath: audio).filter { $0.hasSuffix(".wav") }.sorted()
        #expect(files.count == 4)
        var joined: [Int16] = []
        var lengths: [Int] = []
        for name in files {
            let reader = try AudioFileOpener.open(path: audio + "/" + name)
            var chunk = [Int16](repeating: 0, count: 4096)
            var length = 0
            while true {
                let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
                if frames == 0 { break }
                joined += chunk[0..<frames]
                length += frames
            }
            lengths.append(length)
        }
        #expect(lengths == [8000, 8000, 8000, 4000])
        let expected = (0..<28_000).map { Int16(truncatingIfNeeded: $0 * 7) }
        #expect(joined == expected, "the segments do not join into the file played")
    }
}
