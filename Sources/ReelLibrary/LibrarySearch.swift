// Name search over the whole tree, with keyset paging that holds while the tree changes.
import Foundation
import GRDB
import ReelModel

extension LibraryStore {
    /// Items (folders and recordings, never the root) whose name contains `query`, under the
    /// library's case rule (Unicode lowercase of both), oldest first.
    ///
    /// Paging: results are ordered by the item's creation sequence number, which a rename or a
    /// move never changes, and `nextCursor` is the last returned number (with a fingerprint of
    /// the query). So across pages no item appears twice, no unchanged matching item is skipped,
    /// and items added meanwhile come on later pages. `nextCursor` is nil on the last page.
    ///
    /// A query of three or more code points finds its candidates in the trigram index of names
    /// (no scan of the tree, however rare the match); a shorter one scans names in order.
    ///
    /// - Parameters:
    ///   - limit: 1…500 (`out_of_range` otherwise).
    ///   - cursor: the `nextCursor` of the previous page of the same query; a cursor that is not
    ///     one (garbled, or from another query) is `out_of_range`.
    ///
    /// With music folders, the search goes on into the `/Music` branch once the recordings are
    /// done: tracks whose title, artist or album contains `query` (`MusicIndex.search`), on the
    /// same pages, with cursors of their own (`music:…`). A page may then end empty.
    public func search(
        query: String, limit: Int = LibraryStore.defaultSearchLimit, cursor: String? = nil
    ) throws(ReelError) -> (items: [Item], nextCursor: String?) {
        guard let branch = musicBranch else { return try searchRecordings(query: query, limit: limit, cursor: cursor) }
        let music = MusicIndex(store: self)
        if let cursor, cursor.hasPrefix(Self.musicCursorPrefix) {
            let rest = String(cursor.dropFirst(Self.musicCursorPrefix.count))
            let page = try music.search(text: query, limit: limit, cursor: rest.isEmpty ? nil : rest)
            return (page.tracks.compactMap(branch.trackItem), page.nextCursor.map { Self.musicCursorPrefix + $0 })
        }
        var page = try searchRecordings(query: query, limit: limit, cursor: cursor)
        guard page.nextCursor == nil else { return page }
        let room = limit - page.items.count
        guard room > 0 else { return (page.items, Self.musicCursorPrefix) }
        let tracks = try music.search(text: query, limit: room)
        page.items += tracks.tracks.compactMap(branch.trackItem)
        page.nextCursor = tracks.nextCursor.map { Self.musicCursorPrefix + $0 }
        return page
    }

    /// Marks a cursor into the music folders' part of a search (recordings' cursors are base64).
    static let musicCursorPrefix = "music:"

    /// `search` over the recordings tree alone.
    private func searchRecordings(
        query: String, limit: Int, cursor: String?
    ) throws(ReelError) -> (items: [Item], nextCursor: String?) {
        guard (1...Self.maximumSearchLimit).contains(limit) else {
            throw ReelError(.outOfRange, "a search limit of \(limit) is out of range; use 1 to \(Self.maximumSearchLimit)")
        }
        let folded = LibrarySchema.fold(query)
        let after = try cursor.map { cursor throws(ReelError) in try SearchCursor.decode(cursor, query: folded) } ?? 0
        let needle = Self.searchNeedle(folded)
        return try reading("search for \"\(query)\"") { db in
            let statement: Statement
            let arguments: StatementArguments
            if needle.unicodeScalars.count >= Self.minimumIndexedQueryLength {
                statement = try db.cachedStatement(sql: Self.indexedSearchSQL)
                arguments = [Self.phrase(needle), after, needle, limit + 1]
            } else {
                statement = try db.cachedStatement(sql: Self.scanSearchSQL)
                arguments = [after, needle, limit + 1]
            }
            var paths = TreePaths(db)
            var rows = try Row.fetchAll(statement, arguments: arguments).map { ItemRow($0) }
            var next: String?
            if rows.count > limit {
                rows.removeLast()
                next = SearchCursor.encode(after: rows.last!.seq, query: folded)
            }
            let items = try rows.map { try paths.item($0) }
            return (items, next)
        }
    }

    /// Search by the trigram index (`LibrarySchema.namesIndexSQL`); arguments: the FTS5 phrase,
    /// the cursor's seq, the needle, the limit. Candidates come from the index in rowid (= seq)
    /// order from the cursor on, and only they are read from `items`; `instr` keeps the result
    /// exactly the substring rule even if the index said more. CROSS JOIN keeps the index the
    /// outer loop, so FTS5 serves `rowid > ?` and the ORDER BY itself and the LIMIT stops it
    /// early: no sort and no scan of `items`, however rare the match.
    static let indexedSearchSQL = """
        SELECT \(LibrarySchema.itemColumns("i")) FROM items_fts f CROSS JOIN items i ON i.seq = f.rowid
        WHERE f.items_fts MATCH ? AND f.rowid > ? AND instr(i.name_fold, ?) > 0 AND i.name_fold <> ''
        ORDER BY f.rowid LIMIT ?
        """

    /// Search by scanning names, for queries too short for trigrams; arguments: the cursor's seq,
    /// the needle, the limit. The narrow (seq, name_fold) index is scanned in seq order and the
    /// table is read only for matches. A string that short is in many names, so the limit
    /// usually comes early. Only the root has an empty name.
    static let scanSearchSQL = """
        SELECT \(LibrarySchema.itemColumns) FROM items
        WHERE seq IN (
          SELECT seq FROM items INDEXED BY items_search
          WHERE seq > ? AND instr(name_fold, ?) > 0 AND name_fold <> ''
          ORDER BY seq LIMIT ?)
        ORDER BY seq
        """

    /// The trigram tokenizer's shortest searchable text, in Unicode code points (what it counts):
    /// a shorter phrase has no trigram and matches nothing in the index.
    static let minimumIndexedQueryLength = 3

    /// The folded query as SQLite receives it: GRDB binds a `String` as a C string, so nothing
    /// after a NUL ever reached SQLite (names cannot contain NUL). Cutting there ourselves keeps
    /// both search paths matching what the scan always matched, and keeps the NUL out of the
    /// FTS5 phrase (where it would cut the closing quote off).
    static func searchNeedle(_ folded: String) -> String {
        guard let nul = folded.utf8.firstIndex(of: 0) else { return folded }
        return String(folded[..<nul])
    }

    /// `text` as one FTS5 phrase: in double quotes, any `"` doubled. Inside a phrase every
    /// other character (`*`, `^`, `:`, `-`, `(`, spaces, …) is plain text for the tokenizer.
    static func phrase(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The opaque search cursor: base64url of `1:<last seq>:<query fingerprint>`.
enum SearchCursor {
    static func encode(after seq: Int64, query: String) -> String {
        let text = "1:\(seq):\(fingerprint(query))"
        return Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ cursor: String, query: String) throws(ReelError) -> Int64 {
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else {
            throw invalid(cursor)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "1", let seq = Int64(parts[1]), seq >= 0 else { throw invalid(cursor) }
        guard parts[2] == fingerprint(query) else {
            throw ReelError(
                .outOfRange,
                "the cursor \"\(cursor.prefix(40))\" belongs to a different search; repeat the same query, or search again without a cursor")
        }
        return seq
    }

    private static func invalid(_ cursor: String) -> ReelError {
        ReelError(
            .outOfRange,
            "\"\(cursor.prefix(40))\" is not a search cursor; pass the nextCursor of the previous page, or no cursor to start over")
    }

    /// FNV-1a (32-bit) of the folded query, in hex: binds a cursor to its query.
    static func fingerprint(_ query: String) -> String {
        var hash: UInt32 = 0x811c_9dc5
        for byte in query.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return String(hash, radix: 16)
    }
}
