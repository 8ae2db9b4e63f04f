// Search: case-insensitive substrings over the whole tree, limits, and paging under change.
import Foundation
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct SearchTests {
    let directory = TemporaryDirectory()
    let store: LibraryStore

    init() throws {
        store = try LibraryStore(directory: directory.path)
    }

    @Test func searchFindsNameSubstringsIgnoringCaseAcrossTheWholeTree() throws {
        try store.createFolder(name: "Standups")
        try store.createFolder(parent: .path("/Standups"), name: "2026")
        try store.addRecording(parent: .path("/Standups/2026"), name: "Monday STANDUP", format: flac)
        try store.addRecording(name: "weekly", format: flac)
        try store.addRecording(parent: .path("/Standups"), name: "Ärger im Standup", format: flac)
        let found = try store.search(query: "standup")
        #expect(found.items.map(\.path) == ["/Standups", "/Standups/2026/Monday STANDUP", "/Standups/Ärger im Standup"])
        #expect(found.nextCursor == nil)
        #expect(try store.search(query: "äRG").items.map(\.name) == ["Ärger im Standup"])
        #expect(try store.search(query: "nothing like it").items.isEmpty)
        // The root, whose name is empty, is never a result; an empty query matches every other item.
        #expect(try store.search(query: "").items.count == 5)
        // LIKE wildcards are plain characters.
        #expect(try store.search(query: "%").items.isEmpty)
        #expect(try store.search(query: "_").items.isEmpty)
    }

    @Test func theLimitIsFiftyByDefaultAndAtMostFiveHundred() throws {
        let folder = try store.createFolder(name: "F")
        try store.insertRecordings((0..<600).map { NewRecording(parent: folder.id, name: "take \($0)", format: flac) })
        #expect(try store.search(query: "take").items.count == 50)
        #expect(try store.search(query: "take", limit: 1).items.count == 1)
        #expect(try store.search(query: "take", limit: 500).items.count == 500)
        let tooMany = expectReason(.outOfRange) { try store.search(query: "take", limit: 501) }
        #expect(tooMany?.message.contains("501") == true)
        expectReason(.outOfRange) { try store.search(query: "take", limit: 0) }
        expectReason(.outOfRange) { try store.search(query: "take", limit: -5) }
    }

    @Test func aBadCursorIsRefusedWithAClearError() throws {
        let folder = try store.createFolder(name: "F")
        try store.insertRecordings((0..<10).map { NewRecording(parent: folder.id, name: "take \($0)", format: flac) })
        let page = try store.search(query: "take", limit: 3)
        let cursor = try #require(page.nextCursor)
        for bad in ["garbage", "!!!", "", "MTo6", String(cursor.dropLast(2))] {
            let error = expectReason(.outOfRange) { try store.search(query: "take", cursor: bad) }
            #expect(error?.message.contains("cursor") == true)
        }
        let other = expectReason(.outOfRange) { try store.search(query: "something else", cursor: cursor) }
        #expect(other?.message.contains("different search") == true)
        // The same query with other letter case is the same search.
        #expect(try store.search(query: "TAKE", limit: 3, cursor: cursor).items.count == 3)
    }

    @Test func pagingWhileItemsChangeNeverRepeatsOrSkipsAnUnchangedItem() throws {
        let folders = try store.createFolders(names: (0..<10).map { "folder \($0)" })
        var batch: [NewRecording] = []
        for n in 0..<1000 {
            batch.append(NewRecording(parent: folders[n % 10].id, name: "Take \(n)", format: flac))
        }
        let all = try store.insertRecordings(batch)
        var unchanged = Set(all.map(\.id))
        var seen: [String] = []
        var cursor: String?
        var page = 0
        var extra = 0
        repeat {
            let result = try store.search(query: "take", limit: 37, cursor: cursor)
            seen += result.items.map(\.id)
            cursor = result.nextCursor
            page += 1
            // Between pages: rename a seen and an unseen item (both still match), move one,
            // delete an unseen one, and add new matching items.
            let seenSet = Set(seen)
            let unseen = all.filter { !seenSet.contains($0.id) && unchanged.contains($0.id) }
            if let first = seen.first(where: { unchanged.contains($0) }) {
                try store.rename(.id(first), to: "TAKE renamed \(first)")
                unchanged.remove(first)
            }
            if unseen.count > 3 {
                let renamed = unseen[unseen.count / 2]
                try store.rename(.id(renamed.id), to: "take renamed \(renamed.id)")
                unchanged.remove(renamed.id)
                let moved = unseen[1]
                let elsewhere = folders[(page + 1) % 10].id == moved.parent ? folders[(page + 2) % 10] : folders[(page + 1) % 10]
                try store.move(.id(moved.id), to: .id(elsewhere.id))
                unchanged.remove(moved.id)
                try store.delete(.id(unseen[0].id))
                unchanged.remove(unseen[0].id)
            }
            extra += 1
            try store.addRecording(parent: .id(folders[page % 10].id), name: "late take \(extra)", format: flac)
        } while cursor != nil
        #expect(seen.count == Set(seen).count, "no item appears twice")
        #expect(unchanged.isSubset(of: Set(seen)), "every unchanged item appears")
        #expect(page > 20)
    }

    @Test func theLastPageHasNoCursorAndPagesCoverEverything() throws {
        let folder = try store.createFolder(name: "F")
        try store.insertRecordings((0..<100).map { NewRecording(parent: folder.id, name: "x\($0)", format: flac) })
        var names: [String] = []
        var cursor: String?
        repeat {
            let page = try store.search(query: "X", limit: 25, cursor: cursor)
            names += page.items.map(\.name)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(names == (0..<100).map { "x\($0)" })
        // Exactly a full last page: no cursor after it.
        #expect(try store.search(query: "x", limit: 100).nextCursor == nil)
        #expect(try store.search(query: "x", limit: 99).nextCursor != nil)
    }
}
