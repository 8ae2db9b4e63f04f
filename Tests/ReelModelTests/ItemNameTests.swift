import ReelModel
import Testing

@Suite struct ItemNameTests {
    @Test(arguments: ["Standup", "a", "Été 2026", "x.y", "...", String(repeating: "é", count: 127)])
    func goodNamesAreAccepted(name: String) throws {
        try ItemName.validate(name)
    }

    @Test(arguments: ["", "a/b", "/", ".", "..", "nul\u{0}here", String(repeating: "a", count: 256), String(repeating: "é", count: 128)])
    func badNamesAreInvalidName(name: String) {
        do {
            try ItemName.validate(name)
            Issue.record("\(name.prefix(20)) was accepted")
        } catch {
            #expect(error.reason == .invalidName)
        }
    }

    @Test func pathsSplitIntoNames() throws {
        #expect(try ItemName.components(ofPath: "/") == [])
        #expect(try ItemName.components(ofPath: "/Meetings/Standup") == ["Meetings", "Standup"])
        #expect(try ItemName.components(ofPath: "/Meetings//Standup/") == ["Meetings", "Standup"])
        #expect(throws: ReelError.self) { try ItemName.components(ofPath: "Meetings") }
        #expect(throws: ReelError.self) { try ItemName.components(ofPath: "/a/../b") }
    }
}
