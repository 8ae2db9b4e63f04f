// Pipe outputs on the real engine with a real FIFO: what a reader gets, and what nobody read.

import Foundation
import Glibc
import Logging
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio

@Suite struct PipeOutputTests {
    let directory = TestAudio.temporaryDirectory()

    /// An engine on a `FakeOutput` (output 0) and one pipe output (output 1).
    final class Harness: @unchecked Sendable {
        let device = FakeOutput()
        let statuses = Locked<[(Int, OutputStatus, ReelError?)]>([])
        let outputs: OutputSet
        var engine: PlaybackEngine!

        init(pipe: PipeOutputSettings, enabled: Set<Int>) {
            outputs = OutputSet(
                device: device, deviceID: 0, pipes: [(1, pipe)], enabled: enabled,
                onStatus: { [statuses] id, status, error in statuses.withLock { $0.append((id, status, error)) } })
            engine = PlaybackEngine(device: outputs, logger: Logger(label: "test")) { _ in }
            engine.start()
        }

        deinit { engine.shutdown() }

        func run(_ make: (@escaping PlaybackCommand.Reply) -> PlaybackCommand) -> Result<PlaybackSnapshot, ReelError> {
            let box = Locked<Result<PlaybackSnapshot, ReelError>?>(nil)
            engine.send(make { result in box.withLock { $0 = result } })
            for _ in 0..<1000 {
                if let result = box.current { return result }
                usleep(10_000)
            }
            fatalError("the engine did not reply within 10 s")
        }

        func play(_ path: String) throws {
            let reader = try AudioFileOpener.open(path: path)
            _ = try run { .load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, $0) }.get()
        }

        func waitUntil(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if condition() { return true }
                usleep(5_000)
            }
            return false
        }
    }

    /// Reads a FIFO on a thread of its own (blocking reads: it takes what comes at once) until
    /// told to stop.
    final class Reader: @unchecked Sendable {
        let received = Locked<[UInt8]>([])
        private let descriptor: Int32
        private let stopped = Locked(false)
        private var thread: Thread?

        init(path: String) {
            descriptor = open(path, O_RDONLY | O_NONBLOCK)
            let flags = fcntl(descriptor, F_GETFL)
            _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
            let thread = Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 65536)
                while !stopped.current {
                    var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    guard poll(&poller, 1, 50) > 0 else { continue }
                    let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, 65536) }
                    if count > 0 { received.withLock { $0.append(contentsOf: buffer[0..<count]) } }
                }
            }
            self.thread = thread
            thread.start()
        }

        func stop() {
            stopped.withLock { $0 = true }
            usleep(100_000)
            close(descriptor)
        }
    }

    /// Bytes waiting in the FIFO at `path`, seen through a read end opened for the purpose.
    func queuedBytes(_ path: String) -> Int {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK)
        defer { close(descriptor) }
        var count: Int32 = 0
        return ioctl(descriptor, UInt(FIONREAD), &count) == 0 ? Int(count) : -1
    }

    func makeFIFO(_ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try FIFOPath.prepare(path)
        return path
    }

    @Test func aReaderGetsEveryFrameAtTheSpeedOfTheMusicWithTheDeviceOff() throws {
        let wav = directory.appendingPathComponent("tone.wav").path
        let samples = try TestAudio.writeTone(to: wav, codec: "wav", seconds: 1, rate: 48000)
        let fifo = try makeFIFO("pipe")
        let reader = Reader(path: fifo)
        // A lead longer than the tone: nothing is ever thrown away whatever the reader's pace (this
        // test is about the bytes; what is thrown away is the next test's), so every byte counts.
        let harness = Harness(
            pipe: PipeOutputSettings(name: "pipe", path: fifo, leadMilliseconds: 60_000, slackMilliseconds: 0),
            enabled: [1])
        let started = Date()
        try harness.play(wav)
        #expect(harness.waitUntil { harness.engine.snapshot.activity == .stopped })
        let elapsed = Date().timeIntervalSince(started)
        #expect(harness.waitUntil { reader.received.current.count >= samples.count * 2 })
        reader.stop()
        let expected = samples.withUnsafeBytes { Array($0) }
        let received = reader.received.current
        let firstDifference = zip(received, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(received.count == expected.count && firstDifference == nil,
                "got \(received.count) of \(expected.count) bytes, first difference at \(firstDifference.map(String.init) ?? "none")")
        // Paced by the clock: a second of music takes (at least nearly) a second, never a burst.
        #expect(elapsed > 0.8, "played a second of music in \(elapsed) s")
        #expect(harness.device.state.framesWritten == 0, "the device is off")
        #expect(harness.statuses.current.contains { $0.0 == 1 && $0.1 == .connected })
    }

    @Test func nobodyReadingLeavesNoMoreThanTheLeadAndTheEndLeavesNothing() throws {
        let wav = directory.appendingPathComponent("tone.wav").path
        try TestAudio.writeTone(to: wav, codec: "wav", seconds: 1.5, rate: 48000)
        let fifo = try makeFIFO("pipe")
        let harness = Harness(
            pipe: PipeOutputSettings(name: "pipe", path: fifo, leadMilliseconds: 100, slackMilliseconds: 50),
            enabled: [0, 1])
        harness.device.script { $0.writeDelayMicroseconds = 20_000 }  // about real time
        try harness.play(wav)
        var largest = 0
        while harness.engine.snapshot.activity == .playing {
            largest = max(largest, queuedBytes(fifo))
            usleep(20_000)
        }
        // 48000 Hz · 4 bytes · the lead (100 ms): the excess goes before a write, not after it.
        #expect(largest <= 192 * 100, "the pipe held \(largest) bytes")
        #expect(largest > 0)
        #expect(queuedBytes(fifo) == 0, "what nobody read is thrown away when the music ends")
        #expect(harness.statuses.current.contains { $0.0 == 1 && $0.1 == .waitingForReader })
    }

    @Test func pauseEmptiesThePipe() throws {
        let wav = directory.appendingPathComponent("tone.wav").path
        try TestAudio.writeTone(to: wav, codec: "wav", seconds: 5, rate: 48000)
        let fifo = try makeFIFO("pipe")
        let harness = Harness(pipe: PipeOutputSettings(name: "pipe", path: fifo), enabled: [1])
        try harness.play(wav)
        #expect(harness.waitUntil { queuedBytes(fifo) > 0 })
        _ = try harness.run { .pause($0) }.get()
        #expect(queuedBytes(fifo) == 0)
    }

    @Test func aPathThatIsNotAFIFOTurnsThePipeOffAndTheDevicePlaysOn() throws {
        let wav = directory.appendingPathComponent("tone.wav").path
        let samples = try TestAudio.writeTone(to: wav, codec: "wav", seconds: 0.5, rate: 48000)
        let file = directory.appendingPathComponent("plain").path
        FileManager.default.createFile(atPath: file, contents: Data())
        #expect(throws: ReelError.self) { try FIFOPath.prepare(file) }
        let harness = Harness(pipe: PipeOutputSettings(name: "pipe", path: file), enabled: [0, 1])
        try harness.play(wav)
        #expect(harness.waitUntil { harness.engine.snapshot.activity == .stopped })
        #expect(harness.device.state.written == samples.withUnsafeBytes { Array($0) })
        let failure = harness.statuses.current.first { $0.0 == 1 && $0.1 == .disabled }
        #expect(failure?.2?.message.contains("is not a FIFO") == true, "\(String(describing: failure))")
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? -1
        #expect(size == 0, "nothing was written to the plain file")
    }

    @Test func everyOutputOffRefusesToPlayWithAReason() throws {
        let wav = directory.appendingPathComponent("tone.wav").path
        try TestAudio.writeTone(to: wav, codec: "wav", seconds: 0.5, rate: 48000)
        let harness = Harness(pipe: PipeOutputSettings(name: "pipe", path: try makeFIFO("pipe")), enabled: [])
        let reader = try AudioFileOpener.open(path: wav)
        let result = harness.run { .load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, $0) }
        guard case .failure(let error) = result else {
            Issue.record("played with every output off")
            return
        }
        #expect(error.message.contains("every output is turned off"))
    }

    @Test func turningTheDeviceOffWhilePlayingMovesTheClockToThePipeWithoutStopping() throws {
        let wav = directory.appendingPathComponent("tone.wav").path
        try TestAudio.writeTone(to: wav, codec: "wav", seconds: 3, rate: 48000)
        let fifo = try makeFIFO("pipe")
        let reader = Reader(path: fifo)
        defer { reader.stop() }
        let harness = Harness(pipe: PipeOutputSettings(name: "pipe", path: fifo), enabled: [0])
        harness.device.script { $0.writeDelayMicroseconds = 20_000 }
        try harness.play(wav)
        #expect(harness.waitUntil { harness.device.state.framesWritten > 4800 })
        let switched = try harness.run { .selectOutputs([1], $0) }.get()
        #expect(switched.activity == .playing)
        #expect(harness.waitUntil { reader.received.current.count > 48000 })
        #expect(harness.engine.snapshot.activity == .playing)
    }
}
