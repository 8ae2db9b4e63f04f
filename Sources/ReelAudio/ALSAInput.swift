// The live PCMInput: an alsa-lib capture PCM.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A capture PCM on alsa-lib. Owned by the recorder's capture thread (see `PCMInput`).
public final class ALSAInput: PCMInput {
    public let name: String
    private var pcm: OpaquePointer?

    public init(name: String) {
        self.name = name
        ALSA.silenceLibraryErrors()
    }

    deinit { close() }

    public func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        close()
        let (handle, configuration) = try ALSA.open(name, stream: SND_PCM_STREAM_CAPTURE, format, timing: timing)
        pcm = handle
        return configuration
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return snd_pcm_readi(pcm, buffer, snd_pcm_uframes_t(frames))
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
