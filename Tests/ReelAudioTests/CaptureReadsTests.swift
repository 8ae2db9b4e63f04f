// How the capture engine asks the device for frames: its period and buffer, one read per
// wake-up, a late wake-up emptied in one read, and the level meter's integer arithmetic.

import Foundation
import Glibc
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// A device paced by its waits, as a real one is by time: each `wait` makes one more period
/// readable; a read takes what is readable (at most what is asked) or finds nothing (-EAGAIN).
/// The first wait can make several periods readable (a thread that woke late).
final class PacedInput: PCMInput, @unchecked Sendable {
    let name = "paced-capture"
    let periodFrames: Int
    let bufferFrames: Int
    private let lock = Locked(State())

    struct State {
        var readable = 0
        var produced = 0
        var waits = 0
        /// Frames each successful read asked for and got.
        var reads: [(asked: Int, got: Int)] = []
        var emptyReads = 0
        /// Periods the first wait makes readable.
        var firstWaitPeriods = 1
    }

    init(periodFrames: Int, bufferFrames: Int) {
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    var state: State { lock.current }
    func script(_ body: (inout State) -> Void) { lock.withLock(body) }

    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        PCMConfiguration(format: format, periodFrames: periodFrames, bufferFrames: bufferFrames)
    }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        lock.withLock { state in
            let count = min(frames, state.readable)
            guard count > 0 else {
                state.emptyReads += 1
                return -Int(EAGAIN)
            }
            let samples = buffer.assumingMemoryBound(to: Int16.self)
            for index in 0..<count { samples[index] = Int16(truncatingIfNeeded: state.produced + index) }
            state.produced += count
            state.readable -= count
            state.reads.append((frames, count))
            return count
        }
    }

    func wait(timeoutMilliseconds: Int) -> Int32 {
        usleep(200)
        lock.withLock { state in
            state.waits += 1
            let periods = state.waits == 1 ? state.firstWaitPeriods : 1
            state.readable = min(state.readable + periods * periodFrames, bufferFrames)
        }
        return 1
    }

    func prepare() -> Int32 { 0 }
    func resume() -> Int32 { 0 }
    func drop() {}
    func close() {}
}

@Suite struct CaptureReadsTests {
    let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 1)

    func record(_ device: PacedInput, frames: Int64) throws -> MemoryWriter {
        let writer = MemoryWriter()
        let engine = CaptureEngine(
            device: device, syncInterval: 1, logger: Logger(label: "test"), makeWriter: { _ throws(ReelError) in writer })
        let ended = Locked(false)
        try engine.start(
            CaptureRequest(path: "/x", codec: "wav", format: format, maxFrames: frames), onProgress: { _ in },
            onEnd: { _ in ended.withLock { $0 = true } })
        let deadline = Date().addingTimeInterval(30)
        while !ended.current && Date() < deadline { usleep(5000) }
        engine.stop()
        #expect(ended.current, "the take did not reach its length")
        return writer
    }

    @Test func captureAsksForQuarterSecondPeriodsInAOneSecondBuffer() {
        #expect(PCMTiming.capture == PCMTiming(periodMicroseconds: 250_000, bufferMicroseconds: 1_000_000))
        // A playback timing with longer periods keeps them, in a buffer of at least four.
        let long = PCMTiming(periodMicroseconds: 500_000, bufferMicroseconds: 1_000_000).forCapture
        #expect(long == PCMTiming(periodMicroseconds: 500_000, bufferMicroseconds: 2_000_000))
        // Shorter ones are raised to the capture period.
        let short = PCMTiming(periodMicroseconds: 20_000, bufferMicroseconds: 100_000).forCapture
        #expect(short == PCMTiming.capture)
    }

    @Test func eachWakeUpIsOneReadNotARetryThatFindsNothing() throws {
        let device = PacedInput(periodFrames: 480, bufferFrames: 1920)
        let writer = try record(device, frames: 48_000)
        let state = device.state
        #expect(writer.state.samples.count == 48_000)
        #expect(writer.state.samples == (0..<48_000).map { Int16(truncatingIfNeeded: $0) }, "frames lost or reordered")
        #expect(state.waits >= 100, "the device was read \(state.reads.count) times with \(state.waits) waits")
        // Before the first wait the device is empty; after that every read follows a wait and
        // finds its period. (Reading again at once, to find nothing, was one extra read per period.)
        #expect(state.emptyReads <= 1, "\(state.emptyReads) reads found nothing in \(state.waits) periods")
    }

    @Test func aLateWakeUpEmptiesTheDeviceInOneRead() throws {
        let device = PacedInput(periodFrames: 480, bufferFrames: 1920)
        device.script { $0.firstWaitPeriods = 4 }
        let writer = try record(device, frames: 9600)
        let reads = device.state.reads
        #expect(reads.first?.asked ?? 0 >= 1920, "a read asks for the device's whole buffer")
        #expect(reads.first?.got == 1920, "the four periods held came in \(reads.map(\.got)) reads")
        #expect(writer.state.samples == (0..<9600).map { Int16(truncatingIfNeeded: $0) })
    }

    @Test func theMetersIntegerSumsAreExactAndDoNotDependOnHowTheSamplesArrive() {
        // Full scale both ways: -32768 is 0 dBFS, its square and a window of them fit.
        var meter = LevelMeter(windowFrames: 4800, channels: 2)
        let loudest = [Int16](repeating: .min, count: 9600)
        let levels = loudest.withUnsafeBufferPointer { meter.add($0) }
        #expect(levels == AudioLevels(peak: 0, rms: 0))

        // A known sequence: samples ±1000 and ±3000 alternate: peak 3000, RMS sqrt((1e6 + 9e6) / 2).
        let pattern: [Int16] = [1000, -3000, -1000, 3000]
        let samples = (0..<4800).map { pattern[$0 % 4] }
        var whole = LevelMeter(windowFrames: 4800, channels: 1)
        let once = samples.withUnsafeBufferPointer { whole.add($0) }
        #expect(once?.peak == 20 * log10(3000.0 / 32768))
        #expect(once?.rms == 20 * log10((10_000_000.0 / 2).squareRoot() / 32768))
        var pieces = LevelMeter(windowFrames: 4800, channels: 1)
        var last: AudioLevels?
        for start in stride(from: 0, to: 4800, by: 333) {
            let slice = samples[start..<min(start + 333, 4800)]
            if let levels = slice.withUnsafeBufferPointer({ pieces.add($0) }) { last = levels }
        }
        #expect(last == once, "a window fed in pieces reads as the same window fed at once")
    }
}
