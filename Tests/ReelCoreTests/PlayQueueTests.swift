@testable import ReelCore
import ReelModel
import Testing
import ReelTestSupport

/// The play queue as a pure value: MPD's rules for ids, positions, the play order, the options
/// and what happens when an entry ends. Random mode runs on a seeded generator.
@Suite struct PlayQueueTests {
    // MARK: Helpers

    static func file(_ name: String) -> NewQueueEntry {
        NewQueueEntry(source: .file(path: "/music/\(name).flac"))
    }

    static func files(_ names: [String]) -> [NewQueueEntry] { names.map(file) }

    /// A queue of entries named "1", "2", … (ids 1, 2, … as well), with `options`.
    static func queue(
        _ count: Int, options: QueueOptions = QueueOptions(), current: Int? = nil, seed: UInt64 = 1
    ) -> PlayQueue {
        var queue = PlayQueue(generator: SeededGenerator(seed: seed))
        if count > 0 { _ = try! queue.add(files((1...count).map(String.init)), at: nil, afterCurrent: false) }
        if let current { try! queue.setCurrent(current) }
        queue.setOptions(repeats: options.repeats, random: options.random, single: options.single, consume: options.consume)
        return queue
    }

    static func name(_ entry: QueueEntry) -> String {
        guard case .file(let path) = entry.source else { return "?" }
        return String(path.dropFirst("/music/".count).dropLast(".flac".count))
    }

    static func names(_ queue: PlayQueue) -> [String] { queue.allEntries.map(name) }
    static func ids(_ queue: PlayQueue) -> [Int] { queue.allEntries.map(\.id) }

    /// The ids in play order.
    static func playOrder(_ queue: PlayQueue) -> [Int] {
        (0..<queue.length).map { queue.slots[queue.slotAt(playIndex: $0)].id }
    }

    /// Plays on (`player.next`) until the current entry is the last of the play order.
    static func playToTheLast(_ queue: inout PlayQueue) {
        while let current = queue.current, playOrder(queue).last != current {
            queue.advance(from: current, to: queue.successor(of: current, .manual), .manual)
        }
    }

    /// Every way of looking at the queue agrees with every other.
    static func expectConsistent(_ queue: PlayQueue, sourceLocation: SourceLocation = #_sourceLocation) {
        let all = queue.allEntries
        let ids = all.map(\.id)
        #expect(all.count == queue.length, sourceLocation: sourceLocation)
        #expect(Set(ids).count == ids.count, "ids repeat", sourceLocation: sourceLocation)
        let wrong = all.enumerated().filter { position, entry in
            entry.position != position || queue.position(of: entry.id) != position
                || queue.entry(id: entry.id) != entry || queue.id(at: position) != entry.id
        }
        #expect(wrong.isEmpty, "positions disagree at \(wrong.prefix(3).map(\.offset))", sourceLocation: sourceLocation)
        #expect(queue.slotOfID.count == all.count, sourceLocation: sourceLocation)
        let order = playOrder(queue)
        #expect(order.sorted() == ids.sorted(), "the play order is not the entries", sourceLocation: sourceLocation)
        #expect(queue.first == order.first, sourceLocation: sourceLocation)
        #expect(queue.prioritized == all.filter { $0.priority != 0 }.count, sourceLocation: sourceLocation)
        if let current = queue.current { #expect(queue.entry(id: current) != nil, sourceLocation: sourceLocation) }
        if queue.options.random {
            #expect(queue.order.count == all.count, sourceLocation: sourceLocation)
            let misplaced = queue.order.indices.filter { queue.orderOfSlot[queue.order[$0]] != $0 }
            #expect(misplaced.isEmpty, "orderOfSlot is stale", sourceLocation: sourceLocation)
            if let first = queue.nextRoundFirst {
                #expect(queue.entry(id: first) != nil, sourceLocation: sourceLocation)
                #expect(order.count == 1 || first != order.last, sourceLocation: sourceLocation)
                let highest = order.dropLast().compactMap { queue.entry(id: $0)?.priority }.max() ?? 0
                #expect(
                    order.count == 1 || queue.entry(id: first)?.priority == highest,
                    "the next round does not start with the highest priority", sourceLocation: sourceLocation)
            } else {
                #expect(all.isEmpty, "no next round in random mode", sourceLocation: sourceLocation)
            }
        } else {
            #expect(order == ids, sourceLocation: sourceLocation)
            #expect(queue.order.isEmpty && queue.nextRoundFirst == nil, sourceLocation: sourceLocation)
        }
    }

    static func expectError(
        _ reason: ErrorReason, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) {
        do {
            try body()
            Issue.record("no error; expected \(reason)", sourceLocation: sourceLocation)
        } catch let error as ReelError {
            #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error); expected \(reason)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Ids and positions

    @Test func idsAreNeverReused() throws {
        var queue = Self.queue(3)
        #expect(Self.ids(queue) == [1, 2, 3])
        _ = try queue.remove(ids: [2, 3], playing: true)
        let added = try queue.add(Self.files(["x", "y"]), at: nil, afterCurrent: false)
        #expect(added.map(\.id) == [4, 5])
        #expect(Self.ids(queue) == [1, 4, 5])
        queue.clear()
        let again = try queue.add([Self.file("z")], at: nil, afterCurrent: false)
        #expect(again.map(\.id) == [6])
        #expect(queue.entry(id: 2) == nil && queue.entry(id: 5) == nil)
        Self.expectConsistent(queue)
    }

    @Test func addingAtAPositionShiftsTheOthers() throws {
        var queue = Self.queue(3)
        let added = try queue.add(Self.files(["x", "y"]), at: 1, afterCurrent: false)
        #expect(added.map(\.position) == [1, 2])
        #expect(added.map(Self.name) == ["x", "y"])
        #expect(Self.names(queue) == ["1", "x", "y", "2", "3"])
        #expect(queue.position(of: 3) == 4)
        _ = try queue.add([Self.file("front")], at: 0, afterCurrent: false)
        #expect(Self.names(queue) == ["front", "1", "x", "y", "2", "3"])
        let end = try queue.add([Self.file("end")], at: queue.length, afterCurrent: false)
        #expect(end.first?.position == 6)
        _ = try queue.add([Self.file("appended")], at: nil, afterCurrent: false)
        #expect(Self.names(queue) == ["front", "1", "x", "y", "2", "3", "end", "appended"])
        Self.expectConsistent(queue)
    }

    @Test func addingOutsideTheQueueOrNothingFailsAndChangesNothing() {
        var queue = Self.queue(3)
        let version = queue.version
        for position in [4, -1, 100] {
            Self.expectError(.outOfRange) { _ = try queue.add([Self.file("x")], at: position, afterCurrent: false) }
        }
        Self.expectError(.notFound) { _ = try queue.add([], at: nil, afterCurrent: false) }
        Self.expectError(.notFound) { _ = try queue.add([], at: 0, afterCurrent: true) }
        #expect(queue.version == version)
        #expect(Self.names(queue) == ["1", "2", "3"])
        // The failed adds used no ids.
        #expect((try? queue.add([Self.file("x")], at: nil, afterCurrent: false))?.first?.id == 4)
    }

    @Test func addingAfterTheCurrentEntry() throws {
        var queue = Self.queue(3)
        // No current entry: appends (and `position` is not looked at).
        _ = try queue.add([Self.file("a")], at: 0, afterCurrent: true)
        #expect(Self.names(queue) == ["1", "2", "3", "a"])
        try queue.setCurrent(2)
        let added = try queue.add(Self.files(["x", "y"]), at: nil, afterCurrent: true)
        #expect(added.map(\.position) == [2, 3])
        #expect(Self.names(queue) == ["1", "2", "x", "y", "3", "a"])
        #expect(queue.current == 2)
        #expect(queue.successor(of: 2, .automatic) == added[0].id)
        // The current entry last: after it is the end.
        try queue.setCurrent(4)
        _ = try queue.add([Self.file("z")], at: nil, afterCurrent: true)
        #expect(Self.names(queue).last == "z")
        Self.expectConsistent(queue)
    }

    @Test func removingFailsWholeOnAnUnknownId() {
        var queue = Self.queue(4, current: 2)
        let version = queue.version
        Self.expectError(.notFound) { _ = try queue.remove(ids: [1, 99, 3], playing: true) }
        do {
            _ = try queue.remove(ids: [7], playing: true)
        } catch {
            #expect(error.message == "no queue entry with id 7")
        }
        #expect(Self.ids(queue) == [1, 2, 3, 4])
        #expect(queue.version == version)
        #expect(queue.current == 2)
    }

    @Test func removingScatteredEntriesKeepsTheRestInOrder() throws {
        var queue = Self.queue(10, current: 5)
        #expect(try queue.remove(ids: [9, 1, 4, 4, 7], playing: true) == .untouched)
        #expect(Self.ids(queue) == [2, 3, 5, 6, 8, 10])
        #expect(queue.position(of: 5) == 2)
        #expect(queue.position(of: 10) == 5)
        #expect(queue.current == 5)
        #expect(try queue.remove(ids: [], playing: true) == .untouched)
        Self.expectConsistent(queue)
    }

    @Test func removingTheCurrentEntryMakesTheFollowingOneCurrent() throws {
        var queue = Self.queue(5, current: 2)
        #expect(try queue.remove(ids: [2], playing: true) == .removed(successor: 3))
        #expect(queue.current == 3)
        // The follower goes too: the next that stays.
        #expect(try queue.remove(ids: [3, 4], playing: true) == .removed(successor: 5))
        #expect(queue.current == 5)
        // The last one, without repeat: no current entry.
        #expect(try queue.remove(ids: [5], playing: true) == .removed(successor: nil))
        #expect(queue.current == nil)
        #expect(Self.ids(queue) == [1])

        // With repeat, past the end is the first entry.
        var repeating = Self.queue(4, options: QueueOptions(repeats: true), current: 4)
        #expect(try repeating.remove(ids: [4, 1], playing: true) == .removed(successor: 2))
        // Single and repeat do not keep a removed entry current (MPD would have none).
        var single = Self.queue(3, options: QueueOptions(repeats: true, single: .on), current: 1)
        #expect(try single.remove(ids: [1], playing: true) == .removed(successor: 2))
        // Everything removed.
        var all = Self.queue(2, options: QueueOptions(repeats: true), current: 1)
        #expect(try all.remove(ids: [1, 2], playing: true) == .removed(successor: nil))
        #expect(all.current == nil && all.length == 0)
        Self.expectConsistent(all)
    }

    /// MPD's `DeleteInternal`: with the player stopped, the current entry is only where play
    /// starts; removing it leaves no current entry (and play starts at the first).
    @Test func removingTheCurrentEntryWhileStoppedLeavesNone() throws {
        var queue = Self.queue(3, current: 2)
        #expect(try queue.remove(ids: [1], playing: false) == .untouched)
        #expect(queue.current == 2)
        #expect(try queue.remove(ids: [2], playing: false) == .removed(successor: nil))
        #expect(queue.current == nil)
        #expect(queue.first == 3)
        #expect(Self.ids(queue) == [3])
        Self.expectConsistent(queue)
        var repeating = Self.queue(4, options: QueueOptions(repeats: true, random: true), current: 4)
        #expect(try repeating.remove(ids: [4], playing: false) == .removed(successor: nil))
        #expect(repeating.current == nil && repeating.length == 3)
        Self.expectConsistent(repeating)
    }

    @Test func removingTheCurrentEntryInRandomModeFollowsThePlayOrder() throws {
        var queue = Self.queue(8, options: QueueOptions(random: true), current: 3)
        let order = Self.playOrder(queue)
        #expect(order.first == 3)
        #expect(try queue.remove(ids: [3, order[1]], playing: true) == .removed(successor: order[2]))
        #expect(Self.playOrder(queue) == Array(order.dropFirst(2)))
        Self.expectConsistent(queue)
        // The last in play order, with repeat: a new round starts with the entry drawn for it.
        queue.setOptions(repeats: true, random: nil, single: nil, consume: nil)
        Self.playToTheLast(&queue)
        let last = try #require(queue.current)
        let roundStart = queue.successor(of: last, .manual)
        #expect(roundStart != nil && roundStart != last)
        #expect(try queue.remove(ids: [queue.current!], playing: true) == .removed(successor: roundStart))
        #expect(Self.playOrder(queue).first == roundStart)
        Self.expectConsistent(queue)
    }

    @Test func moving() throws {
        var queue = Self.queue(5, current: 3)
        try queue.move(id: 1, to: 3)
        #expect(Self.ids(queue) == [2, 3, 4, 1, 5])
        try queue.move(id: 5, to: 0)
        #expect(Self.ids(queue) == [5, 2, 3, 4, 1])
        #expect(queue.current == 3)
        // Play order is queue order.
        #expect(queue.successor(of: 3, .automatic) == 4)
        #expect(queue.successor(of: 4, .automatic) == 1)
        let version = queue.version
        Self.expectError(.outOfRange) { try queue.move(id: 2, to: 5) }
        Self.expectError(.outOfRange) { try queue.move(id: 2, to: -1) }
        Self.expectError(.notFound) { try queue.move(id: 42, to: 0) }
        try queue.move(id: 2, to: 1)  // where it is
        #expect(queue.version == version)
        #expect(Self.ids(queue) == [5, 2, 3, 4, 1])
        Self.expectConsistent(queue)
    }

    @Test func movingInRandomModeKeepsThePlayOrder() throws {
        var queue = Self.queue(10, options: QueueOptions(random: true), current: 4)
        let order = Self.playOrder(queue)
        try queue.move(id: 4, to: 9)
        try queue.move(id: 10, to: 0)
        try queue.move(id: 1, to: 5)
        #expect(Self.playOrder(queue) == order)
        #expect(Self.ids(queue) == [10, 2, 3, 5, 6, 1, 7, 8, 9, 4])
        Self.expectConsistent(queue)
    }

    @Test func clearing() throws {
        var queue = Self.queue(3, options: QueueOptions(random: true), current: 2)
        let version = queue.version
        queue.clear()
        #expect(queue.length == 0 && queue.current == nil && queue.first == nil)
        #expect(queue.version == version + 1)
        #expect(queue.options.random)
        queue.clear()
        #expect(queue.version == version + 1)
        _ = try queue.add(Self.files(["a", "b"]), at: nil, afterCurrent: false)
        Self.expectConsistent(queue)
    }

    @Test func windowsAreClampedToTheQueue() {
        let queue = Self.queue(10)
        #expect(queue.entries(start: 2, count: 3).map(\.id) == [3, 4, 5])
        #expect(queue.entries(start: 2, count: 3).map(\.position) == [2, 3, 4])
        #expect(queue.entries(start: 8, count: 5).map(\.id) == [9, 10])
        #expect(queue.entries(start: 10, count: 5).isEmpty)
        #expect(queue.entries(start: 50, count: 5).isEmpty)
        #expect(queue.entries(start: -3, count: 2).map(\.id) == [1, 2])
        #expect(queue.entries(start: 0, count: 0).isEmpty)
        #expect(queue.entries(start: 0, count: -1).isEmpty)
        #expect(queue.entries(start: 1, count: .max).count == 9)
        #expect(PlayQueue().entries(start: 0, count: 10).isEmpty)
    }

    /// An estimated length, then the counted one: each a change of the entry, the flag too.
    @Test func anEstimatedDurationIsMarkedUntilTheCountReplacesIt() {
        var queue = Self.queue(2)
        let version = queue.version
        queue.setDuration(3598.4, estimated: true, format: nil, missing: false, for: 2)
        #expect(queue.entry(id: 2)?.duration == 3598.4)
        #expect(queue.entry(id: 2)?.durationEstimated == true)
        #expect(queue.version == version + 1)
        // The count came out the same as the estimate: only the flag changes, and that is a change.
        queue.setDuration(3598.4, format: nil, missing: false, for: 2)
        #expect(queue.entry(id: 2)?.durationEstimated == false)
        #expect(queue.version == version + 2)
        // No length is no estimate.
        queue.setDuration(nil, estimated: true, format: nil, missing: false, for: 1)
        #expect(queue.entry(id: 1)?.durationEstimated == false)
        let added = try? queue.add(
            [NewQueueEntry(source: .file(path: "/m/x.mp3"), duration: 60, durationEstimated: true)], at: nil,
            afterCurrent: false)
        #expect(added?.first?.durationEstimated == true)
        #expect(added?.first?.duration == 60)
    }

    @Test func metadataAndSourcesChange() {
        var queue = Self.queue(2)
        let version = queue.version
        let format = AudioFormat(codec: "flac", sampleRate: 44100, channels: 2)
        queue.setDuration(12.5, format: format, missing: false, for: 2)
        #expect(queue.entry(id: 2)?.duration == 12.5)
        #expect(queue.entry(id: 2)?.format == format)
        #expect(queue.version == version + 1)
        queue.setDuration(12.5, format: format, missing: false, for: 2)
        queue.setDuration(1, format: nil, missing: true, for: 99)
        #expect(queue.version == version + 1)
        queue.setDuration(nil, format: nil, missing: true, for: 1)
        #expect(queue.entry(id: 1)?.missing == true)
        #expect(queue.version == version + 2)
        let renamed = PlayerSource.item(id: "u", path: "/Talks/New", name: "New")
        queue.updateSource(renamed, for: 2)
        queue.updateSource(renamed, for: 2)
        queue.updateSource(renamed, for: 77)
        #expect(queue.entry(id: 2)?.source == renamed)
        #expect(queue.version == version + 3)
    }

    // MARK: Successors

    /// Every combination of repeat, single and consume, without random, on the entries of
    /// `1 2 3` (every entry) and of a one-entry queue.
    @Test(arguments: [false, true], [SingleMode.off, .on, .oneshot])
    func successorsFollowMPD(repeats: Bool, single: SingleMode) {
        for consume in [false, true] {
            let options = QueueOptions(repeats: repeats, single: single, consume: consume)
            let three = Self.queue(3, options: options)
            let one = Self.queue(1, options: options)
            let context = "\(options)"
            // automatic: after 1, 2, 3 of `1 2 3`, and after the only entry
            let expected: [Int?], only: Int?
            switch (single != .off, repeats, consume) {
            case (false, false, _): (expected, only) = ([2, 3, nil], nil)
            case (false, true, false): (expected, only) = ([2, 3, 1], 1)
            case (false, true, true): (expected, only) = ([2, 3, 1], nil)  // nothing left to repeat
            case (true, false, _): (expected, only) = ([nil, nil, nil], nil)
            case (true, true, false): (expected, only) = ([1, 2, 3], 1)  // the same entry again
            case (true, true, true): (expected, only) = ([2, 3, 1], nil)  // GetNextOrder: consume wins
            }
            #expect([1, 2, 3].map { three.successor(of: $0, .automatic) } == expected, "\(context)")
            #expect(one.successor(of: 1, .automatic) == only, "\(context)")
            // manual: single does not apply
            #expect(three.successor(of: 1, .manual) == 2, "\(context)")
            #expect(three.successor(of: 3, .manual) == (repeats ? 1 : nil), "\(context)")
            #expect(one.successor(of: 1, .manual) == (repeats && !consume ? 1 : nil), "\(context)")
            #expect(three.successor(of: 9, .manual) == nil)
            #expect(three.summary.next == nil)  // no current entry
        }
    }

    /// The same rules in random mode, along the play order.
    @Test(arguments: [false, true], [SingleMode.off, .on, .oneshot])
    func randomSuccessorsFollowThePlayOrder(repeats: Bool, single: SingleMode) {
        for consume in [false, true] {
            let options = QueueOptions(repeats: repeats, random: true, single: single, consume: consume)
            let queue = Self.queue(6, options: options, current: 4, seed: 7)
            let order = Self.playOrder(queue)
            #expect(order.first == 4)
            let context = "\(options)"
            for (index, id) in order.enumerated() {
                let following = index + 1 < order.count ? order[index + 1] : nil
                let automatic = queue.successor(of: id, .automatic)
                let manual = queue.successor(of: id, .manual)
                switch (single != .off, repeats, consume) {
                case (true, false, _): #expect(automatic == nil, "\(context)")
                case (true, true, false): #expect(automatic == id, "\(context)")
                default:
                    if let following { #expect(automatic == following, "\(context)") }
                    else if repeats {
                        #expect(automatic == queue.nextRoundFirst && automatic != id && automatic != nil, "\(context)")
                    } else { #expect(automatic == nil, "\(context)") }
                }
                if let following { #expect(manual == following, "\(context)") }
                else { #expect(manual == (repeats ? queue.nextRoundFirst : nil), "\(context)") }
            }
            let one = Self.queue(1, options: options)
            #expect(one.successor(of: 1, .manual) == (repeats && !consume ? 1 : nil), "\(context)")
        }
    }

    @Test func thePredecessor() throws {
        var queue = Self.queue(3)
        #expect(queue.predecessor(of: 2) == 1)
        #expect(queue.predecessor(of: 1) == 1)  // restarts
        queue.setOptions(repeats: true, random: nil, single: nil, consume: nil)
        #expect(queue.predecessor(of: 1) == 3)
        #expect(queue.predecessor(of: 3) == 2)
        #expect(queue.predecessor(of: 99) == nil)
        #expect(Self.queue(1).predecessor(of: 1) == 1)
        #expect(Self.queue(1, options: QueueOptions(repeats: true)).predecessor(of: 1) == 1)

        let random = Self.queue(6, options: QueueOptions(random: true), current: 5)
        let order = Self.playOrder(random)
        #expect(random.predecessor(of: order[0]) == order[0])
        #expect(random.predecessor(of: order[3]) == order[2])
    }

    // MARK: Random

    @Test func randomPlaysTheCurrentEntryFirstAndEveryEntryOncePerRound() throws {
        var queue = Self.queue(20, current: 7, seed: 3)
        queue.setOptions(repeats: true, random: true, single: nil, consume: nil)
        #expect(queue.first == 7)
        #expect(queue.current == 7)
        var rounds: [[Int]] = []
        var playing = 7
        for _ in 0..<4 {
            var round = [playing]
            while round.count < 20 {
                let next = try #require(queue.successor(of: playing, .automatic))
                queue.advance(from: playing, to: next)
                playing = next
                round.append(next)
            }
            #expect(Set(round).count == 20, "an entry played twice in a round: \(round)")
            #expect(Self.playOrder(queue) == round)
            rounds.append(round)
            // The wrap: the next round starts with another entry and is a new shuffle.
            let next = try #require(queue.successor(of: playing, .automatic))
            #expect(next != playing)
            queue.advance(from: playing, to: next)
            #expect(Self.playOrder(queue).first == next)
            playing = next
            Self.expectConsistent(queue)
        }
        #expect(Set(rounds).count == rounds.count, "a round repeated the order of another")

        // Without repeat the round ends and nothing is current; the next play is a new order.
        queue.setOptions(repeats: false, random: nil, single: nil, consume: nil)
        Self.playToTheLast(&queue)
        let order = Self.playOrder(queue)
        let last = try #require(queue.current)
        #expect(queue.successor(of: last, .automatic) == nil)
        #expect(queue.advance(from: last, to: nil) == PlayQueue.Advanced(current: nil))
        #expect(queue.current == nil)
        #expect(Self.playOrder(queue) != order)
        Self.expectConsistent(queue)
    }

    @Test func randomWithoutACurrentEntryAndBackOff() throws {
        var queue = Self.queue(12, seed: 5)
        let version = queue.version
        queue.setOptions(repeats: nil, random: true, single: nil, consume: nil)
        #expect(queue.version == version + 1)
        #expect(Self.playOrder(queue) != Self.ids(queue))
        Self.expectConsistent(queue)
        let order = Self.playOrder(queue)
        queue.setOptions(repeats: nil, random: true, single: nil, consume: nil)  // on already: no reshuffle
        #expect(Self.playOrder(queue) == order)
        #expect(queue.version == version + 1)
        queue.setOptions(repeats: nil, random: false, single: nil, consume: nil)
        #expect(Self.playOrder(queue) == Array(1...12))
        #expect(queue.successor(of: 5, .automatic) == 6)
        Self.expectConsistent(queue)
    }

    @Test func addingInRandomModePlaysTheNewEntriesLaterInThisRound() throws {
        var queue = Self.queue(10, options: QueueOptions(random: true), current: 3, seed: 11)
        // Play a few, so some of the round is behind the current entry.
        for _ in 0..<4 {
            let current = queue.current!
            queue.advance(from: current, to: queue.successor(of: current, .automatic))
        }
        let current = try #require(queue.current)
        let played = Array(Self.playOrder(queue).prefix { $0 != current })
        #expect(played.count == 4)
        let added = try queue.add(Self.files((0..<30).map { "new\($0)" }), at: 2, afterCurrent: false)
        let order = Self.playOrder(queue)
        #expect(Array(order.prefix(5)) == played + [current])
        let currentIndex = order.firstIndex(of: current)!
        #expect(added.allSatisfy { order.firstIndex(of: $0.id)! > currentIndex })
        // Spread out, not all at the end.
        #expect(added.map(\.id) != Array(order.suffix(30)))
        Self.expectConsistent(queue)

        // Play next: right after the current entry, in the order given.
        let next = try queue.add(Self.files(["n1", "n2"]), at: nil, afterCurrent: true)
        #expect(Array(Self.playOrder(queue)[(currentIndex + 1)...(currentIndex + 2)]) == next.map(\.id))
        #expect(queue.successor(of: current, .automatic) == next[0].id)
        #expect(next.map(\.position) == [queue.position(of: current)! + 1, queue.position(of: current)! + 2])
        Self.expectConsistent(queue)

        // No current entry: anywhere.
        try queue.setCurrent(nil)
        _ = try queue.add(Self.files(["m1", "m2", "m3"]), at: 0, afterCurrent: true)
        Self.expectConsistent(queue)
    }

    @Test func removingInRandomModeKeepsTheOrderOfTheRest() throws {
        var queue = Self.queue(15, options: QueueOptions(random: true), current: 8, seed: 2)
        let order = Self.playOrder(queue)
        let gone = [order[3], order[14], order[7], 1, 2]
        #expect(try queue.remove(ids: gone, playing: true) == .untouched)
        #expect(Self.playOrder(queue) == order.filter { !gone.contains($0) })
        Self.expectConsistent(queue)
    }

    @Test func choosingAnEntryInRandomModeMovesItInThePlayOrder() throws {
        var queue = Self.queue(10, options: QueueOptions(random: true), current: 1, seed: 9)
        for _ in 0..<3 { queue.advance(from: queue.current!, to: queue.successor(of: queue.current!, .manual)) }
        let order = Self.playOrder(queue)
        let current = queue.current!
        #expect(order[3] == current)
        // Playing: the chosen entry goes right after the current one; the played stay played.
        let chosen = order[8]
        try queue.setCurrent(chosen)
        var expected = order.filter { $0 != chosen }
        expected.insert(chosen, at: 4)
        #expect(Self.playOrder(queue) == expected)
        #expect(queue.current == chosen)
        // Not playing: right before the current one, which still plays this round.
        let other = expected[1]
        try queue.setCurrent(other, currentWasPlaying: false)
        var before = expected.filter { $0 != other }
        before.insert(other, at: before.firstIndex(of: chosen)!)
        #expect(Self.playOrder(queue) == before)
        // No current entry: to the front.
        try queue.setCurrent(nil)
        let front = before[6]
        try queue.setCurrent(front)
        #expect(Self.playOrder(queue) == [front] + before.filter { $0 != front })
        Self.expectError(.notFound) { try queue.setCurrent(99) }
        Self.expectConsistent(queue)
    }

    @Test func previousInRandomModeWalksBackThePlayOrder() throws {
        var queue = Self.queue(8, options: QueueOptions(random: true), current: 2, seed: 6)
        for _ in 0..<4 { queue.advance(from: queue.current!, to: queue.successor(of: queue.current!, .manual)) }
        let order = Self.playOrder(queue)
        #expect(queue.current == order[4])
        for back in [3, 2, 1, 0, 0] {
            try queue.setCurrent(queue.predecessor(of: queue.current!), keepOrder: true)
            #expect(queue.current == order[back])
        }
        #expect(Self.playOrder(queue) == order)
        // Moving it instead would bring the second previous back to where the first started.
        var moving = Self.queue(8, options: QueueOptions(random: true), current: 2, seed: 6)
        for _ in 0..<4 { moving.advance(from: moving.current!, to: moving.successor(of: moving.current!, .manual)) }
        try moving.setCurrent(moving.predecessor(of: moving.current!))
        try moving.setCurrent(moving.predecessor(of: moving.current!))
        #expect(moving.current == order[4])
    }

    // MARK: The end of an entry

    @Test func consumeRemovesEachFinishedEntry() throws {
        var queue = Self.queue(3, options: QueueOptions(consume: true), current: 1)
        var version = queue.version
        #expect(queue.advance(from: 1, to: 2) == PlayQueue.Advanced(consumed: 1, current: 2))
        #expect(Self.ids(queue) == [2, 3])
        #expect(queue.version == version + 1)
        version = queue.version
        // player.next consumes too.
        #expect(queue.advance(from: 2, to: queue.successor(of: 2, .manual), .manual) == .init(consumed: 2, current: 3))
        #expect(queue.version == version + 1)
        // The last one: playback ends and the queue is empty.
        #expect(queue.successor(of: 3, .automatic) == nil)
        #expect(queue.advance(from: 3, to: nil) == .init(consumed: 3, current: nil))
        #expect(queue.length == 0)

        // With repeat: round and round, until one entry is left, which is not repeated.
        var repeating = Self.queue(3, options: QueueOptions(repeats: true, consume: true), current: 3)
        let next = repeating.successor(of: 3, .automatic)
        #expect(next == 1)
        repeating.advance(from: 3, to: next)
        #expect(Self.ids(repeating) == [1, 2])
        repeating.advance(from: 1, to: repeating.successor(of: 1, .automatic))
        #expect(repeating.successor(of: 2, .automatic) == nil)
        #expect(repeating.advance(from: 2, to: nil).consumed == 2)
        #expect(repeating.length == 0 && repeating.current == nil)
        Self.expectConsistent(repeating)
    }

    @Test func consumeInRandomMode() throws {
        var queue = Self.queue(6, options: QueueOptions(repeats: true, random: true, consume: true), current: 2, seed: 4)
        var playing = 2
        var heard: [Int] = []
        while let next = queue.successor(of: playing, .automatic) {
            heard.append(playing)
            #expect(queue.advance(from: playing, to: next).consumed == playing)
            playing = next
            Self.expectConsistent(queue)
        }
        heard.append(playing)
        #expect(heard.sorted() == Array(1...6))
        #expect(queue.length == 1)
    }

    @Test func singleStopsAfterTheEntryAndOneshotGoesBackToOff() throws {
        var queue = Self.queue(3, options: QueueOptions(single: .oneshot), current: 1)
        #expect(queue.summary.next == nil)
        let version = queue.version
        #expect(queue.advance(from: 1, to: nil) == .init(current: 1, singleWentOff: true))
        #expect(queue.options.single == .off)
        #expect(queue.current == 1)  // play starts it again
        #expect(queue.version == version + 1)
        #expect(queue.summary.next == 2)

        var single = Self.queue(3, options: QueueOptions(single: .on), current: 2)
        let before = single.version
        #expect(single.advance(from: 2, to: nil) == .init(current: 2))
        #expect(single.options.single == .on)
        #expect(single.version == before)  // nothing changed

        // Consumed: the entry that followed it is current.
        var consumed = Self.queue(3, options: QueueOptions(single: .oneshot, consume: true), current: 2)
        #expect(consumed.advance(from: 2, to: nil) == .init(consumed: 2, current: 3, singleWentOff: true))
        #expect(Self.ids(consumed) == [1, 3])
        var lastConsumed = Self.queue(3, options: QueueOptions(single: .on, consume: true), current: 3)
        #expect(lastConsumed.advance(from: 3, to: nil) == .init(consumed: 3, current: nil))

        // Oneshot with repeat repeats the entry and stays oneshot (MPD).
        var repeating = Self.queue(3, options: QueueOptions(repeats: true, single: .oneshot), current: 2)
        let repeatVersion = repeating.version
        #expect(repeating.successor(of: 2, .automatic) == 2)
        #expect(repeating.advance(from: 2, to: 2) == .init(current: 2))
        #expect(repeating.options.single == .oneshot)
        #expect(repeating.version == repeatVersion)

        // player.next past the last entry with single on ends playback like the end of the queue.
        var manual = Self.queue(2, options: QueueOptions(single: .oneshot), current: 2)
        #expect(manual.successor(of: 2, .manual) == nil)
        #expect(manual.advance(from: 2, to: nil, .manual) == .init(current: nil))
        #expect(manual.options.single == .oneshot)
    }

    @Test func theEndOfTheQueueLeavesNoCurrentEntry() {
        var queue = Self.queue(2, current: 1)
        queue.advance(from: 1, to: 2)
        #expect(queue.current == 2)
        #expect(queue.advance(from: 2, to: nil) == .init(current: nil))
        #expect(queue.current == nil)
        #expect(queue.first == 1)
        // An entry removed meanwhile: not consumed, the unknown `next` ends playback.
        var gone = Self.queue(3, options: QueueOptions(consume: true), current: 1)
        _ = try? gone.remove(ids: [1, 2], playing: true)
        #expect(gone.advance(from: 1, to: 2) == .init(current: nil))
        #expect(Self.ids(gone) == [3])
    }

    // MARK: Versions and restoring

    @Test func theVersionCountsChangesOnly() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        var version = queue.version
        func changed(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(queue.version == version + 1, "\(what)", sourceLocation: sourceLocation)
            version = queue.version
        }
        func unchanged(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(queue.version == version, "\(what)", sourceLocation: sourceLocation)
        }
        _ = try queue.add(Self.files(["a", "b", "c", "d"]), at: nil, afterCurrent: false); changed("add")
        _ = try? queue.add([Self.file("x")], at: 9, afterCurrent: false); unchanged("add out of range")
        try queue.setCurrent(2); changed("setCurrent")
        try queue.setCurrent(2); unchanged("setCurrent same")
        try? queue.setCurrent(50); unchanged("setCurrent unknown")
        try queue.move(id: 1, to: 3); changed("move")
        try? queue.move(id: 1, to: 4); unchanged("move out of range")
        _ = try queue.remove(ids: [4], playing: true); changed("remove")
        _ = try? queue.remove(ids: [4], playing: true); unchanged("remove unknown")
        _ = try queue.remove(ids: [], playing: true); unchanged("remove nothing")
        queue.setOptions(repeats: true, random: nil, single: nil, consume: nil); changed("repeat")
        queue.setOptions(repeats: true, random: false, single: .off, consume: false); unchanged("same options")
        queue.setOptions(repeats: nil, random: nil, single: .oneshot, consume: nil); changed("single")
        queue.setOptions(repeats: nil, random: nil, single: nil, consume: true); changed("consume")
        queue.setOptions(repeats: nil, random: true, single: nil, consume: nil); changed("random")
        queue.advance(from: 2, to: 3); changed("advance")
        queue.setDuration(3, format: nil, missing: false, for: 3); changed("duration")
        queue.updateSource(.file(path: "/elsewhere.flac"), for: 3); changed("source")
        try queue.setCurrent(nil); changed("no current")
        queue.clear(); changed("clear")
        queue.clear(); unchanged("clear empty")
    }

    @Test func restoringASavedQueue() throws {
        let saved = Self.files(["a", "b", "c", "d"])
        let queue = PlayQueue(restoring: saved, current: 2, options: QueueOptions(repeats: true), generator: SeededGenerator(seed: 1))
        #expect(Self.ids(queue) == [1, 2, 3, 4])
        #expect(Self.names(queue) == ["a", "b", "c", "d"])
        #expect(queue.current == 3)
        #expect(queue.options == QueueOptions(repeats: true))
        #expect(queue.version == 1)
        #expect(queue.summary == QueueSummary(
            version: 1, entriesVersion: 1, length: 4, current: 3, next: 4, options: QueueOptions(repeats: true)))
        #expect(queue.changes(since: 0).map(\.id) == [1, 2, 3, 4])
        #expect(queue.changes(since: 1).isEmpty)
        // A client that saw a longer history before the restart gets everything (MPD).
        #expect(queue.changes(since: 57).map(\.id) == [1, 2, 3, 4])
        Self.expectConsistent(queue)

        var random = PlayQueue(
            restoring: saved, current: 3, options: QueueOptions(random: true, single: .on), generator: SeededGenerator(seed: 2))
        #expect(random.current == 4)
        #expect(random.first == 4)
        Self.expectConsistent(random)
        #expect((try random.add([Self.file("e")], at: nil, afterCurrent: false)).first?.id == 5)

        let outside = PlayQueue(restoring: saved, current: 4, options: QueueOptions())
        #expect(outside.current == nil)
        let empty = PlayQueue(restoring: [], current: 0, options: QueueOptions(random: true))
        #expect(empty.length == 0 && empty.current == nil && empty.first == nil)
        Self.expectConsistent(empty)
    }

    // MARK: Swapping, moving a range, shuffling

    /// The `ReelError` `body` throws, nil when it throws none.
    static func thrown(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> ReelError? {
        do {
            try body()
            return nil
        } catch let error as ReelError {
            return error
        } catch {
            Issue.record("\(error) is not a ReelError", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func swapping() throws {
        var queue = Self.queue(5, current: 2)
        try queue.swap(id: 2, with: 5)
        #expect(Self.ids(queue) == [1, 5, 3, 4, 2])
        #expect(queue.current == 2)
        // The play order is the queue order: the current entry is the last now.
        #expect(queue.successor(of: 2, .automatic) == nil)
        #expect(queue.successor(of: 5, .automatic) == 3)
        try queue.swap(id: 4, with: 1)
        #expect(Self.ids(queue) == [4, 5, 3, 1, 2])
        let version = queue.version
        try queue.swap(id: 3, with: 3)
        #expect(queue.version == version, "an entry swapped with itself changes nothing")
        #expect(Self.thrown { try queue.swap(id: 9, with: 1) } == ReelError(.notFound, "no queue entry with id 9"))
        #expect(Self.thrown { try queue.swap(id: 1, with: 12) } == ReelError(.notFound, "no queue entry with id 12"))
        #expect(queue.version == version)
        #expect(Self.ids(queue) == [4, 5, 3, 1, 2])
        Self.expectConsistent(queue)
    }

    @Test func swappingInRandomModeKeepsThePlayOrder() throws {
        var queue = Self.queue(10, options: QueueOptions(repeats: true, random: true), current: 4, seed: 12)
        for _ in 0..<3 { queue.advance(from: queue.current!, to: queue.successor(of: queue.current!, .manual)) }
        let current = try #require(queue.current)
        let order = Self.playOrder(queue)
        let next = queue.successor(of: current, .automatic)
        let nextRound = queue.nextRoundFirst
        try queue.swap(id: current, with: order[9])
        try queue.swap(id: order[0], with: order[5])
        #expect(Self.playOrder(queue) == order)
        #expect(queue.current == current)
        #expect(queue.successor(of: current, .automatic) == next)
        #expect(queue.nextRoundFirst == nextRound)
        Self.expectConsistent(queue)
    }

    @Test func movingARange() throws {
        var queue = Self.queue(8, current: 3)
        try queue.move(range: 1..<4, to: 4)
        #expect(Self.ids(queue) == [1, 5, 6, 7, 2, 3, 4, 8])
        #expect(queue.current == 3)
        // The play order is the queue order.
        #expect(queue.successor(of: 3, .automatic) == 4)
        #expect(queue.successor(of: 7, .automatic) == 2)
        try queue.move(range: 4..<7, to: 1)
        #expect(Self.ids(queue) == Array(1...8))
        try queue.move(range: 5..<8, to: 0)
        #expect(Self.ids(queue) == [6, 7, 8, 1, 2, 3, 4, 5])
        try queue.move(range: 0..<3, to: 5)  // the last valid target: length - count
        #expect(Self.ids(queue) == Array(1...8))
        try queue.move(range: 2..<3, to: 7)  // one entry, as move(id:to:)
        #expect(Self.ids(queue) == [1, 2, 4, 5, 6, 7, 8, 3])
        Self.expectConsistent(queue)

        let version = queue.version
        try queue.move(range: 2..<5, to: 2)
        #expect(queue.version == version, "a range moved to where it is changes nothing")
        #expect(Self.thrown { try queue.move(range: 2..<5, to: 6) } == ReelError(
            .outOfRange, "cannot move 3 entries to position 6: the queue has 8 entries (0 to 5 are valid)"))
        #expect(Self.thrown { try queue.move(range: 2..<5, to: -1) }?.reason == .outOfRange)
        #expect(Self.thrown { try queue.move(range: 6..<9, to: 0) } == ReelError(
            .outOfRange, "cannot move positions 6 to 8: the queue has 8 entries"))
        #expect(Self.thrown { try queue.move(range: -1..<2, to: 3) }?.message.contains("-1") == true)
        #expect(Self.thrown { try queue.move(range: 3..<3, to: 0) } == ReelError(
            .outOfRange, "cannot move the empty range 3..<3: it holds no entries"))
        #expect(Self.thrown { try queue.move(range: 0..<8, to: 1) }?.reason == .outOfRange)
        #expect(queue.version == version)
        #expect(Self.ids(queue) == [1, 2, 4, 5, 6, 7, 8, 3])
        var empty = PlayQueue()
        #expect(Self.thrown { try empty.move(range: 0..<1, to: 0) }?.reason == .outOfRange)
    }

    @Test func movingARangeInRandomModeKeepsThePlayOrder() throws {
        var queue = Self.queue(10, options: QueueOptions(random: true), current: 6, seed: 14)
        let order = Self.playOrder(queue)
        try queue.move(range: 3..<7, to: 0)
        try queue.move(range: 0..<2, to: 8)
        #expect(Self.ids(queue) == [6, 7, 1, 2, 3, 8, 9, 10, 4, 5])
        #expect(Self.playOrder(queue) == order)
        #expect(queue.current == 6)
        Self.expectConsistent(queue)
    }

    @Test func shufflingWhilePlayingKeepsTheCurrentEntryFirstInTheRange() throws {
        var queue = Self.queue(10, current: 5, seed: 3)
        let version = queue.version
        try queue.shuffle(range: nil, playing: true)
        #expect(queue.version == version + 1)
        #expect(queue.current == 5)
        #expect(queue.position(of: 5) == 0)
        #expect(Set(Self.ids(queue)) == Set(1...10))
        #expect(Self.ids(queue) != [5, 2, 3, 4, 1, 6, 7, 8, 9, 10], "only the current entry moved")
        // Random off: the rest of the queue follows the current entry.
        #expect(queue.successor(of: 5, .automatic) == queue.id(at: 1))
        Self.expectConsistent(queue)

        // A range around the current entry: it goes to the range's start; outside, nothing moves.
        var ranged = Self.queue(10, current: 5, seed: 4)
        try ranged.shuffle(range: 2..<8, playing: true)
        let ids = Self.ids(ranged)
        #expect(Array(ids[0..<2]) == [1, 2] && Array(ids[8...]) == [9, 10])
        #expect(ids[2] == 5)
        #expect(Set(ids[2..<8]) == Set(3...8))
        #expect(ranged.current == 5)
        // A range without it: it stays where it is.
        try ranged.shuffle(range: 5..<10, playing: true)
        let after = Self.ids(ranged)
        #expect(ranged.current == 5 && ranged.position(of: 5) == 2)
        #expect(Array(after[0..<5]) == Array(ids[0..<5]))
        #expect(Set(after[5...]) == Set(ids[5...]))
        Self.expectConsistent(ranged)
    }

    @Test func shufflingWhileStoppedLeavesNoCurrentEntry() throws {
        var queue = Self.queue(6, current: 2, seed: 5)
        try queue.shuffle(range: 3..<6, playing: false)
        #expect(queue.current == nil)
        #expect(Array(Self.ids(queue)[0..<3]) == [1, 2, 3])
        #expect(Set(Self.ids(queue)[3...]) == [4, 5, 6])
        #expect(queue.first == 1)
        Self.expectConsistent(queue)
    }

    @Test func shufflingClipsTheEndAndNeedsTwoEntries() throws {
        var queue = Self.queue(6, current: 2, seed: 6)
        let version = queue.version
        // Fewer than two entries: nothing happens, not even to the current entry.
        try queue.shuffle(range: 4..<5, playing: false)
        try queue.shuffle(range: 5..<100, playing: false)
        try queue.shuffle(range: 6..<9, playing: false)
        try queue.shuffle(range: 3..<3, playing: false)
        #expect(queue.version == version && queue.current == 2)
        // An end past the queue is clipped to it.
        try queue.shuffle(range: 3..<100, playing: true)
        #expect(queue.version == version + 1)
        #expect(Array(Self.ids(queue)[0..<3]) == [1, 2, 3])
        #expect(Set(Self.ids(queue)[3...]) == [4, 5, 6])
        #expect(queue.current == 2)
        // A start outside the queue.
        #expect(Self.thrown { try queue.shuffle(range: 7..<9, playing: true) } == ReelError(
            .outOfRange, "cannot shuffle from position 7: the queue has 6 entries (0 to 6 are valid)"))
        #expect(Self.thrown { try queue.shuffle(range: -1..<3, playing: true) }?.reason == .outOfRange)
        #expect(queue.version == version + 1)
        var empty = PlayQueue()
        try empty.shuffle(range: nil, playing: false)
        #expect(empty.version == 0)
        Self.expectConsistent(queue)
    }

    @Test func shufflingInRandomModeKeepsThePlayOrder() throws {
        var queue = Self.queue(12, options: QueueOptions(repeats: true, random: true), current: 7, seed: 13)
        for _ in 0..<4 { queue.advance(from: queue.current!, to: queue.successor(of: queue.current!, .manual)) }
        let current = try #require(queue.current)
        let order = Self.playOrder(queue)
        let next = queue.successor(of: current, .automatic)
        let nextRound = queue.nextRoundFirst
        let positions = Self.ids(queue)
        try queue.shuffle(range: nil, playing: true)
        #expect(Self.ids(queue) != positions)
        #expect(queue.position(of: current) == 0)
        #expect(queue.current == current)
        #expect(Self.playOrder(queue) == order)
        #expect(queue.successor(of: current, .automatic) == next)
        #expect(queue.nextRoundFirst == nextRound)
        Self.expectConsistent(queue)
        // Stopped: nothing is current; play starts at the first of the play order.
        try queue.shuffle(range: 2..<12, playing: false)
        #expect(queue.current == nil)
        #expect(queue.first == order.first)
        #expect(Self.playOrder(queue) == order)
        Self.expectConsistent(queue)
    }

    // MARK: Change versions (MPD's plchanges)

    /// The ids `changes(since:)` reports, in position order; each entry as the queue has it.
    static func changed(_ queue: PlayQueue, since version: Int, sourceLocation: SourceLocation = #_sourceLocation) -> [Int] {
        let changes = queue.changes(since: version)
        #expect(changes.allSatisfy { queue.entry(id: $0.id) == $0 }, sourceLocation: sourceLocation)
        #expect(changes.map(\.position) == changes.map(\.position).sorted(), sourceLocation: sourceLocation)
        return changes.map(\.id)
    }

    @Test func theEntriesVersionCountsChangesOfTheEntriesOnly() throws {
        var queue = PlayQueue(generator: SeededGenerator(seed: 1))
        var version = queue.entriesVersion
        func changed(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(queue.entriesVersion == version + 1, "\(what)", sourceLocation: sourceLocation)
            #expect(queue.summary.entriesVersion == queue.entriesVersion, sourceLocation: sourceLocation)
            version = queue.entriesVersion
        }
        func unchanged(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(queue.entriesVersion == version, "\(what)", sourceLocation: sourceLocation)
        }
        _ = try queue.add(Self.files(["a", "b", "c", "d", "e"]), at: nil, afterCurrent: false); changed("add")
        _ = try? queue.add([Self.file("x")], at: 9, afterCurrent: false); unchanged("add out of range")
        try queue.setCurrent(2); unchanged("setCurrent")
        try queue.move(id: 1, to: 3); changed("move")
        try? queue.move(id: 1, to: 9); unchanged("move out of range")
        try queue.move(id: 1, to: 3); unchanged("move to where it is")
        try queue.swap(id: 1, with: 3); changed("swap")
        try queue.swap(id: 1, with: 1); unchanged("swap with itself")
        try? queue.swap(id: 1, with: 99); unchanged("swap unknown")
        try queue.move(range: 0..<2, to: 2); changed("move range")
        try queue.move(range: 2..<4, to: 2); unchanged("move range to where it is")
        try? queue.move(range: 2..<9, to: 0); unchanged("move range out of range")
        try queue.shuffle(range: nil, playing: true); changed("shuffle")
        try queue.shuffle(range: 0..<1, playing: true); unchanged("shuffle one entry")
        try? queue.shuffle(range: 8..<9, playing: true); unchanged("shuffle out of range")
        _ = try queue.remove(ids: [4], playing: true); changed("remove")
        _ = try? queue.remove(ids: [4], playing: true); unchanged("remove unknown")
        _ = try queue.remove(ids: [], playing: true); unchanged("remove nothing")
        queue.setOptions(repeats: true, random: nil, single: nil, consume: nil); unchanged("repeat")
        queue.setOptions(repeats: nil, random: nil, single: .oneshot, consume: nil); unchanged("single")
        queue.setOptions(repeats: nil, random: nil, single: .off, consume: nil); unchanged("single off")
        queue.setOptions(repeats: nil, random: true, single: nil, consume: nil); unchanged("random")
        queue.advance(from: 2, to: queue.successor(of: 2, .automatic)); unchanged("advance")
        Self.playToTheLast(&queue)
        let last = try #require(queue.current)
        queue.advance(from: last, to: queue.successor(of: last, .automatic)); unchanged("a new round")
        try queue.setCurrent(queue.predecessor(of: queue.current!), keepOrder: true); unchanged("previous")
        queue.setOptions(repeats: nil, random: false, single: nil, consume: true); unchanged("random off, consume")
        let current = try #require(queue.current)
        queue.advance(from: current, to: queue.successor(of: current, .automatic)); changed("consumed")
        queue.setDuration(3, format: nil, missing: false, for: queue.current!); changed("duration")
        queue.setDuration(3, format: nil, missing: false, for: queue.current!); unchanged("same duration")
        queue.setDuration(3, format: nil, missing: true, for: queue.current!); changed("missing")
        queue.updateSource(.file(path: "/elsewhere.flac"), for: queue.current!); changed("source")
        try queue.setCurrent(nil); unchanged("no current")
        queue.clear(); changed("clear")
        queue.clear(); unchanged("clear empty")
        #expect(queue.version > queue.entriesVersion)
    }

    @Test func addingMarksTheNewEntriesAndTheOnesThatShift() throws {
        var queue = Self.queue(5)
        let start = queue.entriesVersion
        let added = try queue.add(Self.files(["x", "y"]), at: 2, afterCurrent: false)
        #expect(Self.changed(queue, since: start) == [6, 7, 3, 4, 5])
        #expect(queue.changes(since: start).map(\.position) == [2, 3, 4, 5, 6])
        #expect(added.map(\.id) == [6, 7])
        #expect(Self.changed(queue, since: queue.entriesVersion).isEmpty)
        // Appended: only the new entry.
        let appended = queue.entriesVersion
        _ = try queue.add([Self.file("z")], at: nil, afterCurrent: false)
        #expect(Self.changed(queue, since: appended) == [8])
        // Since an older version: what changed since then, together.
        #expect(Self.changed(queue, since: start) == [6, 7, 3, 4, 5, 8])
        // Since before anything: every entry.
        #expect(Self.changed(queue, since: 0) == Self.ids(queue))
        #expect(Self.changed(queue, since: -5) == Self.ids(queue))
    }

    @Test func removingMarksTheEntriesThatMoveUp() throws {
        var queue = Self.queue(6, current: 1)
        let version = queue.entriesVersion
        _ = try queue.remove(ids: [4, 2], playing: true)
        #expect(Self.changed(queue, since: version) == [3, 5, 6])
        #expect(queue.changes(since: version).map(\.position) == [1, 2, 3])
        // The last entry: nothing moves (a client learns from the length that it went).
        let beforeLast = queue.entriesVersion
        _ = try queue.remove(ids: [6], playing: true)
        #expect(queue.entriesVersion == beforeLast + 1)
        #expect(Self.changed(queue, since: beforeLast).isEmpty)
        #expect(queue.length == 3)
    }

    @Test func movingAndSwappingMarkEveryEntryWhosePositionChanged() throws {
        var queue = Self.queue(8)
        var version = queue.entriesVersion
        try queue.move(id: 2, to: 5)
        #expect(Self.ids(queue) == [1, 3, 4, 5, 6, 2, 7, 8])
        #expect(Self.changed(queue, since: version) == [3, 4, 5, 6, 2])
        version = queue.entriesVersion
        try queue.move(range: 5..<7, to: 1)
        #expect(Self.ids(queue) == [1, 2, 7, 3, 4, 5, 6, 8])
        #expect(Self.changed(queue, since: version) == [2, 7, 3, 4, 5, 6])
        version = queue.entriesVersion
        try queue.move(range: 1..<3, to: 6)
        #expect(Self.ids(queue) == [1, 3, 4, 5, 6, 8, 2, 7])
        #expect(Self.changed(queue, since: version) == [3, 4, 5, 6, 8, 2, 7])
        version = queue.entriesVersion
        try queue.swap(id: 1, with: 8)
        #expect(Self.changed(queue, since: version) == [8, 1])
    }

    @Test func shufflingMarksTheWholeRange() throws {
        var queue = Self.queue(8, current: 4, seed: 3)
        let version = queue.entriesVersion
        try queue.shuffle(range: 2..<6, playing: true)
        #expect(Self.changed(queue, since: version) == Array(Self.ids(queue)[2..<6]))
        #expect(queue.changes(since: version).map(\.position) == [2, 3, 4, 5])
        #expect(queue.id(at: 2) == 4)
    }

    @Test func clearingAndConsumingMarkWhatMoved() throws {
        var queue = Self.queue(3)
        let beforeClear = queue.entriesVersion
        queue.clear()
        #expect(queue.entriesVersion == beforeClear + 1)
        #expect(queue.changes(since: beforeClear).isEmpty)
        let added = try queue.add(Self.files(["a", "b"]), at: nil, afterCurrent: false)
        // A client that saw the queue before the clear gets every entry.
        #expect(Self.changed(queue, since: beforeClear) == added.map(\.id))

        var consuming = Self.queue(4, options: QueueOptions(consume: true), current: 1)
        var version = consuming.entriesVersion
        consuming.advance(from: 1, to: 2)
        #expect(Self.changed(consuming, since: version) == [2, 3, 4])
        // The last one consumed: nothing moves.
        try consuming.setCurrent(4)
        version = consuming.entriesVersion
        consuming.advance(from: 4, to: nil)
        #expect(consuming.entriesVersion == version + 1)
        #expect(Self.changed(consuming, since: version).isEmpty)
        #expect(Self.ids(consuming) == [2, 3])
    }

    @Test func aChangedLengthFormatOrSourceMarksTheEntry() {
        var queue = Self.queue(3)
        var version = queue.entriesVersion
        queue.setDuration(10, format: nil, missing: false, for: 2)
        #expect(Self.changed(queue, since: version) == [2])
        version = queue.entriesVersion
        queue.setDuration(10, format: nil, missing: false, for: 2)
        queue.setDuration(1, format: nil, missing: false, for: 99)
        #expect(queue.entriesVersion == version)
        queue.setDuration(nil, format: AudioFormat(codec: "flac", sampleRate: 48000, channels: 2), missing: true, for: 3)
        #expect(Self.changed(queue, since: version) == [3])
        version = queue.entriesVersion
        queue.updateSource(.item(id: "u", path: "/Talks/New", name: "New"), for: 1)
        #expect(Self.changed(queue, since: version) == [1])
    }

    @Test func theCurrentEntryAndTheOptionsMarkNothing() throws {
        var queue = Self.queue(6, seed: 9)
        let entriesVersion = queue.entriesVersion
        let version = queue.version
        try queue.setCurrent(3)
        queue.setOptions(repeats: true, random: true, single: .on, consume: nil)
        queue.advance(from: 3, to: queue.successor(of: 3, .manual), .manual)
        try queue.setCurrent(queue.predecessor(of: queue.current!), keepOrder: true)
        queue.setOptions(repeats: nil, random: false, single: .off, consume: true)
        try queue.setCurrent(nil)
        #expect(queue.version == version + 6)
        #expect(queue.entriesVersion == entriesVersion)
        #expect(queue.summary.entriesVersion == entriesVersion)
        #expect(queue.changes(since: entriesVersion).isEmpty)
    }

    @Test func entriesByPosition() {
        let queue = Self.queue(3)
        #expect(queue.entry(at: 1) == queue.entry(id: 2))
        #expect(queue.entry(at: 1)?.position == 1)
        #expect(queue.entry(at: 3) == nil && queue.entry(at: -1) == nil)
    }

    /// Random edits of every kind against a plain array of ids: the new operations agree with it,
    /// and `changes(since:)` reports exactly the entries that are new or moved (for a shuffle, the
    /// whole range); `entriesVersion` goes up exactly when one of those or the length changed.
    @Test(arguments: [UInt64(1), 2, 3])
    func aRandomWalkReportsTheEntriesThatChanged(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed &* 104_729)
        var queue = PlayQueue(generator: SeededGenerator(seed: seed))
        var model: [Int] = []
        var nextID = 1
        for step in 0..<500 {
            let context = "seed \(seed) step \(step)"
            let before = Dictionary(uniqueKeysWithValues: queue.allEntries.map { ($0.id, $0.position) })
            let version = queue.entriesVersion
            var shuffled: Range<Int>?
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1:
                let count = Int.random(in: 1...3, using: &rng)
                let position = Int.random(in: 0...model.count, using: &rng)
                _ = try queue.add((0..<count).map { Self.file("w\(step)-\($0)") }, at: position, afterCurrent: false)
                model.insert(contentsOf: nextID..<(nextID + count), at: position)
                nextID += count
            case 2:
                guard !model.isEmpty else { continue }
                let gone = (0..<Int.random(in: 1...2, using: &rng)).map { _ in model.randomElement(using: &rng)! }
                _ = try queue.remove(ids: gone, playing: true)
                model.removeAll { gone.contains($0) }
            case 3:
                guard let id = model.randomElement(using: &rng) else { continue }
                let to = Int.random(in: 0..<model.count, using: &rng)
                try queue.move(id: id, to: to)
                model.removeAll { $0 == id }
                model.insert(id, at: to)
            case 4:
                guard let a = model.randomElement(using: &rng), let b = model.randomElement(using: &rng) else { continue }
                try queue.swap(id: a, with: b)
                model.swapAt(model.firstIndex(of: a)!, model.firstIndex(of: b)!)
            case 5:
                guard !model.isEmpty else { continue }
                let start = Int.random(in: 0..<model.count, using: &rng)
                let range = start..<Int.random(in: (start + 1)...model.count, using: &rng)
                let to = Int.random(in: 0...(model.count - range.count), using: &rng)
                try queue.move(range: range, to: to)
                let moved = Array(model[range])
                model.removeSubrange(range)
                model.insert(contentsOf: moved, at: to)
            case 6:
                let start = Int.random(in: 0...model.count, using: &rng)
                let range = start..<Int.random(in: start...(model.count + 2), using: &rng)
                let playing = Bool.random(using: &rng)
                let current = queue.current
                try queue.shuffle(range: range, playing: playing)
                let clipped = start..<min(range.upperBound, model.count)
                let ids = Self.ids(queue)
                if clipped.count >= 2 {
                    shuffled = clipped
                    #expect(Array(ids[..<start]) == Array(model[..<start]), "\(context)")
                    #expect(Array(ids[clipped.upperBound...]) == Array(model[clipped.upperBound...]), "\(context)")
                    #expect(Set(ids[clipped]) == Set(model[clipped]), "\(context)")
                    if playing, let current, clipped.contains(model.firstIndex(of: current)!) {
                        #expect(ids[start] == current, "\(context)")
                    }
                    #expect(queue.current == (playing ? current : nil), "\(context)")
                    model = ids
                } else {
                    #expect(queue.current == current, "\(context)")
                }
            case 7:
                queue.setOptions(
                    repeats: Bool.random(using: &rng), random: Bool.random(using: &rng), single: nil,
                    consume: Int.random(in: 0..<3, using: &rng) == 0)
            case 8:
                try queue.setCurrent(model.randomElement(using: &rng))
            default:
                guard let current = queue.current else { continue }
                let next = queue.successor(of: current, .automatic)
                if let consumed = queue.advance(from: current, to: next).consumed { model.removeAll { $0 == consumed } }
            }
            #expect(Self.ids(queue) == model, "\(context)")
            let expected = queue.allEntries.filter { entry in
                before[entry.id] != entry.position || shuffled?.contains(entry.position) == true
            }.map(\.id)
            #expect(Self.changed(queue, since: version) == expected, "\(context)")
            let somethingChanged = !expected.isEmpty || queue.length != before.count
            #expect(queue.entriesVersion == version + (somethingChanged ? 1 : 0), "\(context)")
            Self.expectConsistent(queue)
        }
    }

    // MARK: Priorities

    /// The priorities of the ids in `order`, in that order.
    static func priorities(_ queue: PlayQueue, _ order: [Int]) -> [Int] {
        order.map { queue.entry(id: $0)!.priority }
    }

    @Test func aPriorityIsKeptAndChangesNothingElseWithRandomOff() throws {
        var queue = Self.queue(6, current: 2)
        #expect(queue.allEntries.allSatisfy { $0.priority == 0 })
        let (version, entriesVersion) = (queue.version, queue.entriesVersion)
        try queue.setPriority(7, ids: [5, 3, 5])
        #expect(queue.entry(id: 3)?.priority == 7 && queue.entry(id: 5)?.priority == 7)
        #expect(Self.playOrder(queue) == Array(1...6), "random off: the queue order plays")
        #expect(queue.successor(of: 2, .automatic) == 3)
        #expect(queue.version == version + 1 && queue.entriesVersion == entriesVersion + 1)
        #expect(queue.changes(since: entriesVersion).map(\.id) == [3, 5], "a new priority is a change of the entry")
        // The same priority again: nothing changes.
        try queue.setPriority(7, ids: [3])
        #expect(queue.version == version + 1)
        // All or nothing.
        Self.expectError(.notFound) { try queue.setPriority(9, ids: [1, 99]) }
        Self.expectError(.outOfRange) { try queue.setPriority(256, ids: [1]) }
        Self.expectError(.outOfRange) { try queue.setPriority(-1, ids: [1]) }
        #expect(queue.entry(id: 1)?.priority == 0 && queue.version == version + 1)
        try queue.setPriority(255, ids: [])
        #expect(queue.version == version + 1)
        Self.expectConsistent(queue)
    }

    /// MPD: each shuffle groups the entries by priority, highest first, each group shuffled.
    @Test(arguments: [UInt64(1), 2, 3])
    func randomPlaysHigherPrioritiesFirstEveryRound(seed: UInt64) throws {
        var queue = Self.queue(12, seed: seed)
        try queue.setPriority(200, ids: [4, 9, 11])
        try queue.setPriority(100, ids: [1, 2, 6, 12])
        queue.setOptions(repeats: true, random: true, single: nil, consume: nil)
        let expected = [200, 200, 200, 100, 100, 100, 100, 0, 0, 0, 0, 0]
        #expect(Self.priorities(queue, Self.playOrder(queue)) == expected)
        Self.expectConsistent(queue)
        // Play a round; the next one is a new shuffle, grouped again.
        var playing = try #require(queue.first)
        try queue.setCurrent(playing)
        var rounds: [[Int]] = []
        for _ in 0..<3 {
            var round = [playing]
            for _ in 1..<12 {
                let next = try #require(queue.successor(of: playing, .automatic))
                queue.advance(from: playing, to: next)
                playing = next
                round.append(next)
            }
            #expect(Self.priorities(queue, round) == expected, "round \(rounds.count)")
            rounds.append(round)
            let next = try #require(queue.successor(of: playing, .automatic))
            queue.advance(from: playing, to: next)
            playing = next
            Self.expectConsistent(queue)
        }
        #expect(Set(rounds.map { Array($0.prefix(3)) }).count > 1 || Set(rounds).count > 1, "groups are shuffled")
        // Random off: the queue order again, priorities or not.
        queue.setOptions(repeats: nil, random: false, single: nil, consume: nil)
        #expect(Self.playOrder(queue) == Array(1...12))
    }

    @Test func aNewPriorityMovesTheEntryAmongThoseStillToPlay() throws {
        var queue = Self.queue(10, options: QueueOptions(random: true), seed: 4)
        var order = Self.playOrder(queue)
        try queue.setCurrent(order[0])
        for _ in 0..<4 { queue.advance(from: queue.current!, to: queue.successor(of: queue.current!, .manual), .manual) }
        order = Self.playOrder(queue)
        let current = try #require(queue.current)
        #expect(order[4] == current)

        // Still to play: it comes right after the current entry (the only one of its priority).
        let later = order[8]
        try queue.setPriority(10, ids: [later])
        #expect(queue.successor(of: current, .automatic) == later)
        #expect(Array(Self.playOrder(queue).prefix(5)) == Array(order.prefix(5)), "what played stays played")

        // Played already, and now above the current entry: it plays again, first.
        let played = order[1]
        try queue.setPriority(20, ids: [played])
        #expect(queue.successor(of: current, .automatic) == played)
        let now = Self.playOrder(queue)
        #expect(now.firstIndex(of: current)! == 3, "the current entry keeps its place among what played")
        // Played already, not above the current entry's priority (after a raise of the current
        // one): it stays where it is.
        try queue.setPriority(50, ids: [current])
        #expect(Self.playOrder(queue) == now, "the current entry does not move")
        let other = order[0]
        try queue.setPriority(30, ids: [other])
        #expect(Self.playOrder(queue) == now, "not above the current entry: stays played")

        // Lowered: it goes back among the entries of its new priority.
        try queue.setPriority(0, ids: [played])
        let lowered = Self.playOrder(queue)
        let after = lowered.drop { $0 != current }.dropFirst()
        #expect(after.first == later)
        #expect(Self.priorities(queue, Array(after)) == Self.priorities(queue, Array(after)).sorted(by: >))
        Self.expectConsistent(queue)
    }

    @Test func addedEntriesPlayAfterThoseOfAHigherPriority() throws {
        var queue = Self.queue(8, options: QueueOptions(random: true), current: 2, seed: 5)
        let order = Self.playOrder(queue)
        #expect(order[0] == 2)
        try queue.setPriority(9, ids: [order[5], order[6]])
        let added = try queue.add(Self.files((0..<20).map { "n\($0)" }), at: nil, afterCurrent: false)
        let now = Self.playOrder(queue)
        let after = Array(now.dropFirst())
        #expect(Set(after.prefix(2)) == [order[5], order[6]], "the prioritized entries still play first: \(now)")
        #expect(added.allSatisfy { now.firstIndex(of: $0.id)! > 2 })
        // "Play next" is right after the current entry, whatever the priorities.
        let next = try queue.add([Self.file("next")], at: nil, afterCurrent: true)
        #expect(queue.successor(of: 2, .automatic) == next[0].id)
        Self.expectConsistent(queue)
    }

    @Test func removingAndClearingForgetPriorities() throws {
        var queue = Self.queue(5, options: QueueOptions(random: true), current: 1, seed: 6)
        try queue.setPriority(3, ids: [2, 4])
        #expect(queue.prioritized == 2)
        _ = try queue.remove(ids: [4], playing: true)
        #expect(queue.prioritized == 1)
        Self.expectConsistent(queue)
        queue.clear()
        #expect(queue.prioritized == 0)
        let added = try queue.add([Self.file("a")], at: nil, afterCurrent: false)
        #expect(added[0].priority == 0)
        Self.expectConsistent(queue)
    }

    // MARK: Scale and a random walk

    /// Each command on a queue of 10,000 entries, checked for consistency after each (the time
    /// each takes is measured outside the tests).
    @Test func tenThousandEntries() throws {
        var queue = Self.queue(10_000, current: 5_000, seed: 8)
        Self.expectConsistent(queue)
        let front = try queue.add([Self.file("front")], at: 0, afterCurrent: false)
        #expect(front.first?.position == 0 && queue.position(of: 10_000) == 10_000)
        let thousand = try queue.add(Self.files((0..<1000).map { "k\($0)" }), at: 4_000, afterCurrent: false)
        #expect(thousand.last?.position == 4_999)
        #expect(try queue.remove(ids: [5_000], playing: true) == .removed(successor: 5_001))
        let scattered = stride(from: 3, through: 9_903, by: 100).map { $0 }
        #expect(try queue.remove(ids: scattered, playing: true) == .untouched)
        try queue.move(id: 1, to: queue.length - 1)
        #expect(queue.entries(start: 5_000, count: 50).count == 50)
        Self.expectConsistent(queue)
        queue.setOptions(repeats: nil, random: true, single: nil, consume: nil)
        #expect(queue.first == 5_001)
        Self.expectConsistent(queue)
        _ = try queue.add(Self.files((0..<1000).map { "r\($0)" }), at: nil, afterCurrent: false)
        _ = try queue.remove(ids: Array(Self.playOrder(queue).suffix(100)), playing: true)
        Self.expectConsistent(queue)
        #expect(queue.length == 10_000 + 1 + 1000 - 1 - 100 + 1000 - 100)
    }

    /// Random commands against a plain array of ids: the queue order, the ids and the current
    /// entry always agree with it.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func aRandomWalkAgreesWithAPlainArray(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed &* 7919)
        var queue = PlayQueue(generator: SeededGenerator(seed: seed))
        var model: [Int] = []
        var nextID = 1
        for step in 0..<600 {
            let context = "seed \(seed) step \(step)"
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1, 2:
                let count = Int.random(in: 1...4, using: &rng)
                let afterCurrent = Int.random(in: 0..<4, using: &rng) == 0
                let position = Int.random(in: 0...model.count, using: &rng)
                let added = try queue.add(
                    (0..<count).map { Self.file("s\(step)-\($0)") }, at: position, afterCurrent: afterCurrent)
                let at = afterCurrent ? (queue.current.flatMap { model.firstIndex(of: $0) }.map { $0 + 1 } ?? model.count) : position
                model.insert(contentsOf: nextID..<(nextID + count), at: at)
                #expect(added.map(\.id) == Array(nextID..<(nextID + count)), "\(context)")
                nextID += count
            case 3, 4:
                guard !model.isEmpty else { continue }
                let gone = (0..<Int.random(in: 1...3, using: &rng)).map { _ in model.randomElement(using: &rng)! }
                let current = queue.current
                let successor = current.flatMap { queue.successor(of: $0, .manual) }
                let removal = try queue.remove(ids: gone, playing: true)
                model.removeAll { gone.contains($0) }
                if let current, gone.contains(current) {
                    guard case .removed(let follower) = removal else {
                        Issue.record("\(context): the current entry was removed")
                        continue
                    }
                    if let successor, !gone.contains(successor) { #expect(follower == successor, "\(context)") }
                    #expect(follower == queue.current, "\(context)")
                } else {
                    #expect(removal == .untouched, "\(context)")
                }
            case 5:
                guard let id = model.randomElement(using: &rng) else { continue }
                let to = Int.random(in: 0..<model.count, using: &rng)
                try queue.move(id: id, to: to)
                model.removeAll { $0 == id }
                model.insert(id, at: to)
            case 6:
                queue.setOptions(
                    repeats: Bool.random(using: &rng), random: Bool.random(using: &rng),
                    single: [SingleMode.off, .on, .oneshot].randomElement(using: &rng),
                    consume: Int.random(in: 0..<4, using: &rng) == 0)
            case 7:
                try queue.setCurrent(
                    model.randomElement(using: &rng), currentWasPlaying: Bool.random(using: &rng),
                    keepOrder: Int.random(in: 0..<4, using: &rng) == 0)
            default:
                guard let current = queue.current else { continue }
                let how: PlayQueue.Advance = Bool.random(using: &rng) ? .automatic : .manual
                let next = queue.successor(of: current, how)
                let result = queue.advance(from: current, to: next, how)
                if let consumed = result.consumed { model.removeAll { $0 == consumed } }
                #expect(result.current == queue.current, "\(context)")
                if let next { #expect(queue.current == next, "\(context)") }
            }
            #expect(Self.ids(queue) == model, "\(context)")
            Self.expectConsistent(queue)
        }
    }
}
