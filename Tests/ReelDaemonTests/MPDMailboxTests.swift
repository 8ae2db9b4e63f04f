// One MPD client's channels and unread messages, as a value: MPD's names and limits.
import Testing

@testable import ReelDaemon

@Suite struct MPDMailboxTests {
    @Test func channelNamesAreMPDs() {
        for name in ["a", "Chat", "mpdscribble", "a.b-c:d_e", "0"] { #expect(MPDMailbox.isValidChannel(name), "\(name)") }
        for name in ["", "a b", "a/b", "ä", "a\"b", "a,b", "a\tb"] { #expect(!MPDMailbox.isValidChannel(name), "\(name)") }
    }

    @Test func sixteenChannelsAtMostAndTheListIsCheckedBeforeARepeat() throws {
        var mailbox = MPDMailbox()
        for index in 1...16 { try mailbox.subscribe("c\(index)") }
        #expect(throws: MPDAck(.exist, "subscription list is full")) { try mailbox.subscribe("c17") }
        #expect(throws: MPDAck(.exist, "subscription list is full")) { try mailbox.subscribe("c1") }
        #expect(throws: MPDAck(.argument, "invalid channel name")) { try mailbox.subscribe("bad name") }
        try mailbox.unsubscribe("c16")
        try mailbox.subscribe("c17")
        #expect(throws: MPDAck(.exist, "already subscribed to this channel")) {
            try mailbox.unsubscribe("c17")
            try mailbox.subscribe("c1")
        }
    }

    @Test func sixtyFourUnreadMessagesAtMostAndOnlyFromItsChannels() throws {
        var mailbox = MPDMailbox()
        try mailbox.subscribe("c")
        #expect(mailbox.deliver(MPDMessage(channel: "other", text: "x")) == (taken: false, wasEmpty: false))
        #expect(mailbox.deliver(MPDMessage(channel: "c", text: "0")) == (taken: true, wasEmpty: true))
        for index in 1..<64 { #expect(mailbox.deliver(MPDMessage(channel: "c", text: "\(index)")) == (taken: true, wasEmpty: false)) }
        #expect(mailbox.deliver(MPDMessage(channel: "c", text: "64")).taken == false, "full")
        let read = mailbox.takeMessages()
        #expect(read.map(\.text) == (0..<64).map(String.init))
        #expect(mailbox.takeMessages().isEmpty)
        #expect(mailbox.deliver(MPDMessage(channel: "c", text: "again")) == (taken: true, wasEmpty: true))
    }
}
