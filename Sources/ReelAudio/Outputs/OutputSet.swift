// Every output the engine plays to, behind the one `PCMOutput` the engine writes.

import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// The engine's device: the ALSA device and the pipe outputs, each on or off.
///
/// One output is the clock: the ALSA device when it is on, else `RealTimeClock`. The engine
/// writes to the clock exactly as it wrote to the device (so gapless joins, the software volume
/// applied before the write, pause and seek are the same for every output); what the clock
/// takes goes to every pipe that is on (`PipeOutput.take`), and each pipe writes to its FIFO what
/// falls due by the clock's audible frame (`flush`, on every write and delay, and at least every
/// `pipeFlushMilliseconds` while playing, since `wait` returns that often when a pipe is on).
/// The position the engine reports is the clock's: for pipes alone, what the clock queued.
///
/// Every method runs on the audio thread. `onStatus` is called there when a pipe's status
/// changes or a pipe fails (then it is turned off here and its error given).
public final class OutputSet: PCMOutput, @unchecked Sendable {
    public typealias StatusHandler = @Sendable (_ id: Int, _ status: OutputStatus, _ error: ReelError?) -> Void

    /// How often pipes are written while playing, at most.
    static let pipeFlushMilliseconds = 50

    let device: PCMOutput
    let deviceID: Int
    private(set) var deviceEnabled: Bool
    let clock = RealTimeClock()
    let pipes: [PipeOutput]
    private var enabledPipes: [PipeOutput] = []
    private let onStatus: StatusHandler
    private var configuration: PCMConfiguration?
    /// Frames the clock took since it was last prepared.
    private var written: Int64 = 0

    /// - Parameters:
    ///   - device: the ALSA device (or a test's device), output `deviceID`.
    ///   - pipes: the pipe outputs with their ids.
    ///   - enabled: the ids that are on at the start.
    public init(
        device: PCMOutput, deviceID: Int = 0, pipes: [(id: Int, settings: PipeOutputSettings)] = [],
        enabled: Set<Int>? = nil, onStatus: @escaping StatusHandler = { _, _, _ in }
    ) {
        self.device = device
        self.deviceID = deviceID
        self.pipes = pipes.map { PipeOutput(id: $0.id, settings: $0.settings) }
        self.onStatus = onStatus
        let enabled = enabled ?? Set([deviceID] + pipes.map(\.id))
        deviceEnabled = enabled.contains(deviceID)
        for pipe in self.pipes where !enabled.contains(pipe.id) { pipe.shutDown() }
        enabledPipes = self.pipes.filter { enabled.contains($0.id) }
        for pipe in enabledPipes { connect(pipe) }
    }

    /// The output whose pace the engine follows.
    var clockOutput: PCMOutput { deviceEnabled ? device : clock }

    public var name: String { clockOutput.name }
    /// The clock output's (a pipe is written as it is played: nothing held to drop).
    public var prepareDropsQueued: Bool { clockOutput.prepareDropsQueued }

    /// The ids that are on.
    public var enabled: Set<Int> {
        var ids = Set(enabledPipes.map(\.id))
        if deviceEnabled { ids.insert(deviceID) }
        return ids
    }

    /// True when turning these ids on and off changes the clock (the device must close first).
    public func changesClock(_ selection: Set<Int>) -> Bool {
        selection.contains(deviceID) != deviceEnabled
    }

    /// Turns outputs on and off. Pipes change at once (a pipe turned on joins at the next
    /// frame); a change of clock must come with the set closed (the engine closes and reopens).
    public func select(_ selection: Set<Int>) {
        deviceEnabled = selection.contains(deviceID)
        for pipe in pipes {
            let wanted = selection.contains(pipe.id)
            let isOn = enabledPipes.contains { $0 === pipe }
            if wanted && !isOn {
                pipe.reopen()
                connect(pipe)
                if let configuration, pipe.status != .disabled { configure(pipe, for: configuration) }
            } else if !wanted && isOn {
                pipe.shutDown()
            }
        }
        // A pipe that failed to open or set up is off again (`fail` said why).
        enabledPipes = pipes.filter { selection.contains($0.id) && $0.status != .disabled }
    }

    /// The frames each pipe has written to its FIFO and dropped, by id (for benchmarks and logs).
    public var pipeCounters: [(id: Int, written: Int64, dropped: Int64)] {
        pipes.map { ($0.id, $0.writtenFrames, $0.droppedFrames) }
    }

    // MARK: PCMOutput

    public func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        guard deviceEnabled || !enabledPipes.isEmpty else {
            throw ReelError(.deviceUnavailable, "every output is turned off; turn one on to play")
        }
        let opened = try clockOutput.open(format, timing: timing)
        configuration = opened
        written = 0
        for pipe in enabledPipes { configure(pipe, for: opened) }
        return opened
    }

    public func prepare() -> Int32 {
        written = 0
        for pipe in enabledPipes { pipe.reset() }
        return clockOutput.prepare()
    }

    public func resume() -> Int32 { clockOutput.resume() }

    public func drop() {
        clockOutput.drop()
        written = 0
        for pipe in enabledPipes { pipe.reset() }
    }

    public func close() {
        clockOutput.close()
        configuration = nil
        written = 0
        for pipe in pipes { pipe.close() }
    }

    public func start() -> Int32 { clockOutput.start() }

    /// The last frame before a drain was written (the end of the queue, or a track of another
    /// format next): the pipes get what their resamplers still hold.
    public func finishPipes() {
        for pipe in enabledPipes { pipe.finish() }
    }

    /// Paused or stopped by a command: the pipes are emptied too, so every room stops with the
    /// device.
    public func silencePipes() {
        for pipe in enabledPipes { pipe.silence() }
    }

    public func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int {
        let taken = clockOutput.write(buffer, frames: frames)
        if taken > 0 {
            written += Int64(taken)
            for pipe in enabledPipes { pipe.take(buffer, frames: taken) }
        }
        if !enabledPipes.isEmpty { flushPipes(delay: clockOutput.delay()) }
        return taken
    }

    public func delay() -> Int {
        let queued = clockOutput.delay()
        if !enabledPipes.isEmpty { flushPipes(delay: queued) }
        return queued
    }

    public func wait(timeoutMilliseconds: Int) -> Int32 {
        clockOutput.wait(timeoutMilliseconds: waitLimit(timeoutMilliseconds))
    }

    public func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32) -> Int32 {
        clockOutput.wait(timeoutMilliseconds: waitLimit(timeoutMilliseconds), wakeDescriptor: wakeDescriptor)
    }

    // MARK: Pipes

    /// The longest the audio thread may sleep while playing: `timeout`, or less while a pipe is
    /// on (pipes are written only when the thread is awake).
    public func waitLimit(_ timeout: Int) -> Int {
        enabledPipes.isEmpty ? timeout : min(timeout, Self.pipeFlushMilliseconds)
    }

    private func connect(_ pipe: PipeOutput) {
        do throws(ReelError) {
            try pipe.connect(now: monotonicNanoseconds())
        } catch {
            fail(pipe, error)
        }
    }

    private func configure(_ pipe: PipeOutput, for configuration: PCMConfiguration) {
        do throws(ReelError) {
            try pipe.configure(
                for: configuration.format, maxFrames: configuration.periodFrames, bufferFrames: configuration.bufferFrames)
        } catch {
            fail(pipe, error)
        }
    }

    /// Writes what fell due on every pipe that is on; `delay` is the clock's (a negative errno
    /// after an underrun counts as nothing queued).
    private func flushPipes(delay: Int) {
        let audible = written - Int64(max(delay, 0))
        let now = monotonicNanoseconds()
        for pipe in enabledPipes {
            do throws(ReelError) {
                if let status = try pipe.flush(audibleSourceFrame: audible, now: now) {
                    onStatus(pipe.id, status, nil)
                }
            } catch {
                fail(pipe, error)
            }
        }
    }

    /// A pipe that cannot be used: off, with its error; playback goes on.
    private func fail(_ pipe: PipeOutput, _ error: ReelError) {
        pipe.shutDown()
        enabledPipes.removeAll { $0 === pipe }
        onStatus(pipe.id, .disabled, error)
    }
}
