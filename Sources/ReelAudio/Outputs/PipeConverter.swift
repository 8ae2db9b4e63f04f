// The engine's PCM to a pipe's fixed format: channels, sample size, and the rate (libsoxr).

import CSoxr
import ReelModel

/// Converts interleaved frames of the engine's format (`PCMFormat`: 16- or 32-bit, any rate and
/// channel count) to an output's fixed `OutputFormat`, appending the result to a `ByteRing`.
///
/// - Channels first, in the source's sample type: a mono source goes to every channel; a
///   source with more channels than the output keeps its first ones (front left and right),
///   except to mono, which takes their mean; channels the source lacks are silent.
/// - Then the rate, when it differs, with libsoxr at its "high quality" recipe (20-bit, a
///   passband to 91 % of Nyquist, linear phase): libsoxr because it is the resampler with the
///   best quality per CPU cycle in Debian, it converts between integer formats itself (TPDF
///   dither on 16-bit output), and it runs one channel set per call with no allocation once
///   made. One thread (`soxr_runtime_spec(1)`): the audio thread's time, never a pool's.
///   libsoxr is loaded by the first converter that resamples (`CSoxr`), so a daemon that never
///   resamples does not map it, nor the OpenMP runtime it links.
/// - At the same rate only the sample size changes (16 ↔ 32 bits by shifting; a 24-bit output
///   takes the top 24 bits, sign-extended, in 4 bytes).
///
/// Lives on the audio thread (public for `reel-bench resample`). `init` allocates; `convert`,
/// `finish` and `reset` do not.
public final class PipeConverter {
    public let source: PCMFormat
    public let target: OutputFormat
    /// The largest `frames` `convert` takes in one call.
    public let maxFrames: Int
    private var soxr: soxr_t?
    /// Source frames with the output's channel count (only when the counts differ).
    private var mapped: UnsafeMutableRawPointer?
    /// Converted frames, before they go to the ring.
    private var converted: UnsafeMutableRawPointer
    private let convertedCapacityFrames: Int

    public init(source: PCMFormat, target: OutputFormat, maxFrames: Int) throws(ReelError) {
        self.source = source
        self.target = target
        self.maxFrames = max(maxFrames, 1)
        let resampled = source.sampleRate != target.sampleRate
        if resampled {
            // libsoxr is loaded here, by the first converter that resamples, not at reeld's start.
            if let failure = reel_soxr_load() {
                throw ReelError(
                    .unsupportedFormat,
                    "cannot resample \(source.sampleRate) Hz to \(target.sampleRate) Hz: \(String(cString: failure))")
            }
            var error: soxr_error_t?
            var io = reel_soxr_io_spec(
                source.sample == .s16 ? SOXR_INT16_I : SOXR_INT32_I, target.bits == 16 ? SOXR_INT16_I : SOXR_INT32_I)
            var quality = reel_soxr_quality_spec(UInt(SOXR_HQ), 0)
            var runtime = reel_soxr_runtime_spec(1)
            let made = reel_soxr_create(
                Double(source.sampleRate), Double(target.sampleRate), UInt32(target.channels), &error, &io, &quality,
                &runtime)
            guard let made, error == nil else {
                let message = error.map { String(cString: $0) } ?? "unknown error"
                throw ReelError(
                    .unsupportedFormat,
                    "cannot resample \(source.sampleRate) Hz to \(target.sampleRate) Hz: \(message)")
            }
            soxr = made
        }
        if source.channels != target.channels {
            mapped = UnsafeMutableRawPointer.allocate(
                byteCount: self.maxFrames * target.channels * source.sample.bytesPerSample, alignment: 16)
        }
        // What one call can produce: the rate ratio, plus what the resampler held back.
        let ratio = Double(target.sampleRate) / Double(source.sampleRate)
        convertedCapacityFrames = Int((Double(self.maxFrames) * ratio).rounded(.up)) + 256
        converted = UnsafeMutableRawPointer.allocate(
            byteCount: convertedCapacityFrames * target.bytesPerFrame, alignment: 16)
    }

    deinit {
        if let soxr { reel_soxr_delete(soxr) }
        mapped?.deallocate()
        converted.deallocate()
    }

    /// Forgets what the resampler holds (after a pause, seek or drop: the next frames do not
    /// follow the last ones).
    public func reset() {
        if let soxr { reel_soxr_clear(soxr) }
    }

    /// Converts `frames` frames (at most `maxFrames`) and appends them to `ring`; returns the
    /// output frames appended.
    @discardableResult
    public func convert(_ buffer: UnsafeRawPointer, frames: Int, into ring: inout ByteRing) -> Int {
        let frames = min(frames, maxFrames)
        guard frames > 0 else { return 0 }
        var input = buffer
        if let mapped {
            mapChannels(buffer, frames: frames, into: mapped)
            input = UnsafeRawPointer(mapped)
        }
        guard let soxr else {
            changeSampleSize(input, frames: frames)
            ring.append(UnsafeRawPointer(converted), count: frames * target.bytesPerFrame)
            return frames
        }
        var produced = 0
        var remaining = frames
        let inputBytesPerFrame = source.sample.bytesPerSample * target.channels
        // The resampler may stop early when the output is full: go on until all is taken.
        while remaining > 0 {
            var taken = 0
            var made = 0
            let error = reel_soxr_process(soxr, input, remaining, &taken, converted, convertedCapacityFrames, &made)
            if error != nil { break }
            if made > 0 {
                if target.bits == 24 { shiftTo24Bits(converted, samples: made * target.channels) }
                ring.append(UnsafeRawPointer(converted), count: made * target.bytesPerFrame)
                produced += made
            }
            if taken == 0 && made == 0 { break }
            remaining -= taken
            input += taken * inputBytesPerFrame
        }
        return produced
    }

    /// The end of the stream: appends what the resampler still holds (its filter's delay, a
    /// few milliseconds) to `ring`; returns the frames appended. Nothing without a resampler.
    @discardableResult
    public func finish(into ring: inout ByteRing) -> Int {
        guard let soxr else { return 0 }
        var produced = 0
        while true {
            var made = 0
            let error = reel_soxr_process(soxr, nil, 0, nil, converted, convertedCapacityFrames, &made)
            guard error == nil, made > 0 else { break }
            if target.bits == 24 { shiftTo24Bits(converted, samples: made * target.channels) }
            ring.append(UnsafeRawPointer(converted), count: made * target.bytesPerFrame)
            produced += made
        }
        reel_soxr_clear(soxr)
        return produced
    }

    // MARK: Steps

    private func mapChannels(_ buffer: UnsafeRawPointer, frames: Int, into output: UnsafeMutableRawPointer) {
        switch source.sample {
        case .s16:
            mapChannels(buffer.assumingMemoryBound(to: Int16.self), frames: frames, into: output.assumingMemoryBound(to: Int16.self))
        case .s32:
            mapChannels(buffer.assumingMemoryBound(to: Int32.self), frames: frames, into: output.assumingMemoryBound(to: Int32.self))
        }
    }

    private func mapChannels<Sample: FixedWidthInteger & SignedInteger>(
        _ input: UnsafePointer<Sample>, frames: Int, into output: UnsafeMutablePointer<Sample>
    ) {
        let sourceChannels = source.channels
        let targetChannels = target.channels
        for frame in 0..<frames {
            let from = input + frame * sourceChannels
            let to = output + frame * targetChannels
            if targetChannels == 1 {
                var sum: Int64 = 0
                for channel in 0..<sourceChannels { sum += Int64(from[channel]) }
                to[0] = Sample(sum / Int64(sourceChannels))
            } else if sourceChannels == 1 {
                for channel in 0..<targetChannels { to[channel] = from[0] }
            } else {
                for channel in 0..<targetChannels { to[channel] = channel < sourceChannels ? from[channel] : 0 }
            }
        }
    }

    /// Same rate: 16 ↔ 32 bits into `converted`.
    private func changeSampleSize(_ input: UnsafeRawPointer, frames: Int) {
        let samples = frames * target.channels
        switch (source.sample, target.bits) {
        case (.s16, 16):
            converted.copyMemory(from: input, byteCount: samples * 2)
        case (.s16, _):
            let from = input.assumingMemoryBound(to: Int16.self)
            let to = converted.assumingMemoryBound(to: Int32.self)
            let shift = target.bits == 24 ? 8 : 16
            for index in 0..<samples { to[index] = Int32(from[index]) << shift }
        case (.s32, 16):
            let from = input.assumingMemoryBound(to: Int32.self)
            let to = converted.assumingMemoryBound(to: Int16.self)
            for index in 0..<samples {
                // Round to nearest, then clamp (the top value rounds up past Int16.max).
                let rounded = (Int64(from[index]) + 0x8000) >> 16
                to[index] = Int16(clamping: rounded)
            }
        case (.s32, _):
            converted.copyMemory(from: input, byteCount: samples * 4)
            if target.bits == 24 { shiftTo24Bits(converted, samples: samples) }
        }
    }

    /// Left-justified 32-bit samples to 24-bit values in 4 bytes (sign-extended).
    private func shiftTo24Bits(_ buffer: UnsafeMutableRawPointer, samples: Int) {
        let values = buffer.assumingMemoryBound(to: Int32.self)
        for index in 0..<samples { values[index] >>= 8 }
    }
}
