// Recording a station without playing it: the capture engine over `StreamCaptureInput`.

import Foundation
import Logging
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite(.serialized) struct StreamCaptureTests {
    /// Records `seconds` of `url` into a FLAC file; returns the input and the file's samples.
    func record(_ url: String, seconds: Double, in directory: URL) throws -> (StreamCaptureInput, [Int16], CaptureEnding?) {
        let input = try StreamCaptureInput.connect(url: url, configuration: StreamSourceTests.configuration, logger: Logger(label: "test"))
        let path = directory.appendingPathComponent("station.flac").path
        let format = input.sourceFormat
        let ending = Locked<CaptureEnding?>(nil)
        let engine = CaptureEngine(device: input, logger: Logger(label: "test"))
        try engine.start(
            CaptureRequest(path: path, codec: "flac", format: format, maxFrames: Int64(seconds * Double(format.sampleRate))),
            onProgress: { _ in }, onEnd: { end in ending.withLock { $0 = end } })
        #expect(waitUntil(seconds: 90) { ending.current != nil }, "the take did not end by itself")
        engine.stop()
        return (input, try TestAudio.decodeAll(try SndFileReader(path: path)), ending.current)
    }

    /// Titles are kept with the frame they begin at (within the decoder's input, a second at
    /// 128 kbit/s), each change once, in order. The server names a title every 4 s of audio.
    @Test func titleChangesAreKeptWithTheirFrames() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try StreamServer(seconds: 12)
        let (input, samples, ending) = try record(server.url("/live.mp3"), seconds: 10, in: directory)
        #expect(ending == .limitReached)
        #expect(samples.count == 10 * 44100 * 2)
        let changes = input.titles.all
        #expect(changes.map(\.title) == ["First title", "Second title", "First title"], "\(changes)")
        guard changes.count == 3 else { return }
        #expect(changes[0].frame == 0)
        // ICY blocks every 16,000 bytes (1 s): the second title in block 5 (5 s), the third in 9.
        for (change, seconds) in zip(changes.dropFirst(), [5.0, 9.0]) {
            let at = Double(change.frame) / 44100
            #expect(abs(at - seconds) <= 1.5, "\(change.title ?? "nil") placed at \(at) s, sent at \(seconds) s")
        }
    }

    /// A station that drops every few seconds: the take goes on over the reconnects, with the
    /// gaps skipped (it holds exactly the frames asked for, all of them the station's audio).
    @Test func aDropLeavesAGapSkippedAndTheTakeGoesOn() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try StreamServer(seconds: 4)
        // 48,000 bytes a connection: 3 s of 128 kbit/s.
        let (input, samples, ending) = try record(server.url("/drop/48000/live.mp3"), seconds: 7, in: directory)
        #expect(ending == .limitReached)
        #expect(input.status.reconnects >= 2, "\(input.status)")
        #expect(samples.count == 7 * 44100 * 2)
        // No silence was recorded for the gaps: no run of 0.1 s of zeros anywhere (the tone
        // never rests that long).
        var run = 0
        var longest = 0
        for index in stride(from: 0, to: samples.count, by: 2) {
            run = samples[index] == 0 && samples[index + 1] == 0 ? run + 1 : 0
            longest = max(longest, run)
        }
        #expect(longest < 4410, "\(longest) silent frames in a row")
    }
}
