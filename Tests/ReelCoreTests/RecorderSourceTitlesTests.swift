// A source's title changes become marks of the take being made, at frames counted from its start.

import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import ReelRuntime
import Testing

@Suite struct RecorderSourceTitlesTests {
    /// `streamTitleChanged` is where a title becomes a mark: stored with the take being made, at
    /// its frame from the take's start (the input is paced at 8000 frames a second), the title as the label; none while no take is open, none
    /// for a cleared title, and none after the take.
    @Test func aTitleChangeIsAMarkAtItsFrameInTheTakeBeingMade() throws {
        let series = RecorderSeriesTests()
        let (recorder, store, directory) = try series.recorder()
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
        recorder.queue.sync { recorder.streamTitleChanged(SourceTitles.Change(frame: 12_000, title: "Line\nbreak")) }
        // The take holds both marked frames before it stops (a mark past a take's end goes on its last frame).
        #expect(series.waitUntil { recorder.state.elapsed >= 2 })
        let stopped = Locked<Result<Item?, ReelError>?>(nil)
        recorder.stop { result in stopped.withLock { $0 = result } }
        #expect(series.waitUntil { stopped.current != nil })
        // After the take: nothing more is kept for it.
        recorder.queue.sync { recorder.streamTitleChanged(SourceTitles.Change(frame: 14_000, title: "Late")) }
        let marks = try store.marks(ofRecording: take.id).map(\.mark)
        #expect(marks.map(\.frame) == [8_000, 12_000])
        #expect(marks.map(\.label) == ["News", "Line break"])
    }

    /// A title too long for a label is cut at a character to the label's limit.
    @Test func aLongTitleIsCutToALabel() {
        let long = String(repeating: "é", count: 700)
        let label = RecorderController.markLabel(forTitle: long)
        #expect(label.map { $0.utf8.count <= Mark.maximumLabelBytes } == true)
        #expect(label.map { $0.count == 500 } == true)
        #expect(RecorderController.markLabel(forTitle: " \t ") == nil)
    }
}
