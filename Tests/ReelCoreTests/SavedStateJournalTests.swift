@testable import ReelCore
import ReelModel
import ReelProtocol
import Testing
import ReelTestSupport

/// The saved state's journal as values: the edit of the queue between two saves, a record's
/// JSON, reading a journal that a crash cut short, and replaying it onto the base files.
@Suite struct SavedStateJournalTests {

    static func entry(_ name: String) -> SavedQueue.Entry {
        SavedQueue.Entry(source: .file(path: "/music/\(name).flac"))
    }

    static func saved(_ queue: PlayQueue) -> [SavedQueue.Entry] {
        queue.allEntries.map { SavedQueue.Entry(source: $0.source, duration: $0.duration, format: $0.format, tags: $0.tags) }
    }

    /// The list `pieces` make of `list`, which must fit.
    static func applied(_ pieces: [QueueEditPiece], to list: [SavedQueue.Entry], length: Int) -> [SavedQueue.Entry]? {
        QueueEditPiece.apply(pieces, to: list, length: length) { $0 }
    }

    // MARK: The edit between two saves

    /// Whatever happens to the queue between two saves (several commands, or none), the edit
    /// rebuilds it from the list the last save recorded.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func anEditRebuildsTheQueueFromTheListTheLastSaveRecorded(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        var queue = PlayQueue(generator: SeededGenerator(seed: seed))
        var layout = SavedLayout()
        var saved: [SavedQueue.Entry] = []
        var names = 0
        func newEntries(_ count: Int) -> [NewQueueEntry] {
            (0..<count).map { _ in
                names += 1
                return NewQueueEntry(source: .file(path: "/music/\(names).flac"), duration: Double(names))
            }
        }
        for round in 0..<300 {
            for _ in 0..<Int.random(in: 0...3, using: &rng) {
                let ids = queue.allEntries.map(\.id)
                let pick = Int.random(in: 0..<10, using: &rng)
                if pick < 3 || ids.count < 2 {
                    _ = try queue.add(
                        newEntries(Int.random(in: 1...3, using: &rng)), at: Int.random(in: 0...queue.length, using: &rng),
                        afterCurrent: false)
                } else if pick < 5 {
                    let doomed = (0..<Int.random(in: 1...3, using: &rng)).map { _ in ids.randomElement(using: &rng)! }
                    _ = try queue.remove(ids: doomed, playing: Bool.random(using: &rng))
                } else if pick == 5 {
                    try queue.move(id: ids.randomElement(using: &rng)!, to: Int.random(in: 0..<queue.length, using: &rng))
                } else if pick == 6 {
                    let start = Int.random(in: 0..<queue.length - 1, using: &rng)
                    let range = start..<Int.random(in: start + 1...queue.length, using: &rng)
                    try queue.move(range: range, to: Int.random(in: 0...queue.length - range.count, using: &rng))
                } else if pick == 7 {
                    try queue.swap(id: ids.randomElement(using: &rng)!, with: ids.randomElement(using: &rng)!)
                } else if pick == 8 && round % 20 == 0 {
                    try queue.shuffle(range: nil, playing: false)
                } else if pick == 9 && round % 50 == 0 {
                    queue.clear()
                } else {
                    try queue.setCurrent(ids.randomElement(using: &rng)!)
                }
            }
            let before = layout.entriesVersion
            let edit = queue.edit(since: &layout)
            if let edit {
                saved = try #require(Self.applied(edit, to: saved, length: queue.length), "round \(round): \(edit)")
            } else {
                #expect(before == -1 || Self.saved(queue) == saved, "round \(round): no edit, yet the queue changed")
            }
            #expect(saved == Self.saved(queue), "round \(round)")
            #expect(queue.edit(since: &layout) == nil, "a second save right after records no edit")
        }
    }

    /// The point of the journal: a command on a long queue writes what it changed, not the queue.
    @Test func anEditOfALongQueueIsAsSmallAsTheCommand() throws {
        var queue = PlayQueueTests.queue(10_000)
        var layout = queue.layout
        let ids = queue.allEntries.map(\.id)

        _ = try queue.remove(ids: [ids[5000]], playing: false)
        #expect(queue.edit(since: &layout) == [.keep(start: 0, count: 5000), .keep(start: 5001, count: 4999)])

        try queue.move(id: ids[10], to: 9000)
        let move = try #require(queue.edit(since: &layout))
        #expect(move.count <= 4, "\(move)")

        _ = try queue.add([NewQueueEntry(source: .file(path: "/music/new.flac"))], at: 0, afterCurrent: false)
        #expect(queue.edit(since: &layout) == [.add([Self.entry("new")]), .keep(start: 0, count: 9999)])

        queue.setOptions(repeats: true, random: true, single: nil, consume: nil)
        try queue.setCurrent(ids[3])
        #expect(queue.edit(since: &layout) == nil, "options and the current entry are not edits of the entries")

        queue.setDuration(12, format: nil, missing: false, for: ids[3])
        let content = queue.contentVersion
        #expect(queue.edit(since: &layout) == nil, "a length learned is no edit of the list")
        #expect(content > 0, "but it counts as a change of content, which the journal does not carry")

        queue.clear()
        #expect(queue.edit(since: &layout) == [])
    }

    /// A queue replaced by another value (restored) is recorded whole, not as pieces of ids that
    /// mean other entries now.
    @Test func aQueueReplacedByAnotherIsRecordedWhole() throws {
        var queue = PlayQueueTests.queue(5)
        var layout = queue.layout
        queue = PlayQueue(restoring: [NewQueueEntry(source: .file(path: "/music/x.flac"))], current: nil, options: QueueOptions())
        #expect(queue.edit(since: &layout) == [.add([Self.entry("x")])])
    }

    /// An MP3's estimated length is not recorded as its length (after a restart it would read
    /// as exact); the count that replaces it is a change of content, for the next compaction.
    @Test func anEstimatedLengthIsNotRecorded() throws {
        var queue = PlayQueueTests.queue(1)
        var layout = queue.layout
        let added = try queue.add(
            [NewQueueEntry(source: .file(path: "/music/long.mp3"), duration: 3600, durationEstimated: true)], at: nil,
            afterCurrent: false)
        #expect(queue.edit(since: &layout) == [.keep(start: 0, count: 1), .add([SavedQueue.Entry(source: .file(path: "/music/long.mp3"))])])
        let content = queue.contentVersion
        queue.setDuration(3598.2, estimated: false, format: nil, missing: false, for: added[0].id)
        #expect(queue.contentVersion > content)
        #expect(queue.edit(since: &layout) == nil)
    }

    @Test func aPieceThatDoesNotFitIsRefused() {
        let list = [1, 2, 3]
        #expect(QueueEditPiece.apply([.keep(start: 1, count: 2)], to: list, length: 2) { _ in 0 } == [2, 3])
        #expect(QueueEditPiece.apply([.keep(start: 2, count: 2)], to: list, length: 2) { _ in 0 } == nil)
        #expect(QueueEditPiece.apply([.keep(start: -1, count: 1)], to: list, length: 1) { _ in 0 } == nil)
        #expect(QueueEditPiece.apply([.keep(start: 0, count: 0)], to: list, length: 0) { _ in 0 } == nil)
        #expect(QueueEditPiece.apply([.keep(start: 0, count: 3)], to: list, length: 4) { _ in 0 } == nil, "wrong length")
        #expect(QueueEditPiece.apply([.add([])], to: list, length: 0) { _ in 0 } == nil)
    }

    // MARK: Records

    static func record(_ sequence: Int, current: Int? = 0, edit: [QueueEditPiece]? = nil, length: Int = 0, options: QueueOptions? = nil)
        -> JournalRecord
    {
        var player = SavedPlayerState(current: current, position: Double(sequence), state: .paused, volume: 40, muted: false)
        player.outputs = ["ALSA (null)": true]
        return JournalRecord(sequence: sequence, player: player, edit: edit, length: length, options: options)
    }

    static func bytes(_ records: [JournalRecord]) -> [UInt8] {
        records.flatMap { $0.json.jsonBytes + [0x0A] }
    }

    @Test func aRecordReadsBackAsWritten() throws {
        var tagged = Self.entry("a")
        tagged.duration = 3.5
        tagged.format = AudioFormat(codec: "flac", sampleRate: 44100, channels: 2)
        tagged.tags = DisplayTags(title: "A", artist: "B", album: "C")
        let records = [
            Self.record(1),
            Self.record(2, edit: [.keep(start: 0, count: 2), .add([tagged, Self.entry("b")]), .keep(start: 3, count: 1)], length: 5),
            Self.record(3, options: QueueOptions(repeats: true, random: true, single: .oneshot, consume: true)),
            Self.record(4, current: nil, edit: [], length: 0),
        ]
        for record in records {
            #expect(try JournalRecord(json: JSONValue.parse(record.json.jsonBytes)) == record)
        }
        #expect(Self.record(1).json["queue"] == nil, "a save that changed only the player writes no queue")
    }

    /// The bytes a record is written as (straight from its values) are its JSON's, byte for
    /// byte: every kind of source, a URL whose title the tags also name, escapes, options.
    @Test func aRecordIsWrittenAsItsJSON() {
        var tagged = Self.entry("a \"quoted\" \\ ünï\u{1}")
        tagged.duration = 0.1
        tagged.format = AudioFormat(codec: "flac", sampleRate: 44100, channels: 2)
        tagged.tags = DisplayTags(title: "A", artist: nil, album: "C")
        var titled = SavedQueue.Entry(source: .url("http://example.com/s", name: "Station", title: nil))
        titled.tags = DisplayTags(title: "Now", artist: "Band")
        let entries = [
            tagged, Self.entry("b"), SavedQueue.Entry(source: .item(id: "01J", path: "/Notes/idea", name: "idea"), duration: 12),
            SavedQueue.Entry(source: .url("http://example.com/x", name: nil, title: "T")), titled,
            SavedQueue.Entry(source: .file(path: "/m/c.flac"), tags: DisplayTags(artist: "Only")),
        ]
        let records = [
            Self.record(1), Self.record(2, edit: [.add(SavedEntries(entries))], length: entries.count),
            Self.record(3, edit: [.keep(start: 0, count: 2), .add(SavedEntries(entries)), .keep(start: 3, count: 1)], length: 9,
                options: QueueOptions(repeats: true, random: false, single: .on, consume: true)),
            Self.record(4, options: QueueOptions(repeats: false, random: true, single: .off, consume: false)),
            Self.record(5, current: nil, edit: [], length: 0),
        ]
        for record in records {
            #expect(String(decoding: record.jsonBytes, as: UTF8.self) == record.json.jsonString)
        }
    }

    /// An add that names entries again (a playlist repeating its files) lists each entry once,
    /// in the order of first use, with the order of the entries added as indices; it reads back
    /// as the whole list, and its bytes are its JSON's. An add of distinct entries has no order.
    @Test func anAddThatRepeatsEntriesRecordsEachOnceWithTheirOrder() throws {
        var tagged = Self.entry("a")
        tagged.duration = 3.5
        tagged.tags = DisplayTags(title: "A")
        var retitled = tagged
        retitled.tags = DisplayTags(title: "Another")
        let added = [tagged, Self.entry("b"), tagged, retitled, Self.entry("b"), tagged]
        let record = Self.record(2, edit: [.keep(start: 0, count: 1), .add(SavedEntries(added))], length: 7)
        let json = record.json
        let piece = try #require(json["queue"]?["edit"]?.arrayValue?.last)
        #expect(piece["add"]?.arrayValue?.count == 3, "the same source with other tags is another entry")
        #expect(piece["order"] == [0, 1, 0, 2, 1, 0])
        #expect(String(decoding: record.jsonBytes, as: UTF8.self) == json.jsonString)
        #expect(try JournalRecord(json: JSONValue.parse(record.jsonBytes)) == record)

        let distinct = Self.record(3, edit: [.add([Self.entry("c"), Self.entry("d")])], length: 2)
        #expect(distinct.json["queue"]?["edit"]?.arrayValue?.first?["order"] == nil)
        #expect(String(decoding: distinct.jsonBytes, as: UTF8.self) == distinct.json.jsonString)
    }

    @Test func theQueueFileIsWrittenAsItsJSON() {
        var tagged = Self.entry("a \"quoted\" \\ ünï\u{1}")
        tagged.duration = 0.1
        tagged.format = AudioFormat(codec: "flac", sampleRate: 44100, channels: 2)
        tagged.tags = DisplayTags(title: "A", artist: nil, album: "C")
        var titled = SavedQueue.Entry(source: .url("http://example.com/s", name: "Station", title: nil))
        titled.tags = DisplayTags(title: "Now", artist: "Band")
        let entries = [
            tagged, Self.entry("b"), SavedQueue.Entry(source: .item(id: "01J", path: "/Notes/idea", name: "idea"), duration: 12),
            SavedQueue.Entry(source: .url("http://example.com/x", name: nil, title: "T")), titled,
            SavedQueue.Entry(source: .file(path: "/m/c.flac"), tags: DisplayTags(artist: "Only")),
        ]
        for (queue, journal) in [
            (SavedQueue(entries: entries, options: QueueOptions(repeats: true, random: false, single: .on, consume: true)), 12),
            (SavedQueue(entries: [], options: QueueOptions()), 0),
        ] {
            var object = queue.json.objectValue ?? JSONObject()
            object["journal"] = .int(Int64(journal))
            #expect(String(decoding: queue.fileBytes(journal: journal), as: UTF8.self) == JSONValue.object(object).jsonString)
        }
    }

    @Test(arguments: [
        "{}", "{\"seq\":1}", "{\"seq\":1,\"player\":{\"version\":2}}",
        "{\"seq\":1,\"player\":{\"version\":2,\"position\":0,\"state\":\"paused\"},\"queue\":{\"edit\":[[0,1]]}}",
        "{\"seq\":1,\"player\":{\"version\":2,\"position\":0,\"state\":\"paused\"},\"queue\":{\"edit\":[7],\"length\":1}}",
        "{\"seq\":1,\"player\":{\"version\":2,\"position\":0,\"state\":\"paused\"},\"queue\":{\"edit\":[{\"add\":[{\"file\":\"relative.flac\"}]}],\"length\":1}}",
        "{\"seq\":1,\"player\":{\"version\":2,\"position\":0,\"state\":\"paused\"},\"queue\":{\"edit\":[{\"add\":[{\"path\":\"/a.flac\"}],\"order\":[0,1]}],\"length\":2}}",
        "{\"seq\":1,\"player\":{\"version\":2,\"position\":0,\"state\":\"paused\"},\"queue\":{\"edit\":[{\"add\":[{\"path\":\"/a.flac\"}],\"order\":[]}],\"length\":0}}",
        "{\"seq\":1,\"player\":{\"version\":2,\"position\":0,\"state\":\"paused\"},\"queue\":{\"edit\":[{\"add\":[{\"path\":\"/a.flac\"}],\"order\":0}],\"length\":1}}",
    ])
    func aRecordThatIsNotOneIsRefusedWithAReason(text: String) throws {
        #expect(throws: ReelError.self) { try JournalRecord(json: JSONValue.parse(text)) }
    }

    // MARK: Reading a journal

    @Test func aLastLineCutOffByACrashIsIgnored() {
        let whole = Self.bytes([Self.record(7), Self.record(8)])
        let third = Self.record(9).json.jsonBytes
        for cut in [1, third.count / 2, third.count] {
            let read = StateJournal.records(in: whole + third.prefix(cut))
            #expect(read.records == [Self.record(7), Self.record(8)])
            #expect(read.cutOff)
            #expect(read.problem == nil)
        }
        let read = StateJournal.records(in: whole + third + [0x0A])
        #expect(read.records.map(\.sequence) == [7, 8, 9])
        #expect(!read.cutOff)
        #expect(StateJournal.records(in: []).records.isEmpty)
    }

    @Test func aDamagedLineOrARecordOutOfTurnEndsTheJournalThere() {
        let good = Self.bytes([Self.record(1), Self.record(2)])
        let damaged = StateJournal.records(in: good + Array("{\"seq\":3,\"pla\n".utf8) + Self.bytes([Self.record(4)]))
        #expect(damaged.records.map(\.sequence) == [1, 2])
        #expect(damaged.problem?.contains("line 3") == true, "\(String(describing: damaged.problem))")
        let gap = StateJournal.records(in: good + Self.bytes([Self.record(4)]))
        #expect(gap.records.map(\.sequence) == [1, 2])
        #expect(gap.problem?.contains("record 4 after record 2") == true, "\(String(describing: gap.problem))")
        let zeros = StateJournal.records(in: good + [UInt8](repeating: 0, count: 300) + [0x0A])
        #expect(zeros.records.map(\.sequence) == [1, 2], "a power cut's zeros end it too")
        #expect(zeros.problem != nil)
    }

    // MARK: Replaying

    static let base = SavedQueue(entries: ["a", "b", "c"].map(entry), options: QueueOptions())

    /// Records 1 (remove b), 2 (add d at the end, repeat on), 3 (the player only).
    static let journal = [
        record(1, current: 1, edit: [.keep(start: 0, count: 1), .keep(start: 2, count: 1)], length: 2),
        record(2, current: 2, edit: [.keep(start: 0, count: 2), .add([entry("d")])], length: 3, options: QueueOptions(repeats: true)),
        record(3, current: 2),
    ]

    @Test func theRecordsAfterEachBaseAreReplayed() {
        let player = SavedPlayerState(current: 0, position: 0, state: .stopped)
        let all = StateJournal.replay(Self.journal, player: player, playerBase: 0, queue: Self.base, queueBase: 0)
        #expect(all.problem == nil)
        #expect(all.queue.entries == ["a", "c", "d"].map(Self.entry))
        #expect(all.queue.options == QueueOptions(repeats: true))
        #expect(all.player == Self.journal[2].player)

        // queue.json written at record 2, player-state.json not yet: each takes what it lacks.
        let compacted = SavedQueue(entries: ["a", "c", "d"].map(Self.entry), options: QueueOptions(repeats: true))
        let half = StateJournal.replay(Self.journal, player: player, playerBase: 0, queue: compacted, queueBase: 2)
        #expect(half.queue == all.queue)
        #expect(half.player == all.player)

        // A journal of records the base already has changes nothing.
        let done = StateJournal.replay(Self.journal, player: Self.journal[2].player, playerBase: 3, queue: compacted, queueBase: 3)
        #expect(done.queue == all.queue && done.player == all.player)
    }

    @Test func anEditThatDoesNotFitTheQueueStopsTheReplayBeforeIt() {
        let player = SavedPlayerState(current: 0, position: 0, state: .stopped)
        let short = SavedQueue(entries: [Self.entry("a")], options: QueueOptions())
        let replayed = StateJournal.replay(Self.journal, player: player, playerBase: 0, queue: short, queueBase: 0)
        #expect(replayed.problem != nil)
        #expect(replayed.queue == short)
        #expect(replayed.player == player, "the player's state of a record that does not fit is not taken either")
    }
}
