import Foundation
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// The capture engine with a fake device and an in-memory writer: limits, order, overruns,
/// device failure and a full disk, without a sound card.
@Suite struct CaptureEngineTests {
    let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)

    func engine(_ device: FakeInput, _ writer: MemoryWriter, ringSeconds: Double = 10, syncInterval: Double = 1)
        -> CaptureEngine
    {
        CaptureEngine(
            device: device, ringSeconds: ringSeconds, syncInterval: syncInterval, logger: Logger(label: "test"),
            makeWriter: { _ throws(ReelError) in writer })
    }

    /// Starts a capture and waits for the engine to end by itself; returns how it ended.
    func runToEnd(_ engine: CaptureEngine, _ request: CaptureRequest, timeout: Double = 10) throws -> CaptureEnding? {
        let ending = Locked<CaptureEnding?>(nil)
        try engine.start(request, onProgress: { _ in }, onEnd: { end in ending.withLock { $0 = end } })
        let deadline = Date().addingTimeInterval(timeout)
        while ending.current == nil && Date() < deadline { usleep(5000) }
        engine.stop()
        return ending.current
    }

    func ramp(_ count: Int) -> [Int16] { (0..<count).map { Int16(truncatingIfNeeded: $0) } }

    @Test func aLimitedTakeHoldsExactlyItsFramesInOrder() throws {
        let device = FakeInput()
        let writer = MemoryWriter()
        let engine = engine(device, writer)
        let ending = try runToEnd(engine, CaptureRequest(path: "/x", codec: "wav", format: format, maxFrames: 100_000))
        #expect(ending == .limitReached)
        let written = writer.state.samples
        #expect(written.count == 100_000)
        #expect(written == ramp(100_000), "captured samples arrive out of order or altered")
        #expect(writer.state.closed)
        #expect(device.state.calls.contains("close"))
        #expect(engine.snapshot.capturedFrames == 100_000)
        #expect(engine.snapshot.writtenFrames == 100_000)
        #expect(engine.snapshot.elapsed == 100_000.0 / 48000)
    }

    @Test func stopWritesEverythingCapturedAndFinishesTheFile() throws {
        let device = FakeInput()
        device.script { $0.readDelayMicroseconds = 1000 }
        let writer = MemoryWriter()
        let engine = engine(device, writer)
        let ended = Locked<CaptureEnding?>(nil)
        try engine.start(
            CaptureRequest(path: "/x", codec: "wav", format: format), onProgress: { _ in },
            onEnd: { end in ended.withLock { $0 = end } })
        usleep(200_000)
        let final = engine.stop()
        #expect(ended.current == nil, "a requested stop is not reported as an ending")
        #expect(final.capturedFrames > 0)
        #expect(writer.state.samples.count == Int(final.capturedFrames))
        #expect(writer.state.samples == ramp(writer.state.samples.count))
        #expect(writer.state.closed)
        #expect(!final.running)
    }

    @Test func overrunsAreRecoveredAndCounted() throws {
        let device = FakeInput()
        device.script {
            $0.readsBeforeError = 3
            $0.readResults = [-Int(EPIPE), -Int(EPIPE), -Int(EAGAIN), -Int(EPIPE)]
        }
        let writer = MemoryWriter()
        let engine = engine(device, writer)
        let ending = try runToEnd(engine, CaptureRequest(path: "/x", codec: "wav", format: format, maxFrames: 48000))
        #expect(ending == .limitReached)
        #expect(engine.snapshot.overruns == 3)
        #expect(device.state.calls.filter { $0 == "prepare" }.count == 3)
        #expect(writer.state.samples.count == 48000)
    }

    @Test func aSlowDiskFillsTheRingNotTheDevice() throws {
        // The writer takes 20 ms per 0.1 s chunk while the device delivers instantly: the ring
        // (1 s here) absorbs it until it is full; audio beyond it is dropped and counted, and
        // what was kept is in order.
        let device = FakeInput()
        let writer = MemoryWriter()
        writer.script { $0.writeDelayMicroseconds = 20_000 }
        let engine = engine(device, writer, ringSeconds: 1)
        let ending = try runToEnd(engine, CaptureRequest(path: "/x", codec: "wav", format: format, maxFrames: 480_000))
        #expect(ending == .limitReached)
        #expect(engine.snapshot.overruns > 0)
        #expect(engine.snapshot.capturedFrames == 480_000)
        #expect(writer.state.samples.count < 480_000)
        #expect(device.state.calls.filter { $0 == "prepare" }.isEmpty, "the device itself never overran")
    }

    @Test(arguments: [EIO, ENODEV])
    func aFailingDeviceEndsTheTakeAndKeepsWhatWasCaptured(code: Int32) throws {
        let device = FakeInput()
        device.script { $0.readDelayMicroseconds = 500 }
        let writer = MemoryWriter()
        let engine = engine(device, writer)
        let ended = Locked<CaptureEnding?>(nil)
        try engine.start(
            CaptureRequest(path: "/x", codec: "wav", format: format), onProgress: { _ in },
            onEnd: { end in ended.withLock { $0 = end } })
        usleep(100_000)
        device.script { $0.failForever = -Int(code) }
        let deadline = Date().addingTimeInterval(5)
        while ended.current == nil && Date() < deadline { usleep(5000) }
        let final = engine.stop()
        guard case .failed(let error)? = ended.current else {
            Issue.record("the engine did not end by itself: \(String(describing: ended.current))")
            return
        }
        #expect(error.reason == .deviceUnavailable)
        #expect(error.message.contains("fake-capture"))
        #expect(final.error?.reason == .deviceUnavailable)
        #expect(writer.state.closed)
        #expect(writer.state.samples.count == Int(final.capturedFrames), "everything captured before the failure is kept")
        #expect(writer.state.samples.count > 0)
    }

    @Test func aFullDiskStopsCaptureAndReportsIt() throws {
        let device = FakeInput()
        let writer = MemoryWriter()
        writer.script { $0.failAfterFrames = 30_000 }
        let engine = engine(device, writer)
        let ending = try runToEnd(engine, CaptureRequest(path: "/x", codec: "wav", format: format))
        #expect(ending == .failed(ReelError(.diskFull, "the disk holding the recording is full")))
        #expect(engine.snapshot.error?.reason == .diskFull)
        #expect(writer.state.closed)
        #expect(writer.state.samples == ramp(writer.state.samples.count))
        #expect(!device.state.isOpen)
    }

    @Test func theWriterSyncsWhileRecordingAndReportsProgress() throws {
        let device = FakeInput()
        device.script { $0.readDelayMicroseconds = 10_000 }  // about real time: 480 frames per 10 ms
        let writer = MemoryWriter()
        let engine = engine(device, writer, syncInterval: 0.1)
        let progress = Locked(0)
        let started = Date()
        try engine.start(
            CaptureRequest(path: "/x", codec: "wav", format: format), onProgress: { _ in progress.withLock { $0 += 1 } },
            onEnd: { _ in })
        // The writer drains the ring four times a second and syncs at the first wake after each
        // interval: about four syncs a second here, and progress after a sync at most once a
        // second (each is a hop to the recorder's queue).
        let deadline = Date().addingTimeInterval(30)
        while (writer.state.syncs < 8 || progress.current < 2) && Date() < deadline { usleep(10_000) }
        engine.stop()
        let elapsed = Date().timeIntervalSince(started)
        #expect(writer.state.syncs >= 8)
        #expect(progress.current >= 2)
        #expect(Double(progress.current) <= elapsed + 1, "\(progress.current) progress reports in \(elapsed) s")
        #expect(progress.current < writer.state.syncs, "progress is not reported at every sync")
    }

    @Test func levelsAreMeasuredInDecibelsFullScale() {
        var meter = LevelMeter(windowFrames: 4800, channels: 1)
        let tone = TestAudio.toneSamples(seconds: 0.1, rate: 48000, channels: 1, amplitude: 0.5)
        let levels = tone.withUnsafeBufferPointer { meter.add($0) }
        #expect(levels != nil)
        #expect(abs(levels!.peak - -6.02) < 0.1, "peak \(levels!.peak)")
        #expect(abs(levels!.rms - -9.03) < 0.1, "rms \(levels!.rms)")
        let silence = [Int16](repeating: 0, count: 4800)
        #expect(silence.withUnsafeBufferPointer { meter.add($0) } == AudioLevels(peak: AudioLevels.floor, rms: AudioLevels.floor))
        #expect(silence[0..<100].withUnsafeBufferPointer { meter.add($0) } == nil, "a partial window yields nothing")
    }
}

extension CaptureEngineTests {
    @Test func aFailedDeviceRecordsAgainOnceItIsBack() throws {
        let device = FakeInput()
        let first = MemoryWriter()
        let second = MemoryWriter()
        let writers = Locked([first, second])
        let engine = CaptureEngine(
            device: device, logger: Logger(label: "test"),
            makeWriter: { _ throws(ReelError) in writers.withLock { $0.removeFirst() } })
        device.script { $0.failForever = -Int(ENODEV) }
        let ended = Locked<CaptureEnding?>(nil)
        try engine.start(
            CaptureRequest(path: "/a", codec: "wav", format: format), onProgress: { _ in },
            onEnd: { end in ended.withLock { $0 = end } })
        let deadline = Date().addingTimeInterval(5)
        while ended.current == nil && Date() < deadline { usleep(5000) }
        engine.stop()
        guard case .failed(let error)? = ended.current else {
            Issue.record("the engine did not end by itself: \(String(describing: ended.current))")
            return
        }
        #expect(error.reason == .deviceUnavailable)
        // The device is back: the next take records.
        device.script { $0.failForever = nil }
        let ending = try runToEnd(engine, CaptureRequest(path: "/b", codec: "wav", format: format, maxFrames: 4800))
        #expect(ending == .limitReached)
        #expect(second.state.samples.count == 4800)
        #expect(engine.snapshot.error == nil)
    }
}
