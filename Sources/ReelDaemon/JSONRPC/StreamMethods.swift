// subscribe / unsubscribe — live streams on the calling connection.

import NIOCore
import ReelCore
import ReelModel
import ReelProtocol

/// A connection that can hold subscriptions. Called on the connection's event loop.
protocol SubscriptionHost: AnyObject {
    var eventLoop: EventLoop { get }
    /// Starts a stream; the player's ticks every `interval` seconds while playing, the
    /// recorder's while recording.
    func subscribe(_ stream: StreamRequest, interval: Double) -> Int
    /// Ends a subscription of this connection; false if it has none with that number.
    func unsubscribe(_ subscription: Int) -> Bool
}

enum StreamMethods {
    static let streams = ["player", "recorder", "folder", "item", "library", "queue", "mixer", "outputs", "scan", "schedules", "playlists"]
    static let defaultInterval = 0.25
    static let minimumInterval = 0.02

    static func register(into table: inout MethodTable, library: LibraryController) {
        table.register("subscribe") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["stream", "interval", "item", "path"])
            let stream = try params.requiredString("stream")
            let interval = try params.optionalDouble("interval") ?? defaultInterval
            guard interval >= minimumInterval, interval <= 3600 else {
                throw RPCError.invalidParams("\"interval\" must be from \(minimumInterval) to 3600 seconds, not \(interval)")
            }
            let connection = call.connection
            switch stream {
            case "player", "recorder", "library", "queue", "mixer", "outputs", "scan", "schedules", "playlists":
                guard try params.optionalItem() == nil else {
                    throw RPCError.invalidParams("the \(stream) stream takes no \"item\" or \"path\"")
                }
                let request: StreamRequest
                switch stream {
                case "player": request = .player
                case "recorder": request = .recorder
                case "queue": request = .changes(.queue)
                case "mixer": request = .changes(.mixer)
                case "outputs": request = .changes(.outputs)
                case "scan": request = .changes(.scan)
                case "schedules": request = .changes(.schedules)
                case "playlists": request = .changes(.playlists)
                default: request = .library
                }
                return .result(subscribed(connection.subscribe(request, interval: interval)))
            case "folder":
                let reference = try params.optionalItem() ?? .root
                let host = NIOLoopBound(connection, eventLoop: connection.eventLoop)
                return .later { complete in
                    library.watchFolder(reference) { result in
                        finish(result, host: host, complete: complete, interval: interval) { .folder($0) }
                    }
                }
            case "item":
                let reference = try params.requiredItem()
                let host = NIOLoopBound(connection, eventLoop: connection.eventLoop)
                return .later { complete in
                    library.watchItem(reference) { result in
                        finish(result, host: host, complete: complete, interval: interval) { .item($0) }
                    }
                }
            default:
                throw RPCError.invalidParams(
                    "unknown stream \"\(stream)\"; streams are: \(streams.joined(separator: ", "))")
            }
        }
        table.register("unsubscribe") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: ["subscription"])
            let id = try call.params.requiredInt("subscription")
            guard call.connection.unsubscribe(id) else {
                throw RPCError.invalidParams("this connection has no subscription \(id)")
            }
            return .result(.object([:]))
        }
    }

    /// Subscribes on the connection's loop with the watched value, then answers.
    private static func finish<Value: Sendable>(
        _ result: Result<Watched<Value>, ReelError>, host: NIOLoopBound<SubscriptionHost>,
        complete: @escaping @Sendable (Result<JSONValue, RPCError>) -> Void, interval: Double,
        request: @escaping @Sendable (Watched<Value>) -> StreamRequest
    ) {
        switch result {
        case .failure(let error):
            complete(.failure(RPCError(error)))
        case .success(let watched):
            host.eventLoop.execute {
                complete(.success(subscribed(host.value.subscribe(request(watched), interval: interval))))
            }
        }
    }

    private static func subscribed(_ id: Int) -> JSONValue {
        .object(["subscription": .int(Int64(id))])
    }
}
