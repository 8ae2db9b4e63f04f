// Search through the trigram index (schema v2): the same results, order and cursors as the
// scan it replaces, an index that follows every change, and v1 libraries upgraded in place.
import Foundation
import GRDB
import ReelModel
import Testing

@testable import ReelLibrary
import ReelTestSupport

@Suite struct SearchIndexTests {
    let directory = TemporaryDirectory()

    // MARK: Same results as the scan

    @Test func theIndexGivesExactlyWhatTheScanGaveOnVariedNamesAcrossPages() throws {
        let store = try LibraryStore(directory: directory.path)
        var random = SeededGenerator(seed: 0x5eed_f75)
        let names = try VariedTree.build(in: store, recordings: 3000, using: &random)
        let queries = VariedTree.queries(from: names, count: 250, using: &random)
        for query in queries {
            try expectSameAsScan(store, query, limit: [1, 2, 7, 50, 500].randomElement(using: &random)!)
        }
        try expectIndexMatchesItems(store)
    }

    @Test func theIndexGivesWhatTheScanGaveAfterRenamesMovesDeletesAndAdditions() throws {
        let store = try LibraryStore(directory: directory.path)
        var random = SeededGenerator(seed: 42)
        var names = try VariedTree.build(in: store, recordings: 1500, using: &random)
        let folders = try store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM items WHERE kind = 'folder' AND parent IS NOT NULL")
        }
        let recordings = try store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM items WHERE kind = 'recording' ORDER BY random()")
        }
        for (n, id) in recordings.prefix(400).enumerated() {
            switch n % 4 {
            case 0:
                let name = VariedTree.name(using: &random) + " r\(n)"
                try store.rename(.id(id), to: name)
                names.append(name)
            case 1:
                // A rename that changes only letter case mostly keeps name_fold (the trigger
                // skips those); "ß" → "SS" does not. A sibling may hold the new name already.
                let item = try store.item(id: id)
                let other = item.name.uppercased() == item.name ? item.name.lowercased() : item.name.uppercased()
                _ = try? store.rename(.id(id), to: other)
            case 2: _ = try? store.move(.id(id), to: .id(folders.randomElement(using: &random)!))
            default: try store.delete(.id(id))
            }
        }
        // Deleting a folder takes its subtree's rows (and their index entries) with it.
        try store.delete(.id(folders[0]))
        let added = (0..<200).map { n in VariedTree.name(using: &random) + " new\(n)" }
        try store.insertRecordings(added.map { NewRecording(parent: folders[1], name: $0, format: flac) })
        names += added
        for query in VariedTree.queries(from: names, count: 150, using: &random) {
            try expectSameAsScan(store, query, limit: [3, 50, 500].randomElement(using: &random)!)
        }
        try expectIndexMatchesItems(store)
    }

    // MARK: The index follows changes

    @Test func renamedMovedDeletedAndNewItemsAreFoundOrGoneAtOnce() throws {
        let store = try LibraryStore(directory: directory.path)
        let meetings = try store.createFolder(name: "Meetings")
        let archive = try store.createFolder(name: "Archive")
        let standup = try store.addRecording(parent: .id(meetings.id), name: "Daily Standup", format: flac)
        let review = try store.addRecording(parent: .id(meetings.id), name: "Design Review", format: flac)
        #expect(try searchIDs(store, "standup") == [standup.id])

        try store.rename(.id(standup.id), to: "Morning Sync")
        #expect(try searchIDs(store, "standup").isEmpty)
        #expect(try searchIDs(store, "ing sy") == [standup.id])
        try store.rename(.id(standup.id), to: "MORNING SYNC")
        #expect(try searchIDs(store, "morning") == [standup.id])

        try store.move(.id(review.id), to: .id(archive.id))
        #expect(try store.search(query: "review").items.map(\.path) == ["/Archive/Design Review"])

        try store.delete(.id(meetings.id))
        #expect(try searchIDs(store, "morning").isEmpty)
        #expect(try searchIDs(store, "meetings").isEmpty)

        let late = try store.addRecording(parent: .id(archive.id), name: "Standup again", format: flac)
        #expect(try searchIDs(store, "standup") == [late.id])
        // A name reused after its first owner was deleted: only the new row (new seq) is found.
        let reused = try store.createFolder(name: "Meetings")
        #expect(try searchIDs(store, "meetings") == [reused.id])
        try expectIndexMatchesItems(store)
    }

    @Test func changesStillReachObserversWithTheIndexTriggers() throws {
        let store = try LibraryStore(directory: directory.path)
        let changes = ChangeRecorder(store)
        try store.createFolder(name: "Alpha")
        try store.rename(.path("/Alpha"), to: "Beta")
        try store.delete(.path("/Beta"))
        #expect(changes.summary == [["added /Alpha"], ["renamed /Beta from /Alpha"], ["removed /Beta"]])
        #expect(try searchIDs(store, "beta").isEmpty)
    }

    // MARK: Upgrading a v1 library

    @Test func aVersionOneLibraryIsIndexedWhenReopenedAndStaysSearchable() throws {
        let path = directory.file("library.sqlite")
        var rootless = 0
        do {
            // A library as an earlier Reel left it: schema v1 only, a few items, closed.
            let v1 = try DatabaseQueue(path: path)
            try LibrarySchema.migrator().migrate(v1, upTo: "v1")
            try v1.write { db in
                let names = ["Standups", "Weekly STANDUP", "Ärger im Standup", "café \"quoted\"", "50% done", "ab"]
                var parent = LibraryStore.rootID
                for (n, name) in names.enumerated() {
                    try db.execute(
                        sql: """
                            INSERT INTO items (id, parent, kind, name, name_fold, created)
                            VALUES (?, ?, 'folder', ?, ?, '2025-01-01T00:00:00Z')
                            """,
                        arguments: ["v1-\(n)", parent, name, LibrarySchema.fold(name)])
                    parent = "v1-0"
                }
                rootless = names.count
            }
            #expect(try v1.read { db in try db.tableExists("items_fts") } == false)
            try v1.close()
        }

        let store = try LibraryStore(directory: directory.path)
        let migrations = try store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
        #expect(migrations == ["marks", "music_playlists", "schedules", "v1", "v2", "v3", "v4"])
        #expect(try store.search(query: "STANDUP").items.map(\.path)
            == ["/Standups", "/Standups/Weekly STANDUP", "/Standups/Ärger im Standup"])
        #expect(try searchIDs(store, "é \"q") == ["v1-3"])
        #expect(try searchIDs(store, "% d") == ["v1-4"])
        #expect(try searchIDs(store, "ab") == ["v1-5"])
        #expect(try indexedRowCount(store) == rootless)
        try expectIndexMatchesItems(store)

        // Changes after the upgrade are indexed, and observers still hear of them.
        let changes = ChangeRecorder(store)
        try store.rename(.id("v1-1"), to: "Weekly sync")
        #expect(try searchIDs(store, "standup") == ["v1-0", "v1-2"])
        #expect(try searchIDs(store, "ly sy") == ["v1-1"])
        #expect(changes.summary == [["renamed /Standups/Weekly sync from /Standups/Weekly STANDUP"]])
        for query in ["standup", "STA", "ärg", "\"", "é \"", "5", "e", "sync"] {
            try expectSameAsScan(store, query, limit: 2)
        }
        try expectIndexMatchesItems(store)
    }

    // MARK: Edges

    @Test func aLongQueryReadsTheIndexAndNeverScansItems() throws {
        let store = try LibraryStore(directory: directory.path)
        let plan = try store.pool.read { db in
            try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN \(LibraryStore.indexedSearchSQL)",
                arguments: [LibraryStore.phrase("0042-01"), 0, "0042-01", 51]
            ).map { $0["detail"] as String }
        }
        #expect(plan.count == 2, "\(plan)")
        #expect(plan.first?.hasPrefix("SCAN f VIRTUAL TABLE") == true, "\(plan)")
        #expect(plan.last == "SEARCH i USING INTEGER PRIMARY KEY (rowid=?)", "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") || $0.hasPrefix("SCAN i") }, "\(plan)")
    }

    @Test func theRootIsNeverIndexed() throws {
        var store: LibraryStore? = try LibraryStore(directory: directory.path)
        #expect(try indexedRowCount(store!) == 0)
        // The root put back at open (after something removed it) is not indexed either.
        try store!.pool.write { db in
            try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [LibraryStore.rootID])
        }
        store = nil
        store = try LibraryStore(directory: directory.path)
        #expect(try store!.item(path: "/").id == LibraryStore.rootID)
        #expect(try indexedRowCount(store!) == 0)
        try store!.createFolders(names: ["One", "Two", "Three"])
        #expect(try indexedRowCount(store!) == 3)
        try expectIndexMatchesItems(store!)
    }

    @Test func queryTextIsNeverFTS5Syntax() throws {
        let store = try LibraryStore(directory: directory.path)
        let names = [
            "say \"hi\"", "\"\"\"", "a*b", "NEAR(x y)", "x OR y", "col:umn", "^start", "-minus", "it's", "50%_off",
            "{brace}", "(paren)", "a + b", "tab\there",
        ]
        let items = try store.createFolders(names: names)
        for (name, item) in zip(names, items) {
            #expect(try searchIDs(store, name) == [item.id], "\(name)")
        }
        for query in ["\"", "\"\"", "\"\"\"\"", "\" OR \"", "y\"", "*", "a*", "NEAR(", "OR", "\"hi", "%_", ":", "AND NOT"] {
            try expectSameAsScan(store, query, limit: 50)
        }
    }

    @Test func aNULInTheQueryEndsItAsItAlwaysDid() throws {
        // GRDB binds strings as C strings: the scan never saw what follows a NUL.
        let store = try LibraryStore(directory: directory.path)
        let take = try store.createFolder(name: "take one")
        try store.createFolder(name: "other")
        #expect(try searchIDs(store, "take\u{0}zzz") == [take.id])
        #expect(try store.search(query: "\u{0}take").items.count == 2)
        for query in ["take\u{0}zzz", "ta\u{0}x", "\u{0}", "\u{0}take", "one\u{0}"] {
            try expectSameAsScan(store, query, limit: 1)
        }
        // The cursor still binds to the whole query.
        let page = try store.search(query: "\u{0}take", limit: 1)
        #expect(try store.search(query: "\u{0}take", limit: 1, cursor: page.nextCursor).items.count == 1)
        expectReason(.outOfRange) { try store.search(query: "\u{0}", cursor: page.nextCursor) }
    }

    @Test func threeCodePointsIsTheBoundaryNotThreeCharacters() throws {
        let store = try LibraryStore(directory: directory.path)
        // One character each, but 3 code points: the family emoji with its joiner, e + two marks,
        // and "İs" (lowercased "İ" is i + combining dot, two code points).
        let names = ["👩‍👧 family", "e\u{301}\u{302}t", "İstanbul", "istanbul", "ab", "日本語"]
        let items = try store.createFolders(names: names)
        #expect(try searchIDs(store, "👩‍👧") == [items[0].id])
        #expect(try searchIDs(store, "e\u{301}\u{302}") == [items[1].id])
        #expect(try searchIDs(store, "İs") == [items[2].id])
        #expect(try searchIDs(store, "İS") == [items[2].id])
        #expect(try searchIDs(store, "ist") == [items[3].id])
        #expect(try searchIDs(store, "ab") == [items[4].id])
        #expect(try searchIDs(store, "本語") == [items[5].id])
        #expect(try searchIDs(store, "日本語") == [items[5].id])
        for query in ["👩", "👩‍", "👩‍👧", "\u{301}", "\u{301}\u{302}t", "İ", "i̇s", "日本", "日本語"] {
            try expectSameAsScan(store, query, limit: 3)
        }
    }
}

// MARK: - The old search, kept as the reference

/// What `search` returned before the trigram index: one page by the scan of schema v1, exactly
/// that SQL (the folded query bound as it was), with the same cursor rule.
func scanSearch(_ store: LibraryStore, _ query: String, limit: Int, after: Int64) throws -> (items: [Item], next: Int64?) {
    let folded = LibrarySchema.fold(query)
    return try store.pool.read { db in
        let statement = try db.makeStatement(
            sql: """
                SELECT \(LibrarySchema.itemColumns) FROM items
                WHERE seq IN (
                  SELECT seq FROM items INDEXED BY items_search
                  WHERE seq > ? AND instr(name_fold, ?) > 0 AND name_fold <> ''
                  ORDER BY seq LIMIT ?)
                ORDER BY seq
                """)
        var rows = try Row.fetchAll(statement, arguments: [after, folded, limit + 1]).map { ItemRow($0) }
        var next: Int64?
        if rows.count > limit {
            rows.removeLast()
            next = rows.last!.seq
        }
        var paths = TreePaths(db)
        return (try rows.map { try paths.item($0) }, next)
    }
}

/// Pages through `query` with the store and with `scanSearch` side by side: every page must
/// hold the same items in the same order, and the cursors must agree.
func expectSameAsScan(
    _ store: LibraryStore, _ query: String, limit: Int, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    var cursor: String?
    var after: Int64 = 0
    var pages = 0
    repeat {
        let page = try store.search(query: query, limit: limit, cursor: cursor)
        let expected = try scanSearch(store, query, limit: limit, after: after)
        let expectedCursor = expected.next.map { SearchCursor.encode(after: $0, query: LibrarySchema.fold(query)) }
        // Whole items compared, names shown: a failure names the query and the difference.
        let same = page.items == expected.items && page.nextCursor == expectedCursor
        #expect(
            same,
            """
            query \(query.debugDescription), limit \(limit), page \(pages): \
            got \(page.items.map(\.name)) cursor \(page.nextCursor ?? "nil"), \
            the scan gave \(expected.items.map(\.name)) cursor \(expectedCursor ?? "nil")
            """,
            sourceLocation: sourceLocation)
        guard same, let next = expected.next else { return }
        cursor = page.nextCursor
        after = next
        pages += 1
    } while cursor != nil
}

func searchIDs(_ store: LibraryStore, _ query: String) throws -> [String] {
    try store.search(query: query, limit: LibraryStore.maximumSearchLimit).items.map(\.id)
}

/// FTS5's own check that the index holds exactly the trigrams of `items.name_fold` (rank 1:
/// against the content table); a delete that gave other values than were indexed fails it.
func expectIndexMatchesItems(_ store: LibraryStore, sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(throws: Never.self, sourceLocation: sourceLocation) {
        try store.pool.write { db in
            try db.execute(sql: "INSERT INTO items_fts (items_fts, rank) VALUES ('integrity-check', 1)")
        }
    }
}

/// How many rows the index holds: FTS5 keeps the count as the first varint of its "averages"
/// record (`items_fts_data` id 1). The root is not among them.
func indexedRowCount(_ store: LibraryStore) throws -> Int {
    let block = try store.pool.read { db in try Data.fetchOne(db, sql: "SELECT block FROM items_fts_data WHERE id = 1") }
    guard let block else { return 0 }
    var value = 0
    for (n, byte) in block.enumerated() {
        value = (value << 7) | Int(byte & 0x7f)
        if byte & 0x80 == 0 || n == 8 { break }
    }
    return value
}

// MARK: - A tree of varied names

enum VariedTree {
    /// ASCII in mixed case, accents precomposed and combining, Greek and Cyrillic capitals
    /// (with final sigma and Ё), ß and İ (whose lowercase has more code points), emoji with
    /// joiners and variation selectors, CJK, and FTS5/LIKE/GLOB syntax characters.
    static let pieces = [
        "take", "Take", "TAKE", "Standup", "standup", "Meeting", "0042-01", "2026", "v2",
        "Ärger", "café", "CAFÉ", "cafe\u{301}", "naïve", "Ñandú", "ÅSA",
        "ΣΟΦΊΑ", "σοφίας", "ΌΝΟΜΑ", "ПРИВЕТ", "привет", "ЁЛКА", "Straße", "STRASSE", "İstanbul", "ǅemal",
        "🎙️", "👩‍👩‍👧", "😀😀", "🇩🇪", "日本語", "한국어",
        "\"quoted\"", "\"", "it's", "50%", "a_b", "x*y", "[1]", "(x)", "^", "NEAR", "OR", "AND", ":", "-", "+",
    ]
    static let separators = ["", " ", " ", "  ", "_", "-", ".", "\""]

    static func name<R: RandomNumberGenerator>(using random: inout R) -> String {
        var name = pieces.randomElement(using: &random)!
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            name += separators.randomElement(using: &random)! + pieces.randomElement(using: &random)!
        }
        if Bool.random(using: &random) { name += " \(Int.random(in: 0..<1000, using: &random))" }
        return name == "." || name == ".." ? name + "x" : name
    }

    /// A few nested folders and `recordings` recordings spread over them; returns every name.
    static func build<R: RandomNumberGenerator>(
        in store: LibraryStore, recordings: Int, using random: inout R
    ) throws -> [String] {
        var names: [String] = []
        var folderIDs: [String] = []
        var parent: ItemReference = .root
        for level in 0..<3 {
            var taken = Set<String>()
            let folderNames = (0..<8).map { n in
                var name = Self.name(using: &random)
                if !taken.insert(name).inserted { name += " f\(level)-\(n)" }
                return name
            }
            let folders = try store.createFolders(parent: parent, names: folderNames)
            names += folderNames
            folderIDs += folders.map(\.id)
            parent = .id(folders[0].id)
        }
        var taken: [String: Set<String>] = [:]
        var batch: [NewRecording] = []
        for n in 0..<recordings {
            let folder = folderIDs.randomElement(using: &random)!
            var name = Self.name(using: &random)
            if taken[folder, default: []].contains(name) { name += " #\(n)" }
            taken[folder, default: []].insert(name)
            names.append(name)
            batch.append(NewRecording(parent: folder, name: name, format: flac))
        }
        try store.insertRecordings(batch)
        return names
    }

    /// Substrings (1–6 code points, at any code point, so some split a character) of real
    /// names, some in other letter case, strings found nowhere, and quote-laden ones.
    static func queries<R: RandomNumberGenerator>(from names: [String], count: Int, using random: inout R) -> [String] {
        var queries = [
            "zzqx", "xyzzy", "qqq", "\"", "\"\"", "\"\"\"", "a\"b", "\" OR \"", "\"quoted", "*", "**", "%%", "%_%",
            "_b", "'s", "   ", "ß", "ss", "SS", "İ", "i\u{307}", "😀", "👩‍", "\u{301}", "e\u{301}", "σ", "Σ", "ς",
            "take\u{0}zzz", "tak", "TAKE", "0042", "-01", "NEAR(", "a OR b", "", "é", "ΣΟΦ", "ёлк", "ЁЛК",
        ]
        for n in 0..<count {
            let scalars = Array(names.randomElement(using: &random)!.unicodeScalars)
            let length = min(scalars.count, Int.random(in: 1...6, using: &random))
            let start = Int.random(in: 0...(scalars.count - length), using: &random)
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars[start..<(start + length)])
            let query = String(view)
            queries.append(n % 3 == 0 ? query.uppercased() : query)
        }
        return queries
    }
}
