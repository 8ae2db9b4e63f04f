// alsa-lib helpers shared by the playback and capture devices: opening, configuring, errors.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

enum ALSA {
    /// Whether `pcm` is, or plays through, PulseAudio's ALSA plugin (its setup, as
    /// `snd_pcm_dump` prints it, names the plugin: "ALSA <-> PulseAudio PCM I/O Plugin", also
    /// for `default` routed there). Its prepare makes a new stream: what its server held is lost.
    static func isPulseAudioPlugin(_ pcm: OpaquePointer) -> Bool {
        var output: OpaquePointer?
        guard snd_output_buffer_open(&output) == 0, let output else { return false }
        defer { snd_output_close(output) }
        guard snd_pcm_dump(pcm, output) == 0 else { return false }
        var text: UnsafeMutablePointer<CChar>?
        let length = snd_output_buffer_string(output, &text)
        guard let text, length > 0 else { return false }
        let dump = String(decoding: UnsafeRawBufferPointer(start: text, count: length), as: UTF8.self)
        return dump.contains("PulseAudio PCM I/O Plugin")
    }

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

    /// `snd_pcm_wait` that also returns when `wakeDescriptor` becomes readable: polls the PCM's
    /// descriptors and it together. Returns 1 when a period can be transferred, 0 on a timeout
    /// or a wake-up, a negative errno on failure. `descriptors` is scratch space kept by the caller.
    static func wait(
        _ pcm: OpaquePointer, timeoutMilliseconds: Int, wakeDescriptor: Int32, descriptors: inout [pollfd]
    ) -> Int32 {
        let count = Int(snd_pcm_poll_descriptors_count(pcm))
        guard wakeDescriptor >= 0, count > 0 else { return snd_pcm_wait(pcm, Int32(timeoutMilliseconds)) }
        if descriptors.count != count + 1 {
            descriptors = [pollfd](repeating: pollfd(), count: count + 1)
        }
        return descriptors.withUnsafeMutableBufferPointer { fds -> Int32 in
            let filled = snd_pcm_poll_descriptors(pcm, fds.baseAddress, UInt32(count))
            guard filled > 0 else { return filled < 0 ? filled : snd_pcm_wait(pcm, Int32(timeoutMilliseconds)) }
            fds[Int(filled)] = pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(fds.baseAddress, nfds_t(filled) + 1, Int32(timeoutMilliseconds))
            if ready < 0 { return errno == EINTR ? 0 : -errno }
            if ready == 0 { return 0 }
            // The plugin sees (and clears) its own events, also when the command woke us.
            var events: UInt16 = 0
            let translated = snd_pcm_poll_descriptors_revents(pcm, fds.baseAddress, UInt32(filled), &events)
            if translated < 0 { return translated }
            if events & UInt16(POLLERR | POLLNVAL) != 0 { return -EIO }
            return events & UInt16(POLLOUT | POLLIN) != 0 ? 1 : 0
        }
    }

    /// Opens `name` non-blocking for `format`. When the device cannot take the format as it is,
    /// it is opened again through ALSA's plug layer, which converts the rate, channels or sample
    /// format. Devices that already convert are not wrapped.
    ///
    /// Non-blocking: a transfer that finds no room (or no data) returns -EAGAIN and the engine
    /// waits at most a period in `snd_pcm_wait`, so it sees its commands every period whatever
    /// the device does (the PulseAudio plugin can hold a new stream's first writes for a second).
    static func open(_ name: String, stream: snd_pcm_stream_t, _ format: PCMFormat, timing: PCMTiming)
        throws(ReelError) -> (OpaquePointer, PCMConfiguration)
    {
        do {
            return try open(deviceName: name, label: name, stream: stream, format, timing: timing)
        } catch let directError {
            guard directError.reason == .unsupportedFormat, !name.hasPrefix("plug") else { throw directError }
            return try open(deviceName: "plug:'\(name)'", label: name, stream: stream, format, timing: timing)
        }
    }

    private static func open(
        deviceName: String, label: String, stream: snd_pcm_stream_t, _ format: PCMFormat, timing: PCMTiming
    ) throws(ReelError) -> (OpaquePointer, PCMConfiguration) {
        var handle: OpaquePointer?
        let opened = snd_pcm_open(&handle, deviceName, stream, SND_PCM_NONBLOCK)
        guard opened >= 0, let handle else {
            throw openError(device: label, code: opened)
        }
        do {
            let configuration = try configure(handle, label: label, capture: stream == SND_PCM_STREAM_CAPTURE, format, timing: timing)
            return (handle, configuration)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
    }

    private static func configure(
        _ handle: OpaquePointer, label: String, capture: Bool, _ format: PCMFormat, timing: PCMTiming
    ) throws(ReelError) -> PCMConfiguration {
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        defer { snd_pcm_hw_params_free(hw) }
        let verb = capture ? "record" : "play"
        func unsupported(_ what: String, _ code: Int32) -> ReelError {
            ReelError(.unsupportedFormat, "ALSA device \"\(label)\" cannot \(verb) \(what): \(describe(code))")
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
        // Playback starts as soon as one period is queued: low latency to first audio; a short
        // file's remainder is started explicitly by the engine. Capture starts on the first read.
        snd_pcm_sw_params_set_start_threshold(handle, sw, capture ? 1 : periodFrames)
        snd_pcm_sw_params_set_avail_min(handle, sw, periodFrames)
        code = snd_pcm_sw_params(handle, sw)
        guard code >= 0 else {
            throw ReelError(.deviceUnavailable, "cannot configure ALSA device \"\(label)\": \(describe(code))")
        }
        return PCMConfiguration(
            format: format, periodFrames: Int(max(periodFrames, 1)), bufferFrames: Int(max(bufferFrames, 1)))
    }
}
