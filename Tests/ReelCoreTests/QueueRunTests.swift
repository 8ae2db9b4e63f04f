@testable import ReelCore
import ReelModel
import ReelProtocol
import Testing
import ReelTestSupport

/// Entries added as a run (`NewQueueRun`: distinct entries and their order, as a playlist that
/// repeats its files is loaded): the queue keeps one row of contents per distinct entry, each
/// entry changes on its own, and the saved state records each distinct entry once, down to the
/// journal record and `queue.json`, without hashing.
@Suite struct QueueRunTests {

    static func file(_ name: String, duration: Double? = nil) -> NewQueueEntry {
        NewQueueEntry(source: .file(path: "/music/\(name).flac"), duration: duration, tags: DisplayTags(title: name))
    }

    static func saved(_ name: String, duration: Double? = nil) -> SavedQueue.Entry {
        SavedQueue.Entry(source: .file(path: "/music/\(name).flac"), duration: duration, tags: DisplayTags(title: name))
    }

    /// 3 files named 12 times in turn.
    static let run = NewQueueRun(distinct: ["a", "b", "c"].map { file($0) }, order: (0..<12).map { $0 % 3 })

    @Test func aRunsEntriesAreInItsOrderAndShareOneRowPerDistinctEntry() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        _ = try queue.add([Self.file("x")], at: nil, afterCurrent: false)
        let positions = try queue.insert(Self.run, at: 1, afterCurrent: false)
        #expect(positions == 1..<13)
        #expect(queue.length == 13)
        #expect(queue.entriesVersion == 2 && queue.version == 2, "one change")
        #expect(PlayQueueTests.names(queue) == ["x"] + (0..<12).map { ["a", "b", "c"][$0 % 3] })
        #expect(queue.ids == Array(1...13))
        #expect(queue.contents.count == 4, "one row per distinct entry")
        PlayQueueTests.expectConsistent(queue)
    }

    /// Changing one entry of a shared row (its length, source or tags) changes that entry only.
    @Test func changingOneEntryOfASharedRowLeavesTheOthers() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        _ = try queue.insert(Self.run, at: nil, afterCurrent: false)
        queue.setDuration(7, format: nil, missing: false, for: 1)
        queue.updateTags(DisplayTags(title: "Live"), for: 4)
        queue.updateSource(.file(path: "/music/moved.flac"), for: 7)
        #expect(queue.entry(id: 1)?.duration == 7)
        #expect(queue.entry(id: 4)?.tags?.title == "Live")
        #expect(queue.entry(id: 7)?.source == .file(path: "/music/moved.flac"))
        for id in [10] {
            let entry = try #require(queue.entry(id: id))
            #expect(entry.duration == nil && entry.tags?.title == "a" && entry.source == .file(path: "/music/a.flac"))
        }
        // A row used by one entry only is changed in place.
        queue.setDuration(8, format: nil, missing: false, for: 1)
        #expect(queue.contents.count == 6, "three rows of a, one each for three changed entries")
        PlayQueueTests.expectConsistent(queue)
    }

    /// A row is freed (its strings with it) with the last entry using it, and used again.
    @Test func aRowIsFreedWithItsLastEntry() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        _ = try queue.insert(Self.run, at: nil, afterCurrent: false)
        let ofB = queue.allEntries.filter { PlayQueueTests.name($0) == "b" }.map(\.id)
        _ = try queue.remove(ids: Array(ofB.dropLast()), playing: false)
        #expect(queue.freeContents.isEmpty, "one entry still uses b's row")
        _ = try queue.remove(ids: [ofB.last!], playing: false)
        #expect(queue.freeContents.count == 1)
        #expect(queue.contents[queue.freeContents[0]] == .free)
        _ = try queue.add([Self.file("d")], at: nil, afterCurrent: false)
        #expect(queue.freeContents.isEmpty && queue.contents.count == 3, "the free row is used again")
        #expect(PlayQueueTests.names(queue).last == "d")
        PlayQueueTests.expectConsistent(queue)
    }

    // MARK: The saved state

    /// The edit of an add of a run lists each distinct entry once with the order, from the
    /// queue's rows; its record reads back as the whole list.
    @Test func anAddOfARunIsRecordedWithEachDistinctEntryOnce() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        _ = try queue.add([Self.file("x")], at: nil, afterCurrent: false)
        var layout = SavedLayout()
        _ = queue.edit(since: &layout)
        _ = try queue.insert(Self.run, at: 1, afterCurrent: false)
        let edit = try #require(queue.edit(since: &layout))
        #expect(edit.count == 2)
        guard case .add(let added) = edit[1] else {
            Issue.record("no add: \(edit)")
            return
        }
        #expect(added.entries == ["a", "b", "c"].map { Self.saved($0) })
        #expect(added.order == (0..<12).map { $0 % 3 })
        let record = JournalRecord(
            sequence: 2, player: SavedPlayerState(current: nil, position: 0, state: .stopped), edit: edit, length: 13, options: nil)
        let piece = try #require(record.json["queue"]?["edit"]?.arrayValue?.last)
        #expect(piece["add"]?.arrayValue?.count == 3)
        #expect(String(decoding: record.jsonBytes, as: UTF8.self) == record.json.jsonString)
        let read = try JournalRecord(json: JSONValue.parse(record.jsonBytes))
        #expect(read == record)
        let replayed = StateJournal.replay(
            [read], player: SavedPlayerState(current: nil, position: 0, state: .stopped), playerBase: 0,
            queue: SavedQueue(entries: [Self.saved("x")], options: QueueOptions()), queueBase: 1)
        #expect(replayed.problem == nil)
        #expect(replayed.queue.entries == [Self.saved("x")] + (0..<12).map { Self.saved(["a", "b", "c"][$0 % 3]) })
        #expect(replayed.queue.saved.entries.count == 4, "replayed with each entry once")
    }

    /// An add of entries each named once has no order in its record.
    @Test func anAddOfDistinctEntriesHasNoOrder() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        var layout = SavedLayout()
        _ = try queue.add(["a", "b"].map { Self.file($0) }, at: nil, afterCurrent: false)
        let edit = try #require(queue.edit(since: &layout))
        let record = JournalRecord(
            sequence: 1, player: SavedPlayerState(current: nil, position: 0, state: .stopped), edit: edit, length: 2, options: nil)
        #expect(record.json["queue"]?["edit"]?.arrayValue?.first?["order"] == nil)
        #expect(String(decoding: record.jsonBytes, as: UTF8.self) == record.json.jsonString)
    }

    /// What a full save records: each row once, in the order of first use, and the order.
    @Test func aFullSaveRecordsEachRowOnce() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        _ = try queue.insert(Self.run, at: nil, afterCurrent: false)
        try queue.move(id: 12, to: 0)
        queue.setDuration(5, format: nil, missing: false, for: 2)
        let saved = queue.savedEntries
        #expect(saved.entries == [Self.saved("c"), Self.saved("a"), Self.saved("b", duration: 5), Self.saved("b")])
        #expect(saved.list == queue.allEntries.map { SavedQueue.Entry(saving: $0) })
    }

    /// A queue restored from a run shares its rows as the run did.
    @Test func aRestoredRunSharesItsRows() {
        let queue = PlayQueue(restoring: Self.run, current: 4, options: QueueOptions())
        #expect(queue.length == 12 && queue.contents.count == 3)
        #expect(queue.current.flatMap { queue.position(of: $0) } == 4)
        #expect(queue.version == 1 && queue.entriesVersion == 1)
    }

    // MARK: queue.json

    static let repetitive = SavedQueue(
        saved: SavedEntries(entries: ["a", "b"].map { saved($0, duration: 2) }, order: [0, 1, 1, 0, 1]),
        options: QueueOptions(repeats: true, random: false, single: .oneshot, consume: false))

    /// Version 2 is written with each entry once and the order, byte for byte as its JSON, and
    /// reads back as the same queue.
    @Test func aVersion2QueueFileReadsBackAsWritten() throws {
        let bytes = Self.repetitive.fileBytes(journal: 12)
        let json = try JSONValue.parse(bytes)
        #expect(json["version"] == 2)
        #expect(json["entries"]?.arrayValue?.count == 2)
        #expect(json["order"] == [0, 1, 1, 0, 1])
        #expect(json["journal"] == 12)
        var object = try #require(Self.repetitive.json.objectValue)
        object["journal"] = 12
        #expect(String(decoding: bytes, as: UTF8.self) == JSONValue.object(object).jsonString)
        let read = try SavedQueue(json: json)
        #expect(read == Self.repetitive)
        #expect(read.entries.count == 5 && read.saved.entries.count == 2)
        let distinct = SavedQueue(entries: ["a", "b"].map { Self.saved($0) }, options: QueueOptions())
        #expect(try JSONValue.parse(distinct.fileBytes(journal: 0))["order"] == nil, "no order when each entry is there once")
        #expect(try SavedQueue(json: JSONValue.parse(distinct.fileBytes(journal: 0))) == distinct)
    }

    /// An order is written with each run of 3 or more consecutive indices as `[start, count]`
    /// (a playlist's files in their order, again and again: one item per round), shorter ones
    /// index by index; it reads back as the same order, in a journal record and in queue.json.
    @Test func runsOfConsecutiveIndicesAreWrittenAsStartAndCount() throws {
        let order = [0, 1, 2, 0, 1, 2, 2, 1, 0, 1, 2, 1, 0, 0]
        let saved = SavedEntries(entries: ["a", "b", "c"].map { Self.saved($0) }, order: order)
        let queue = SavedQueue(saved: saved, options: QueueOptions())
        let json = try JSONValue.parse(queue.fileBytes(journal: 1))
        #expect(json["order"] == [[0, 3], [0, 3], 2, 1, [0, 3], 1, 0, 0])
        #expect(try SavedQueue(json: json).saved.order == order)
        let record = JournalRecord(
            sequence: 1, player: SavedPlayerState(current: nil, position: 0, state: .stopped), edit: [.add(saved)],
            length: order.count, options: nil)
        #expect(String(decoding: record.jsonBytes, as: UTF8.self) == record.json.jsonString)
        let read = try JournalRecord(json: JSONValue.parse(record.jsonBytes))
        guard case .add(let added) = read.edit?.first else {
            Issue.record("no add")
            return
        }
        #expect(added.order == order && added.entries == saved.entries)
        // 10,000 entries of 200 files in turn: 50 items.
        let playlist = SavedEntries(entries: (0..<200).map { Self.saved("\($0)") }, order: (0..<10_000).map { $0 % 200 })
        let bytes = SavedQueue(saved: playlist, options: QueueOptions()).fileBytes(journal: 1)
        #expect(try JSONValue.parse(bytes)["order"]?.arrayValue?.count == 50)
    }

    /// A version 1 file (every entry in its place) is still read; an entry that cannot be read
    /// is skipped, in either version (with every place the order names it).
    @Test func aVersion1QueueFileIsStillRead() throws {
        let text = """
            {"version":1,"entries":[{"path":"/music/a.flac","duration":2.5,"title":"a"},{"path":"relative.flac"},\
            {"path":"/music/a.flac","duration":2.5,"title":"a"}],"options":{"repeat":true,"random":false,"single":"off","consume":false},"journal":3}
            """
        let read = try SavedQueue(json: JSONValue.parse(Array(text.utf8)))
        #expect(read.entries == [Self.saved("a", duration: 2.5), Self.saved("a", duration: 2.5)])
        #expect(read.options.repeats)
        let version2 = """
            {"version":2,"entries":[{"path":"/music/a.flac"},{"path":"relative.flac"},{"path":"/music/b.flac"}],\
            "order":[0,1,2,1,0],"options":{}}
            """
        let skipped = try SavedQueue(json: JSONValue.parse(Array(version2.utf8)))
        #expect(skipped.entries.map(\.source) == [.file(path: "/music/a.flac"), .file(path: "/music/b.flac"), .file(path: "/music/a.flac")])
    }

    @Test(arguments: [
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":{}}"#, "order"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[]}"#, "order"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[0,1]}"#, "does not have"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[0,-1]}"#, "does not have"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[0,"0"]}"#, "does not have"),
        (#"{"version":1,"entries":[{"path":"/a.flac"}],"order":[0,0]}"#, "version 1"),
        (#"{"version":3,"entries":[{"path":"/a.flac"}]}"#, "version"),
        (#"{"version":2,"order":[0]}"#, "entries"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[[0,0]]}"#, "does not have"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[[0,2]]}"#, "does not have"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[[-1,2]]}"#, "does not have"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[[0]]}"#, "does not have"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[[0,1,1]]}"#, "does not have"),
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[[9223372036854775807,1]]}"#, "does not have"),
        // Found in review: one index at Int.max overflowed making its range, a trap at every start.
        (#"{"version":2,"entries":[{"path":"/a.flac"}],"order":[9223372036854775807]}"#, "does not have"),
    ])
    func aBadQueueFileIsRefusedWithAReason(text: String, reason: String) throws {
        try expectRefused(text, reason)
    }

    /// Found in review: a small file whose order repeats a long run (`[0, n]` many times) named
    /// any number of places, all made before anything was checked. More than a queue can hold
    /// is refused, and a journal's add naming more than its record's queue length.
    @Test func anOrderNamingMoreThanAQueueHoldsIsRefused() throws {
        let entries = (0..<1000).map { #"{"path":"/\#($0).flac"}"# }.joined(separator: ",")
        let runs = Array(repeating: "[0,1000]", count: SavedQueue.maximumLength / 1000 + 1).joined(separator: ",")
        try expectRefused(#"{"version":2,"entries":["# + entries + #"],"order":["# + runs + "]}", "more than")
        let within = Array(repeating: "[0,1000]", count: 3).joined(separator: ",")
        let queue = try SavedQueue(json: try JSONValue.parse(Array((#"{"version":2,"entries":["# + entries + #"],"order":["# + within + "]}").utf8)))
        #expect(queue.entries.count == 3000)

        let record = #"{"seq":1,"player":{"version":2,"position":0,"state":"paused"},"queue":{"length":3,"edit":[{"add":[{"path":"/a.flac"}],"order":[[0,1],0,0,0]}]}}"#
        #expect {
            try JournalRecord(json: try JSONValue.parse(Array(record.utf8)))
        } throws: { error in
            (error as? ReelError)?.message.contains("more than 3") == true
        }
    }

    private func expectRefused(_ text: String, _ reason: String) throws {
        let json = try JSONValue.parse(Array(text.utf8))
        #expect {
            try SavedQueue(json: json)
        } throws: { error in
            guard let error = error as? ReelError else { return false }
            return error.reason == .corruptFile && error.message.contains(reason)
        }
    }
}

/// The map from id to slot: an array for the ids handed out lately, a dictionary for the few
/// older ones once the array is mostly empty; it answers as a dictionary would.
@Suite struct SlotsByIDTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func itAnswersAsADictionaryWould(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        var map = SlotsByID()
        var model: [Int: Int] = [:]
        var nextID = 1
        for _ in 0..<20_000 {
            if Int.random(in: 0..<10, using: &rng) < 6 || model.isEmpty {
                // Ids are handed out in order, sometimes in a batch.
                let batch = Int.random(in: 0..<10, using: &rng) == 0 ? Int.random(in: 1...2000, using: &rng) : 1
                map.reserveCapacity(batch)
                for _ in 0..<batch {
                    let slot = Int.random(in: 0..<100_000, using: &rng)
                    map[nextID] = slot
                    model[nextID] = slot
                    nextID += 1
                }
            } else {
                // Removing mostly recent ids, now and then many at once; keeping a few old ones.
                let removals = Int.random(in: 0..<20, using: &rng) == 0 ? model.count * 9 / 10 : 1
                for id in model.keys.sorted().suffix(removals) {
                    map[id] = nil
                    model[id] = nil
                }
            }
            if let id = model.keys.randomElement(using: &rng) {
                let slot = Int.random(in: 0..<100_000, using: &rng)
                map[id] = slot
                model[id] = slot
            }
        }
        #expect(map.count == model.count)
        for id in 0...nextID + 1 {
            if map[id] != model[id] {
                Issue.record("id \(id): \(String(describing: map[id])) against \(String(describing: model[id]))")
                return
            }
        }
    }
}
