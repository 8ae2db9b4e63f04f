// Loading a stream's decoder libraries while its body is awaited: FFmpeg is mapped by the first
// stream that needs it, and loading it (some 40 libraries, then their pages handed back) takes
// tens of milliseconds that would otherwise come after the first audio byte.

import ReelRuntime
import ReelStreamFormats

#if canImport(Glibc)
import Glibc
#endif

/// Starts loading FFmpeg when a response's head says its body will need it. Any thread.
enum StreamDecoderPreload {
    private struct State {
        var started = false
        var promised = 0
    }
    private static let state = Locked(State())

    /// Responses whose head promised FFmpeg's decoder in this process, loaded or not (tests).
    static var promised: Int { state.current.promised }

    /// A response to `url` came with `head` (the network thread): when its type promises
    /// FFmpeg's decoder and FFmpeg is not loaded yet, FFmpeg is loaded on a thread of its own
    /// (`reel-ffload`), once; the decoder's open waits for the same load if it has not ended.
    static func responded(_ head: HTTPResponseHead, url: String) {
        let isPlaylist = playlistFormat(url: url, contentType: head.contentType) != nil
        guard StreamDecoderChoice.expected(mediaType: head.mediaType, isMPEGAudioType: head.isMPEGAudio, isPlaylist: isPlaylist)
            == .ffmpeg
        else { return }
        let loaded = FFmpegReader.isLoaded
        let first = state.withLock { state -> Bool in
            state.promised += 1
            guard !loaded, !state.started else { return false }
            state.started = true
            return true
        }
        guard first else { return }
        let thread = OSThread.start(name: "reel-ffload", realtime: false) { _ = FFmpegReader.load() }
        pthread_detach(thread)
    }
}
