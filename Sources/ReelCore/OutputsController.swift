// Which outputs play: the list, turning them on and off, and their status as it changes.

import Dispatch
import Logging
import ReelAudio
import ReelModel
import ReelRuntime

/// An output as the config gives it.
public struct OutputConfiguration: Equatable, Sendable {
    public var name: String
    public var kind: OutputKind
    /// On at start.
    public var enabled: Bool
    /// For a pipe: the group the FIFO is given when reeld makes it.
    public var group: String?

    public init(name: String, kind: OutputKind, enabled: Bool = true, group: String? = nil) {
        self.name = name
        self.kind = kind
        self.enabled = enabled
        self.group = group
    }
}

/// The outputs: `list`, `enable`, `disable`, `toggle`, and `changes` after every change (one
/// turned on or off, a pipe's reader coming or going, a pipe that failed and was turned off).
///
/// A switch either fails and changes nothing (an unknown id, a pipe that cannot be set up) or
/// succeeds; what playback makes of the outputs now on is the player's (turning the last one
/// off while playing pauses the player, with its error), as MPD's `disableoutput` does.
///
/// Threads: any thread may call; the checks of a pipe's path run on `queue`, the switch on the
/// audio thread, and replies come on the audio thread. Status changes come from the audio thread
/// (`OutputSet`'s handler) and are published there (a store and a wake, nothing more).
public final class OutputsController: @unchecked Sendable {
    public typealias Reply = @Sendable (Result<[OutputState], ReelError>) -> Void

    /// The outputs after every change.
    public let changes: StateFeed<[OutputState]>
    private let states: Locked<[OutputState]>
    private let queue = DispatchQueue(label: "reel.outputs")
    private let logger: Logger
    private var engine: PlaybackEngine?
    /// Each pipe's group (by output id), for `FIFOPath.prepare`.
    private let groups: [Int: String]
    /// Holds replies until the outputs' state is saved (set once, before any command).
    var saves: SaveBarrier?
    /// The engine's outputs; read only in the engine's replies, on the audio thread.
    private var outputSet: OutputSet?

    /// The outputs in config order, ids from 0; with no config, the ALSA device alone.
    init(configuration: [OutputConfiguration], device: String, logger: Logger) {
        self.logger = logger
        var outputs = configuration
        if !outputs.contains(where: { if case .alsa = $0.kind { true } else { false } }) {
            outputs.insert(OutputConfiguration(name: "ALSA (\(device))", kind: .alsa(device: device)), at: 0)
        }
        var initial: [OutputState] = []
        var groups: [Int: String] = [:]
        for (id, output) in outputs.enumerated() {
            groups[id] = output.group
            var state = OutputState(
                id: id, name: output.name, kind: output.kind, enabled: output.enabled,
                status: output.enabled ? .ready : .disabled)
            // Every pipe's FIFO is made at start, on or off, so that snapserver (which only
            // reads it, `mode=read`) finds it.
            if case .pipe(let path, _) = output.kind {
                do throws(ReelError) {
                    try FIFOPath.prepare(path, group: output.group)
                } catch {
                    if output.enabled {
                        logger.error("pipe output turned off", metadata: ["output": "\(output.name)", "error": "\(error.message)"])
                    }
                    state.enabled = false
                    state.status = .disabled
                    state.error = error
                }
            }
            initial.append(state)
        }
        self.groups = groups
        states = Locked(initial)
        changes = StateFeed(initial)
    }

    /// The `OutputSet` the engine plays to, built from these outputs around the ALSA device.
    func makeOutputSet(device: PCMOutput) -> OutputSet {
        let outputs = states.current
        let deviceID = outputs.first { if case .alsa = $0.kind { true } else { false } }?.id ?? 0
        var pipes: [(id: Int, settings: PipeOutputSettings)] = []
        for output in outputs {
            if case .pipe(let path, let format) = output.kind {
                pipes.append((output.id, PipeOutputSettings(name: output.name, path: path, format: format)))
            }
        }
        let set = OutputSet(
            device: device, deviceID: deviceID, pipes: pipes, enabled: Set(outputs.filter(\.enabled).map(\.id)),
            onStatus: { [weak self] id, status, error in self?.statusChanged(id: id, status: status, error: error) })
        outputSet = set
        return set
    }

    /// Connects the controller to the engine that plays to its `OutputSet`.
    func attach(_ engine: PlaybackEngine) {
        self.engine = engine
    }

    /// The outputs now. Any thread.
    public var list: [OutputState] { states.current }

    /// Which outputs are on, by name, for the saved state.
    var saved: [String: Bool] {
        var byName: [String: Bool] = [:]
        for output in states.current where byName[output.name] == nil { byName[output.name] = output.enabled }
        return byName
    }

    /// Turns outputs on and off as they were saved (by name; outputs the file does not name keep
    /// the config's `enabled`), before anything plays: the engine takes the selection before any
    /// command sent after this. A pipe that cannot be turned on stays off, with its error.
    func restore(_ saved: [String: Bool]) {
        var outputs = states.current
        var changed = false
        for index in outputs.indices {
            guard let on = saved[outputs[index].name], on != outputs[index].enabled else { continue }
            if on, case .pipe(let path, _) = outputs[index].kind {
                do throws(ReelError) {
                    try FIFOPath.prepare(path, group: groups[outputs[index].id])
                } catch {
                    outputs[index].error = error
                    changed = true
                    continue
                }
            }
            Self.turn(&outputs[index], on: on)
            changed = true
        }
        guard changed else { return }
        states.withLock { $0 = outputs }
        changes.publish(outputs)
        engine?.send(.selectOutputs(Set(outputs.filter(\.enabled).map(\.id))) { _ in })
    }

    public func enable(_ id: Int, reply: @escaping Reply) { set(id, on: { _ in true }, reply: reply) }
    public func disable(_ id: Int, reply: @escaping Reply) { set(id, on: { _ in false }, reply: reply) }
    public func toggle(_ id: Int, reply: @escaping Reply) { set(id, on: { !$0 }, reply: reply) }

    private func set(_ id: Int, on wanted: @escaping @Sendable (Bool) -> Bool, reply: @escaping Reply) {
        let reply = saves?.after(reply) ?? reply
        guard let output = states.current.first(where: { $0.id == id }) else {
            let count = states.current.count
            let valid = count == 1 ? "the only output is 0" : "outputs are numbered 0 to \(count - 1)"
            reply(.failure(ReelError(.notFound, "there is no output \(id); \(valid)")))
            return
        }
        queue.async { [self] in
            let on = wanted(output.enabled)
            if on, case .pipe(let path, _) = output.kind {
                do throws(ReelError) {
                    try FIFOPath.prepare(path, group: groups[id])
                } catch {
                    update(id) { $0.error = error }
                    reply(.failure(error))
                    return
                }
            }
            var selection = Set(states.current.filter(\.enabled).map(\.id))
            if on { selection.insert(id) } else { selection.remove(id) }
            guard let engine, let outputSet else {
                reply(.success(update(id) { Self.turn(&$0, on: on) }))
                return
            }
            engine.send(.selectOutputs(selection) { [self] _ in
                // On the audio thread: what the outputs are now, whatever happened (a pipe that
                // failed to set up is off again, and said why through `statusChanged`).
                let actual = outputSet.enabled
                let outputs = states.withLock { outputs -> [OutputState] in
                    for index in outputs.indices {
                        let isOn = actual.contains(outputs[index].id)
                        if isOn != outputs[index].enabled { Self.turn(&outputs[index], on: isOn) }
                    }
                    return outputs
                }
                changes.publish(outputs)
                if on && !actual.contains(id) {
                    // A pipe that could not be set up is off again: the switch failed and
                    // changed nothing.
                    let error = outputs.first { $0.id == id }?.error
                    reply(.failure(error ?? ReelError(.deviceUnavailable, "output \(id) could not be turned on")))
                } else {
                    // The switch is made, whatever playback makes of it: with no output left
                    // (or a device that cannot open) the player pauses with that error in its
                    // state, as MPD's does; that is not a failure of the switch.
                    reply(.success(outputs))
                }
            })
        }
    }

    private static func turn(_ output: inout OutputState, on: Bool) {
        output.enabled = on
        output.error = nil
        if !on {
            output.status = .disabled
        } else if output.status == .disabled {
            output.status = .ready
        }
    }

    /// From the audio thread: a pipe's reader came or went, or the pipe failed (and is off).
    private func statusChanged(id: Int, status: OutputStatus, error: ReelError?) {
        if let error {
            logger.error("pipe output turned off", metadata: ["output": "\(id)", "error": "\(error.message)"])
        }
        update(id) { output in
            output.status = status
            if let error {
                output.enabled = false
                output.error = error
            }
        }
    }

    @discardableResult
    private func update(_ id: Int, _ change: (inout OutputState) -> Void) -> [OutputState] {
        let outputs = states.withLock { outputs -> [OutputState] in
            if let index = outputs.firstIndex(where: { $0.id == id }) { change(&outputs[index]) }
            return outputs
        }
        changes.publish(outputs)
        return outputs
    }
}
