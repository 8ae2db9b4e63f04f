// A connection's subscriptions: the player, recorder, folder, item and library streams and their pushes.

import NIOCore
import ReelLibrary
import ReelModel
import ReelProtocol

/// Where a connection's pushes go. Implemented by `RPCConnection`; called on its event loop.
protocol StreamOutput: AnyObject {
    var eventLoop: EventLoop? { get }
    /// False while the client is not reading (its output is above the high-water mark).
    var isWritable: Bool { get }
    func send(_ line: [UInt8])
    /// Flushes what was sent.
    func flushPushes()
}

/// A stream to subscribe to, resolved by `subscribe`.
enum StreamRequest {
    case player
    case recorder
    case folder(Item)
    case item(Item)
    case library
}

/// The subscriptions of one connection. Lives on the connection's event loop; player and
/// library changes arrive from other threads and hop onto it.
///
/// State streams (player, recorder, folder, item) push the current value after the subscribe reply, then
/// on every change; while the client is not reading, pushes are skipped and the latest value is
/// sent when it reads again. The library stream is a stream of events: each is sent, and a
/// client that lets more than 1 MiB pile up is disconnected by the connection.
final class ConnectionStreams: SubscriptionHost {
    private let player: PlayerController
    private let recorder: RecorderController
    private let library: LibraryController
    private unowned let output: StreamOutput
    private var subscriptions: [Int: Subscription] = [:]
    private var nextID = 1
    private var playerObserver: Int?
    private var recorderObserver: Int?
    private var libraryObserver: Int?
    private var ended = false

    private final class Subscription {
        enum Stream {
            case player
            case recorder
            case folder(id: String)
            case item(id: String)
            case library
        }

        let id: Int
        let stream: Stream
        let interval: TimeAmount
        var ticker: RepeatedTask?
        /// A push was skipped because the client was not reading.
        var dirty = false
        /// The current value goes out right after the reply that carries the subscription number.
        var awaitingFirstPush = true
        /// For folder and item streams: the path last sent, to notice a folder above being renamed or moved.
        var lastPath: String?

        init(id: Int, stream: Stream, interval: TimeAmount) {
            self.id = id
            self.stream = stream
            self.interval = interval
        }
    }

    init(player: PlayerController, recorder: RecorderController, library: LibraryController, output: StreamOutput) {
        self.player = player
        self.recorder = recorder
        self.library = library
        self.output = output
    }

    var isEmpty: Bool { subscriptions.isEmpty }

    // MARK: SubscriptionHost

    func subscribe(_ request: StreamRequest, interval: Double) -> Int {
        let id = nextID
        nextID += 1
        let stream: Subscription.Stream
        switch request {
        case .player: stream = .player
        case .recorder: stream = .recorder
        case .folder(let folder): stream = .folder(id: folder.id)
        case .item(let item): stream = .item(id: item.id)
        case .library: stream = .library
        }
        subscriptions[id] = Subscription(id: id, stream: stream, interval: .nanoseconds(Int64(interval * 1e9)))
        observe(stream)
        return id
    }

    func unsubscribe(_ id: Int) -> Bool {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return false }
        subscription.ticker?.cancel()
        stopObservingIfUnused()
        return true
    }

    /// Ends every subscription (the connection closed).
    func tearDown() {
        ended = true
        for subscription in subscriptions.values { subscription.ticker?.cancel() }
        subscriptions.removeAll()
        stopObservingIfUnused()
    }

    // MARK: Pushes

    /// Sends the current value to the subscriptions made by the line just answered.
    func sendFirstPushes() {
        let fresh = subscriptions.values.filter(\.awaitingFirstPush).sorted { $0.id < $1.id }
        guard !fresh.isEmpty else { return }
        let state = player.state
        for subscription in fresh {
            subscription.awaitingFirstPush = false
            pushCurrent(subscription, playerState: state)
        }
    }

    /// The client reads again: send the latest value of every stream that skipped a push.
    func writableAgain() {
        let state = player.state
        for subscription in subscriptions.values where subscription.dirty {
            pushCurrent(subscription, playerState: state)
        }
    }

    private func pushCurrent(_ subscription: Subscription, playerState: PlayerState) {
        switch subscription.stream {
        case .player:
            pushPlayer(playerState, to: subscription)
            updateTicker(subscription, active: playerState.state == .playing)
        case .recorder:
            let state = recorder.state
            pushRecorder(state, to: subscription)
            updateTicker(subscription, active: state.state == .recording)
        case .folder(let id):
            pushFolder(id, to: subscription)
        case .item(let id):
            if let item = try? library.store.item(id: id) {
                pushItem(item, to: subscription)
            } else {
                end(subscription, method: "item.deleted", key: "item", value: .object(["id": .string(id)]))
            }
        case .library:
            break  // an event stream has no current value
        }
    }

    private func playerChanged() {
        guard !ended else { return }
        let state = player.state
        for subscription in subscriptions.values where !subscription.awaitingFirstPush {
            if case .player = subscription.stream {
                pushPlayer(state, to: subscription)
                updateTicker(subscription, active: state.state == .playing)
            }
        }
        output.flushPushes()
    }

    private func recorderChanged() {
        guard !ended else { return }
        let state = recorder.state
        for subscription in subscriptions.values where !subscription.awaitingFirstPush {
            if case .recorder = subscription.stream {
                pushRecorder(state, to: subscription)
                updateTicker(subscription, active: state.state == .recording)
            }
        }
        output.flushPushes()
    }

    private func libraryChanged(_ changes: [LibraryChange]) {
        guard !ended else { return }
        for subscription in subscriptions.values.sorted(by: { $0.id < $1.id }) where !subscription.awaitingFirstPush {
            switch subscription.stream {
            case .player, .recorder:
                break
            case .folder(let id):
                if let removed = changes.first(where: { $0.kind == .removed && $0.item.id == id }) {
                    end(subscription, method: "folder.deleted", key: "folder", value: removed.item.json)
                } else if changes.contains(where: { $0.item.id == id || $0.parent?.id == id || $0.oldParent?.id == id }) {
                    pushFolder(id, to: subscription)
                } else if changes.contains(where: { $0.kind == .renamed || $0.kind == .moved }),
                    let folder = try? library.store.item(id: id), folder.path != subscription.lastPath
                {
                    // A folder above it was renamed or moved: its path changed.
                    pushFolder(id, to: subscription)
                }
            case .item(let id):
                if let removed = changes.first(where: { $0.kind == .removed && $0.item.id == id }) {
                    end(subscription, method: "item.deleted", key: "item", value: removed.item.json)
                } else if let change = changes.last(where: { $0.item.id == id }) {
                    pushItem(change.item, to: subscription)
                } else if changes.contains(where: { $0.kind == .renamed || $0.kind == .moved }),
                    let item = try? library.store.item(id: id), item.path != subscription.lastPath
                {
                    // A folder above it was renamed or moved: its path changed.
                    pushItem(item, to: subscription)
                }
            case .library:
                for change in changes {
                    output.send(
                        RPCEncoder.notificationLine(
                            method: "library.changed",
                            params: [
                                "subscription": .int(Int64(subscription.id)), "change": .string(change.kind.rawValue),
                                "item": change.item.json, "parent": change.parent?.json ?? .null,
                            ]))
                }
            }
        }
        output.flushPushes()
    }

    private func pushPlayer(_ state: PlayerState, to subscription: Subscription) {
        guard claimPush(subscription) else { return }
        var params: JSONObject = ["subscription": .int(Int64(subscription.id))]
        params.merge(state.jsonObject)
        output.send(RPCEncoder.notificationLine(method: "player.state", params: params))
    }

    private func pushRecorder(_ state: RecorderState, to subscription: Subscription) {
        guard claimPush(subscription) else { return }
        var params: JSONObject = ["subscription": .int(Int64(subscription.id))]
        params.merge(state.jsonObject)
        output.send(RPCEncoder.notificationLine(method: "recorder.state", params: params))
    }

    private func pushFolder(_ id: String, to subscription: Subscription) {
        guard let listing = try? library.store.list(folder: .id(id)) else {
            end(subscription, method: "folder.deleted", key: "folder", value: .object(["id": .string(id)]))
            return
        }
        subscription.lastPath = listing.folder.path
        guard claimPush(subscription) else { return }
        output.send(
            RPCEncoder.notificationLine(
                method: "folder.contents",
                params: [
                    "subscription": .int(Int64(subscription.id)), "folder": listing.folder.json,
                    "items": .array(listing.items.map(\.json)),
                ]))
    }

    private func pushItem(_ item: Item, to subscription: Subscription) {
        subscription.lastPath = item.path
        guard claimPush(subscription) else { return }
        output.send(
            RPCEncoder.notificationLine(
                method: "item.changed", params: ["subscription": .int(Int64(subscription.id)), "item": item.json]))
    }

    /// The last push of an until-deleted stream; the subscription ends with it.
    private func end(_ subscription: Subscription, method: String, key: String, value: JSONValue) {
        output.send(
            RPCEncoder.notificationLine(method: method, params: ["subscription": .int(Int64(subscription.id)), key: value]))
        _ = unsubscribe(subscription.id)
    }

    /// True if the client is reading; otherwise the push is skipped and remembered.
    private func claimPush(_ subscription: Subscription) -> Bool {
        guard output.isWritable else {
            subscription.dirty = true
            return false
        }
        subscription.dirty = false
        return true
    }

    // MARK: Ticks

    /// Ticks run only while playing (player stream) or recording (recorder stream), so an idle
    /// daemon with many subscribers does not wake up.
    private func updateTicker(_ subscription: Subscription, active: Bool) {
        if active, subscription.ticker == nil, let loop = output.eventLoop {
            let bound = NIOLoopBound(self, eventLoop: loop)
            let id = subscription.id
            subscription.ticker = loop.scheduleRepeatedTask(initialDelay: subscription.interval, delay: subscription.interval) {
                _ in bound.value.tick(id)
            }
        } else if !active, let ticker = subscription.ticker {
            ticker.cancel()
            subscription.ticker = nil
        }
    }

    private func tick(_ id: Int) {
        guard !ended, let subscription = subscriptions[id] else { return }
        switch subscription.stream {
        case .player:
            let state = player.state
            pushPlayer(state, to: subscription)
            if state.state != .playing { updateTicker(subscription, active: false) }
        case .recorder:
            let state = recorder.state
            pushRecorder(state, to: subscription)
            if state.state != .recording { updateTicker(subscription, active: false) }
        case .folder, .item, .library:
            break
        }
        output.flushPushes()
    }

    // MARK: Observing

    private func observe(_ stream: Subscription.Stream) {
        guard let loop = output.eventLoop else { return }
        let bound = NIOLoopBound(self, eventLoop: loop)
        switch stream {
        case .player:
            if playerObserver == nil {
                playerObserver = player.addObserver { _ in loop.execute { bound.value.playerChanged() } }
            }
        case .recorder:
            if recorderObserver == nil {
                recorderObserver = recorder.addObserver { _ in loop.execute { bound.value.recorderChanged() } }
            }
        case .folder, .item, .library:
            if libraryObserver == nil {
                libraryObserver = library.addObserver { changes in loop.execute { bound.value.libraryChanged(changes) } }
            }
        }
    }

    private func stopObservingIfUnused() {
        let streams = subscriptions.values.map(\.stream)
        if let observer = playerObserver, !streams.contains(where: { if case .player = $0 { true } else { false } }) {
            player.removeObserver(observer)
            playerObserver = nil
        }
        if let observer = recorderObserver, !streams.contains(where: { if case .recorder = $0 { true } else { false } }) {
            recorder.removeObserver(observer)
            recorderObserver = nil
        }
        let libraryStreams = streams.filter {
            switch $0 {
            case .player, .recorder: false
            case .folder, .item, .library: true
            }
        }
        if let observer = libraryObserver, libraryStreams.isEmpty {
            library.removeObserver(observer)
            libraryObserver = nil
        }
    }
}
