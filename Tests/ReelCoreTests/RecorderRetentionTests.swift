@testable import ReelCore
import ReelAudio
import ReelModel
import Testing

/// Retention's choices as pure values: which takes of a series go, by count and by age; which
/// names belong to a series; segment alignment from the request.
@Suite struct RecorderRetentionTests {
    func take(_ number: Int, created: String = "2026-11-27T00:00:00Z") -> SeriesTake {
        SeriesTake(
            item: Item(id: "id\(number)", kind: .recording, name: "Log \(number)", parent: "p", path: "/Log \(number)", created: created),
            number: number)
    }

    @Test func countKeepsTheNewestIncludingTheTakeBeingMade() {
        let takes = (1...5).map { take($0) }
        let victims = RecorderController.retentionVictims(takes, current: "id5", keep: RetentionRule(count: 2), now: 0)
        #expect(victims.map(\.number) == [1, 2, 3])
        let idle = RecorderController.retentionVictims(Array(takes.prefix(4)), current: nil, keep: RetentionRule(count: 2), now: 0)
        #expect(idle.map(\.number) == [1, 2])
    }

    @Test func daysDeletesOlderTakesButNeverTheOneBeingMade() {
        let now = RecorderController.parseISO8601("2026-11-27T12:00:00Z")!
        let takes = [
            take(1, created: "2026-11-20T12:00:00Z"), take(2, created: "2026-11-26T11:59:59Z"),
            take(3, created: "2026-11-26T12:00:01Z"), take(4, created: "2026-11-01T00:00:00Z"),
        ]
        let victims = RecorderController.retentionVictims(takes, current: "id4", keep: RetentionRule(days: 1), now: now)
        #expect(victims.map(\.number) == [1, 2])
    }

    @Test func seriesNamesAreTheBaseASpaceAndDigits() {
        #expect(RecorderController.seriesNumber(of: "Log 007", base: "Log") == 7)
        #expect(RecorderController.seriesNumber(of: "Log 1234", base: "Log") == 1234)
        #expect(RecorderController.seriesNumber(of: "Log", base: "Log") == nil)
        #expect(RecorderController.seriesNumber(of: "Log 01a", base: "Log") == nil)
        #expect(RecorderController.seriesNumber(of: "Logbook 001", base: "Log") == nil)
        #expect(RecorderController.seriesNumber(of: "Log ٣", base: "Log") == nil, "ASCII digits only")
    }

    @Test func hourAlignedSegmentsStartOnTheLocalHour() throws {
        var request = RecordingRequest(name: "X")
        request.segmentAlign = "hour"
        // 10:59:30 UTC; local offsets are whole quarter hours, so 30 s are left in any zone's hour.
        let plan = try RecorderController.plan(request, sampleRate: 8000, wallClock: 10 * 3600 + 59 * 60 + 30)
        #expect(plan == .segments(SegmentPlan(firstFrames: 30 * 8000, frames: 3600 * 8000)))
        request.segmentSeconds = 900
        let quarter = try RecorderController.plan(request, sampleRate: 8000, wallClock: 10 * 3600 + 59 * 60 + 30)
        #expect(quarter == .segments(SegmentPlan(firstFrames: 30 * 8000, frames: 900 * 8000)))
    }
}
