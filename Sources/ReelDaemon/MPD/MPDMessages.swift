// MPD's client-to-client messages: `channels`, `subscribe`, `unsubscribe`, `sendmessage`,
// `readmessages` (MPD's `src/command/MessageCommands.cxx`, `src/client/Subscribe.cxx`).

/// One message as `readmessages` prints it.
struct MPDMessage: Equatable, Sendable {
    var channel: String
    var text: String
}

/// What one client holds of the messages: the channels it is subscribed to and the messages it
/// has not read. MPD's limits: 16 channels, 64 unread messages (a message to a full mailbox is
/// not delivered to it). A value; it lives in the client's `MPDClient`, on the event loop.
struct MPDMailbox: Equatable, Sendable {
    static let maxSubscriptions = 16
    static let maxMessages = 64

    private(set) var subscriptions: Set<String> = []
    private(set) var messages: [MPDMessage] = []

    /// MPD's channel names: at least one character, each an ASCII letter or digit or one of
    /// `_`, `-`, `.`, `:`.
    static func isValidChannel(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: ":"):
                true
            default:
                false
            }
        }
    }

    /// Subscribes to `channel`, or throws MPD's ACK (checked in MPD's order: the name, a full
    /// list, then a channel subscribed already).
    mutating func subscribe(_ channel: String) throws(MPDAck) {
        guard Self.isValidChannel(channel) else { throw MPDAck(.argument, "invalid channel name") }
        guard subscriptions.count < Self.maxSubscriptions else { throw MPDAck(.exist, "subscription list is full") }
        guard subscriptions.insert(channel).inserted else { throw MPDAck(.exist, "already subscribed to this channel") }
    }

    /// Unsubscribes from `channel`; messages already received stay to be read.
    mutating func unsubscribe(_ channel: String) throws(MPDAck) {
        guard subscriptions.remove(channel) != nil else { throw MPDAck(.noExist, "not subscribed to this channel") }
    }

    /// Takes `message` if subscribed to its channel and not full. `wasEmpty`: nothing was waiting
    /// before it (MPD posts the `message` idle event then only).
    mutating func deliver(_ message: MPDMessage) -> (taken: Bool, wasEmpty: Bool) {
        guard messages.count < Self.maxMessages, subscriptions.contains(message.channel) else { return (false, false) }
        messages.append(message)
        return (true, messages.count == 1)
    }

    /// The messages waiting, oldest first; none are left.
    mutating func takeMessages() -> [MPDMessage] {
        defer { messages = [] }
        return messages
    }
}

/// The clients that are subscribed to some channel, for `channels` and `sendmessage`; a client
/// leaves when it disconnects (`MPDEventHub.remove`). Lives on the event loop, as the clients.
final class MPDMessageBoard: @unchecked Sendable {
    private var clients: [ObjectIdentifier: MPDClient] = [:]
    /// Posts an idle event to every connection (`MPDEventHub.post`).
    var postToAll: (MPDSubsystems) -> Void = { _ in }

    /// `subscribe`: every client hears `subscription`.
    func subscribe(_ client: MPDClient, to channel: String) throws(MPDAck) {
        try client.mailbox.subscribe(channel)
        clients[ObjectIdentifier(client)] = client
        postToAll(.subscription)
    }

    /// `unsubscribe`: every client hears `subscription`.
    func unsubscribe(_ client: MPDClient, from channel: String) throws(MPDAck) {
        try client.mailbox.unsubscribe(channel)
        if client.mailbox.subscriptions.isEmpty { clients[ObjectIdentifier(client)] = nil }
        postToAll(.subscription)
    }

    /// `channels`: every channel some client is subscribed to, in byte order.
    var channels: [String] {
        Set(clients.values.flatMap(\.mailbox.subscriptions)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// `sendmessage`: to every client subscribed to the channel (the sender too) whose mailbox is
    /// not full; each that had nothing waiting hears `message`. Nobody took it: MPD's ACK.
    func send(_ message: MPDMessage) throws(MPDAck) {
        guard MPDMailbox.isValidChannel(message.channel) else { throw MPDAck(.argument, "invalid channel name") }
        var taken = false
        for client in clients.values {
            let delivery = client.mailbox.deliver(message)
            taken = taken || delivery.taken
            if delivery.wasEmpty { client.notify(.message) }
        }
        guard taken else { throw MPDAck(.noExist, "nobody is subscribed to this channel") }
    }

    /// A client that disconnected: its channels go (without an event, as in MPD).
    func remove(_ client: MPDClient) {
        clients[ObjectIdentifier(client)] = nil
    }
}

/// The commands, on the front end's board.
enum MPDMessageCommands {
    static func commands(_ board: MPDMessageBoard) -> [MPDCommand] {
        [
            .now("subscribe", .read, 1, 1) { request throws(MPDAck) in
                try board.subscribe(request.client, to: request[0])
                return MPDResponse()
            },
            .now("unsubscribe", .read, 1, 1) { request throws(MPDAck) in
                try board.unsubscribe(request.client, from: request[0])
                return MPDResponse()
            },
            .now("channels", .read, 0, 0) { _ in
                var response = MPDResponse()
                for channel in board.channels { response.field("channel", channel) }
                return response
            },
            .now("sendmessage", .player, 2, 2) { request throws(MPDAck) in
                try board.send(MPDMessage(channel: request[0], text: request[1]))
                return MPDResponse()
            },
            .now("readmessages", .read, 0, 0) { request in
                var response = MPDResponse()
                for message in request.client.mailbox.takeMessages() {
                    response.field("channel", message.channel)
                    response.field("message", message.text)
                }
                return response
            },
        ]
    }
}
