// One connection's subscriptions: their numbers, first pushes and catching up; the pushes come from the hub.

import NIOCore
import ReelCore
import ReelModel

/// A stream to subscribe to, resolved by `subscribe` (folders and items with their first value).
enum StreamRequest {
    case player
    case recorder
    case folder(Watched<FolderListing>)
    case item(Watched<Item>)
    case library
    case changes(CoreFeed)
}

/// The subscriptions of one connection, numbered from 1. Lives on the connection's event loop;
/// the pushes themselves are encoded and written by the loop's `RPCPushHub`.
final class RPCConnectionStreams: SubscriptionHost {
    private let hub: RPCPushHub
    private unowned let target: PushTarget
    private var subscriptions: [Int: RPCSubscription] = [:]
    private var nextID = 1
    private var ended = false

    init(hub: RPCPushHub, target: PushTarget) {
        self.hub = hub
        self.target = target
    }

    var isEmpty: Bool { subscriptions.isEmpty }
    var eventLoop: EventLoop { hub.loop }

    func subscribe(_ request: StreamRequest, interval: Double) -> Int {
        let id = nextID
        nextID += 1
        let stream: RPCSubscription.Stream
        switch request {
        case .player: stream = .player
        case .recorder: stream = .recorder
        case .folder(let watched): stream = .folder(id: watched.value.folder.id)
        case .item(let watched): stream = .item(id: watched.value.id)
        case .library: stream = .library
        case .changes(let kind): stream = .changes(kind)
        }
        let subscription = RPCSubscription(
            target: target, id: id, stream: stream, interval: .nanoseconds(Int64(interval * 1e9)))
        switch request {
        case .folder(let watched):
            subscription.firstValue = .contents(folder: watched.value.folder, items: watched.value.items)
            subscription.firstSequence = watched.sequence
        case .item(let watched):
            subscription.firstItem = .changed(watched.value)
            subscription.firstSequence = watched.sequence
        case .player, .recorder, .library, .changes:
            break
        }
        hub.add(subscription)
        if ended {
            // The connection closed while a folder or item was being read.
            hub.remove(subscription)
        } else {
            subscriptions[id] = subscription
        }
        return id
    }

    func unsubscribe(_ id: Int) -> Bool {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return false }
        hub.remove(subscription)
        return true
    }

    /// Sends the current value to the subscriptions made by the line just answered.
    func sendFirstPushes() {
        guard !subscriptions.isEmpty else { return }  // most lines: a connection that polls
        forgetEnded()
        let fresh = subscriptions.values.filter(\.awaitingFirstPush).sorted { $0.id < $1.id }
        for subscription in fresh { hub.pushCurrent(subscription) }
        forgetEnded()
    }

    /// The client reads again: send the latest value of every stream that skipped a push.
    func writableAgain() {
        forgetEnded()
        for subscription in subscriptions.values.sorted(by: { $0.id < $1.id }) where subscription.dirty {
            hub.pushCurrent(subscription)
        }
    }

    /// Drops the numbers of subscriptions whose stream ended (a folder or item deleted).
    private func forgetEnded() {
        for (id, subscription) in subscriptions where subscription.ended { subscriptions[id] = nil }
    }

    /// Ends every subscription (the connection closed).
    func tearDown() {
        ended = true
        for subscription in subscriptions.values { hub.remove(subscription) }
        subscriptions.removeAll()
    }
}
