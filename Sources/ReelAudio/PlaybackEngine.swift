// The playback engine: one audio thread that owns the PCM and the decoder.

import Logging
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// Plays one track at a time on a dedicated thread. The control side posts `PlaybackCommand`s
/// (from any thread) and reads `snapshot`; the audio thread performs them between periods, and
/// a command wakes it from its wait for the device, so each takes effect at once; it reports
/// every change through `onChange`.
///
/// Pause drops what the device has queued and rewinds the decoder to the audible frame, so
/// pausing is immediate and resuming continues exactly where the sound stopped.
public final class PlaybackEngine: @unchecked Sendable {
    public typealias ChangeHandler = @Sendable (PlaybackSnapshot) -> Void

    private let mailbox = Mailbox<PlaybackCommand>()
    private let published = Locked(PlaybackSnapshot())
    private var thread: pthread_t?
    private let runner: Runner

    /// - Parameters:
    ///   - device: the playback PCM; from now on touched only by the audio thread.
    ///   - onChange: called on the audio thread after each discrete change (start, pause, seek,
    ///     end, failure); it must not block.
    public init(device: PCMOutput, timing: PCMTiming = PCMTiming(), logger: Logger, onChange: @escaping ChangeHandler) {
        runner = Runner(
            device: device, timing: timing, mailbox: mailbox, published: published, logger: logger,
            onChange: onChange)
    }

    public func start() {
        let runner = self.runner
        thread = AudioThread.start(name: "reel-playback") { runner.run() }
    }

    /// Posts a command; its reply comes on the audio thread.
    public func send(_ command: PlaybackCommand) {
        mailbox.post(command)
    }

    /// The latest published state. Any thread.
    public var snapshot: PlaybackSnapshot { published.current }

    /// The latest state and the audible position now, in seconds. Any thread.
    ///
    /// Devices consume in bursts (PulseAudio takes several periods at once), so a fresh
    /// measurement can land a little behind what interpolation already reported. Between jumps
    /// the position reported here never goes backwards.
    public func currentPosition() -> (snapshot: PlaybackSnapshot, position: Double) {
        let snapshot = published.current
        let measured = snapshot.position(at: monotonicNanoseconds())
        let position = reported.withLock { floor -> Double in
            if floor.epoch == snapshot.epoch && snapshot.activity == .playing {
                floor.position = max(floor.position, measured)
            } else {
                floor = (snapshot.epoch, measured)
            }
            return floor.position
        }
        return (snapshot, position)
    }

    private let reported = Locked<(epoch: Int, position: Double)>((0, 0))

    /// Stops playback, closes the device and ends the thread.
    public func shutdown() {
        guard let thread else { return }
        mailbox.post(.shutdown({}))
        pthread_join(thread, nil)
        self.thread = nil
    }
}

/// The audio thread's side. Every stored property belongs to that thread.
private final class Runner: @unchecked Sendable {
    let device: PCMOutput
    let timing: PCMTiming
    let mailbox: Mailbox<PlaybackCommand>
    let published: Locked<PlaybackSnapshot>
    let logger: Logger
    let onChange: PlaybackEngine.ChangeHandler

    var state = PlaybackSnapshot()
    var reader: AudioFileReader?
    var configuration: PCMConfiguration?
    var buffer: UnsafeMutableRawPointer?
    var bufferCapacityBytes = 0
    var pendingOffset = 0
    var pendingFrames = 0
    var endOfFile = false
    /// When the last queued frame must have been heard (monotonic ns), set at the end of the file.
    /// Some devices (PulseAudio) keep reporting their own latency as delay after they ran dry.
    var drainDeadline: UInt64 = 0
    var running = true

    init(
        device: PCMOutput, timing: PCMTiming, mailbox: Mailbox<PlaybackCommand>,
        published: Locked<PlaybackSnapshot>, logger: Logger, onChange: @escaping PlaybackEngine.ChangeHandler
    ) {
        self.device = device
        self.timing = timing
        self.mailbox = mailbox
        self.published = published
        self.logger = logger
        self.onChange = onChange
    }

    deinit { buffer?.deallocate() }

    func run() {
        while running {
            for command in mailbox.take(wait: state.activity != .playing) {
                handle(command)
                if !running { break }
            }
            if running && state.activity == .playing {
                pump()
            }
        }
        closeDevice()
        reader = nil
    }

    // MARK: Commands

    func handle(_ command: PlaybackCommand) {
        switch command {
        case .load(let box, let token, let startFrame, let startPlaying, let reply):
            reply(load(box.reader, token: token, startFrame: startFrame, startPlaying: startPlaying))
        case .pause(let reply):
            reply(pause())
        case .resume(let reply):
            reply(resume())
        case .toggle(let reply):
            reply(state.activity == .playing ? pause() : resume())
        case .stop(let reply):
            stop(error: nil)
            reply(.success(state))
        case .seek(let target, let reply):
            reply(seek(target))
        case .shutdown(let done):
            stop(error: nil)
            running = false
            done()
        }
    }

    func load(_ newReader: AudioFileReader, token: Int, startFrame: Int64, startPlaying: Bool)
        -> Result<PlaybackSnapshot, ReelError>
    {
        dropQueued()
        reader = newReader
        state.token = token
        state.format = newReader.format
        state.sampleRate = newReader.pcmFormat.sampleRate
        state.frameCount = newReader.frameCount
        state.error = nil
        let frame = min(max(startFrame, 0), newReader.frameCount ?? Int64.max)
        do throws(ReelError) {
            try newReader.seek(to: frame)
            setPosition(frame)
            if startPlaying {
                try openDevice(for: newReader.pcmFormat)
                state.activity = .playing
            } else {
                state.activity = .paused
            }
        } catch {
            // Stopped, with the track that could not start and why, so the stream shows both.
            stop(error: error)
            return .failure(error)
        }
        publish(changed: true)
        return .success(state)
    }

    func pause() -> Result<PlaybackSnapshot, ReelError> {
        switch state.activity {
        case .stopped:
            return .failure(ReelError(.notPlaying, "nothing is playing"))
        case .paused:
            return .success(state)
        case .playing:
            do throws(ReelError) {
                try rewindToAudible()
            } catch {
                stop(error: error)
                return .failure(error)
            }
            state.activity = .paused
            publish(changed: true)
            return .success(state)
        }
    }

    func resume() -> Result<PlaybackSnapshot, ReelError> {
        switch state.activity {
        case .playing:
            return .success(state)
        case .stopped:
            return .failure(ReelError(.notPlaying, "nothing is loaded to resume; play a file first"))
        case .paused:
            guard let reader else { return .failure(ReelError(.notPlaying, "nothing is loaded to resume")) }
            do throws(ReelError) {
                try openDevice(for: reader.pcmFormat)
            } catch {
                state.error = error
                publish(changed: true)
                return .failure(error)
            }
            state.error = nil
            state.activity = .playing
            measure()
            publish(changed: true)
            return .success(state)
        }
    }

    func seek(_ target: SeekTarget) -> Result<PlaybackSnapshot, ReelError> {
        guard state.activity != .stopped, let reader else {
            return .failure(ReelError(.notPlaying, "nothing is playing to seek in"))
        }
        let now = monotonicNanoseconds()
        let rate = Double(state.sampleRate)
        let current = state.position(at: now)
        let duration = state.duration ?? Double(Int64.max) / rate
        let seconds: Double
        do throws(ReelError) {
            seconds = try target.resolve(current: current, duration: duration)
        } catch {
            return .failure(error)
        }
        var frame = frameIndex(seconds: seconds, rate: rate)
        if let count = state.frameCount { frame = min(frame, count) }
        dropQueued()
        do throws(ReelError) {
            try reader.seek(to: frame)
        } catch {
            stop(error: error)
            return .failure(error)
        }
        setPosition(frame)
        if state.activity == .playing {
            let prepared = device.prepare()
            if prepared < 0 {
                deviceFailed(code: Int32(prepared))
                return .failure(state.error!)
            }
        }
        publish(changed: true)
        return .success(state)
    }

    /// Stops and closes the device and the decoder; `error` says why if it was not asked for.
    func stop(error: ReelError?) {
        closeDevice()
        reader = nil
        pendingFrames = 0
        endOfFile = false
        let wasStopped = state.activity == .stopped
        state.activity = .stopped
        state.audibleFrame = 0
        state.writtenFrame = 0
        state.error = error
        state.measuredAt = monotonicNanoseconds()
        if !wasStopped || error != nil { publish(changed: true) } else { publish(changed: false) }
    }

    // MARK: Playing

    /// One step while playing: decode a period if none is pending, hand it to the device
    /// (blocking for at most about a period), or wait for the device to drain at the end.
    func pump() {
        guard let reader, let configuration, let buffer else { return }
        if pendingFrames == 0 && !endOfFile {
            do throws(ReelError) {
                pendingFrames = try reader.read(into: buffer, frames: configuration.periodFrames)
            } catch {
                logger.warning("decoding failed", metadata: ["file": "\(reader.path)", "error": "\(error.message)"])
                stop(error: error)
                return
            }
            pendingOffset = 0
            if pendingFrames == 0 {
                endOfFile = true
                _ = device.start()  // a file shorter than the start threshold
                let queued = UInt64(max(device.delay(), 0))
                let rate = UInt64(max(configuration.format.sampleRate, 1))
                // Slack for devices that consume in bursts: two periods, but no more than
                // 200 ms, so that long periods do not make the end late.
                drainDeadline = monotonicNanoseconds() + queued * 1_000_000_000 / rate
                    + UInt64(min(2 * periodMilliseconds, 200)) * 1_000_000
            }
        }
        if pendingFrames > 0 {
            let bytesPerFrame = configuration.format.bytesPerFrame
            let written = device.write(buffer + pendingOffset * bytesPerFrame, frames: pendingFrames)
            if written >= 0 {
                pendingOffset += written
                pendingFrames -= written
                state.writtenFrame += Int64(written)
            } else if written == -Int(EAGAIN) {
                // No room: wait for it, or for a command (a pause or seek acts at once).
                _ = device.wait(timeoutMilliseconds: periodMilliseconds, wakeDescriptor: mailbox.wakeDescriptor)
            } else if let failure = XrunRecovery.recover(
                from: Int32(written), device: device, counters: &state.counters,
                periodMilliseconds: periodMilliseconds)
            {
                deviceFailed(code: failure)
                return
            }
            measure()
            publish(changed: false)
            return
        }
        // End of file: wait for what is queued to be heard, checking the mailbox every period.
        let queued = device.delay()
        if queued <= 0 || monotonicNanoseconds() >= drainDeadline {
            trackEnded()
            return
        }
        // Nothing is left to write, so there is nothing to wait for at the device (its `wait`
        // answers at once once the buffer has room): sleep until the queue should have played,
        // at most a period, so the mailbox is still read every period.
        let rate = max(configuration.format.sampleRate, 1)
        let untilHeard = max(queued * 1000 / rate, 1)
        sleepOrCommand(milliseconds: min(untilHeard, periodMilliseconds))
        measure()
        publish(changed: false)
    }

    /// Sleeps, but returns as soon as a command is posted.
    func sleepOrCommand(milliseconds: Int) {
        guard mailbox.wakeDescriptor >= 0 else {
            usleep(UInt32(milliseconds) * 1000)
            return
        }
        var descriptor = pollfd(fd: mailbox.wakeDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(milliseconds))
    }

    func trackEnded() {
        logger.debug("track ended", metadata: ["file": "\(reader?.path ?? "")"])
        stop(error: nil)
    }

    /// The device failed beyond recovery: keep the track, paused where the sound stopped.
    func deviceFailed(code: Int32) {
        let error = ReelError(
            .deviceUnavailable,
            "ALSA device \"\(device.name)\" failed: \(ALSA.describe(code)); playback is paused, resume when the device is back")
        logger.error("playback device failed", metadata: ["device": "\(device.name)", "error": "\(ALSA.describe(code))"])
        let audible = state.audibleFrame
        dropQueued()
        closeDevice()
        if let reader, (try? reader.seek(to: audible)) != nil {
            setPosition(audible)
            state.activity = .paused
            state.error = error
            publish(changed: true)
        } else {
            stop(error: error)
        }
    }

    // MARK: Device and position

    var periodMilliseconds: Int {
        guard let configuration, configuration.format.sampleRate > 0 else {
            return max(timing.periodMicroseconds / 1000, 1)
        }
        return max(configuration.periodFrames * 1000 / configuration.format.sampleRate, 1)
    }

    func openDevice(for format: PCMFormat) throws(ReelError) {
        if let configuration, configuration.format == format {
            let prepared = device.prepare()
            if prepared >= 0 { return }
            closeDevice()
        }
        closeDevice()
        let opened = try device.open(format, timing: timing)
        configuration = opened
        let bytes = opened.periodFrames * opened.format.bytesPerFrame
        if bytes > bufferCapacityBytes {
            buffer?.deallocate()
            buffer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
            bufferCapacityBytes = bytes
        }
        state.interpolationLimitFrames = Int64(opened.periodFrames)
        logger.debug(
            "playback device opened",
            metadata: [
                "device": "\(device.name)", "format": "\(format)", "period": "\(opened.periodFrames)",
                "buffer": "\(opened.bufferFrames)",
            ])
    }

    func closeDevice() {
        guard configuration != nil else { return }
        device.drop()
        device.close()
        configuration = nil
    }

    /// Drops queued audio and moves the decoder back to the frame that was audible.
    func rewindToAudible() throws(ReelError) {
        measure()
        let audible = state.audibleFrame
        dropQueued()
        try reader?.seek(to: audible)
        setPosition(audible)
    }

    func dropQueued() {
        if configuration != nil { device.drop() }
        pendingFrames = 0
        pendingOffset = 0
        endOfFile = false
    }

    func setPosition(_ frame: Int64) {
        state.epoch &+= 1
        state.audibleFrame = frame
        state.writtenFrame = frame
        state.measuredAt = monotonicNanoseconds()
    }

    /// Audible frame = frames handed to the device minus the device's delay.
    func measure() {
        let queued = configuration == nil ? 0 : device.delay()
        let delay = Int64(max(queued, 0))
        state.audibleFrame = max(state.writtenFrame - delay, min(state.audibleFrame, state.writtenFrame))
        state.measuredAt = monotonicNanoseconds()
    }

    func publish(changed: Bool) {
        let snapshot = state
        published.withLock { $0 = snapshot }
        if changed { onChange(snapshot) }
    }
}
