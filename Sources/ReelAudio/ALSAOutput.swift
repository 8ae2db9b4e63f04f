// The live PCMOutput: an alsa-lib playback PCM.

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
        let (handle, configuration) = try ALSA.open(name, stream: SND_PCM_STREAM_PLAYBACK, format, timing: timing)
        pcm = handle
        return configuration
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

    public func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        return ALSA.wait(pcm, timeoutMilliseconds: timeoutMilliseconds, wakeDescriptor: wakeDescriptor, descriptors: &pollDescriptors)
    }

    private var pollDescriptors: [pollfd] = []

    public func close() {
        guard let pcm else { return }
        snd_pcm_close(pcm)
        self.pcm = nil
    }
}
