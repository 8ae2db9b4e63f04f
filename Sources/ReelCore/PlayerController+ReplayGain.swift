// ReplayGain in the player: each track's gain, read when it opens, and the settings applied to
// the tracks the engine holds.

import ReelAudio
internal import ReelLibrary
import ReelModel
import ReelTags

extension PlayerController {
    /// The ReplayGain of `file`, about to play (on `work`): a recording's measured gain from the
    /// library; a music folder's file's tags from the index (no tag read); any other file's tags
    /// read with TagReader as it opens (a few milliseconds), as is an indexed file whose row
    /// predates the index's ReplayGain. A file without any has none (the missing preamp applies).
    func replayGainInfo(of file: String, source: PlayerSource) -> ReplayGainInfo {
        if case .item(let id, _, _) = source, let measured = (try? store.replayGain(ofRecording: id)).flatMap(\.self) {
            return measured
        }
        if let location = mediaRoots.musicLocation(of: file),
            let indexed = try? MusicIndex(store: store).replayGain(root: location.root, relativePath: location.relativePath)
        {
            return indexed
        }
        return (try? TagReader.read(path: file))?.replayGain ?? .none
    }

    /// The engine's factor for a track with `info` under the settings now (1 when off). Any
    /// thread but under no lock of `shared`'s.
    func replayGainScale(for info: ReplayGainInfo) -> Double {
        let settings = replayGainSettings.current
        guard settings.mode != .off else { return 1 }
        let random = shared.withLock { $0.queue.options.random }
        return settings.scale(for: info, random: random) ?? 1
    }

    /// New ReplayGain settings (from the mixer): the tracks the engine holds get their new
    /// gain (heard at once, ramped) and the player's state shows it. Any thread.
    func setReplayGain(_ settings: ReplayGainSettings) {
        let before = replayGainSettings.withLock { current -> ReplayGainSettings in
            defer { current = settings }
            return current
        }
        guard before != settings else { return }
        work.async { [self] in applyReplayGain() }
    }

    /// On `work`: sends every held (or recently lined-up) track's gain under the settings now;
    /// the engine changes what differs. Publishes the player's state (its `gain`).
    func applyReplayGain() {
        let settings = replayGainSettings.current
        let gains = shared.withLock { shared -> [Int: Double] in
            let random = shared.queue.options.random
            return shared.tracks.mapValues { settings.scale(for: $0.replayGain, random: random) ?? 1 }
        }
        guard !gains.isEmpty else { return }
        engine.send(.setReplayGain(gains, { [self] _ in publishState() }))
    }
}
