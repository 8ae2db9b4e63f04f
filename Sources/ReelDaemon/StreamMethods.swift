// subscribe / unsubscribe — live streams on the calling connection.

import ReelProtocol

/// A connection that can hold subscriptions. Called on the connection's event loop.
protocol SubscriptionHost: AnyObject {
    /// Starts a `player.state` stream ticking every `interval` seconds while playing.
    func subscribePlayer(interval: Double) -> Int
    /// Ends a subscription of this connection; false if it has none with that number.
    func unsubscribe(_ subscription: Int) -> Bool
}

enum StreamMethods {
    static let streams = ["player"]
    static let defaultInterval = 0.25
    static let minimumInterval = 0.02

    static func register(into table: inout MethodTable) {
        table.register("subscribe") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["stream", "interval", "item", "path"])
            let stream = try params.requiredString("stream")
            let interval = try params.optionalDouble("interval") ?? defaultInterval
            guard interval >= minimumInterval, interval <= 3600 else {
                throw RPCError.invalidParams("\"interval\" must be from \(minimumInterval) to 3600 seconds, not \(interval)")
            }
            switch stream {
            case "player":
                let id = call.connection.subscribePlayer(interval: interval)
                return .result(.object(["subscription": .int(Int64(id))]))
            default:
                throw RPCError.invalidParams(
                    "unknown stream \"\(stream)\"; this reeld offers: \(streams.joined(separator: ", "))")
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
}
