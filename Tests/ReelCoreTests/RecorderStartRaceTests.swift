// A take whose folder is deleted while it starts.
import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import Testing

/// ALSA's `null` capture device, with `whileOpening` run inside `open` (between the take's row
/// and its file, where a deletion from another client can land).
final class InterruptedInput: PCMInput, @unchecked Sendable {
    let device = ALSAInput(name: "null")
    let whileOpening: @Sendable () -> Void
    init(whileOpening: @escaping @Sendable () -> Void) { self.whileOpening = whileOpening }

    var name: String { device.name }
    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        whileOpening()
        return try device.open(format, timing: timing)
    }
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int { device.read(into: buffer, frames: frames) }
    func prepare() -> Int32 { device.prepare() }
    func resume() -> Int32 { device.resume() }
    func drop() { device.drop() }
    func wait(timeoutMilliseconds: Int) -> Int32 { device.wait(timeoutMilliseconds: timeoutMilliseconds) }
    func close() { device.close() }
}

@Suite struct RecorderStartRaceTests {
    /// Regression (found by the power-cut test's mixed mode, Tests/PowerCut): the deletion of
    /// the folder a take was starting in committed before the take was set, so nothing stopped
    /// it; `recorder.start` answered with an item that no longer existed and recorded into a
    /// file no recording listed (moved to lost+found at the next start).
    @Test func aFolderDeletedWhileTheTakeStartsIsNotFoundAndLeavesNoFile() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LibraryStore(directory: directory)
        let folder = try store.createFolder(name: "Talks")
        let input = InterruptedInput { _ = try? store.delete(.id(folder.id)) }
        let recorder = RecorderController(
            device: input, timing: PCMTiming(), store: store, defaults: RecordingDefaults(), logger: Logger(label: "test"))
        let answer = Awaited<Result<RecorderState, ReelError>>()
        recorder.start(RecordingRequest(folder: .id(folder.id), name: "idea")) { answer.put($0) }
        let result = try #require(answer.get())
        guard case .failure(let error) = result else {
            Issue.record("the start was answered \(result) for a take whose folder is gone")
            return
        }
        #expect(error.reason == .notFound)
        #expect(error.message.contains("/Talks/idea"))
        #expect(recorder.state.state == .idle)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + "/audio").isEmpty)
    }
}
