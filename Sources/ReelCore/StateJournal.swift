// The saved state's journal (`state.journal`): one line per save since the base files
// (`player-state.json`, `queue.json`) were written, and replaying it onto them. Values only.

import ReelModel
import ReelProtocol

/// One save: the player's state (whole: it is small) and, when they changed, the queue's entries
/// (as pieces of the list before: see `QueueEditPiece`) and options.
///
/// `{"seq": 12, "player": {…as player-state.json…}, "queue": {"edit": [[0, 41], {"add": [entry…]},
/// [42, 9000]], "length": 9042, "options": {…}}}`; `queue` and its members only when they changed.
/// An add that names one entry several times (a playlist that repeats its files) lists each
/// distinct entry once, in the order of first use, and the order of the entries added as
/// indices into that list, a run of 3 or more consecutive indices as `[start, count]`:
/// `{"add": [a, b], "order": [0, 1, 0, 1]}`, `{"add": [a, b, c], "order": [[0, 3], [0, 3]]}`. The record carries every
/// entry it adds: replaying it needs nothing else (not the playlist it came from).
struct JournalRecord: Equatable, Sendable {
    /// One more than the record before; the base files name the last record they include.
    var sequence: Int
    var player: SavedPlayerState
    /// The queue's entries now as pieces of its entries before; nil when they did not change.
    var edit: [QueueEditPiece]?
    /// The queue's length after `edit` (checked when replayed).
    var length: Int
    /// The queue's options when they changed.
    var options: QueueOptions?

    var hasQueueChange: Bool { edit != nil || options != nil }

    var json: JSONValue {
        var object: JSONObject = ["seq": .int(Int64(sequence)), "player": player.json]
        if hasQueueChange {
            var queue = JSONObject()
            if let edit {
                queue["edit"] = .array(edit.map { piece -> JSONValue in
                    switch piece {
                    case .keep(let start, let count): return [.int(Int64(start)), .int(Int64(count))]
                    case .add(let added):
                        var add = JSONObject()
                        added.add(to: &add, entriesKey: "add")
                        return .object(add)
                    }
                })
                queue["length"] = .int(Int64(length))
            }
            if let options { queue["options"] = SavedQueue.json(of: options) }
            object["queue"] = .object(queue)
        }
        return .object(object)
    }

    /// `json`'s compact text, byte for byte, written straight from the values (an add of
    /// 10,000 entries is one record, written before the reply).
    var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        // (An add's entries are mostly written once each: see `SavedQueue.Entry.distinct`.)
        out.reserveCapacity(256 + (edit?.reduce(0) { count, piece in
            if case .add(let added) = piece { return count + 160 * added.entries.count + 6 * added.count }
            return count
        } ?? 0))
        Self.write(sequence: sequence, player: player, edit: edit, length: length, options: options, into: &out) { piece, out in
            switch piece {
            case .keep(let start, let count):
                SavedEntries.writePair(start, count, into: &out)
            case .add(let added):
                out.append(0x7B)
                added.writeJSON(into: &out, entriesKey: "add")
                out.append(0x7D)
            }
        }
        return out
    }

    /// A record's compact text around the pieces of its edit, each written by `piece` (a kept
    /// run's `[start, count]`, an add's `{…}`): `jsonBytes`, and `OutgoingRecord`'s.
    static func write<Piece>(
        sequence: Int, player: SavedPlayerState, edit: [Piece]?, length: Int, options: QueueOptions?,
        into out: inout [UInt8], piece: (Piece, inout [UInt8]) -> Void
    ) {
        out.append(contentsOf: #"{"seq":"#.utf8)
        JSONWriter.writeInt(Int64(sequence), into: &out)
        out.append(contentsOf: #","player":"#.utf8)
        JSONWriter.write(player.json, into: &out)
        if edit != nil || options != nil {
            out.append(contentsOf: #","queue":{"#.utf8)
            if let edit {
                out.append(contentsOf: #""edit":["#.utf8)
                for (index, each) in edit.enumerated() {
                    if index > 0 { out.append(0x2C) }
                    piece(each, &out)
                }
                out.append(contentsOf: #"],"length":"#.utf8)
                JSONWriter.writeInt(Int64(length), into: &out)
            }
            if let options {
                if edit != nil { out.append(0x2C) }
                out.append(contentsOf: #""options":"#.utf8)
                JSONWriter.write(SavedQueue.json(of: options), into: &out)
            }
            out.append(0x7D)
        }
        out.append(0x7D)
    }

    init(sequence: Int, player: SavedPlayerState, edit: [QueueEditPiece]?, length: Int, options: QueueOptions?) {
        self.sequence = sequence
        self.player = player
        self.edit = edit
        self.length = length
        self.options = options
    }

    /// Throws a message naming what is wrong.
    init(json: JSONValue) throws(ReelError) {
        func corrupt(_ what: String) -> ReelError { ReelError(.corruptFile, "a record of the saved state's journal \(what)") }
        guard let sequence = json["seq"]?.intValue else { throw corrupt("has no seq") }
        guard let player = json["player"] else { throw corrupt("has no player state") }
        self.sequence = sequence
        self.player = try SavedPlayerState(json: player)
        length = 0
        guard let queue = json["queue"] else { return }
        if let options = queue["options"] { self.options = SavedQueue.options(json: options) }
        guard let pieces = queue["edit"] else { return }
        guard let list = pieces.arrayValue, let length = queue["length"]?.intValue, length >= 0 else {
            throw corrupt("has an edit of the queue without a list of pieces and a length")
        }
        self.length = length
        edit = try list.map { (piece) throws(ReelError) -> QueueEditPiece in
            if let pair = piece.arrayValue, pair.count == 2, let start = pair[0].intValue, let count = pair[1].intValue {
                return .keep(start: start, count: count)
            }
            if let list = piece["add"]?.arrayValue {
                // An add cannot hold more entries than the queue has after the edit.
                let added = try SavedEntries.read(
                    list, order: piece["order"], what: "a record of the saved state's journal has", dropUnreadable: false,
                    maximumPositions: length)
                guard !added.isEmpty else { throw corrupt("adds an entry that cannot be read") }
                return .add(added)
            }
            throw corrupt("has a piece of the queue that is neither [start, count] nor {\"add\": […], \"order\": […]}")
        }
    }
}

/// A record as the state file writes it (`PlayerStateFile`): the edit as runs of the queue's
/// positions (`PlayQueue.editRuns`), the entries added written straight from the queue's rows
/// (`QueueRows.writeEntries`): byte for byte the `JournalRecord` of the same edit
/// (`PlayQueue.edit(since:)`), without a copy of any entry.
struct OutgoingRecord: Sendable {
    var sequence: Int
    var player: SavedPlayerState
    var edit: [QueueEditRun]?
    /// The queue the edit's added runs are positions of.
    var rows: QueueRows
    var length: Int
    var options: QueueOptions?

    var hasQueueChange: Bool { edit != nil || options != nil }

    /// Writes the record's compact text (no newline). Whenever `out` holds `flushAt` bytes or
    /// more between two entries added, `flush` is called to take them: an add of 10,000
    /// entries goes out through a buffer of a few pages.
    func write(into out: inout [UInt8], flushAt: Int = .max, flush: (inout [UInt8]) -> Void = { _ in }) {
        JournalRecord.write(
            sequence: sequence, player: player, edit: edit, length: length, options: options, into: &out
        ) { piece, out in
            switch piece {
            case .keep(let start, let count):
                SavedEntries.writePair(start, count, into: &out)
            case .added(let start, let count):
                out.append(0x7B)
                rows.writeEntries(positions: start..<start + count, key: "add", into: &out, flushAt: flushAt, flush: flush)
                out.append(0x7D)
            }
        }
    }
}

/// Reading the journal and replaying it onto the base files.
enum StateJournal {
    /// The records in a journal file's bytes, in order: up to the first line that is not a
    /// record, or whose `seq` does not follow the one before (`problem` says which), and
    /// without a last line cut off (`cutOff`: the process died writing it, so its command was
    /// never answered).
    static func records(in bytes: [UInt8]) -> (records: [JournalRecord], cutOff: Bool, problem: String?) {
        var records: [JournalRecord] = []
        var start = 0
        var line = 1
        while start < bytes.count {
            guard let end = bytes[start...].firstIndex(of: 0x0A) else { return (records, true, nil) }
            defer {
                start = end + 1
                line += 1
            }
            guard end > start else { continue }
            let record: JournalRecord
            do {
                record = try JournalRecord(json: JSONValue.parse(bytes[start..<end]))
            } catch let error as ReelError {
                return (records, false, "line \(line): \(error.message)")
            } catch {
                return (records, false, "line \(line) is not valid JSON (\(error))")
            }
            if let last = records.last, record.sequence != last.sequence + 1 {
                return (records, false, "line \(line) is record \(record.sequence) after record \(last.sequence)")
            }
            records.append(record)
        }
        return (records, false, nil)
    }

    /// The state after `records`: the queue gets the edits and options of the records after
    /// `queueBase` (the last record `queue.json` includes), the player the state of the last
    /// record after `playerBase`. Stops at an edit that does not fit the queue (`problem`).
    static func replay(
        _ records: [JournalRecord], player: SavedPlayerState, playerBase: Int, queue: SavedQueue, queueBase: Int
    ) -> (player: SavedPlayerState, queue: SavedQueue, problem: String?) {
        var player = player
        // Each distinct entry once (the base's, then each add's), and the queue as indices into them.
        var pool = queue.saved.entries
        var list = queue.saved.order ?? Array(pool.indices)
        var options = queue.options
        var problem: String?
        for record in records {
            if record.sequence > queueBase {
                if let edit = record.edit {
                    guard let edited = QueueEditPiece.apply(edit, to: list, length: record.length, adding: { entry in
                        pool.append(entry)
                        return pool.count - 1
                    }) else {
                        problem = "record \(record.sequence) edits a queue of \(list.count) entries it does not fit"
                        break
                    }
                    list = edited
                }
                if let changed = record.options { options = changed }
            }
            if record.sequence > playerBase { player = record.player }
        }
        return (player, SavedQueue(saved: compacted(pool, list), options: options), problem)
    }

    /// The entries of `pool` that `list` names, each once, and `list` as indices into them.
    private static func compacted(_ pool: [SavedQueue.Entry], _ list: [Int]) -> SavedEntries {
        var newIndex = [Int](repeating: -1, count: pool.count)
        var entries: [SavedQueue.Entry] = []
        var order: [Int] = []
        order.reserveCapacity(list.count)
        for index in list {
            if newIndex[index] < 0 {
                newIndex[index] = entries.count
                entries.append(pool[index])
            }
            order.append(newIndex[index])
        }
        return SavedEntries(entries: entries, order: order)
    }
}
