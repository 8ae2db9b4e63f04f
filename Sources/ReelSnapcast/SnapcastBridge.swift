// The plugin's logic: snapserver's requests become reeld's methods, reeld's pushes become
// `Plugin.Stream.Player.Properties`. Main thread only: `PluginLoop` calls it with each line
// from stdin and each event of the link to reeld; it writes to `PluginSink` and never blocks.

import ReelClient
import ReelModel
import ReelProtocol

/// Where the bridge writes its lines for snapserver (stdout; a buffer in tests).
public protocol PluginSink: AnyObject {
    /// One complete line, ending in `\n`.
    func write(_ line: [UInt8])
}

/// `Plugin.Stream.Log`'s severities that the plugin uses.
public enum LogSeverity: String, Sendable {
    case debug, info, notice, warning, error
}

public final class SnapcastBridge {
    /// Entries per `queue.list` while looking for the current entry.
    static let lookupPageSize = 500
    /// The player stream's tick interval: the longest reeld allows. A playing position is not
    /// pushed (snapserver's clients advance it themselves); changes are pushed at once anyway.
    static let playerInterval = 3600

    private let sink: PluginSink
    private let reeld: ReeldRequester
    private let clock: () -> Double
    /// reeld's state once the three subscriptions have their first values; nil before and while
    /// disconnected.
    public private(set) var view: ReeldView?
    private var syncing: ReeldView?
    private var awaiting: Set<ReeldView.Stream> = []
    private var readySent = false
    private var tracker = PropertiesTracker()
    /// The entry and queue version of the last `queue.list` lookup, and its number (a reply to an
    /// older lookup is dropped).
    private var lookup: (entry: Int, version: Int, generation: Int)?
    private var lookupGeneration = 0
    private var lastUnreachable: String?
    /// Runs once the subscriptions are set up after a connection (to reset the retry delay).
    public var onSynced: (() -> Void)?

    public init(sink: PluginSink, reeld: ReeldRequester, clock: @escaping () -> Double) {
        self.sink = sink
        self.reeld = reeld
        self.clock = clock
    }

    // MARK: snapserver's side

    /// One line from stdin (without its newline).
    public func handle(line: [UInt8]) {
        switch PluginIncoming(line: line) {
        case .ignored:
            break
        case .invalid(let id, let error):
            if let id { replyError(id, ReeldCommands.snapserverError(error)) }
        case .request(let id, .getProperties):
            guard let id else { return }
            let now = clock()
            let properties = SnapcastProperties.properties(of: view, at: now)
            let metadata = SnapcastProperties.metadata(of: view)
            tracker.told(properties: properties, metadata: metadata, at: now)
            var result = properties
            result["metadata"] = .object(metadata)
            reply(id, .object(result))
        case .request(let id, .control(let command)):
            perform(ReeldCommands.call(for: command), id: id)
        case .request(let id, .setProperty(let property)):
            perform(ReeldCommands.call(for: property), id: id)
        }
    }

    /// A line longer than the limit came on stdin (it is skipped).
    public func lineTooLong(limit: Int) {
        replyError(.null, ReeldCommands.snapserverError(.invalidRequest("request line longer than \(limit) bytes; skipped")))
    }

    /// Sends `Plugin.Stream.Ready` if it was not sent yet: snapserver then asks for the
    /// properties.
    public func sendReadyIfNeeded() {
        guard !readySent else { return }
        readySent = true
        sink.write(Array(#"{"jsonrpc":"2.0","method":"Plugin.Stream.Ready"}"#.utf8) + [0x0A])
    }

    private func perform(_ call: ReeldCall, id: JSONValue?) {
        guard view != nil, reeld.isConnected else {
            if let id { replyError(id, ReeldLink.notConnected(reeld.socketDescription)) }
            return
        }
        reeld.request(call.method, call.params) { [self] result in
            // reeld pushes a change before it answers the request that made it: the properties
            // have been pushed already.
            guard let id else { return }
            switch result {
            case .success: reply(id, "ok")
            case .failure(let error): replyError(id, ReeldCommands.snapserverError(fromReeld: error))
            }
        }
    }

    // MARK: reeld's side

    /// Connected to reeld at `socket`: subscribes to the player, queue and mixer streams.
    public func connected(to socket: String) {
        syncing = ReeldView()
        awaiting = Set(ReeldView.Stream.allCases)
        for stream in ReeldView.Stream.allCases {
            var params: JSONObject = ["stream": .string(stream.rawValue)]
            if stream == .player { params["interval"] = .int(Int64(Self.playerInterval)) }
            reeld.request("subscribe", params) { [self] result in
                guard case .failure(let error) = result, syncing != nil, reeld.isConnected else { return }
                log(.warning, "reeld at \(socket) refused the \(stream.rawValue) stream: \(error.message)")
                awaiting.remove(stream)
                finishSyncing(socket: socket)
            }
        }
    }

    /// A notification from reeld.
    public func event(method: String, params: JSONObject, socket: String) {
        if var syncing {
            do {
                if let stream = try syncing.apply(method: method, params: params) { awaiting.remove(stream) }
            } catch {
                log(.error, "reeld sent a malformed \(method): \(error)")
            }
            self.syncing = syncing
            finishSyncing(socket: socket)
            return
        }
        guard var view else { return }
        do {
            guard try view.apply(method: method, params: params) != nil else { return }
        } catch {
            log(.error, "reeld sent a malformed \(method): \(error)")
            return
        }
        self.view = view
        changed()
    }

    private func finishSyncing(socket: String) {
        guard let syncing, awaiting.isEmpty else { return }
        self.syncing = nil
        view = syncing
        lastUnreachable = nil
        log(.info, "connected to reeld at \(socket)")
        onSynced?()
        if readySent {
            changed()
        } else {
            lookUpCurrentEntry()
            sendReadyIfNeeded()
        }
    }

    /// A connection attempt failed, for each socket tried: logged when the reason is new.
    public func unreachable(_ failures: [DaemonClientError]) {
        let text = failures.map(\.description).joined(separator: "; ")
        if text != lastUnreachable {
            lastUnreachable = text
            log(.warning, "\(text); retrying")
        }
        sendReadyIfNeeded()
    }

    /// The connection broke: snapserver is told the stream cannot be controlled until it is
    /// back.
    public func disconnected(_ error: DaemonClientError) {
        let wasUp = view != nil || syncing != nil
        view = nil
        syncing = nil
        awaiting = []
        lookup = nil
        if wasUp { log(.warning, "\(error); reconnecting") }
        lastUnreachable = nil
        pushIfChanged()
    }

    /// `Plugin.Stream.Log`.
    public func log(_ severity: LogSeverity, _ message: String) {
        sink.write(RPCEncoder.notificationLine(
            method: "Plugin.Stream.Log", params: ["severity": .string(severity.rawValue), "message": .string(message)]))
    }

    // MARK: Changes

    private func changed() {
        lookUpCurrentEntry()
        pushIfChanged()
    }

    private func pushIfChanged() {
        guard readySent else { return }
        let now = clock()
        let properties = SnapcastProperties.properties(of: view, at: now)
        let metadata = SnapcastProperties.metadata(of: view)
        guard let params = tracker.push(properties: properties, metadata: metadata, at: now) else { return }
        sink.write(RPCEncoder.notificationLine(method: "Plugin.Stream.Player.Properties", params: params))
    }

    /// Reads the queue's current entry with `queue.list`, a page at a time, when the player's
    /// state does not carry it; once per entry and queue version.
    private func lookUpCurrentEntry() {
        guard let view, let entry = view.entryToLookUp, let version = view.queue?.version else { return }
        if let lookup, lookup.entry == entry, lookup.version == version { return }
        lookupGeneration += 1
        lookup = (entry, version, lookupGeneration)
        fetchPage(entry: entry, start: 0, generation: lookupGeneration)
    }

    private func fetchPage(entry: Int, start: Int, generation: Int) {
        let count = Self.lookupPageSize
        reeld.request("queue.list", ["start": .int(Int64(start)), "count": .int(Int64(count))]) { [self] result in
            guard let lookup, lookup.generation == generation, var view else { return }
            guard case .success(let value) = result, let raw = value["entries"]?.arrayValue else { return }
            for element in raw {
                guard let found = try? QueueEntry(json: element), found.id == entry else { continue }
                guard view.queue?.current == entry else { return }
                view.currentEntry = found
                self.view = view
                changed()
                return
            }
            let length = value["length"]?.intValue ?? 0
            if raw.count == count, start + count < length {
                fetchPage(entry: entry, start: start + count, generation: generation)
            }
        }
    }

    // MARK: Writing

    private func reply(_ id: JSONValue, _ result: JSONValue) {
        sink.write(RPCEncoder.resultLine(id: id, result: result))
    }

    private func replyError(_ id: JSONValue, _ error: RPCError) {
        sink.write(RPCEncoder.errorLine(id: id, error: error))
    }
}
