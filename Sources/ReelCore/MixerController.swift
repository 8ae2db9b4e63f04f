// The volume control: a software gain stage in the player, the card's own mixer, or none.

import Dispatch
import Logging
import ReelAudio
import ReelModel

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

    public init(kind: MixerKind = .software, device: String? = nil, control: String? = nil, startVolume: StartVolume = .last) {
        self.kind = kind
        self.device = device
        self.control = control
        self.startVolume = startVolume
    }
}

/// The volume every front end sets and sees. Software: the player's gain stage (a perceptual
/// cubic curve; 100 is bit-exact). Hardware: the card's control through ALSA's simple mixer,
/// with changes made elsewhere (alsamixer, a button) pushed as they happen. None: `volume` is
/// null and setting it is `no_mixer`.
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
    public let changes: StateFeed<MixerState>
    let settings: MixerSettings

    /// Opens the hardware mixer if asked; one that cannot be opened is logged and the mixer is
    /// `none` (playback works without it). `saved` is the volume saved at the last shutdown.
    init(settings: MixerSettings, playbackDevice: String, player: PlayerController, saved: (volume: Int?, muted: Bool)?, logger: Logger) {
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

    /// What to save at shutdown and after changes: the volume and mute.
    var saved: (volume: Int?, muted: Bool) {
        let state = self.state
        return (state.volume, state.muted)
    }

    @discardableResult
    private func publish() -> MixerState {
        let state = readState()
        if state != changes.latest.value { changes.publish(state) }
        return state
    }

    private func readState() -> MixerState {
        switch settings.kind {
        case .none:
            return MixerState(volume: nil, muted: false, kind: .none)
        case .software:
            let (volume, muted) = level.current
            return MixerState(volume: volume, muted: muted, kind: .software)
        case .hardware:
            guard let hardware else { return MixerState(volume: nil, muted: false, kind: .none) }
            let (volume, muted) = hardware.current()
            return MixerState(volume: volume, muted: muted, kind: .hardware, control: hardware.controlName)
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
