import Testing

@testable import ReelDaemon

struct MPDResponseTests {
    @Test func secondsAreWrittenWithThreeDecimals() {
        #expect(MPDResponse.milliseconds(12.3456) == "12.346")
        #expect(MPDResponse.milliseconds(0.005) == "0.005")
        #expect(MPDResponse.milliseconds(-3) == "0.000")
    }

    @Test func anAbsurdLengthFromABogusHeaderIsHeldNotATrap() {
        // A container's header can claim any length: Int(Double) would trap past Int.max.
        #expect(MPDResponse.wholeMilliseconds(1e300) == 1_000_000_000_000_000)
        #expect(MPDResponse.wholeMilliseconds(.infinity) == 1_000_000_000_000_000)
        #expect(MPDResponse.wholeMilliseconds(.nan) == 0)
        #expect(MPDResponse.milliseconds(.greatestFiniteMagnitude) == "1000000000000.000")
    }

    @Test func timesWholeSecondsAreItsMillisecondsRoundedHalfUpAndNeverATrap() {
        // `Time:` of a song and `time:` of the status: MPD rounds its millisecond lengths.
        #expect(MPDResponse.wholeSeconds(2.4994) == 2)
        #expect(MPDResponse.wholeSeconds(2.4996) == 3)
        #expect(MPDResponse.wholeSeconds(2.5) == 3)
        #expect(MPDResponse.wholeSeconds(-1) == 0)
        #expect(MPDResponse.wholeSeconds(.nan) == 0)
        #expect(MPDResponse.wholeSeconds(.infinity) == 1_000_000_000_000)
        #expect(MPDResponse.wholeSeconds(1e300) == 1_000_000_000_000)
    }
}
