// subscribe / unsubscribe — live streams on the calling connection.

import ReelLibrary
import ReelModel
import ReelProtocol

/// A connection that can hold subscriptions. Called on the connection's event loop.
protocol SubscriptionHost: AnyObject {
    /// Starts a stream; the player's ticks every `interval` seconds while playing, the
    /// recorder's while recording.
    func subscribe(_ stream: StreamRequest, interval: Double) -> Int
    /// Ends a subscription of this connection; false if it has none with that number.
    func unsubscribe(_ subscription: Int) -> Bool
}

enum StreamMethods {
    static let streams = ["player", "recorder", "folder", "item", "library"]
    static let defaultInterval = 0.25
    static let minimumInterval = 0.02

    static func register(into table: inout MethodTable, library: LibraryController) {
        let store = library.store
        table.register("subscribe") { call throws(RPCError) in
            let params = call.params
            try params.rejectUnknown(allowed: ["stream", "interval", "item", "path"])
            let stream = try params.requiredString("stream")
            let interval = try params.optionalDouble("interval") ?? defaultInterval
            guard interval >= minimumInterval, interval <= 3600 else {
                throw RPCError.invalidParams("\"interval\" must be from \(minimumInterval) to 3600 seconds, not \(interval)")
            }
            let request: StreamRequest
            switch stream {
            case "player", "recorder", "library":
                guard try params.optionalItem() == nil else {
                    throw RPCError.invalidParams("the \(stream) stream takes no \"item\" or \"path\"")
                }
                request = stream == "player" ? .player : stream == "recorder" ? .recorder : .library
            case "folder":
                let reference = try params.optionalItem() ?? .root
                let folder = try withRPCErrors { () throws(ReelError) in try store.item(reference) }
                guard folder.kind == .folder else {
                    throw RPCError(ReelError(.notAFolder, "\(folder.path) is a recording, not a folder"))
                }
                request = .folder(folder)
            case "item":
                let reference = try params.requiredItem()
                request = .item(try withRPCErrors { () throws(ReelError) in try store.item(reference) })
            default:
                throw RPCError.invalidParams(
                    "unknown stream \"\(stream)\"; streams are: \(streams.joined(separator: ", "))")
            }
            let id = call.connection.subscribe(request, interval: interval)
            return .result(.object(["subscription": .int(Int64(id))]))
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
