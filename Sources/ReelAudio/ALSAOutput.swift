// The live PCMOutput: alsa-lib in blocking mode, falling back to the plug layer for conversion.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A playback PCM on alsa-lib. Owned by the engine's audio thread (see `PCMOutput`).
public final class ALSAOutput: PCMOutput {
    public let name: String
    private var pcm: OpaquePointer?

    public init(name: String) {
        self.name = name
        ALSA.silenceLibraryErrors()
    }

    deinit { close() }

    public func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        close()
        do {
            return try open(deviceName: name, format, timing: timing)
        } catch let directError {
            // The device cannot take this format as it is: let ALSA's plug layer convert the
            // rate, channels or sample format. Devices that already convert are not wrapped.
            guard directError.reason == .unsupportedFormat, !name.hasPrefix("plug") else { throw directError }
            return try open(deviceName: "plug:'\(name)'", format, timing: timing)
        }
    }

    private func open(deviceName: String, _ format: PCMFormat, timing: PCMTiming) throws(ReelError)
        -> PCMConfiguration
    {
        var handle: OpaquePointer?
        // Non-blocking: a write that finds no room returns -EAGAIN and the engine waits at most a
        // period in `wait`, so it sees its mailbox every period whatever the device does (the
        // PulseAudio plugin can hold a new stream's first writes for a second or more).
        let opened = snd_pcm_open(&handle, deviceName, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard opened >= 0, let handle else {
            throw ALSA.openError(device: name, code: opened)
        }
        do {
            let configuration = try configure(handle, format, timing: timing)
            pcm = handle
            return configuration
        } catch {
            snd_pcm_close(handle)
            throw error
        }
    }

    private func configure(_ handle: OpaquePointer, _ format: PCMFormat, timing: PCMTiming) throws(ReelError)
        -> PCMConfiguration
    {
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        func unsupported(_ what: String, _ code: Int32) -> ReelError {
            ReelError(
                .unsupportedFormat,
                "ALSA device \"\(name)\" cannot play \(what): \(ALSA.describe(code))")
        }
        var code = snd_pcm_hw_params_any(handle, hw)
        guard code >= 0 else { throw unsupported("anything", code) }
        code = snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED)
        guard code >= 0 else { throw unsupported("interleaved samples", code) }
        let alsaFormat = format.sample == .s16 ? SND_PCM_FORMAT_S16_LE : SND_PCM_FORMAT_S32_LE
        code = snd_pcm_hw_params_set_format(handle, hw, alsaFormat)
        guard code >= 0 else { throw unsupported("\(format.sample) samples", code) }
        code = snd_pcm_hw_params_set_channels(handle, hw, UInt32(format.channels))
        guard code >= 0 else { throw unsupported("\(format.channels) channels", code) }
        code = snd_pcm_hw_params_set_rate(handle, hw, UInt32(format.sampleRate), 0)
        guard code >= 0 else { throw unsupported("\(format.sampleRate) Hz", code) }
        var periodTime = UInt32(timing.periodMicroseconds)
        var bufferTime = UInt32(timing.bufferMicroseconds)
        var direction: Int32 = 0
        _ = snd_pcm_hw_params_set_buffer_time_near(handle, hw, &bufferTime, &direction)
        _ = snd_pcm_hw_params_set_period_time_near(handle, hw, &periodTime, &direction)
        code = snd_pcm_hw_params(handle, hw)
        guard code >= 0 else { throw unsupported(format.description, code) }

        var periodFrames: snd_pcm_uframes_t = 0
        var bufferFrames: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_period_size(hw, &periodFrames, &direction)
        snd_pcm_hw_params_get_buffer_size(hw, &bufferFrames)

        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        defer { snd_pcm_sw_params_free(sw) }
        snd_pcm_sw_params_current(handle, sw)
        // Start as soon as one period is queued: low latency to first audio; a short file's
        // remainder is started explicitly by the engine.
        snd_pcm_sw_params_set_start_threshold(handle, sw, periodFrames)
        snd_pcm_sw_params_set_avail_min(handle, sw, periodFrames)
        code = snd_pcm_sw_params(handle, sw)
        guard code >= 0 else {
            throw ReelError(.deviceUnavailable, "cannot configure ALSA device \"\(name)\": \(ALSA.describe(code))")
        }
        return PCMConfiguration(
            format: format, periodFrames: Int(max(periodFrames, 1)), bufferFrames: Int(max(bufferFrames, 1)))
    }

    public func write(_ buffer: UnsafeRawPointer, frames: Int) -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return snd_pcm_writei(pcm, buffer, snd_pcm_uframes_t(frames))
    }

    public func delay() -> Int {
        guard let pcm else { return -Int(EBADFD) }
        var frames: snd_pcm_sframes_t = 0
        let code = snd_pcm_delay(pcm, &frames)
        return code < 0 ? Int(code) : frames
    }

    public func start() -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_start(pcm)
    }

    public func prepare() -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_prepare(pcm)
    }

    public func resume() -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_resume(pcm)
    }

    public func drop() {
        guard let pcm else { return }
        snd_pcm_drop(pcm)
    }

    public func wait(timeoutMilliseconds: Int) -> Int32 {
        guard let pcm else { return -EBADFD }
        return snd_pcm_wait(pcm, Int32(timeoutMilliseconds))
    }

    public func close() {
        guard let pcm else { return }
        snd_pcm_close(pcm)
        self.pcm = nil
    }
}

/// alsa-lib helpers shared by the playback and capture devices.
enum ALSA {
    static func silenceLibraryErrors() {
        reel_alsa_silence_errors()
    }

    static func describe(_ code: Int32) -> String {
        String(cString: snd_strerror(code))
    }

    /// The error for a failed `snd_pcm_open`, with the reason a client can act on.
    static func openError(device: String, code: Int32) -> ReelError {
        let reason: ErrorReason = (code == -EBUSY) ? .deviceBusy : .deviceUnavailable
        return ReelError(reason, "cannot open ALSA device \"\(device)\": \(describe(code))")
    }
}
