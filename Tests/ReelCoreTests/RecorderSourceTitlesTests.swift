// A source's title changes become marks of the take being made, at frames counted from its start.

import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import Testing

@Suite struct RecorderSourceTitlesTests {
    /// `streamTitleChanged` is where a title becomes a mark: kept with the take being made, at its
    /// frame from the take's start; none while no take is open.
    @Test func aTitleChangeIsKeptAtItsFrameInTheTakeBeingMade() throws {
        let series = RecorderSeriesTests()
        let (recorder, _, directory) = try series.recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // No take: nothing to mark.
        recorder.queue.sync { recorder.streamTitleChanged(SourceTitles.Change(frame: 5, title: "Before")) }
        let request = RecordingRequest(name: "Show", codec: "wav", sampleRate: 8000, channels: 1)
        guard case .success? = series.start(recorder, request) else {
            Issue.record("recorder.start failed")
            return
        }
        let take = try #require(recorder.state.item)
        recorder.queue.sync { recorder.streamTitleChanged(SourceTitles.Change(frame: 8_000, title: "News")) }
        recorder.queue.sync { recorder.streamTitleChanged(SourceTitles.Change(frame: 10_000, title: nil)) }
        #expect(recorder.titleMarks(of: take.id) == [TitleMark(frame: 8_000, title: "News"), TitleMark(frame: 10_000, title: nil)])
        let stopped = Locked<Result<Item?, ReelError>?>(nil)
        recorder.stop { result in stopped.withLock { $0 = result } }
        #expect(series.waitUntil { stopped.current != nil })
        // After the take: nothing more is kept for it.
        recorder.queue.sync { recorder.streamTitleChanged(SourceTitles.Change(frame: 12_000, title: "Late")) }
        #expect(recorder.titleMarks(of: take.id).count == 2)
    }
}
