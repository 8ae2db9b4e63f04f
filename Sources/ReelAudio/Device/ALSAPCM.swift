// The live PCMs: alsa-lib playback and capture handles, owned by one audio thread each.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// What a playback and a capture PCM on alsa-lib share: opening (with the plug-layer fallback),
/// recovery calls and closing. Owned by one audio thread (see `PCMDevice`).
public class ALSAPCM {
    public let name: String
    private let stream: snd_pcm_stream_t
    var pcm: OpaquePointer?

    init(name: String, stream: snd_pcm_stream_t) {
        self.name = name
        self.stream = stream
        ALSA.silenceLibraryErrors()
    }

    deinit { close() }

    public func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        close()
        let (handle, configuration) = try ALSA.open(name, stream: stream, format, timing: timing)
        pcm = handle
        return configuration
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

/// A capture PCM on alsa-lib.
public final class ALSAInput: ALSAPCM, PCMInput {
    public init(name: String) {
        super.init(name: name, stream: SND_PCM_STREAM_CAPTURE)
    }

    public func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        guard let pcm else { return -Int(EBADFD) }
        return snd_pcm_readi(pcm, buffer, snd_pcm_uframes_t(frames))
    }
}
