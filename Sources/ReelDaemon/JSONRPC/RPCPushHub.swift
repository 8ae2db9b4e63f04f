// Every JSON-RPC subscription on one event loop: takes the core's changes, encodes each once, writes it to all.

import Logging
import NIOCore
import ReelCore
import ReelModel
import ReelProtocol

/// Where pushes go: one client connection. Called on the hub's event loop.
protocol PushTarget: AnyObject {
    /// False while the client is not reading (its output is above the high-water mark).
    var isWritable: Bool { get }
    /// Queues a push (not flushed). A client that lets more than 1 MiB pile up is disconnected.
    func push(_ line: ByteBuffer)
    func flushPushes()
    /// `push` and `flushPushes` in one.
    func pushAndFlush(_ line: ByteBuffer)
    /// Closes the connection (its event stream could not be kept whole).
    func drop(reason: String)
}

/// A stream subscription of one connection. Lives on the hub's event loop.
final class RPCSubscription {
    enum Stream: Equatable {
        case player
        case recorder
        case folder(id: String)
        case item(id: String)
        case library
        /// A feed pushed on change only, never ticked (`queue`, `mixer`, `playlists`…).
        case changes(CoreFeed)

        /// The core feed whose changes this stream pushes.
        var feed: CoreFeed {
            switch self {
            case .player: .player
            case .recorder: .recorder
            case .folder, .item, .library: .library
            case .changes(let feed): feed
            }
        }
    }

    unowned let target: PushTarget
    /// The number the client knows it by (per connection).
    let id: Int
    let stream: Stream
    let interval: TimeAmount
    /// A push was skipped because the client was not reading: the latest goes when it reads again.
    var dirty = false
    /// The current value goes out right after the reply that carries the subscription number.
    var awaitingFirstPush = true
    /// For folder and item streams before the first push: the value read at subscribe, and the
    /// newest update that came after that read (if any), which wins.
    var firstValue: LibraryUpdate.FolderState?
    var firstItem: LibraryUpdate.ItemState?
    var firstSequence: UInt64 = 0
    var ended = false

    init(target: PushTarget, id: Int, stream: Stream, interval: TimeAmount) {
        self.target = target
        self.id = id
        self.stream = stream
        self.interval = interval
    }
}

/// The JSON-RPC front end's fan-out, one per event loop, serving every connection on it.
///
/// Why: a change must cost its producer nothing per subscriber and be encoded once. The hub
/// follows each feed of `core.feeds` (one consumer, `CoreFeeds.follow`) while anyone
/// subscribes to a stream of it (`RPCSubscription.Stream.feed`); a change wakes it once
/// (an `execute` on the loop); it takes the newest value, encodes the push once as a prefix and
/// a suffix around the `subscription` number, and writes prefix‖number‖suffix to each subscriber.
///
/// Ticks (the player's position while playing, the recorder's levels while recording) run on
/// one timer per stream and interval, not one per subscriber. A round writes to every member
/// in slices of a few milliseconds and gives the event loop back between slices, so a command
/// from any client is read and answered before the rest of the round is written; a tick that
/// comes due while the previous round is still being written is skipped, never queued. Every
/// round reaches every member, so under overload each subscriber gets fewer ticks — the same
/// number — and none is starved.
///
/// Slow clients: a push to a client that is not reading is skipped and the latest value is sent
/// when it reads again (state streams coalesce); the library event stream is not coalesced (the
/// connection drops a client past 1 MiB unread).
///
/// Threads: everything here runs on `loop` (it is handed to the connections' initializer, hence
/// `@unchecked Sendable`); the core's feeds wake it from their threads.
final class RPCPushHub: @unchecked Sendable {
    let loop: EventLoop
    private let core: ReelCore
    private let logger: Logger
    /// How long a tick round writes before it lets the event loop read and answer commands.
    static let roundSlice = TimeAmount.milliseconds(2)

    private var player: [ObjectIdentifier: RPCSubscription] = [:]
    private var recorder: [ObjectIdentifier: RPCSubscription] = [:]
    private var folders: [String: [ObjectIdentifier: RPCSubscription]] = [:]
    private var items: [String: [ObjectIdentifier: RPCSubscription]] = [:]
    private var library: [ObjectIdentifier: RPCSubscription] = [:]
    private var changeStreams: [CoreFeed: ChangeStream] = [:]
    /// One consumer per feed that has subscribers.
    private var consumers: [CoreFeed: CoreFeeds.Consumer] = [:]
    private var tickGroups: [TickKey: TickGroup] = [:]
    /// The player's and recorder's activity as last taken: ticks run only while playing/recording.
    private var playing = false
    private var recording = false

    struct TickKey: Hashable {
        let player: Bool
        let interval: TimeAmount
    }

    final class TickGroup {
        var members: [ObjectIdentifier: RPCSubscription] = [:]
        /// The next tick, at a fixed rate from the first (a late round does not shift the rest).
        var task: Scheduled<Void>?
        var deadline = NIODeadline.uptimeNanoseconds(0)
        /// The members still to be written in the round in progress, if one is.
        var round: [RPCSubscription] = []
        var roundPush: SplicedPush?
        var roundIndex = 0
    }

    init(loop: EventLoop, core: ReelCore, logger: Logger) {
        self.loop = loop
        self.core = core
        self.logger = logger
    }

    /// How many tick timers are armed (one per stream and interval that has members, while active).
    var armedTickTimers: Int { tickGroups.values.filter { $0.task != nil }.count }

    // MARK: Subscribing

    /// Adds a subscription; its first push goes out with `sendFirstPush`.
    func add(_ subscription: RPCSubscription) {
        loop.preconditionInEventLoop()
        let key = ObjectIdentifier(subscription)
        switch subscription.stream {
        case .player:
            player[key] = subscription
            follow(.player)
            tickGroup(for: subscription).members[key] = subscription
            updateTicking(player: true)
        case .recorder:
            recorder[key] = subscription
            follow(.recorder)
            tickGroup(for: subscription).members[key] = subscription
            updateTicking(player: false)
        case .folder(let id):
            folders[id, default: [:]][key] = subscription
            follow(.library)
        case .item(let id):
            items[id, default: [:]][key] = subscription
            follow(.library)
        case .library:
            library[key] = subscription
            follow(.library)
        case .changes(let feed):
            changeStream(feed).members[key] = subscription
            follow(feed)
        }
    }

    /// Starts following `feed` of the core, if not yet.
    private func follow(_ feed: CoreFeed) {
        guard consumers[feed] == nil else { return }
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        consumers[feed] = core.feeds.follow(feed) { loop.execute { bound.value.changed(feed) } }
        switch feed {
        case .player: playing = core.player.changes.latest.value.state == .playing
        case .recorder: recording = core.recorder.isRecording
        case .queue, .mixer, .outputs, .library, .scan, .schedules, .playlists: break
        }
    }

    /// Stops following `feed` (its last subscriber left).
    private func leave(_ feed: CoreFeed) {
        consumers.removeValue(forKey: feed)?.leave()
    }

    private func changeStream(_ feed: CoreFeed) -> ChangeStream {
        if let stream = changeStreams[feed] { return stream }
        let stream = ChangeStream(feed: feed, core: core)
        changeStreams[feed] = stream
        return stream
    }

    /// Ends a subscription (unsubscribe, end of its stream, or its connection closed).
    func remove(_ subscription: RPCSubscription) {
        loop.preconditionInEventLoop()
        guard !subscription.ended else { return }
        subscription.ended = true
        let key = ObjectIdentifier(subscription)
        switch subscription.stream {
        case .player:
            player[key] = nil
            removeFromTicks(subscription)
            if player.isEmpty { leave(.player) }
        case .recorder:
            recorder[key] = nil
            removeFromTicks(subscription)
            if recorder.isEmpty { leave(.recorder) }
        case .folder(let id):
            folders[id]?[key] = nil
            if folders[id]?.isEmpty == true { folders[id] = nil }
            core.library.unwatchFolder(id)
        case .item(let id):
            items[id]?[key] = nil
            if items[id]?.isEmpty == true { items[id] = nil }
            core.library.unwatchItem(id)
        case .library:
            library[key] = nil
        case .changes(let feed):
            if let stream = changeStreams[feed] {
                stream.members[key] = nil
                if stream.members.isEmpty { leave(feed) }
            }
        }
        if folders.isEmpty, items.isEmpty, library.isEmpty { leave(.library) }
    }

    // MARK: First pushes and catching up

    /// Sends the current value of a subscription made by the line just answered, or the latest
    /// one it missed while its client was not reading.
    func pushCurrent(_ subscription: RPCSubscription) {
        guard !subscription.ended else { return }
        let first = subscription.awaitingFirstPush
        subscription.awaitingFirstPush = false
        switch subscription.stream {
        case .player:
            write(Self.encode(core.player.state), to: subscription)
        case .recorder:
            write(Self.encode(core.recorder.state), to: subscription)
        case .folder:
            if let state = subscription.firstValue {
                subscription.firstValue = nil
                push(state, folderID: folderID(of: subscription), to: [subscription])
            } else if subscription.dirty {
                // Missed while not reading: read it again (off the loop) and send it then.
                catchUpFolder(subscription)
            }
        case .item:
            if let state = subscription.firstItem {
                subscription.firstItem = nil
                push(state, itemID: itemID(of: subscription), to: [subscription])
            } else if subscription.dirty {
                catchUpItem(subscription)
            }
        case .library:
            break  // an event stream has no current value
        case .changes(let feed):
            if let push = changeStream(feed).current(first: first) { write(push, to: subscription) }
        }
    }

    private func folderID(of subscription: RPCSubscription) -> String {
        if case .folder(let id) = subscription.stream { return id }
        return ""
    }

    private func itemID(of subscription: RPCSubscription) -> String {
        if case .item(let id) = subscription.stream { return id }
        return ""
    }

    private func catchUpFolder(_ subscription: RPCSubscription) {
        let id = folderID(of: subscription)
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        let pending = NIOLoopBound(subscription, eventLoop: loop)
        core.library.list(folder: .id(id)) { result in
            let state: LibraryUpdate.FolderState
            switch result {
            case .success(let listing): state = .contents(folder: listing.folder, items: listing.items)
            case .failure: state = .deleted(nil)
            }
            loop.execute {
                let subscription = pending.value
                guard !subscription.ended, subscription.dirty else { return }
                bound.value.push(state, folderID: id, to: [subscription])
                subscription.target.flushPushes()
            }
        }
    }

    private func catchUpItem(_ subscription: RPCSubscription) {
        let id = itemID(of: subscription)
        let bound = NIOLoopBound(self, eventLoop: loop)
        let loop = self.loop
        let pending = NIOLoopBound(subscription, eventLoop: loop)
        core.library.item(.id(id)) { result in
            let state: LibraryUpdate.ItemState
            switch result {
            case .success(let item): state = .changed(item)
            case .failure: state = .deleted(nil)
            }
            loop.execute {
                let subscription = pending.value
                guard !subscription.ended, subscription.dirty else { return }
                bound.value.push(state, itemID: id, to: [subscription])
                subscription.target.flushPushes()
            }
        }
    }

    // MARK: Changes

    /// A feed woke the hub: takes its change and pushes it to the feed's subscribers.
    private func changed(_ feed: CoreFeed) {
        guard let consumer = consumers[feed] else { return }
        let change = consumer.take()
        switch change {
        case .player(let state): playerChanged(state)
        case .recorder(let state): recorderChanged(state)
        case .library(let batch): libraryChanged(batch)
        case .queue, .mixer, .outputs, .scan, .schedules, .playlists:
            guard let stream = changeStreams[feed] else { return }
            for push in stream.pushes(for: change) { broadcast(push, to: stream.members.values) }
        }
    }

    private func playerChanged(_ state: PlayerState) {
        let push = Self.encode(state)
        broadcast(push, to: player.values)
        if playing != (state.state == .playing) {
            playing = state.state == .playing
            updateTicking(player: true)
        }
    }

    private func recorderChanged(_ state: RecorderState) {
        broadcast(Self.encode(state), to: recorder.values)
        if recording != (state.state == .recording) {
            recording = state.state == .recording
            updateTicking(player: false)
        }
    }

    private func libraryChanged(_ batch: EventFeed<LibraryUpdate>.Batch) {
        if batch.lost > 0 {
            // The event stream cannot be kept whole: its clients start again on a new connection.
            logger.warning("the library changed faster than clients could be told; dropping its subscribers",
                           metadata: ["lostUpdates": "\(batch.lost)"])
            var targets: [ObjectIdentifier: PushTarget] = [:]
            for subscription in library.values + folders.values.flatMap(\.values) + items.values.flatMap(\.values) {
                targets[ObjectIdentifier(subscription.target)] = subscription.target
            }
            for target in targets.values { target.drop(reason: "missed library changes") }
            return
        }
        var touched: [ObjectIdentifier: PushTarget] = [:]
        for (offset, update) in batch.events.enumerated() {
            let sequence = batch.firstSequence + UInt64(offset)
            for (id, state) in update.folders {
                guard let subscribers = folders[id] else { continue }
                var ready: [RPCSubscription] = []
                for subscription in subscribers.values {
                    if subscription.awaitingFirstPush {
                        if sequence >= subscription.firstSequence { subscription.firstValue = state }
                    } else {
                        ready.append(subscription)
                        touched[ObjectIdentifier(subscription.target)] = subscription.target
                    }
                }
                push(state, folderID: id, to: ready)
            }
            for (id, state) in update.items {
                guard let subscribers = items[id] else { continue }
                var ready: [RPCSubscription] = []
                for subscription in subscribers.values {
                    if subscription.awaitingFirstPush {
                        if sequence >= subscription.firstSequence { subscription.firstItem = state }
                    } else {
                        ready.append(subscription)
                        touched[ObjectIdentifier(subscription.target)] = subscription.target
                    }
                }
                push(state, itemID: id, to: ready)
            }
            if !library.isEmpty {
                let subscribers = library.values.filter { !$0.awaitingFirstPush }
                for change in update.changes {
                    let push = SplicedPush(
                        method: "library.changed",
                        members: [
                            "change": .string(change.kind.rawValue), "item": change.item.json,
                            "parent": change.parent?.json ?? .null,
                        ])
                    for subscription in subscribers {
                        // An event stream: written even to a client that is slow to read.
                        subscription.target.push(push.line(for: subscription.id))
                        touched[ObjectIdentifier(subscription.target)] = subscription.target
                    }
                }
            }
        }
        for target in touched.values { target.flushPushes() }
    }

    private func push(_ state: LibraryUpdate.FolderState, folderID: String, to subscribers: [RPCSubscription]) {
        guard !subscribers.isEmpty else { return }
        switch state {
        case .contents(let folder, let items):
            let push = SplicedPush(
                method: "folder.contents", members: ["folder": folder.json, "items": .array(items.map(\.json))])
            for subscription in subscribers { write(push, to: subscription) }
        case .deleted(let folder):
            let push = SplicedPush(
                method: "folder.deleted", members: ["folder": folder?.json ?? .object(["id": .string(folderID)])])
            for subscription in subscribers {
                subscription.target.push(push.line(for: subscription.id))
                remove(subscription)
            }
        }
    }

    private func push(_ state: LibraryUpdate.ItemState, itemID: String, to subscribers: [RPCSubscription]) {
        guard !subscribers.isEmpty else { return }
        switch state {
        case .changed(let item):
            let push = SplicedPush(method: "item.changed", members: ["item": item.json])
            for subscription in subscribers { write(push, to: subscription) }
        case .deleted(let item):
            let push = SplicedPush(
                method: "item.deleted", members: ["item": item?.json ?? .object(["id": .string(itemID)])])
            for subscription in subscribers {
                subscription.target.push(push.line(for: subscription.id))
                remove(subscription)
            }
        }
    }

    /// Writes one encoded push to every subscriber that is past its first push, flushing each.
    private func broadcast(_ push: SplicedPush, to subscriptions: Dictionary<ObjectIdentifier, RPCSubscription>.Values) {
        for subscription in subscriptions where !subscription.awaitingFirstPush {
            write(push, to: subscription, flush: true)
        }
    }

    /// A state push: written if the client reads, else skipped and remembered. True if written.
    /// With `flush`, the connection's output is flushed at once (one traversal of its pipeline).
    @discardableResult
    private func write(_ push: SplicedPush, to subscription: RPCSubscription, flush: Bool = false) -> Bool {
        let target = subscription.target
        guard target.isWritable else {
            subscription.dirty = true
            return false
        }
        subscription.dirty = false
        if flush {
            target.pushAndFlush(push.line(for: subscription.id))
        } else {
            target.push(push.line(for: subscription.id))
        }
        return true
    }

    // MARK: Ticks

    private func tickGroup(for subscription: RPCSubscription) -> TickGroup {
        let key = TickKey(player: subscription.stream == .player, interval: subscription.interval)
        if let group = tickGroups[key] { return group }
        let group = TickGroup()
        tickGroups[key] = group
        return group
    }

    private func removeFromTicks(_ subscription: RPCSubscription) {
        let key = TickKey(player: subscription.stream == .player, interval: subscription.interval)
        guard let group = tickGroups[key] else { return }
        group.members[ObjectIdentifier(subscription)] = nil
        if group.members.isEmpty {
            group.task?.cancel()
            group.task = nil
            tickGroups[key] = nil
        }
    }

    /// Starts the timers of the player's (or recorder's) groups while it plays (records), and
    /// stops them otherwise: an idle daemon with many subscribers does not wake up.
    private func updateTicking(player: Bool) {
        let active = player ? playing : recording
        for (key, group) in tickGroups where key.player == player {
            if active, group.task == nil {
                group.deadline = loop.now + key.interval
                scheduleTick(group, key: key)
            } else if !active, let task = group.task {
                task.cancel()
                group.task = nil
                group.round = []
            }
        }
    }

    private func scheduleTick(_ group: TickGroup, key: TickKey) {
        let bound = NIOLoopBound(self, eventLoop: loop)
        group.task = loop.scheduleTask(deadline: group.deadline) {
            bound.value.tick(group, key: key)
        }
    }

    private func tick(_ group: TickGroup, key: TickKey) {
        guard tickGroups[key] === group, group.task != nil else { return }
        // The next tick at a fixed rate; ticks that are already past are skipped, not queued.
        let now = loop.now
        group.deadline = group.deadline + key.interval
        if group.deadline <= now {
            let behind = (now - group.deadline).nanoseconds / key.interval.nanoseconds + 1
            group.deadline = group.deadline + .nanoseconds(behind * key.interval.nanoseconds)
        }
        scheduleTick(group, key: key)
        let player = key.player
        guard group.round.isEmpty else {
            // The previous round is still being written: skip this one.
            return
        }
        let push = player ? Self.encode(core.player.state) : Self.encode(core.recorder.state)
        group.roundPush = push
        group.round = Array(group.members.values)
        group.roundIndex = 0
        writeRound(group)
    }

    /// Writes the round's pushes for up to `roundSlice`, then, if members remain, lets the event
    /// loop read (and answer commands) before writing on.
    private func writeRound(_ group: TickGroup) {
        guard let push = group.roundPush else { return }
        let deadline = loop.now + Self.roundSlice
        while group.roundIndex < group.round.count {
            let subscription = group.round[group.roundIndex]
            group.roundIndex += 1
            if !subscription.ended, !subscription.awaitingFirstPush {
                write(push, to: subscription, flush: true)
            }
            if group.roundIndex % 16 == 0, loop.now >= deadline { break }
        }
        if group.roundIndex >= group.round.count {
            group.round = []
            group.roundPush = nil
            return
        }
        // A task due in the future makes the loop poll its sockets before running it; an
        // immediate one would run before any read.
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.scheduleTask(in: .microseconds(200)) { bound.value.writeRound(group) }
    }

    // MARK: Encoding

    static func encode(_ state: PlayerState) -> SplicedPush {
        SplicedPush(method: "player.state", object: state.jsonText.bytes)
    }

    static func encode(_ state: RecorderState) -> SplicedPush {
        SplicedPush(method: "recorder.state", members: state.jsonObject)
    }
}

/// A push encoded once for all subscribers: `{"jsonrpc":"2.0","method":M,"params":{"subscription":`
/// ‖ the subscriber's number ‖ `,members…}}\n`.
///
/// Subscription numbers are per connection, so most subscribers of a stream share one (a client's
/// first subscription is 1): the whole line is built once per number and the same buffer is
/// handed to every connection (NIO shares a `ByteBuffer`'s storage, copy-on-write), so a round of
/// a thousand ticks allocates a handful of lines, not a thousand. Used on the hub's event loop only.
final class SplicedPush {
    let prefix: [UInt8]
    let suffix: [UInt8]
    /// Whole lines already built, by subscription number (a few at most).
    private var lines: [(id: Int, line: ByteBuffer)] = []
    private static let cachedLines = 8

    convenience init(method: String, members: JSONObject) {
        var object: [UInt8] = []
        JSONWriter.writeObject(members, into: &object)
        self.init(method: method, object: object)
    }

    /// `object` is the params' members already written as a JSON object, `{…}`.
    init(method: String, object: [UInt8]) {
        var prefix: [UInt8] = []
        prefix.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
        JSONWriter.writeString(method, into: &prefix)
        prefix.append(contentsOf: #","params":{"subscription":"#.utf8)
        self.prefix = prefix
        // `{…}` → `,…}}\n`, or `}}\n` for no members.
        var suffix: [UInt8] = []
        suffix.reserveCapacity(object.count + 3)
        if object.count > 2 {
            suffix.append(0x2C)
            suffix.append(contentsOf: object[1...])
        } else {
            suffix.append(0x7D)
        }
        suffix.append(0x7D)
        suffix.append(0x0A)
        self.suffix = suffix
    }

    /// The whole line for subscription `id`.
    func line(for id: Int) -> ByteBuffer {
        for cached in lines where cached.id == id { return cached.line }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(prefix.count + 20 + suffix.count)
        buffer.writeBytes(prefix)
        buffer.writeString(String(id))
        buffer.writeBytes(suffix)
        if lines.count < Self.cachedLines { lines.append((id, buffer)) }
        return buffer
    }
}
