// The one table of methods: names → handlers. Families register themselves from their own files.

import ReelCore
import ReelModel
import ReelProtocol

/// How a handler answers: now, or later from another thread (the audio thread, a file opener).
enum MethodOutcome {
    case result(JSONValue)
    /// A result already written as JSON text (`player.status`: no tree built for a poll).
    case text(JSONText)
    case later(@Sendable (_ complete: @escaping @Sendable (Result<JSONValue, RPCError>) -> Void) -> Void)
}

/// What a handler gets: its parameters and the connection it was called on.
struct MethodCall {
    let params: Params
    /// The calling connection, for methods that act on it (subscribe, unsubscribe).
    let connection: SubscriptionHost
}

/// Handlers run on the connection's event loop and must not block.
typealias MethodHandler = @Sendable (MethodCall) throws(RPCError) -> MethodOutcome

struct MethodTable: Sendable {
    private var handlers: [String: MethodHandler] = [:]

    mutating func register(_ method: String, _ handler: @escaping MethodHandler) {
        precondition(handlers[method] == nil, "\(method) registered twice")
        handlers[method] = handler
    }

    func handler(for method: String) -> MethodHandler? {
        handlers[method]
    }

    var methods: [String] { handlers.keys.sorted() }

    /// Everything reeld answers: a thin table over the core.
    static func reeld(core: ReelCore, info: DaemonInfoSource) -> MethodTable {
        var table = MethodTable()
        DaemonMethods.register(into: &table, info: info)
        PlayerMethods.register(into: &table, player: core.player)
        QueueMethods.register(into: &table, player: core.player, music: core.music)
        MixerMethods.register(into: &table, mixer: core.mixer)
        OutputMethods.register(into: &table, outputs: core.outputs)
        RecorderMethods.register(into: &table, recorder: core.recorder)
        LibraryMethods.register(into: &table, library: core.library)
        MusicMethods.register(into: &table, music: core.music)
        StreamMethods.register(into: &table, library: core.library)
        ScheduleMethods.register(into: &table, schedules: core.schedules)
        SleepMethods.register(into: &table, player: core.player)
        PlaylistMethods.register(into: &table, playlists: core.playlists)
        return table
    }
}

extension MethodOutcome {
    /// A controller reply (called on another thread) as a deferred method result.
    static func awaiting(
        _ start: @escaping @Sendable (_ reply: @escaping @Sendable (Result<PlayerState, ReelError>) -> Void) -> Void
    ) -> MethodOutcome {
        .later { complete in
            start { result in
                complete(result.map(\.json).mapError(RPCError.init))
            }
        }
    }
}

extension MethodOutcome {
    /// A core reply (called on a core thread) as a deferred method result.
    static func replying<Value: Sendable>(
        _ start: @escaping @Sendable (_ reply: @escaping @Sendable (Result<Value, ReelError>) -> Void) -> Void,
        _ encode: @escaping @Sendable (Value) -> JSONValue
    ) -> MethodOutcome {
        .later { complete in
            start { result in complete(result.map(encode).mapError(RPCError.init)) }
        }
    }
}

/// Runs `work` where it is called (quick reads and checks on the event loop), turning a
/// `ReelError` into the RPC error that carries its reason.
func withRPCErrors<Value>(_ work: () throws(ReelError) -> Value) throws(RPCError) -> Value {
    do throws(ReelError) {
        return try work()
    } catch {
        throw RPCError(error)
    }
}
