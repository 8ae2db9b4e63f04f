@testable import ReelCore
import ReelModel
import ReelProtocol
import Testing
import ReelTestSupport

/// The state file writes a record and `queue.json` straight from the queue's rows, through a
/// small buffer (`OutgoingRecord`, `SavedQueue.writeFile(rows:…)`): byte for byte what the
/// values `PlayQueue.edit(since:)` and `savedEntries` give would be written as, whatever the
/// buffer's size.
@Suite struct OutgoingRecordTests {

    static func file(_ name: String, duration: Double? = 2.5, estimated: Bool = false) -> NewQueueEntry {
        NewQueueEntry(
            source: .file(path: "/music/\(name) \"q\"\\.flac"), duration: duration,
            format: AudioFormat(codec: "flac", sampleRate: 44100, channels: 2),
            tags: DisplayTags(title: "T\u{1}\(name)", artist: "Ä \(name)", album: nil), durationEstimated: estimated)
    }

    static let player = SavedPlayerState(current: 1, position: 3.25, state: .paused)

    /// The text `write` makes with `flushAt`, and the pieces `flush` was handed.
    static func chunks(flushAt: Int, _ write: (inout [UInt8], Int, (inout [UInt8]) -> Void) -> Void) -> (text: [UInt8], chunks: Int) {
        var text: [UInt8] = []
        var chunks = 0
        var out: [UInt8] = []
        write(&out, flushAt) { bytes in
            #expect(bytes.count >= flushAt, "flushed only once full")
            text += bytes
            chunks += 1
            bytes.removeAll(keepingCapacity: true)
        }
        return (text + out, chunks)
    }

    /// After each change of a queue (a run that repeats its entries, distinct entries in the
    /// middle, a stream, an estimated length, a move, a removal, random order, clear), the
    /// record written from the rows is the record of the same edit as values.
    @Test func aRecordWrittenFromTheRowsIsTheRecordOfTheSameEdit() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 3))
        var layout = SavedLayout()
        var sequence = 0
        func check(_ what: String) throws {
            var forRuns = layout
            let runs = queue.editRuns(since: &forRuns)
            let pieces = queue.edit(since: &layout)
            #expect((runs == nil) == (pieces == nil), "\(what)")
            guard let runs else { return }
            sequence += 1
            let options = sequence % 2 == 0 ? queue.options : nil
            let expected = JournalRecord(
                sequence: sequence, player: Self.player, edit: pieces, length: queue.length, options: options
            ).jsonBytes
            let record = OutgoingRecord(
                sequence: sequence, player: Self.player, edit: runs, rows: queue.rows, length: queue.length, options: options)
            var whole: [UInt8] = []
            record.write(into: &whole)
            #expect(whole == expected, "\(what): \(String(decoding: whole, as: UTF8.self))")
            for flushAt in [1, 300] {
                let (text, _) = Self.chunks(flushAt: flushAt) { out, limit, flush in record.write(into: &out, flushAt: limit, flush: flush) }
                #expect(text == expected, "\(what), flushed at \(flushAt)")
            }
            // It reads back as the record of the values.
            let read = try JournalRecord(json: JSONValue.parse(whole))
            #expect(read.edit == pieces, "\(what)")
        }
        _ = try queue.insert(NewQueueRun(distinct: ["a", "b", "c"].map { Self.file($0) }, order: (0..<40).map { $0 % 3 }), at: nil, afterCurrent: false)
        try check("a run")
        _ = try queue.add(["d", "e"].map { Self.file($0) } + [Self.file("f", estimated: true)], at: 5, afterCurrent: false)
        try check("distinct entries in the middle")
        _ = try queue.add(
            [NewQueueEntry(source: .url("http://radio.example/live", name: "Live", title: "Now"), tags: DisplayTags(title: "Now"))],
            at: 0, afterCurrent: false)
        try check("a stream")
        try queue.move(id: 3, to: 30)
        try check("a move")
        _ = try queue.remove(ids: [5, 6, 7], playing: false)
        try check("a removal")
        try check("nothing")
        queue.setOptions(repeats: nil, random: true, single: nil, consume: nil)
        _ = try queue.insert(NewQueueRun(distinct: ["g", "h"].map { Self.file($0, duration: nil) }, order: [0, 1, 1, 0, 0, 0]), at: nil, afterCurrent: false)
        try check("random")
        try queue.shuffle(playing: false)
        try check("a shuffle")
        queue.clear()
        try check("clear")
        _ = try queue.add([Self.file("i")], at: nil, afterCurrent: false)
        try check("one entry after clear")
    }

    /// `queue.json` written from the rows is `fileBytes` of the queue's saved entries, however
    /// it is flushed, and reads back as them.
    @Test func aQueueFileWrittenFromTheRowsIsTheFileOfItsSavedEntries() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 5))
        func check(_ what: String) throws {
            let options = queue.options
            let expected = SavedQueue(saved: queue.savedEntries, options: options).fileBytes(journal: 17)
            var whole: [UInt8] = []
            SavedQueue.writeFile(rows: queue.rows, options: options, journal: 17, into: &whole)
            #expect(whole == expected, "\(what)")
            for flushAt in [1, 500] {
                let (text, chunks) = Self.chunks(flushAt: flushAt) { out, limit, flush in
                    SavedQueue.writeFile(rows: queue.rows, options: options, journal: 17, into: &out, flushAt: limit, flush: flush)
                }
                #expect(text == expected, "\(what), flushed at \(flushAt)")
                if queue.length > 10, flushAt == 1 { #expect(chunks > 10, "\(what): written in pieces") }
            }
            #expect(try SavedQueue(json: JSONValue.parse(whole)).entries == queue.allEntries.map { SavedQueue.Entry(saving: $0) })
        }
        try check("empty")
        _ = try queue.add(["a", "b"].map { Self.file($0) }, at: nil, afterCurrent: false)
        try check("each entry once")
        _ = try queue.insert(NewQueueRun(distinct: ["c", "d", "e"].map { Self.file($0) }, order: (0..<60).map { $0 % 3 }), at: 1, afterCurrent: false)
        try check("a run that repeats its entries")
        queue.setDuration(9, format: nil, missing: false, for: 10)
        try check("one entry of a shared row changed")
    }
}
