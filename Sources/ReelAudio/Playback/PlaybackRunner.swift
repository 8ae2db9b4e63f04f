// The audio thread's side of the playback engine: commands, the chain of tracks, the device.

import Logging
import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A track whose frames are being written, or were written, to the device.
struct PlaybackSegment {
    let token: Int
    let reader: AudioFileReader
    /// The device frame (counted since the device was last prepared) at which `startFrame` was
    /// written.
    var deviceStart: Int64
    /// The track's own frame written at `deviceStart` (where play, seek or resume started).
    var startFrame: Int64
    /// The device frame after the track's last frame, once its decoder has ended.
    var deviceEnd: Int64? = nil
    /// Its ReplayGain, a linear factor (1: none): the gain stage's target while its frames are
    /// written is this times `volumeGain`.
    var replayGain: Double = 1
    /// Silence written while its source waited for data (a stream's underrun), in device frames
    /// from `start`: none of the track's frames, so no part of its position.
    var gaps: [(start: Int64, length: Int64)] = []
    /// Gaps heard in full, summed (folded out of `gaps`).
    var silenceHeard: Int64 = 0

    /// Device frames of silence before device frame `frame`.
    func silence(before frame: Int64) -> Int64 {
        gaps.reduce(silenceHeard) { sum, gap in sum + min(max(frame - gap.start, 0), gap.length) }
    }

    /// Notes `length` frames of silence written at device frame `start`.
    mutating func addGap(at start: Int64, length: Int64) {
        if let last = gaps.last, last.start + last.length == start {
            gaps[gaps.count - 1].length += length
        } else {
            gaps.append((start, length))
        }
    }

    /// Folds the gaps heard in full before device frame `frame` into `silenceHeard`.
    mutating func foldGaps(heardBefore frame: Int64) {
        while let first = gaps.first, first.start + first.length <= frame {
            silenceHeard += first.length
            gaps.removeFirst()
        }
    }
}

/// Runs on the audio thread; every stored property belongs to that thread.
///
/// The chain: `segments` are the tracks written to the device, in order (the first is the one
/// audible now, the last the one being decoded); `upcoming` are tracks lined up after them,
/// not yet written. Positions are kept in device frames since the last prepare
/// (`deviceWritten`, `deviceAudible`) and turned into the audible track's own frames.
final class PlaybackRunner: @unchecked Sendable {
    /// The outputs; the engine writes to them as to one device (see `OutputSet`).
    let device: OutputSet
    let timing: PCMTiming
    let mailbox: Mailbox<PlaybackCommand>
    let published: Locked<PlaybackSnapshot>
    let logger: Logger
    /// The device's failures, told once each in the log (not once per retry).
    let failures: DeviceFailureLog
    let onChange: PlaybackEngine.ChangeHandler
    let onWantsNext: PlaybackEngine.WantsNextHandler
    /// The decoded frames the device holds, for the recorder's tap (`source: "player"`).
    let tapLine: PlayerTapLine

    var state = PlaybackSnapshot()
    /// The software volume times the ReplayGain of the track being decoded, applied to each
    /// decoded buffer before it is written.
    var gain = GainStage()
    /// The software volume's part of the gain (1 with a hardware mixer or none).
    var volumeGain: Double = 1
    /// A fade-in or fade-out over seconds, after the volume.
    var fade = FadeRamp()
    var segments: [PlaybackSegment] = []
    var upcoming: [TrackBox] = []
    var configuration: PCMConfiguration?
    var buffer: UnsafeMutableRawPointer?
    var bufferCapacityBytes = 0
    var pendingOffset = 0
    var pendingFrames = 0
    /// Frames handed to the device since it was last prepared.
    var deviceWritten: Int64 = 0
    /// Of those, the frames heard (written minus the device's delay); never goes backwards.
    var deviceAudible: Int64 = 0
    /// The last decoder ended and nothing of the same format follows: playing out what is queued.
    var draining = false
    /// When the last queued frame must have been heard (monotonic ns), set when draining starts.
    /// Some devices (PulseAudio) keep reporting their own latency as delay after they ran dry.
    var drainDeadline: UInt64 = 0
    /// When what was queued as draining started should have been heard (monotonic ns).
    var drainExpectedEnd: UInt64 = 0
    /// Silence was written since the stream of the last segment last gave audio (it waits for
    /// the network).
    var silenceQueued = false
    /// The track whose successor the control side was asked for and has not answered yet.
    var awaitingLineUp: Int?
    /// Notices an output that plays nothing while the player plays (its sound server stalled).
    var outputStall = OutputStallWatch()
    var running = true
    /// How often a paused runner looks whether the audible track's length has been counted.
    static let lengthPollMilliseconds = 200

    init(
        device: OutputSet, timing: PCMTiming, mailbox: Mailbox<PlaybackCommand>,
        published: Locked<PlaybackSnapshot>, logger: Logger, onChange: @escaping PlaybackEngine.ChangeHandler,
        onWantsNext: @escaping PlaybackEngine.WantsNextHandler, tap: PlayerTap = PlayerTap()
    ) {
        tapLine = PlayerTapLine(tap: tap)
        self.device = device
        self.timing = timing
        self.mailbox = mailbox
        self.published = published
        self.logger = logger
        failures = DeviceFailureLog(logger: logger)
        self.onChange = onChange
        self.onWantsNext = onWantsNext
    }

    deinit { buffer?.deallocate() }

    func run() {
        while running {
            // Paused on a track whose length is being counted: look again now and then, so that
            // the count is published when it ends (playing, every period does it).
            let counting = state.activity == .paused && segments.first.map { !$0.reader.frameCountIsFinal } == true
            let commands =
                counting
                ? mailbox.take(waitingAtMostMilliseconds: Self.lengthPollMilliseconds)
                : mailbox.take(wait: state.activity != .playing)
            for command in commands {
                handle(command)
                if !running { break }
            }
            if running && state.activity == .playing {
                pump()
            } else if running && counting && measure() {
                publish(changed: true)
            }
        }
        closeDevice()
        segments = []
        upcoming = []
    }

    // MARK: Commands

    func handle(_ command: PlaybackCommand) {
        switch command {
        case .load(let box, let token, let startFrame, let startPlaying, let reply):
            reply(load(box.reader, token: token, replayGain: box.replayGain, startFrame: startFrame, startPlaying: startPlaying))
        case .lineUp(let after, let next, let reply):
            reply(lineUp(after: after, next: next))
        case .pause(let reply):
            reply(pause())
        case .resume(let reply):
            reply(resume())
        case .toggle(let reply):
            reply(state.activity == .playing ? pause() : resume())
        case .stop(let reply):
            device.silencePipes()
            stop(error: nil)
            reply(.success(state))
        case .seek(let target, let reply):
            reply(seek(target))
        case .setGain(let volume, let muted, let reply):
            reply(setGain(volume: volume, muted: muted))
        case .setReplayGain(let gains, let reply):
            reply(setReplayGain(gains))
        case .selectOutputs(let selection, let reply):
            reply(selectOutputs(selection))
        case .clearError(let reply):
            if state.error != nil {
                state.error = nil
                publish(changed: true)
            }
            reply(.success(state))
        case .fade(let request):
            fade.start(request)
            // While playing, the device holds up to a buffer (2 s) written at the old level:
            // replaced from the audible frame, the ramp starts at what is heard now (a sleep
            // timer's fade-out then ends, audibly, when the player stops).
            if state.activity == .playing, configuration != nil, !segments.isEmpty {
                _ = measure()
                if refillAndContinue(from: state.audibleFrame) == nil { publish(changed: false) }
            }
        case .shutdown(let done):
            stop(error: nil)
            running = false
            done()
        }
    }

    /// The reader the chain reads `reader` through: itself, or for a source that cannot seek a
    /// `RewindableReader` keeping twice what the device may queue (at least 2 s), so that going
    /// back to the audible frame works on it as on a file.
    func rewindable(_ reader: AudioFileReader) -> AudioFileReader {
        guard !reader.canSeek, !(reader is RewindableReader) else { return reader }
        let rate = reader.pcmFormat.sampleRate
        let queued = Int(Int64(rate) * Int64(timing.bufferMicroseconds) / 1_000_000)
        return RewindableReader(reader, capacity: max(2 * rate, 2 * queued))
    }

    func load(_ reader: AudioFileReader, token: Int, replayGain: Double = 1, startFrame: Int64, startPlaying: Bool)
        -> Result<PlaybackSnapshot, ReelError>
    {
        let reader = rewindable(reader)
        dropQueued()
        upcoming = []
        let frame = min(max(startFrame, 0), reader.frameCount ?? Int64.max)
        segments = [PlaybackSegment(token: token, reader: reader, deviceStart: 0, startFrame: frame, replayGain: replayGain)]
        aimGain(at: segments[0], ramped: false)
        becomeAudible(segments[0])
        state.error = nil
        state.reachedEnd = false
        do throws(ReelError) {
            try reader.seek(to: frame)
            setPosition(frame)
            if startPlaying {
                try openDevice(for: reader.pcmFormat)
                state.activity = .playing
            } else {
                state.activity = .paused
            }
        } catch {
            // Stopped, with the track that could not start and why, so the stream shows both.
            stop(error: error)
            return .failure(error)
        }
        chainChanged()
        publish(changed: true)
        wantNext(after: token)
        return .success(state)
    }

    func lineUp(after token: Int, next: TrackBox?) -> Result<PlaybackSnapshot, ReelError> {
        let next = next.map { TrackBox(rewindable($0.reader), token: $0.token, replayGain: $0.replayGain) }
        if measure() { publish(changed: true) }
        if awaitingLineUp == token { awaitingLineUp = nil }
        guard var index = state.lined.firstIndex(of: token) else {
            return .failure(ReelError(.notFound, "track \(token) is no longer playing or lined up"))
        }
        if index + 1 < state.lined.count ? state.lined[index + 1] == next?.token : next == nil {
            return .success(state)
        }
        if index + 1 < segments.count {
            // What follows is already in the device: take it back and refill from the audible frame.
            _ = measure()
            if let error = refillAndContinue(from: state.audibleFrame) { return .failure(error) }
            guard let moved = state.lined.firstIndex(of: token) else {
                return .failure(ReelError(.notFound, "track \(token) is no longer playing or lined up"))
            }
            index = moved
        }
        // `token` is now the last segment or lined up: keep what is lined up up to it.
        let kept = index - (segments.count - 1)
        upcoming.removeSubrange(kept...)
        if let next {
            upcoming.append(next)
            if draining && kept == 0, next.reader.pcmFormat == configuration?.format {
                continueWith(next: next)
            }
        }
        chainChanged()
        publish(changed: false)
        return .success(state)
    }

    func pause() -> Result<PlaybackSnapshot, ReelError> {
        switch state.activity {
        case .stopped:
            return .failure(ReelError(.notPlaying, "nothing is playing"))
        case .paused:
            return .success(state)
        case .playing:
            // Paused at the frame heard now: said at once (every front end's push and MPD's
            // idle clients wait on it), then the device is dropped and the decoder rewound to
            // that same frame, which changes nothing a client sees.
            _ = measure()
            state.activity = .paused
            publish(changed: true)
            do throws(ReelError) {
                try refill(from: state.audibleFrame)
            } catch {
                stop(error: error)
                return .failure(error)
            }
            device.silencePipes()
            publish(changed: false)
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
            guard let audible = segments.first else {
                return .failure(ReelError(.notPlaying, "nothing is loaded to resume"))
            }
            // Playing again, said at once (the position cannot run ahead: it never passes the
            // last frame written); then the device is prepared. If it cannot be, paused again,
            // with why.
            state.error = nil
            state.activity = .playing
            state.measuredAt = monotonicNanoseconds()
            publish(changed: true)
            do throws(ReelError) {
                try openDevice(for: audible.reader.pcmFormat)
            } catch {
                state.activity = .paused
                state.error = error
                publish(changed: true)
                return .failure(error)
            }
            _ = measure()
            publish(changed: false)
            return .success(state)
        }
    }

    func seek(_ target: SeekTarget) -> Result<PlaybackSnapshot, ReelError> {
        guard state.activity != .stopped, !segments.isEmpty else {
            return .failure(ReelError(.notPlaying, "nothing is playing to seek in"))
        }
        _ = measure()
        let now = monotonicNanoseconds()
        let rate = Double(state.sampleRate)
        let current = state.position(at: now)
        // An estimated length bounds nothing: past it, the seek lands where the file has frames,
        // or the track ends.
        let exactCount = state.frameCountIsEstimate ? nil : state.frameCount
        let duration = exactCount.map { Double($0) / rate } ?? Double(Int64.max) / rate
        let seconds: Double
        do throws(ReelError) {
            seconds = try target.resolve(current: current, duration: duration)
        } catch {
            return .failure(error)
        }
        var frame = frameIndex(seconds: seconds, rate: rate)
        if let count = exactCount { frame = min(frame, count) }
        // A source that cannot go there: refused, and playing goes on as it was.
        if let audible = segments.first, !audible.reader.canSeek(to: frame) {
            let refusal = audible.reader.seekRefusal(to: frame)
            if refusal.reason == .outOfRange { return .failure(refusal) }
            return .failure(ReelError(
                .notSeekable, "cannot seek to \(formatSeconds(seconds)) in \(audible.reader.path): it cannot seek so far"))
        }
        if let error = refillAndContinue(from: frame) { return .failure(error) }
        // A seek starts afresh, as MPD's does: the error of a past failure goes.
        state.error = nil
        publish(changed: true)
        return .success(state)
    }

    func setGain(volume: Int, muted: Bool) -> Result<PlaybackSnapshot, ReelError> {
        let level = muted ? 0 : VolumeCurve.gain(forVolume: volume)
        let changed = level != volumeGain
        volumeGain = level
        return gainChanged(changed || segments.isEmpty)
    }

    func setReplayGain(_ gains: [Int: Double]) -> Result<PlaybackSnapshot, ReelError> {
        var changed = false
        for index in segments.indices {
            if let value = gains[segments[index].token], value != segments[index].replayGain {
                segments[index].replayGain = value
                changed = true
            }
        }
        upcoming = upcoming.map { track in
            gains[track.token].map { TrackBox(track.reader, token: track.token, replayGain: $0) } ?? track
        }
        return gainChanged(changed)
    }

    /// After the volume or the ReplayGain of a track written changed: while playing, what the
    /// device holds is replaced from the audible frame (up to the whole buffer), ramping from
    /// the level heard to the new one, so the change is heard at once without a click.
    func gainChanged(_ changed: Bool) -> Result<PlaybackSnapshot, ReelError> {
        guard changed else { return .success(state) }
        guard state.activity == .playing, configuration != nil, !segments.isEmpty else {
            // Nothing sounds: the next frame played is at the new level from the first sample,
            // not ramped down (or up) from the old one.
            if let audible = segments.first {
                aimGain(at: audible, ramped: false)
            } else {
                gain = GainStage()
                gain.setTarget(gain: volumeGain)
                gain.jumpToTarget()
            }
            return .success(state)
        }
        _ = measure()
        if let error = refillAndContinue(from: state.audibleFrame) { return .failure(error) }
        publish(changed: false)
        return .success(state)
    }

    /// Aims the gain stage at `segment`'s level (the volume times its ReplayGain): ramped from
    /// the level of the last frame written (a track joining the one before it, a change heard
    /// mid-stream), or at once (a start, or a refill after frames of another track were written).
    func aimGain(at segment: PlaybackSegment, ramped: Bool) {
        gain.setTarget(gain: volumeGain * segment.replayGain)
        if !ramped { gain.jumpToTarget() }
    }

    func selectOutputs(_ selection: Set<Int>) -> Result<PlaybackSnapshot, ReelError> {
        guard selection != device.enabled else { return .success(state) }
        guard device.changesClock(selection), let configuration else {
            device.select(selection)
            return .success(state)
        }
        // The clock changes (the ALSA device on or off): close, switch, and while playing open
        // the new clock and go on from the frame heard now.
        _ = measure()
        let frame = state.audibleFrame
        closeDevice()
        device.select(selection)
        guard state.activity == .playing else { return .success(state) }
        do throws(ReelError) {
            try openDevice(for: configuration.format)
        } catch {
            state.error = error
            state.activity = .paused
            publish(changed: true)
            return .failure(error)
        }
        if let error = refillAndContinue(from: frame) { return .failure(error) }
        publish(changed: false)
        return .success(state)
    }

    /// Stops and closes the device and every decoder; `error` says why if it was not asked for.
    /// The last audible track's token stays in the state, so the control side knows what ended;
    /// `reachedEnd` says that it played to its end.
    func stop(error: ReelError?, reachedEnd: Bool = false) {
        tapLine.discard()
        closeDevice()
        segments = []
        upcoming = []
        pendingFrames = 0
        draining = false
        let wasStopped = state.activity == .stopped
        state.reachedEnd = reachedEnd
        awaitingLineUp = nil
        state.activity = .stopped
        state.audibleFrame = 0
        state.writtenFrame = 0
        state.error = error
        state.measuredAt = monotonicNanoseconds()
        chainChanged()
        publish(changed: !wasStopped || error != nil)
    }

    // MARK: Playing

    /// One step while playing: decode a period if none is pending, hand it to the device
    /// (blocking for at most about a period), or wait for the device to drain at the end.
    func pump() {
        guard let configuration, let buffer, let decoding = segments.last else { return }
        if pendingFrames == 0 && !draining {
            let count: Int
            do throws(ReelError) {
                count = try decoding.reader.read(into: buffer, frames: configuration.periodFrames)
            } catch {
                logger.warning(
                    "decoding failed", metadata: ["file": "\(decoding.reader.path)", "error": "\(error.message)"])
                guard !upcoming.isEmpty else {
                    stop(error: error)
                    return
                }
                // Keep what was decoded: the track ends here and the next one follows.
                state.error = error
                publish(changed: true)
                decoderEnded(configuration: configuration)
                return
            }
            if count == 0 && decoding.reader.isWaitingForData {
                // A stream waiting for the network: a little silence keeps the device playing,
                // outside the track's frames (its position holds still meanwhile); no more than
                // it needs, so that the audio that comes is heard soon.
                let step = StreamStarvation.whileWaiting(
                    queuedFrames: device.delay(), periodFrames: configuration.periodFrames,
                    sampleRate: configuration.format.sampleRate)
                guard case .fill(let filler) = step else {
                    if case .wait(let milliseconds) = step { sleepOrCommand(milliseconds: milliseconds) }
                    publish(changed: measure())
                    return
                }
                buffer.initializeMemory(as: UInt8.self, repeating: 0, count: filler * configuration.format.bytesPerFrame)
                segments[segments.count - 1].addGap(at: deviceWritten, length: Int64(filler))
                silenceQueued = true
                pendingFrames = filler
                pendingOffset = 0
            } else if count == 0 {
                decoderEnded(configuration: configuration)
                return
            } else {
                if silenceQueued {
                    silenceQueued = false
                    if rejoinAfterSilence(configuration: configuration) { return }
                }
                // The recorder's tap takes the decoded signal, before the volume and fades (the
                // filler above is not the track's: never recorded).
                tapLine.decoded(buffer, count: count, format: configuration.format, at: deviceWritten)
                gain.apply(to: buffer, frames: count, format: configuration.format)
                fade.apply(to: buffer, frames: count, format: configuration.format)
                pendingFrames = count
                pendingOffset = 0
            }
        }
        if pendingFrames > 0 {
            let bytesPerFrame = configuration.format.bytesPerFrame
            let written = device.write(buffer + pendingOffset * bytesPerFrame, frames: pendingFrames)
            if written >= 0 {
                pendingOffset += written
                pendingFrames -= written
                deviceWritten += Int64(written)
            } else if written == -Int(EAGAIN) {
                // No room: wait for it, or for a command (a pause or seek acts at once), or
                // until the next track becomes audible, so that the switch is published then.
                _ = device.wait(timeoutMilliseconds: waitMilliseconds, wakeDescriptor: mailbox.wakeDescriptor)
            } else if written == -Int(EPIPE), let frame = frameLostFromByUnderrun() {
                // The device's recovery drops what it still held: it is written again.
                state.counters.xruns += 1
                if refillAndContinue(from: frame) == nil { publish(changed: false) }
                return
            } else if let failure = XrunRecovery.recover(
                from: Int32(written), device: device, counters: &state.counters,
                periodMilliseconds: periodMilliseconds)
            {
                deviceFailed(code: failure)
                return
            }
            publish(changed: measure())
            return
        }
        // Draining: wait for what is queued to be heard, checking the mailbox every period.
        // A device may report an empty queue too early (PulseAudio's plugin, at a stream's
        // start): it is believed only once the queue should have played, and not while the
        // control side has yet to say what follows (it gets until the deadline).
        let queued = device.delay()
        let now = monotonicNanoseconds()
        let drained = queued <= 0 && now >= drainExpectedEnd && awaitingLineUp == nil
        if drained || now >= drainDeadline {
            tapLine.releaseAll()
            if let next = upcoming.first {
                reopen(for: next)
            } else {
                trackEnded()
            }
            return
        }
        // Nothing is left to write, so there is nothing to wait for at the device (its `wait`
        // answers at once once the buffer has room): sleep until the queue should have played,
        // at most a period, so the mailbox is still read every period.
        let rate = max(configuration.format.sampleRate, 1)
        var untilHeard = max(queued * 1000 / rate, 1)
        if queued <= 0 && awaitingLineUp != nil {
            // Nothing to hear: sleep until the answer (a command wakes us) or the deadline.
            untilHeard = max(Int((drainDeadline &- now) / 1_000_000), 1)
        }
        sleepOrCommand(milliseconds: device.waitLimit(min(untilHeard, waitMilliseconds)))
        publish(changed: measure())
    }

    /// After an underrun (a write answered -EPIPE): the audible track's frame from which the
    /// device's recovery loses what it still holds, or nil when it holds nothing or the track
    /// cannot go back there (then the recovery is `XrunRecovery`'s alone).
    ///
    /// A hardware device that ran dry has played every frame written (its delay query answers
    /// -EPIPE too). PulseAudio's ALSA plugin reports its server's underflow at a later write, by
    /// which time the server holds what was written since (it waits to refill its buffer before
    /// it plays again), and its prepare makes a new stream without it: up to a buffer of audio
    /// never heard, counted as heard (the position jumped ahead of the sound). Its delay query
    /// still answers how much the server holds, so the frame heard last is known exactly. Only
    /// for a device whose prepare drops what it holds (`prepareDropsQueued`): PipeWire's plugin
    /// also answers a delay after an underrun but keeps its stream, and would hear it twice.
    /// A track that this measurement finds audible is announced here, whatever follows (the
    /// refill and the recovery publish nothing new).
    func frameLostFromByUnderrun() -> Int64? {
        guard configuration != nil, device.prepareDropsQueued, device.delay() > 0 else { return nil }
        if measure() { publish(changed: true) }
        guard let audible = segments.first, audible.reader.canSeek(to: state.audibleFrame) else { return nil }
        return state.audibleFrame
    }

    /// The stream of the last segment has audio again after silence was written while it
    /// waited: when the listener hears only that silence, it is dropped and the audio is written
    /// to the device afresh, heard at once (`StreamStarvation.rejoin`). True when it was (the
    /// frames just read are read again from the audible frame).
    func rejoinAfterSilence(configuration: PCMConfiguration) -> Bool {
        guard segments.count == 1 else { return false }
        _ = measure()
        let rejoin = StreamStarvation.rejoin(
            queuedFrames: device.delay(), unheardSourceFrames: state.writtenFrame - state.audibleFrame,
            periodFrames: configuration.periodFrames)
        guard rejoin == .restart else { return false }
        logger.debug("stream audio again: the silence queued is dropped", metadata: ["file": "\(segments[0].reader.path)"])
        if refillAndContinue(from: state.audibleFrame) == nil { publish(changed: false) }
        return true
    }

    /// The decoder of the last segment returned no more frames: the next lined-up track of the
    /// same format follows in the same buffer; otherwise the device plays out what it holds.
    func decoderEnded(configuration: PCMConfiguration) {
        segments[segments.count - 1].deviceEnd = deviceWritten
        pendingFrames = 0
        if let next = upcoming.first, next.reader.pcmFormat == configuration.format {
            continueWith(next: next)
            return
        }
        draining = true
        device.finishPipes()
        _ = device.start()  // a file shorter than the start threshold
        let queued = UInt64(max(device.delay(), 0))
        let rate = UInt64(max(configuration.format.sampleRate, 1))
        // Slack for devices that consume in bursts: two periods, but no more than 200 ms, so
        // that long periods do not make the end late.
        drainExpectedEnd = monotonicNanoseconds() + queued * 1_000_000_000 / rate
        drainDeadline = drainExpectedEnd + UInt64(min(2 * periodMilliseconds, 200)) * 1_000_000
    }

    /// Starts writing `next` (the first lined-up track, of the device's format) right after the
    /// last frame written: no frame inserted, none dropped.
    func continueWith(next: TrackBox) {
        upcoming.removeFirst()
        draining = false
        segments.append(
            PlaybackSegment(
                token: next.token, reader: next.reader, deviceStart: deviceWritten, startFrame: 0, replayGain: next.replayGain))
        // Sample-exact: the join writes every frame of both tracks; only the gain may differ,
        // ramped over a few milliseconds from the first frame of `next`.
        aimGain(at: segments[segments.count - 1], ramped: true)
        chainChanged()
        if upcoming.isEmpty { wantNext(after: next.token) }
    }

    /// Everything before `next` has been heard and `next` needs another format: reopen the device.
    func reopen(for next: TrackBox) {
        upcoming.removeFirst()
        closeDevice()
        draining = false
        segments = [
            PlaybackSegment(token: next.token, reader: next.reader, deviceStart: 0, startFrame: 0, replayGain: next.replayGain)
        ]
        aimGain(at: segments[0], ramped: false)
        becomeAudible(segments[0])
        setPosition(0)
        do throws(ReelError) {
            try openDevice(for: next.reader.pcmFormat)
        } catch {
            stop(error: error)
            return
        }
        chainChanged()
        publish(changed: true)
        if upcoming.isEmpty { wantNext(after: next.token) }
    }

    /// Asks the control side what follows `token`; until it answers (`lineUp(after: token)`,
    /// with a track or none), the end of the chain waits for it up to the drain deadline.
    func wantNext(after token: Int) {
        awaitingLineUp = token
        onWantsNext(token)
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
        logger.debug("track ended", metadata: ["file": "\(segments.last?.reader.path ?? "")"])
        stop(error: nil, reachedEnd: true)
    }

    /// The device failed beyond recovery: keep the track, paused where the sound stopped.
    func deviceFailed(code: Int32) {
        let error = ReelError(
            .deviceUnavailable,
            "ALSA device \"\(device.name)\" failed: \(ALSA.describe(code)); playback is paused, resume when the device is back")
        failures.failed("playback", device: device.name, error)
        do throws(ReelError) {
            try rewindToAudible()
        } catch {
            stop(error: error)
            return
        }
        closeDevice()
        state.activity = .paused
        state.error = error
        publish(changed: true)
    }

    // MARK: Device and position

    var periodMilliseconds: Int {
        guard let configuration, configuration.format.sampleRate > 0 else {
            return max(timing.periodMicroseconds / 1000, 1)
        }
        return max(configuration.periodFrames * 1000 / configuration.format.sampleRate, 1)
    }

    /// How long to wait for the device: a period, or less when the next track's first frame
    /// will be heard sooner (at least 2 ms, so a late estimate cannot make the thread spin).
    var waitMilliseconds: Int {
        guard segments.count > 1, let configuration, configuration.format.sampleRate > 0 else { return periodMilliseconds }
        let frames = max(segments[1].deviceStart - deviceAudible, 0)
        let untilNext = Int(frames * 1000 / Int64(configuration.format.sampleRate)) + 1
        return min(periodMilliseconds, max(untilNext, 2))
    }

    func openDevice(for format: PCMFormat) throws(ReelError) {
        if let configuration, configuration.format == format {
            let prepared = device.prepare()
            if prepared >= 0 { return }
            closeDevice()
        }
        closeDevice()
        let opened: PCMConfiguration
        do throws(ReelError) {
            opened = try device.open(format, timing: timing)
        } catch {
            failures.failed("playback", device: device.name, error)
            throw error
        }
        configuration = opened
        state.output = OutputFormat(
            sampleRate: opened.format.sampleRate, bits: opened.format.sample.bytesPerSample * 8, channels: opened.format.channels)
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
        state.output = nil
    }

    /// Drops what the device holds and continues from the frame that is audible now.
    func rewindToAudible() throws(ReelError) {
        _ = measure()
        try refill(from: state.audibleFrame)
    }

    /// Drops what the device holds; the audible track's decoder moves to `frame` of that track,
    /// and the tracks written after it go back to the front of `upcoming`, at their first frame.
    func refill(from frame: Int64) throws(ReelError) {
        guard let audible = segments.first else { return }
        dropQueued()
        var requeued: [TrackBox] = []
        for segment in segments.dropFirst() {
            // A track that cannot go back to its start is dropped with everything after it; the
            // control side lines up again when asked.
            guard (try? segment.reader.seek(to: 0)) != nil else {
                upcoming = []
                break
            }
            requeued.append(TrackBox(segment.reader, token: segment.token, replayGain: segment.replayGain))
        }
        upcoming = requeued + upcoming
        // The last frame written was the audible track's (a volume or ReplayGain change: ramp
        // from it) or a later track's (a level nobody heard: start at the audible one's).
        let rampFromWritten = segments.count == 1
        segments = [
            PlaybackSegment(
                token: audible.token, reader: audible.reader, deviceStart: 0, startFrame: frame, replayGain: audible.replayGain)
        ]
        aimGain(at: segments[0], ramped: rampFromWritten)
        try audible.reader.seek(to: frame)
        setPosition(frame)
        chainChanged()
        if upcoming.isEmpty { wantNext(after: audible.token) }
    }

    /// `refill(from:)`, then, while playing, prepares the device to take the new frames. On
    /// failure playback is stopped (a decoder that cannot seek) or paused (the device failed),
    /// and the error is returned.
    func refillAndContinue(from frame: Int64) -> ReelError? {
        do throws(ReelError) {
            try refill(from: frame)
        } catch {
            stop(error: error)
            return error
        }
        guard state.activity == .playing else { return nil }
        let prepared = device.prepare()
        guard prepared >= 0 else {
            deviceFailed(code: Int32(prepared))
            return state.error
        }
        return nil
    }

    func dropQueued() {
        if configuration != nil { device.drop() }
        tapLine.discard()
        silenceQueued = false
        pendingFrames = 0
        pendingOffset = 0
        draining = false
    }

    /// The position jumps to `frame` of the audible track; the device starts counting afresh.
    func setPosition(_ frame: Int64) {
        state.epoch &+= 1
        deviceWritten = 0
        deviceAudible = 0
        state.audibleFrame = frame
        state.writtenFrame = frame
        state.measuredAt = monotonicNanoseconds()
    }

    /// The state now describes `segment` as the audible track (its position is set by the caller).
    func becomeAudible(_ segment: PlaybackSegment) {
        let reader = segment.reader
        state.token = segment.token
        state.format = reader.format
        state.sampleRate = reader.pcmFormat.sampleRate
        setFrameCount(of: reader)
        state.epoch &+= 1
    }

    /// Audible frame = frames handed to the device minus the device's delay. Moves on to the
    /// next track once its first frame is heard, and takes a length learned late; returns true
    /// when either happened (a change to publish).
    func measure() -> Bool {
        guard !segments.isEmpty else { return false }
        let queued = configuration == nil ? 0 : device.delay()
        let delay = Int64(max(queued, 0))
        deviceAudible = max(deviceWritten - delay, min(deviceAudible, deviceWritten))
        watchOutput()
        tapLine.release(upTo: deviceAudible)
        var switched = false
        while segments.count > 1 && segments[1].deviceStart <= deviceAudible && segments[0].deviceEnd != nil {
            segments.removeFirst()
            switched = true
        }
        let audible = segments[0]
        if switched {
            becomeAudible(audible)
            chainChanged()
        }
        // An MP3 without a Xing/Info tag learns its length in the background: publish it.
        var lengthLearned = false
        if state.frameCount == nil || state.frameCountIsEstimate, audible.reader.frameCount != nil {
            setFrameCount(of: audible.reader)
            lengthLearned = true
        }
        let writtenEnd = min(deviceWritten, audible.deviceEnd ?? Int64.max)
        segments[0].foldGaps(heardBefore: deviceAudible)
        state.audibleFrame =
            audible.startFrame + deviceAudible - audible.deviceStart - segments[0].silence(before: deviceAudible)
        state.writtenFrame = audible.startFrame + writtenEnd - audible.deviceStart - segments[0].silence(before: writtenEnd)
        state.measuredAt = monotonicNanoseconds()
        return switched || lengthLearned
    }

    /// Feeds `outputStall` after a measurement: an output that takes and plays nothing for 2 s
    /// while playing is logged and counted (`counters.stalls`), and logged again when it takes
    /// audio again. Nothing else changes: the position holds still meanwhile, as it should, and
    /// the device is not touched.
    func watchOutput() {
        let now = monotonicNanoseconds()
        guard state.activity == .playing, configuration != nil, !draining else {
            if let seconds = outputStall.reset(at: now) { logOutputAgain(after: seconds) }
            return
        }
        switch outputStall.observe(written: deviceWritten, audible: deviceAudible, at: now) {
        case .began(let seconds):
            state.counters.stalls += 1
            logger.warning(
                "the output has played nothing for \(OutputStallWatch.describe(seconds)) while playing: its sound server or device stopped taking audio (the position holds still)",
                metadata: ["device": "\(device.name)"])
        case .ended(let seconds):
            logOutputAgain(after: seconds)
        case nil:
            break
        }
    }

    func logOutputAgain(after seconds: Double) {
        logger.warning(
            "the output plays again after \(OutputStallWatch.describe(seconds)) without playing anything", metadata: ["device": "\(device.name)"])
    }

    /// The audible track's length: exact, or its estimate while it is being counted.
    func setFrameCount(of reader: AudioFileReader) {
        let exact = reader.frameCount
        state.frameCount = exact ?? reader.estimatedFrameCount
        state.frameCountIsEstimate = exact == nil && state.frameCount != nil
    }

    /// The tokens held, audible first.
    func chainChanged() {
        var lined = segments.map(\.token)
        lined.append(contentsOf: upcoming.map(\.token))
        if lined != state.lined { state.lined = lined }
    }

    func publish(changed: Bool) {
        let snapshot = state
        published.withLock { $0 = snapshot }
        if changed { onChange(snapshot) }
    }
}
