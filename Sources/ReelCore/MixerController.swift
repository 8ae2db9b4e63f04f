// The volume control: a software gain stage in the player, the card's own mixer, or none.

import Dispatch
import Logging
import ReelAudio
import ReelModel
import ReelRuntime

/// How the mixer is set up (`mixer`, `mixer_device`, `mixer_control`, `volume_on_start`).
public struct MixerSettings: Sendable, Equatable {
    public enum StartVolume: Sendable, Equatable {
        /// The volume saved at the last shutdown; a hardware mixer is left as it is.
        case last
        case level(Int)
    }

    public var kind: MixerKind
    /// The ALSA control device; nil derives it from the playback device (`hw:CARD` for
    /// `plughw:CARD,0`).
    public var device: String?
    /// The hardware control; nil takes the first of `Digital`, `PCM`, `Master`, `Speaker`,
    /// `Headphone` that the card has.
    public var control: String?
    public var startVolume: StartVolume
    /// ReplayGain as the configuration says (`replaygain`, `replaygain_preamp`,
    /// `replaygain_missing_preamp`, `replaygain_limit`): used until `mixer.setReplayGain` sets
    /// other values, which are then saved across restarts.
    public var replayGain: ReplayGainSettings

    public init(
        kind: MixerKind = .software, device: String? = nil, control: String? = nil, startVolume: StartVolume = .last,
        replayGain: ReplayGainSettings = ReplayGainSettings()
    ) {
        self.kind = kind
        self.device = device
        self.control = control
        self.startVolume = startVolume
        self.replayGain = replayGain
    }
}

/// The volume every front end sets and sees. Software: the player's gain stage (a perceptual
/// cubic curve; 100 is bit-exact). Hardware: the card's control through ALSA's simple mixer,
/// with changes made elsewhere (alsamixer, a button) pushed as they happen. None: `volume` is
/// null and setting it is `no_mixer`. ReplayGain is applied in the player's gain stage
/// whatever the kind (with a hardware mixer or none, the stage carries ReplayGain alone).
///
/// Threads: any thread may call; hardware access runs on the mixer's own serial queue and the
/// reply comes from there. Every change is published to `changes`.
public final class MixerController: @unchecked Sendable {
    public typealias Reply = @Sendable (Result<MixerState, ReelError>) -> Void

    private let player: PlayerController
    private let hardware: ALSAMixer?
    private var watcher: MixerWatcher?
    private let queue = DispatchQueue(label: "reel.mixer")
    private let logger: Logger
    /// The software mixer's level and mute (the hardware one reads its control).
    private let level: Locked<(volume: Int, muted: Bool)>
    /// The ReplayGain settings; nil while they are the configuration's (not saved then).
    private let replayGain: Locked<ReplayGainSettings?>
    public let changes: StateFeed<MixerState>
    let settings: MixerSettings

    /// Opens the hardware mixer if asked; one that cannot be opened is logged and the mixer is
    /// `none` (playback works without it). `saved` is the volume saved at the last shutdown.
    init(
        settings: MixerSettings, playbackDevice: String, player: PlayerController, saved: (volume: Int?, muted: Bool)?,
        savedReplayGain: ReplayGainSettings? = nil, logger: Logger
    ) {
        self.player = player
        self.logger = logger
        var effective = settings
        var hardware: ALSAMixer?
        if settings.kind == .hardware {
            let device = settings.device ?? ALSAMixer.defaultControlDevice(forPCM: playbackDevice)
            do throws(ReelError) {
                hardware = try ALSAMixer(device: device, control: settings.control)
            } catch {
                logger.error("cannot open the hardware mixer; running without volume control", metadata: ["error": "\(error.message)"])
                effective.kind = .none
            }
        }
        self.hardware = hardware
        self.settings = effective
        var start = (volume: saved?.volume ?? 100, muted: saved?.muted ?? false)
        if case .level(let volume) = effective.startVolume { start.volume = volume }
        level = Locked(start)
        replayGain = Locked(savedReplayGain)
        player.setReplayGain(savedReplayGain ?? settings.replayGain)
        changes = StateFeed(MixerState(volume: nil, muted: false, kind: effective.kind))
        switch effective.kind {
        case .software:
            player.setSoftwareVolume(start.volume, muted: start.muted)
        case .hardware:
            if let hardware, case .level(let volume) = effective.startVolume {
                try? hardware.setVolume(volume)
            }
        case .none:
            break
        }
        changes.publish(readState())
        if let hardware {
            watcher = MixerWatcher(
                mixer: hardware,
                onChange: { [weak self] _, _ in self?.publish() },
                onFailure: { [weak self] error in
                    self?.logger.error("the hardware mixer failed", metadata: ["error": "\(error.message)"])
                })
        }
    }

    /// Stops watching the hardware mixer.
    public func shutdown() {
        watcher?.stop()
        watcher = nil
    }

    /// The mixer's state now. Any thread.
    public var state: MixerState { changes.latest.value }

    /// Sets the volume (0–100) or moves it by `offset`, clamped to 0–100.
    public func setVolume(_ volume: Int? = nil, offset: Int? = nil, reply: @escaping Reply) {
        let reply = player.saves.after(reply)
        guard settings.kind != .none else {
            reply(.failure(Self.noMixer))
            return
        }
        if let volume, !(0...100).contains(volume) {
            reply(.failure(ReelError(.outOfRange, "volume \(volume) is outside 0–100")))
            return
        }
        guard volume != nil || offset != nil else {
            reply(.failure(ReelError(.outOfRange, "give a volume (0–100) or an offset")))
            return
        }
        queue.async { [self] in
            let current = readState().volume ?? 0
            // Clamped before adding: an offset of any size lands on 0 or 100, never overflows.
            let step = min(max(offset ?? 0, -100), 100)
            let target = min(max(volume ?? (current + step), 0), 100)
            do throws(ReelError) {
                if let hardware {
                    try hardware.setVolume(target)
                } else {
                    let muted = level.withLock { level -> Bool in
                        level.volume = target
                        return level.muted
                    }
                    player.setSoftwareVolume(target, muted: muted)
                }
            } catch {
                reply(.failure(error))
                return
            }
            reply(.success(publish()))
        }
    }

    public func setMuted(_ muted: Bool, reply: @escaping Reply) {
        let reply = player.saves.after(reply)
        guard settings.kind != .none else {
            reply(.failure(Self.noMixer))
            return
        }
        queue.async { [self] in
            do throws(ReelError) {
                if let hardware {
                    try hardware.setMuted(muted)
                } else {
                    let volume = level.withLock { level -> Int in
                        level.muted = muted
                        return level.volume
                    }
                    player.setSoftwareVolume(volume, muted: muted)
                }
            } catch {
                reply(.failure(error))
                return
            }
            reply(.success(publish()))
        }
    }

    /// Changes any of the ReplayGain settings (nil leaves one as it is): `preamp` and
    /// `missingPreamp` in dB within ±15 (`out_of_range` otherwise, and nothing changes). Works
    /// with every mixer kind. The new gain is heard at once, ramped.
    public func setReplayGain(
        mode: ReplayGainMode? = nil, preamp: Double? = nil, missingPreamp: Double? = nil, limit: Bool? = nil,
        reply: @escaping Reply
    ) {
        let reply = player.saves.after(reply)
        for (name, value) in [("preamp", preamp), ("missingPreamp", missingPreamp)] {
            if let value, !(value.isFinite && ReplayGainSettings.preampRange.contains(value)) {
                reply(.failure(ReelError(.outOfRange, "ReplayGain \(name) \(value) dB is outside −15…15 dB")))
                return
            }
        }
        queue.async { [self] in
            let settings = replayGain.withLock { saved -> ReplayGainSettings in
                var settings = saved ?? self.settings.replayGain
                settings.mode = mode ?? settings.mode
                settings.preamp = preamp ?? settings.preamp
                settings.missingPreamp = missingPreamp ?? settings.missingPreamp
                settings.limit = limit ?? settings.limit
                saved = settings
                return settings
            }
            player.setReplayGain(settings)
            reply(.success(publish()))
        }
    }

    /// What to save at shutdown and after changes: the volume and mute, and the ReplayGain
    /// settings once set (nil while they are the configuration's).
    var saved: (volume: Int?, muted: Bool, replayGain: ReplayGainSettings?) {
        let state = self.state
        return (state.volume, state.muted, replayGain.current)
    }

    @discardableResult
    private func publish() -> MixerState {
        let state = readState()
        if state != changes.latest.value { changes.publish(state) }
        return state
    }

    private func readState() -> MixerState {
        let replayGain = self.replayGain.current ?? settings.replayGain
        switch settings.kind {
        case .none:
            return MixerState(volume: nil, muted: false, kind: .none, replayGain: replayGain)
        case .software:
            let (volume, muted) = level.current
            return MixerState(volume: volume, muted: muted, kind: .software, replayGain: replayGain)
        case .hardware:
            guard let hardware else { return MixerState(volume: nil, muted: false, kind: .none, replayGain: replayGain) }
            let (volume, muted) = hardware.current()
            return MixerState(
                volume: volume, muted: muted, kind: .hardware, control: hardware.controlName, replayGain: replayGain)
        }
    }

    static let noMixer = ReelError(.noMixer, "there is no mixer (mixer = \"none\"); the volume cannot be set")
}

extension PlayerController {
    /// Sets the software gain stage's level (the mixer's `software` kind).
    func setSoftwareVolume(_ volume: Int, muted: Bool) {
        engine.send(.setGain(volume: volume, muted: muted, { _ in }))
    }
}
