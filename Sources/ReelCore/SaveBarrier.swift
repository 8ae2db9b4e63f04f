// Replies to clients' commands wait until what the command changed is saved.

import ReelRuntime

/// Holds the reply to a client's command (a queue edit, play, pause, seek, stop, the volume, an
/// output on or off) until the state file has recorded the state the command left (see
/// `PlayerStateFile`): once a client has its answer, a process that dies loses nothing it was
/// told. Every controller's public command goes through `after`, so every front end answers
/// after the save without knowing of it. Changes nobody asked for (an entry that ends, a fade
/// step, the position while playing) do not pass here; the state file saves them as they come.
///
/// Until a state file is connected (a core that was not started), replies go out at once.
///
/// Threads: any. The wrapped reply is called on the state file's queue (`reel.player.state`),
/// after the write; front ends hop to their own thread, as they do for every core reply.
final class SaveBarrier: Sendable {
    typealias Save = @Sendable (_ then: @escaping @Sendable () -> Void) -> Void

    /// The closure inside a struct: a function type as the lock's generic value would be
    /// re-wrapped in a conversion thunk on every `withLock` (it is passed `inout`), growing by
    /// two thunks per reply and costing more with every call.
    private struct Connection: Sendable {
        let save: Save
    }

    private let connection = Locked<Connection?>(nil)

    /// From now on, replies wait for `save` (which records the state and then calls `then`).
    func connect(_ save: @escaping Save) {
        connection.withLock { $0 = Connection(save: save) }
    }

    /// Replies go out at once again (at shutdown, once the last state is written).
    func disconnect() {
        connection.withLock { $0 = nil }
    }

    /// `reply`, to be called once the state it answers is saved.
    func after<Value: Sendable>(_ reply: @escaping @Sendable (Value) -> Void) -> @Sendable (Value) -> Void {
        { [self] value in
            guard let connection = connection.withLock({ $0 }) else { return reply(value) }
            connection.save { reply(value) }
        }
    }
}
