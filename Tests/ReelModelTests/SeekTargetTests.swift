import ReelModel
import Testing

@Suite struct SeekTargetTests {
    @Test(arguments: [
        ("90", SeekTarget.absolute(90)), ("90.5", .absolute(90.5)), ("1:30", .absolute(90)),
        ("1:02:03", .absolute(3723)), ("+10", .relative(10)), ("-5", .relative(-5)),
        ("+1:00", .relative(60)), ("0", .absolute(0)), ("0:07.25", .absolute(7.25)),
    ])
    func cliFormsParse(text: String, expected: SeekTarget) {
        #expect(SeekTarget(parsing: text) == expected)
    }

    @Test(arguments: ["", "abc", "1:75", "1:2:3:4", "::", "1:", ":30", "+", "--5", "1.5:00", "1e3", "nan", "inf", " 5"])
    func nonsenseDoesNotParse(text: String) {
        #expect(SeekTarget(parsing: text) == nil)
    }

    @Test func absoluteInsideTheTrackIsKept() throws {
        #expect(try SeekTarget.absolute(12.5).resolve(current: 3, duration: 60) == 12.5)
        #expect(try SeekTarget.absolute(60).resolve(current: 3, duration: 60) == 60)
    }

    @Test(arguments: [(60.01, "the track is 1:00 long"), (-1.0, "cannot seek to -1.0 s"), (.nan, "0 or more"), (.infinity, "0 or more")])
    func absoluteOutsideTheTrackIsOutOfRange(position: Double, message: String) {
        do {
            _ = try SeekTarget.absolute(position).resolve(current: 0, duration: 60)
            Issue.record("\(position) was accepted")
        } catch {
            #expect(error.reason == .outOfRange)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func relativeIsClampedToTheTrack() throws {
        #expect(try SeekTarget.relative(-5).resolve(current: 2, duration: 60) == 0)
        #expect(try SeekTarget.relative(10).resolve(current: 55, duration: 60) == 60)
        #expect(try SeekTarget.relative(10).resolve(current: 20, duration: 60) == 30)
        #expect(throws: ReelError.self) { try SeekTarget.relative(.nan).resolve(current: 0, duration: 60) }
    }

    @Test func secondsFormatAsAClock() {
        #expect(formatSeconds(0) == "0:00")
        #expect(formatSeconds(59.9) == "0:59")
        #expect(formatSeconds(90) == "1:30")
        #expect(formatSeconds(3723) == "1:02:03")
        #expect(formatSeconds(-3) == "0:00")
        #expect(formatSeconds(.nan) == "--:--")
    }
}

/// Regression: huge numbers from a client (1.5e308 passes JSON) once trapped converting to a
/// frame number and took the daemon down.
@Suite struct HugeNumbersTests {
    @Test func hugePositionsAndOffsetsAreOutOfRange() {
        for target in [SeekTarget.absolute(1.5e308), .absolute(1e10), .relative(1e300), .relative(-1e300)] {
            #expect(throws: ReelError.self) { try target.resolve(current: 0, duration: .greatestFiniteMagnitude) }
        }
    }

    @Test func frameIndexNeverTraps() {
        #expect(frameIndex(seconds: 1.5, rate: 48000) == 72000)
        #expect(frameIndex(seconds: 1e300, rate: 48000) == 9_000_000_000_000_000_000)
        #expect(frameIndex(seconds: Double(Int64.max), rate: 1) == 9_000_000_000_000_000_000)
        #expect(frameIndex(seconds: -.infinity, rate: 48000) == 0)
        #expect(frameIndex(seconds: .nan, rate: 48000) == 0)
        #expect(frameIndex(seconds: .infinity, rate: 48000) == 9_000_000_000_000_000_000)
    }
}
