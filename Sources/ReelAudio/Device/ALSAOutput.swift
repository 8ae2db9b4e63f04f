// The live PCMOutput: an alsa-lib playback PCM.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A playback PCM on alsa-lib. Owned by the engine's audio thread (see `PCMOutput`).
public final class ALSAOutput: ALSAPCM, PCMOutput {
    private var pollDescriptors: [pollfd] = []

    /// Set at each open: the PCM (or a slave of it) is PulseAudio's ALSA plugin.
    public private(set) var prepareDropsQueued = false

    public init(name: String) {
        super.init(name: name, stream: SND_PCM_STREAM_PLAYBACK)
    }

    public override func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        let configuration = try super.open(format, timing: timing)
        prepareDropsQueued = pcm.map(ALSA.isPulseAudioPlugin) ?? false
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

    public func wait(timeoutMilliseconds: Int, wakeDescriptor: Int32) -> Int32 {
        guard let pcm else { return -EBADFD }
        return ALSA.wait(pcm, timeoutMilliseconds: timeoutMilliseconds, wakeDescriptor: wakeDescriptor, descriptors: &pollDescriptors)
    }
}
