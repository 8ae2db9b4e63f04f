// The live PCMOutput: an alsa-lib playback PCM.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A playback PCM on alsa-lib. Owned by the engine's audio thread (see `PCMOutput`).
public final class ALSAOutput: ALSAPCM, PCMOutput {
    private var pollDescriptors: [pollfd] = []

    public init(name: String) {
        super.init(name: name, stream: SND_PCM_STREAM_PLAYBACK)
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

    public func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        return ALSA.wait(pcm, timeoutMilliseconds: timeoutMilliseconds, wakeDescriptor: wakeDescriptor, descriptors: &pollDescriptors)
    }
}
