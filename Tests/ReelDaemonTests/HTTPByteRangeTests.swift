import Testing

@testable import ReelDaemon

@Suite struct HTTPByteRangeTests {
    @Test func noRangeIsTheWholeFile() {
        #expect(HTTPByteRange(header: nil, size: 1000) == .whole)
    }

    @Test func aRangeFromTheStart() {
        #expect(HTTPByteRange(header: "bytes=0-99", size: 1000) == .partial(first: 0, last: 99))
        #expect(HTTPByteRange(header: "bytes=0-0", size: 1000) == .partial(first: 0, last: 0))
        #expect(HTTPByteRange(header: " bytes = 10 - 19 ", size: 1000) == .whole)
        #expect(HTTPByteRange(header: "bytes= 10-19", size: 1000) == .partial(first: 10, last: 19))
        #expect(HTTPByteRange(header: "Bytes=10-19", size: 1000) == .partial(first: 10, last: 19))
    }

    @Test func anOpenRangeRunsToTheEnd() {
        // What a browser's media element asks for first.
        #expect(HTTPByteRange(header: "bytes=0-", size: 1000) == .partial(first: 0, last: 999))
        #expect(HTTPByteRange(header: "bytes=500-", size: 1000) == .partial(first: 500, last: 999))
    }

    @Test func aLastBytePastTheEndIsCut() {
        #expect(HTTPByteRange(header: "bytes=900-5000", size: 1000) == .partial(first: 900, last: 999))
    }

    @Test func aSuffixIsTheLastBytes() {
        #expect(HTTPByteRange(header: "bytes=-10", size: 1000) == .partial(first: 990, last: 999))
        #expect(HTTPByteRange(header: "bytes=-5000", size: 1000) == .partial(first: 0, last: 999))
    }

    @Test func aRangePastTheEndIsUnsatisfiable() {
        #expect(HTTPByteRange(header: "bytes=1000-", size: 1000) == .unsatisfiable)
        #expect(HTTPByteRange(header: "bytes=1000-1001", size: 1000) == .unsatisfiable)
        #expect(HTTPByteRange(header: "bytes=-0", size: 1000) == .unsatisfiable)
        #expect(HTTPByteRange(header: "bytes=0-", size: 0) == .unsatisfiable)
        #expect(HTTPByteRange(header: "bytes=-5", size: 0) == .unsatisfiable)
    }

    @Test func whatCannotBeReadIsIgnored() {
        // RFC 9110: a server may ignore a Range it does not understand, and answer 200.
        for header in [
            "bytes=5-1", "bytes=a-b", "bytes=-", "bytes=1-2,5-6", "items=0-1", "bytes=+1-2", "bytes=0x10-",
            "bytes=99999999999999999999-",
        ] {
            #expect(HTTPByteRange(header: header, size: 1000) == .whole, "\(header)")
        }
    }
}
