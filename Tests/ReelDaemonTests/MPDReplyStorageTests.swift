// A large MPD reply's storage kept for the next (`MPDReplyStorage`): reused once it is free,
// never written while the channel still holds it, and only for large replies.
import NIOCore
import Testing

@testable import ReelDaemon

@Suite struct MPDReplyStorageTests {
    /// Where a response's bytes are stored.
    static func storage(of response: MPDResponse) -> UnsafeRawPointer? {
        response.bytes.withVeryUnsafeBytes { UnsafeRawPointer($0.baseAddress) }
    }

    /// A response of `count` lines `Title: N`, room for `reserved` bytes made first.
    static func reply(lines count: Int, reserved: Int, from shelf: MPDReplyStorage) -> MPDResponse {
        var response = MPDResponse()
        response.reserveCapacity(reserved, reusing: shelf)
        for line in 0..<count { response.field("Title", line) }
        return response
    }

    @Test func aLargeReplyStartsInTheStorageOfTheLastOneSentOnceThatIsFree() {
        let shelf = MPDReplyStorage()
        var first: UnsafeRawPointer?
        do {
            let sent = Self.reply(lines: 20_000, reserved: 400_000, from: shelf)
            first = Self.storage(of: sent)
            shelf.keep(sent.bytes)
        }
        // The channel let it go: the next large reply is written where it was, from its start.
        let next = Self.reply(lines: 3, reserved: 300_000, from: shelf)
        #expect(Self.storage(of: next) == first)
        #expect(next.text == "Title: 0\nTitle: 1\nTitle: 2\n")
        // Taken: the one after gets storage of its own.
        let other = Self.reply(lines: 1, reserved: 300_000, from: shelf)
        #expect(Self.storage(of: other) != first)
        #expect(other.text == "Title: 0\n")
    }

    @Test func aReplyStillBeingSentIsNeverWritten() {
        let shelf = MPDReplyStorage()
        let sent = Self.reply(lines: 20_000, reserved: 400_000, from: shelf)
        let sending = sent.bytes  // what the channel holds until it has written it
        shelf.keep(sent.bytes)
        let next = Self.reply(lines: 2, reserved: 300_000, from: shelf)
        #expect(Self.storage(of: next) != Self.storage(of: sent))
        #expect(next.text == "Title: 0\nTitle: 1\n")
        #expect(String(buffer: sending) == sent.text)
        #expect(sent.text.hasPrefix("Title: 0\nTitle: 1\nTitle: 2\n") && sent.text.hasSuffix("Title: 19999\n"))
    }

    @Test func onlyLargeRepliesLeaveOrTakeStorage() {
        let shelf = MPDReplyStorage()
        // A small reply's buffer is not kept.
        shelf.keep(Self.reply(lines: 10, reserved: 1_000, from: shelf).bytes)
        #expect(shelf.take(atLeast: MPDReplyStorage.smallest) == nil)
        // A huge one's is not either (its storage goes back to the kernel).
        shelf.keep(Self.reply(lines: 1, reserved: MPDReplyStorage.largest + 1, from: shelf).bytes)
        #expect(shelf.take(atLeast: MPDReplyStorage.smallest) == nil)
        // A kept one is not taken for a small reply, nor for one larger than it.
        shelf.keep(Self.reply(lines: 1, reserved: 200_000, from: shelf).bytes)
        #expect(shelf.take(atLeast: 1_000) == nil)
        #expect(shelf.take(atLeast: 4 << 20) == nil)
        shelf.keep(Self.reply(lines: 1, reserved: 200_000, from: shelf).bytes)
        let taken = shelf.take(atLeast: 150_000)
        #expect(taken?.readableBytes == 0 && (taken?.capacity ?? 0) >= 150_000)
    }

    @Test func keptStorageIsLetGoWhenNoLargeReplyTookItForAMinute() {
        let shelf = MPDReplyStorage()
        let start = NIODeadline.now()
        shelf.keep(Self.reply(lines: 1, reserved: 200_000, from: shelf).bytes, now: start)
        shelf.dropUnused(keptBefore: start)
        #expect(shelf.isHolding)
        shelf.dropUnused(keptBefore: start + .seconds(1))
        #expect(!shelf.isHolding)
        #expect(shelf.take(atLeast: 150_000) == nil)
    }
}
