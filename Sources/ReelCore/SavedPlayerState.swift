// What is saved of the player and the queue, and its JSON form.

import ReelModel
import ReelProtocol

/// The player's saved state (`player-state.json`): where playback was, in which entry, the
/// volume, and which outputs were on (by name). Version 1 (Reel 0.2) saved one source instead of a queue entry; it is read as a
/// one-entry queue.
public struct SavedPlayerState: Equatable, Sendable {
    /// The queue position of the current entry, or nil.
    var current: Int?
    var position: Double
    var state: PlayerActivity
    var volume: Int?
    var muted: Bool
    /// Each output's name and whether it was on.
    var outputs: [String: Bool] = [:]
    /// The ReplayGain settings once set with `mixer.setReplayGain` (nil: the configuration's).
    var replayGain: ReplayGainSettings?
    /// From a version 1 file: the one source it played, which becomes the queue.
    var legacySource: SavedQueue.Entry?
    /// The sleep timer (`player.sleep`), when one is set.
    var sleep: SavedSleep?
    /// A scheduled play's `stopAfter`, when one is set.
    var stop: SavedStop?

    init(current: Int?, position: Double, state: PlayerActivity, volume: Int? = nil, muted: Bool = false) {
        self.current = current
        self.position = position
        self.state = state
        self.volume = volume
        self.muted = muted
    }

    var json: JSONValue {
        var object: JSONObject = [
            "version": 2, "current": current.map { .int(Int64($0)) } ?? .null, "position": .double(position),
            "state": .string(state.rawValue), "volume": volume.map { .int(Int64($0)) } ?? .null, "muted": .bool(muted),
            "outputs": .object(JSONObject(outputs.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.bool($0.value)) })),
            "replayGain": replayGain.map(\.json) ?? .null,
        ]
        // Only when set: every journal record carries the player's state.
        if let sleep { object["sleep"] = ["at": .double(sleep.at), "fadeOut": .double(sleep.fadeOut)] }
        if let stop { object["stopAfter"] = ["at": .double(stop.at), "entries": .array(stop.positions.map { .int(Int64($0)) })] }
        return .object(object)
    }

    /// Throws a message naming what is wrong.
    init(json: JSONValue) throws(ReelError) {
        func corrupt(_ what: String) -> ReelError { ReelError(.corruptFile, "the saved player state \(what)") }
        guard let version = json["version"]?.intValue, version == 1 || version == 2 else {
            throw corrupt("has no version 1 or 2")
        }
        guard let position = json["position"]?.doubleValue, position.isFinite, position >= 0 else {
            throw corrupt("has no valid position")
        }
        guard let raw = json["state"]?.stringValue, let state = PlayerActivity(rawValue: raw) else {
            throw corrupt("has no valid state")
        }
        self.position = position
        self.state = state
        if version == 1 {
            if let path = json["source"]?["file"]?.stringValue, path.hasPrefix("/") {
                legacySource = SavedQueue.Entry(source: .file(path: path))
            } else if let id = json["source"]?["item"]?.stringValue {
                legacySource = SavedQueue.Entry(source: .item(id: id, path: "", name: ""))
            } else {
                throw corrupt("has no source")
            }
            current = 0
            volume = nil
            muted = false
            return
        }
        current = json["current"]?.intValue
        if let current, current < 0 { throw corrupt("has a negative current entry") }
        volume = json["volume"]?.intValue.map { min(max($0, 0), 100) }
        muted = json["muted"]?.boolValue ?? false
        replayGain = json["replayGain"].flatMap { try? ReplayGainSettings(json: $0) }
        // Timers not understood are dropped (a timer is not worth refusing the whole state for).
        if let at = json["sleep"]?["at"]?.doubleValue, at.isFinite,
            let fadeOut = json["sleep"]?["fadeOut"]?.doubleValue, fadeOut.isFinite, fadeOut >= 0
        {
            sleep = SavedSleep(at: at, fadeOut: fadeOut)
        }
        if let at = json["stopAfter"]?["at"]?.doubleValue, at.isFinite, let entries = json["stopAfter"]?["entries"]?.arrayValue {
            stop = SavedStop(at: at, positions: entries.compactMap { $0.intValue.flatMap { $0 >= 0 ? $0 : nil } })
        }
        if let saved = json["outputs"]?.objectValue {
            for (name, value) in saved {
                if let on = value.boolValue { outputs[name] = on }
            }
        }
    }
}

/// A saved sleep timer: when the player stops (wall clock, seconds since the epoch) and the
/// fade-out before.
struct SavedSleep: Equatable, Sendable {
    var at: Double
    var fadeOut: Double
}

/// A saved `stopAfter` of a scheduled play: when (wall clock), and the queue positions of the
/// entries it stops (queue ids do not survive a restart; positions do).
struct SavedStop: Equatable, Sendable {
    var at: Double
    var positions: [Int]
}

/// Entries as the saved state records them: each distinct entry once (`entries`) and the order
/// of all as indices into them (`order`; nil: `entries` as they are, in order). A queue of
/// 10,000 entries of 200 files is recorded as 200 entries and 10,000 indices. Two values are
/// equal when they list the same entries in the same order, however they are recorded.
struct SavedEntries: Equatable, Sendable, ExpressibleByArrayLiteral {
    var entries: [SavedQueue.Entry]
    /// Indices into `entries`, one per entry of the list; every index is inside `entries`.
    var order: [Int]?

    /// `list` as it is: no order.
    init(_ list: [SavedQueue.Entry]) {
        entries = list
        order = nil
    }

    init(arrayLiteral elements: SavedQueue.Entry...) {
        self.init(elements)
    }

    /// Entries and their order; `order`'s indices must be inside `entries`.
    init(entries: [SavedQueue.Entry], order: [Int]?) {
        self.entries = entries
        self.order = order
    }

    /// How many entries the list holds.
    var count: Int { order?.count ?? entries.count }
    var isEmpty: Bool { count == 0 }

    /// The whole list, each entry in its place.
    var list: [SavedQueue.Entry] { order.map { $0.map { entries[$0] } } ?? entries }

    /// The order to write: nil when it is `entries` as they are (each once, in order). O(n), no
    /// hashing.
    var writtenOrder: [Int]? {
        guard let order else { return nil }
        if order.count == entries.count, order.indices.allSatisfy({ order[$0] == $0 }) { return nil }
        return order
    }

    /// Each repeated entry once: a list given without an order is told apart by hashing
    /// (`SavedQueue.Entry.distinct`); one with an order is as it is.
    var distinct: (entries: [SavedQueue.Entry], order: [Int]?) {
        guard order != nil else { return SavedQueue.Entry.distinct(entries) }
        return (entries, writtenOrder)
    }

    static func == (a: SavedEntries, b: SavedEntries) -> Bool {
        if a.entries == b.entries, a.order == b.order { return true }
        return a.count == b.count && a.list == b.list
    }

    /// The entries in `list` (JSON) and the order in `order` (JSON or nil), as the journal and
    /// `queue.json` write them; throws a message naming what is wrong (`what` names the
    /// container). An entry that cannot be read is refused (`dropUnreadable` false), or left out
    /// with every place the order names it. An order naming more than `maximumPositions` places
    /// is refused before they are made (a run `[0, n]` repeated would otherwise expand a small
    /// file into any number of them).
    static func read(
        _ list: [JSONValue], order: JSONValue?, what: String, dropUnreadable: Bool, maximumPositions: Int
    ) throws(ReelError) -> SavedEntries {
        let read = list.map(SavedQueue.Entry.init(json:))
        guard let order else {
            let entries = read.compactMap { $0 }
            guard dropUnreadable || entries.count == list.count else { throw ReelError(.corruptFile, "\(what) an entry that cannot be read") }
            return SavedEntries(entries)
        }
        guard let items = order.arrayValue, !items.isEmpty else {
            throw ReelError(.corruptFile, "\(what) an order that is not a list of entries")
        }
        // Unreadable entries out, and the indices of the others moved down.
        var newIndex: [Int] = []
        newIndex.reserveCapacity(read.count)
        var entries: [SavedQueue.Entry] = []
        entries.reserveCapacity(read.count)
        for entry in read {
            guard let entry else {
                guard dropUnreadable else { throw ReelError(.corruptFile, "\(what) an entry that cannot be read") }
                newIndex.append(-1)
                continue
            }
            newIndex.append(entries.count)
            entries.append(entry)
        }
        var positions: [Int] = []
        positions.reserveCapacity(items.count)
        for item in items {
            // An index, or a run `[start, count]`: start, start + 1, … (count ≥ 1).
            let run: Range<Int>
            if let index = item.intValue, index >= 0, index < newIndex.count {
                run = index..<index + 1
            } else if let pair = item.arrayValue, pair.count == 2, let start = pair[0].intValue, let count = pair[1].intValue,
                count >= 1, start <= Int.max - count
            {
                run = start..<start + count
            } else {
                throw ReelError(.corruptFile, "\(what) an order that names an entry it does not have")
            }
            guard run.lowerBound >= 0, run.upperBound <= newIndex.count else {
                throw ReelError(.corruptFile, "\(what) an order that names an entry it does not have")
            }
            guard run.count <= maximumPositions - positions.count else {
                throw ReelError(.corruptFile, "\(what) an order of more than \(maximumPositions) entries")
            }
            for index in run where newIndex[index] >= 0 { positions.append(newIndex[index]) }
        }
        return SavedEntries(entries: entries, order: positions)
    }

    /// Writes `[start, count]`: a run of an order, and a kept run of a journal's queue edit.
    static func writePair(_ start: Int, _ count: Int, into out: inout [UInt8]) {
        out.append(0x5B)
        JSONWriter.writeInt(Int64(start), into: &out)
        out.append(0x2C)
        JSONWriter.writeInt(Int64(count), into: &out)
        out.append(0x5D)
    }

    /// Writes `"entries":[…]` and, unless the order is the entries as they are, `,"order":[…]`.
    func writeJSON(into out: inout [UInt8], entriesKey: String) {
        let (entries, order) = distinct
        out.append(0x22)
        out.append(contentsOf: entriesKey.utf8)
        out.append(contentsOf: #"":["#.utf8)
        for (index, entry) in entries.enumerated() {
            if index > 0 { out.append(0x2C) }
            entry.writeJSON(into: &out)
        }
        out.append(0x5D)
        if let order { Self.writeOrder(order, into: &out) }
    }

    /// Writes `,"order":[…]`: each index, a run of 3 or more as `[start, count]`. Whenever `out`
    /// holds `flushAt` bytes or more between two items, `flush` is called to take them.
    static func writeOrder(
        _ order: [Int], into out: inout [UInt8], flushAt: Int = .max, flush: (inout [UInt8]) -> Void = { _ in }
    ) {
        out.append(contentsOf: #","order":["#.utf8)
        var first = true
        forEachItem(of: order) { item in
            if !first { out.append(0x2C) }
            first = false
            switch item {
            case .index(let index):
                JSONWriter.writeInt(Int64(index), into: &out)
            case .run(let start, let count):
                writePair(start, count, into: &out)
            }
            if out.count >= flushAt { flush(&out) }
        }
        out.append(0x5D)
    }

    /// An item of a written order: an index, or a run of consecutive indices `[start, count]`.
    enum OrderItem: Equatable {
        case index(Int)
        case run(start: Int, count: Int)
    }

    /// Calls `body` with each item `order` is written as, in order: a run of 3 or more
    /// consecutive indices as `[start, count]` (a playlist's files in their order again and
    /// again), a shorter one index by index.
    static func forEachItem(of order: [Int], _ body: (OrderItem) -> Void) {
        guard var start = order.first else { return }
        var count = 1
        func flush() {
            if count >= 3 { return body(.run(start: start, count: count)) }
            for index in start..<start + count { body(.index(index)) }
        }
        for index in order.dropFirst() {
            if index == start &+ count {
                count += 1
            } else {
                flush()
                start = index
                count = 1
            }
        }
        flush()
    }

    /// `writeJSON`'s members as JSON values.
    func add(to object: inout JSONObject, entriesKey: String) {
        let (entries, order) = distinct
        object[entriesKey] = .array(entries.map(\.json))
        guard let order else { return }
        var items: [JSONValue] = []
        Self.forEachItem(of: order) { item in
            switch item {
            case .index(let index): items.append(.int(Int64(index)))
            case .run(let start, let count): items.append([.int(Int64(start)), .int(Int64(count))])
            }
        }
        object["order"] = .array(items)
    }
}

/// The saved queue (`queue.json`): its entries and options. Written only when the queue changes.
///
/// Version 2: `{"version": 2, "entries": [entry…], "order": [0, 1, 0, [0, 200], …], "options":
/// {…}, "journal": N}`: each distinct entry once and the order of all as indices into them, a
/// run of 3 or more consecutive indices as `[start, count]`, as an add's journal record (no
/// `order` when every entry is there once, in order). Version 1 (no
/// order: every entry in its place) is still read.
public struct SavedQueue: Equatable, Sendable {
    struct Entry: Equatable, Sendable {
        var source: PlayerSource
        var duration: Double? = nil
        var format: AudioFormat? = nil
        var tags: DisplayTags? = nil
    }

    /// The entries, each distinct one once, and their order.
    var saved: SavedEntries
    var options: QueueOptions

    /// The most entries a version 2 order may name: 4,194,304 (32 MiB of positions), far past
    /// any real queue (MPD's default limit is 16,384). A file whose order names more is refused
    /// as corrupt rather than expanded.
    static let maximumLength = 1 << 22

    /// Every entry in its place.
    var entries: [Entry] { saved.list }

    var json: JSONValue {
        var object: JSONObject = ["version": 2]
        saved.add(to: &object, entriesKey: "entries")
        object["options"] = Self.json(of: options)
        return .object(object)
    }

    /// `queue.json`'s compact text naming journal record `journal`: `json` with `"journal": N`
    /// last, byte for byte, written straight from the values (a compaction writes every entry of
    /// the queue; `SavedStateJournalTests.theQueueFileIsWrittenAsItsJSON`).
    func fileBytes(journal: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + 160 * saved.entries.count + 6 * (saved.order?.count ?? 0))
        Self.writeFile(options: options, journal: journal, into: &out) { out in
            saved.writeJSON(into: &out, entriesKey: "entries")
        }
        return out
    }

    /// `fileBytes(journal:)` of the queue `rows` hold, with these options, written straight
    /// from the rows (`QueueRows.writeEntries`): whenever `out` holds `flushAt` bytes or more
    /// between two entries, `flush` is called to take them (a compaction writes `queue.json`
    /// through a buffer of a few pages, whatever the queue's length).
    static func writeFile(
        rows: QueueRows, options: QueueOptions, journal: Int, into out: inout [UInt8], flushAt: Int = .max,
        flush: (inout [UInt8]) -> Void = { _ in }
    ) {
        writeFile(options: options, journal: journal, into: &out) { out in
            rows.writeEntries(positions: rows.queue.indices, key: "entries", into: &out, flushAt: flushAt, flush: flush)
        }
    }

    /// `queue.json`'s text around its entries, which `entries` writes.
    private static func writeFile(
        options: QueueOptions, journal: Int, into out: inout [UInt8], entries: (inout [UInt8]) -> Void
    ) {
        out.append(contentsOf: #"{"version":2,"#.utf8)
        entries(&out)
        out.append(contentsOf: #","options":"#.utf8)
        JSONWriter.write(json(of: options), into: &out)
        out.append(contentsOf: #","journal":"#.utf8)
        JSONWriter.writeInt(Int64(journal), into: &out)
        out.append(0x7D)
    }

    /// `{repeat, random, single, consume}`, as `queue.json` and the journal write them.
    static func json(of options: QueueOptions) -> JSONValue {
        [
            "repeat": .bool(options.repeats), "random": .bool(options.random),
            "single": .string(options.single.rawValue), "consume": .bool(options.consume),
        ]
    }

    /// The options `json(of:)` wrote; a value missing or not understood is its default.
    static func options(json saved: JSONValue) -> QueueOptions {
        var options = QueueOptions()
        options.repeats = saved["repeat"]?.boolValue ?? false
        options.random = saved["random"]?.boolValue ?? false
        options.single = saved["single"]?.stringValue.flatMap(SingleMode.init(rawValue:)) ?? .off
        options.consume = saved["consume"]?.boolValue ?? false
        return options
    }

    init(entries: [Entry], options: QueueOptions) {
        self.init(saved: SavedEntries(entries), options: options)
    }

    init(saved: SavedEntries, options: QueueOptions) {
        self.saved = saved
        self.options = options
    }

    /// Throws a message naming what is wrong; an entry that cannot be read is skipped (with
    /// every place a version 2 order names it).
    init(json: JSONValue) throws(ReelError) {
        guard let version = json["version"]?.intValue, version == 1 || version == 2,
            let list = json["entries"]?.arrayValue
        else {
            throw ReelError(.corruptFile, "the saved queue has no version 1 or 2 entries")
        }
        if version == 1, json["order"] != nil {
            throw ReelError(.corruptFile, "the saved queue is version 1 but has an order (version 2's)")
        }
        saved = try SavedEntries.read(
            list, order: json["order"], what: "the saved queue has", dropUnreadable: true,
            maximumPositions: Self.maximumLength)
        options = json["options"].map(Self.options(json:)) ?? QueueOptions()
    }
}

extension SavedQueue.Entry {
    /// What is saved of a queue entry. An estimated length is not kept: after a restart it would
    /// read as exact.
    init(saving entry: QueueEntry) {
        self.init(
            source: entry.source, duration: entry.durationEstimated ? nil : entry.duration, format: entry.format,
            tags: entry.tags)
    }

    /// The entry's source (`file`, or `item` with its path and name), length, format and tags.
    var json: JSONValue {
        var object = source.json.objectValue ?? JSONObject()
        if let duration { object["duration"] = .double(duration) }
        if let format { object["format"] = format.json }
        if let tags { tags.add(to: &object) }
        return .object(object)
    }

    /// Appends `json`'s compact text to `out`, byte for byte, without building it (a large add
    /// is one journal record of all its entries, written before the reply).
    func writeJSON(into out: inout [UInt8]) {
        Self.writeJSON(source: source, duration: duration, format: format, tags: tags, into: &out)
    }

    /// `writeJSON(into:)` of the entry of these values, without making it (an entry of the
    /// queue is written from its row: `QueueRows.writeEntries`).
    static func writeJSON(
        source: PlayerSource, duration: Double?, format: AudioFormat?, tags: DisplayTags?, into out: inout [UInt8]
    ) {
        switch source {
        case .file(let path):
            JSONWriter.append(#"{"path":"#, into: &out)
            JSONWriter.writeString(path, into: &out)
        case .item(let id, let path, let name):
            JSONWriter.append(#"{"item":"#, into: &out)
            JSONWriter.writeString(id, into: &out)
            JSONWriter.append(#","path":"#, into: &out)
            JSONWriter.writeString(path, into: &out)
            JSONWriter.append(#","name":"#, into: &out)
            JSONWriter.writeString(name, into: &out)
        case .url:
            // Its `title` member may be the tags' title: the general path keeps that rule.
            return JSONWriter.write(Self(source: source, duration: duration, format: format, tags: tags).json, into: &out)
        }
        if let duration {
            JSONWriter.append(#","duration":"#, into: &out)
            JSONWriter.writeDouble(duration, into: &out)
        }
        if let format {
            JSONWriter.append(#","format":{"codec":"#, into: &out)
            JSONWriter.writeString(format.codec, into: &out)
            JSONWriter.append(#","sampleRate":"#, into: &out)
            JSONWriter.writeInt(Int64(format.sampleRate), into: &out)
            JSONWriter.append(#","channels":"#, into: &out)
            JSONWriter.writeInt(Int64(format.channels), into: &out)
            out.append(0x7D)
        }
        if let tags {
            // Member by member (no list of them made per entry: a record may hold 10,000).
            if let title = tags.title {
                JSONWriter.append(#","title":"#, into: &out)
                JSONWriter.writeString(title, into: &out)
            }
            if let artist = tags.artist {
                JSONWriter.append(#","artist":"#, into: &out)
                JSONWriter.writeString(artist, into: &out)
            }
            if let album = tags.album {
                JSONWriter.append(#","album":"#, into: &out)
                JSONWriter.writeString(album, into: &out)
            }
        }
        out.append(0x7D)
    }

    /// The distinct entries of `entries` in the order of their first use, and the index of
    /// each entry among them; nil when every entry is distinct (then `entries` is the list). A
    /// playlist that names its files many times is recorded with each entry once. One hash of
    /// each entry's source, one comparison of the whole entry when two sources are equal.
    static func distinct(_ entries: [Self]) -> (entries: [Self], order: [Int]?) {
        guard entries.count > 1 else { return (entries, nil) }
        var index: [Self: Int] = [:]
        index.reserveCapacity(entries.count)
        var distinct: [Self] = []
        var order: [Int] = []
        order.reserveCapacity(entries.count)
        for entry in entries {
            if let known = index[entry] {
                order.append(known)
            } else {
                index[entry] = distinct.count
                order.append(distinct.count)
                distinct.append(entry)
            }
        }
        return distinct.count == entries.count ? (entries, nil) : (distinct, order)
    }

    /// An entry `json` wrote; nil when it has no source Reel can play (a file must be absolute).
    init?(json value: JSONValue) {
        guard let source = try? PlayerSource(json: value) else { return nil }
        if case .file(let path) = source, !path.hasPrefix("/") { return nil }
        self.init(
            source: source, duration: value["duration"]?.doubleValue,
            format: value["format"].flatMap { try? AudioFormat(json: $0) },
            tags: value.objectValue.flatMap(DisplayTags.init(jsonObject:)))
    }
}

/// Entries are told apart by their sources first (`SavedQueue.Entry.distinct`): equal entries
/// have equal sources, so hashing the source only is consistent with `==`.
extension SavedQueue.Entry: Hashable {
    func hash(into hasher: inout Hasher) {
        switch source {
        case .file(let path): hasher.combine(path)
        case .item(let id, _, _): hasher.combine(id)
        case .url(let url, _, _): hasher.combine(url)
        }
    }
}
