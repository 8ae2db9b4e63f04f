import Foundation
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing
import ReelTestSupport

/// Sessions of takes through the capture engine, with a fake device producing a known signal
/// (sample n holds n) and real encoders: segments join sample-exactly in every recording
/// format, triggered takes hold their pre-roll, a listening engine starts a take in the past.
/// The first index where `a` and `b` differ (or where one ends), nil when equal. Comparing with
/// `#expect(a == b)` would make the test library diff million-element arrays.
func firstDifference(_ a: [Int16], _ b: [Int16]) -> Int? {
    for index in 0..<min(a.count, b.count) where a[index] != b[index] { return index }
    return a.count == b.count ? nil : min(a.count, b.count)
}

@Suite struct CaptureSessionTests {
    let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)

    /// Takes written to files `take-N.<codec>` in `directory`, remembered as they close.
    final class FileTakes: CaptureTakes, @unchecked Sendable {
        struct Closed: Equatable {
            var take: CaptureTake
            var path: String
            var frames: Int64
            var keep: Bool
        }
        let directory: URL
        let codec: String
        let format: PCMFormat
        let state = Locked((closed: [Closed](), ending: CaptureEnding?.none, opened: [String: CaptureTake]()))

        init(directory: URL, codec: String, format: PCMFormat) {
            self.directory = directory
            self.codec = codec
            self.format = format
        }

        var closed: [Closed] { state.current.closed }
        var ending: CaptureEnding? { state.current.ending }

        func openTake(_ take: CaptureTake) throws(ReelError) -> RecordingWriter {
            let path = directory.appendingPathComponent("take-\(take.index).\(codec == "ogg" ? "ogg" : codec)").path
            state.withLock { $0.opened[path] = take }
            return try CaptureEngine.liveWriter(CaptureRequest(path: path, codec: codec, format: format))
        }

        func closedTake(_ take: CaptureTake, frames: Int64, keep: Bool, failure: ReelError?) {
            let path = state.current.opened.first { $0.value == take }!.key
            if !keep { unlink(path) }
            state.withLock { $0.closed.append(Closed(take: take, path: path, frames: frames, keep: keep)) }
        }

        func progress(_ snapshot: CaptureSnapshot) {}
        func ended(_ ending: CaptureEnding) { state.withLock { $0.ending = ending } }
    }

    func engine(_ device: FakeInput) -> CaptureEngine {
        // A ring longer than any take here: a loaded machine slows the encoder, never drops audio.
        CaptureEngine(device: device, ringSeconds: 60, logger: Logger(label: "test"))
    }

    func decode(_ path: String) throws -> [Int16] {
        try TestAudio.decodeAll(try AudioFileOpener.open(path: path))
    }

    @Test(arguments: ["flac", "wav", "ogg", "opus"])
    func aSegmentedTakeJoinsExactly(codec: String) throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = FakeInput()
        device.script { $0.readDelayMicroseconds = 100 }  // paced, far faster than real time
        let takes = FileTakes(directory: directory, codec: codec, format: format)
        let engine = engine(device)
        defer { engine.close() }
        try engine.start(
            CaptureSession(
                format: format, plan: .segments(.every(seconds: 10, sampleRate: 48000)), maxFrames: 35 * 48000),
            takes: takes)
        #expect(waitUntil { takes.ending != nil })
        engine.stop()
        #expect(takes.ending == .limitReached)
        let closed = takes.closed
        #expect(closed.map(\.take.index) == [1, 2, 3, 4])
        #expect(closed.map(\.take.startFrame) == [0, 480_000, 960_000, 1_440_000])
        #expect(closed.map(\.frames) == [480_000, 480_000, 480_000, 240_000])
        var joined: [Int16] = []
        for take in closed {
            let samples = try decode(take.path)
            #expect(Int64(samples.count) == take.frames, "\(take.path) decodes to \(samples.count) frames, not \(take.frames)")
            joined += samples
        }
        #expect(joined.count == 35 * 48000, "the segments' frame counts add up to the take")
        if codec == "flac" || codec == "wav" {
            let ramp = (0..<joined.count).map { Int16(truncatingIfNeeded: $0) }
            let mismatch = firstDifference(joined, ramp)
            #expect(mismatch == nil, "the segments' samples do not join exactly: first difference at frame \(mismatch ?? -1)")
        }
    }

    @Test func threeBurstsGiveThreeTakesEachHoldingItsPrerollAndFirstSample() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = FakeInput()
        let bursts: [Int] = [3 * 48000, 10 * 48000, 20 * 48000]
        // Silence, and three 1-second bursts whose samples say where they are.
        let signal: @Sendable (Int) -> Int16 = { n in
            for start in bursts where n >= start && n < start + 48000 { return Int16(4096 + n % 20000) }
            return 0
        }
        device.script {
            $0.signal = signal
            $0.readDelayMicroseconds = 100
            $0.limitFrames = 26 * 48000
        }
        let takes = FileTakes(directory: directory, codec: "flac", format: format)
        let engine = engine(device)
        defer { engine.close() }
        let preroll: Int64 = 24000
        let plan = TriggerPlan(
            threshold: TriggerPlan.threshold(dBFS: -40), holdFrames: 48000, prerollFrames: preroll, minFrames: 4800)
        try engine.start(CaptureSession(format: format, plan: .triggered(plan)), takes: takes)
        #expect(waitUntil { takes.closed.count == 3 })
        engine.stop()
        let closed = takes.closed
        #expect(closed.count == 3)
        for (take, burst) in zip(closed, bursts) {
            #expect(take.keep)
            #expect(take.take.startFrame >= Int64(burst) - preroll && take.take.startFrame <= Int64(burst))
            let samples = try decode(take.path)
            let expected = (Int(take.take.startFrame)..<(Int(take.take.startFrame) + samples.count)).map(signal)
            let mismatch = firstDifference(samples, expected)
            #expect(mismatch == nil, "take \(take.take.index) does not hold the signal from its first frame: frame \(mismatch ?? -1)")
            let offset = burst - Int(take.take.startFrame)
            #expect(samples.count > offset && samples[offset] == signal(burst), "the burst's first sample is in the take")
            #expect(samples.count == offset + 48000 + 48000, "the take ends a hold after the burst")
        }
    }

    @Test func aListeningEngineStartsATakeThirtySecondsInThePastToTheSample() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = FakeInput()
        device.script {
            $0.readDelayMicroseconds = 100
            $0.limitFrames = 40 * 48000
        }
        let engine = engine(device)
        defer { engine.close() }
        try engine.listen(format: format, seconds: 35)
        // The whole 40 s were captured and taken from the ring (into the history).
        #expect(waitUntil { engine.snapshot.capturedFrames == 40 * 48000 })
        usleep(300_000)
        let takes = FileTakes(directory: directory, codec: "wav", format: format)
        let start = try engine.start(CaptureSession(format: format, prerollFrames: 30 * 48000), takes: takes)
        #expect(start == 10 * 48000)
        let final = engine.stop()
        #expect(final.running, "the device stays open after the session")
        #expect(takes.closed.count == 1)
        let samples = try decode(takes.closed[0].path)
        #expect(samples.count == 30 * 48000)
        let mismatch = firstDifference(samples, (10 * 48000..<40 * 48000).map { Int16(truncatingIfNeeded: $0) })
        #expect(mismatch == nil, "the take does not begin 30 s back to the sample: first difference at \(mismatch ?? -1)")
        engine.close()
        #expect(!device.state.isOpen)
    }

    @Test func aPrerollWithoutAListeningEngineIsRefused() throws {
        let engine = engine(FakeInput())
        let takes = FileTakes(directory: URL(fileURLWithPath: "/nonexistent"), codec: "wav", format: format)
        #expect(throws: ReelError.self) { try engine.start(CaptureSession(format: format, prerollFrames: 48000), takes: takes) }
        #expect(!engine.isRunning)
    }
}
