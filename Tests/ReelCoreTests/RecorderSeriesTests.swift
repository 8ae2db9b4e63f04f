import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import ReelRuntime
import Testing

/// A capture device producing a ramp (sample n holds n) at many times real time.
final class RampInput: PCMInput, @unchecked Sendable {
    let name = "ramp"
    private let produced = Locked(0)
    private var channels = 1

    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        channels = format.channels
        return PCMConfiguration(format: format, periodFrames: 480, bufferFrames: 1920)
    }

    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        usleep(200)
        let start = produced.withLock { value in defer { value += frames * channels }; return value }
        let samples = buffer.assumingMemoryBound(to: Int16.self)
        for index in 0..<(frames * channels) { samples[index] = Int16(truncatingIfNeeded: start + index) }
        return frames
    }

    func prepare() -> Int32 { 0 }
    func resume() -> Int32 { 0 }
    func drop() {}
    func wait(timeoutMilliseconds: Int) -> Int32 { 0 }
    func close() {}
}

/// Segmented sessions through the recorder: takes named NAME 001…, sample-contiguous in the
/// library, retention by count over this and earlier series, errors for what is not served.
@Suite struct RecorderSeriesTests {
    func recorder() throws -> (RecorderController, LibraryStore, String) {
        let directory = NSTemporaryDirectory() + "reel-recorder-\(UUID().uuidString)"
        let store = try LibraryStore(directory: directory)
        let recorder = RecorderController(
            device: RampInput(), timing: PCMTiming(), store: store, defaults: RecordingDefaults(), logger: Logger(label: "test"),
            ringSeconds: 120)
        return (recorder, store, directory)
    }

    func start(_ recorder: RecorderController, _ request: RecordingRequest) -> Result<RecorderState, ReelError>? {
        let result = Locked<Result<RecorderState, ReelError>?>(nil)
        recorder.start(request) { reply in result.withLock { $0 = reply } }
        _ = waitUntil { result.current != nil }
        return result.current
    }

    func waitUntil(seconds: Double = 60, _ done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !done() && Date() < deadline { usleep(2000) }
        return done()
    }

    func names(_ store: LibraryStore) throws -> [String] {
        try store.list().items.filter { $0.kind == .recording }.map(\.name).sorted()
    }

    @Test func aSegmentedSessionKeepsTheNewestTwoAndTheirSamplesJoin() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var request = RecordingRequest(name: "Log", codec: "flac", sampleRate: 8000, channels: 1, maxDuration: 35)
        request.segmentSeconds = 10
        request.keep = RetentionRule(count: 2)
        guard case .success(let started)? = start(recorder, request) else {
            Issue.record("recorder.start failed")
            return
        }
        #expect(started.state == .recording)
        #expect(started.series?.takes == 0)
        #expect(started.item?.name == "Log 001")
        #expect(waitUntil { !recorder.isRecording })
        #expect(waitUntil { (try? names(store)) == ["Log 003", "Log 004"] }, "left: \((try? names(store)) ?? [])")
        let state = recorder.state
        #expect(state.state == .idle)
        #expect(state.error == nil)
        let items = try store.list().items.filter { $0.kind == .recording }.sorted { $0.name < $1.name }
        #expect(items.map(\.duration) == [10, 5])
        // Segment 3 begins at frame 160000 of the session and 4 right after it.
        var joined: [Int16] = []
        for item in items {
            let reader = try AudioFileOpener.open(path: try store.audioPath(for: item))
            var chunk = [Int16](repeating: 0, count: 4096)
            while true {
                let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
                if frames == 0 { break }
                joined += chunk[0..<frames]
            }
        }
        #expect(joined.count == 120_000)
        let expected = (160_000..<280_000).map { Int16(truncatingIfNeeded: $0) }
        #expect(joined.elementsEqual(expected), "segments 3 and 4 do not hold frames 160000… of the ramp in order")

        // A new series of the same name goes on numbering, and retention covers the earlier one.
        request.maxDuration = 10
        guard case .success(let again)? = start(recorder, request) else {
            Issue.record("the second series did not start")
            return
        }
        #expect(again.item?.name == "Log 005")
        #expect(waitUntil { !recorder.isRecording })
        #expect(waitUntil { (try? names(store)) == ["Log 004", "Log 005"] }, "left: \((try? names(store)) ?? [])")
    }

    @Test func stopEndsTheSessionAndClosesTheCurrentTake() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var request = RecordingRequest(name: "Stop", codec: "wav", sampleRate: 8000, channels: 1)
        request.segmentSeconds = 1
        guard case .success? = start(recorder, request) else {
            Issue.record("recorder.start failed")
            return
        }
        #expect(waitUntil { recorder.state.series.map { $0.takes >= 2 } ?? false })
        let stopped = Locked<Result<Item?, ReelError>?>(nil)
        recorder.stop { result in stopped.withLock { $0 = result } }
        #expect(waitUntil { stopped.current != nil })
        #expect(!recorder.isRecording)
        let items = try store.list().items.filter { $0.kind == .recording }
        #expect(items.count >= 3)
        #expect(try store.inProgressRecordings().isEmpty, "every take is finished")
    }

    @Test func cancelDeletesTheCurrentTakeOnly() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var request = RecordingRequest(name: "Gone", codec: "flac", sampleRate: 8000, channels: 1)
        request.segmentSeconds = 1
        guard case .success? = start(recorder, request) else {
            Issue.record("recorder.start failed")
            return
        }
        #expect(waitUntil { recorder.state.series.map { $0.takes >= 2 } ?? false })
        let cancelled = Locked<Result<RecorderState, ReelError>?>(nil)
        recorder.cancel { result in cancelled.withLock { $0 = result } }
        #expect(waitUntil { cancelled.current != nil })
        let items = try store.list().items.filter { $0.kind == .recording }
        #expect(items.allSatisfy { ($0.duration ?? 0) == 1 }, "only whole closed segments are left: \(items.map(\.duration))")
        #expect(try store.inProgressRecordings().isEmpty)
    }

    /// A recorder without a player cannot record what plays; a station that does not answer is
    /// `unreachable`, naming it. Nothing is created either way.
    @Test(arguments: [
        (RecordingSource.player, "player", ErrorReason.unsupportedFormat),
        (RecordingSource.url("http://127.0.0.1:1/x"), "http://127.0.0.1:1/x", ErrorReason.unreachable),
    ])
    func sourcesThatCannotBeRecordedAreAClearError(source: RecordingSource, named: String, reason: ErrorReason) throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var request = RecordingRequest(name: "X")
        request.source = source
        guard case .failure(let error)? = start(recorder, request) else {
            Issue.record("source \(named) was accepted")
            return
        }
        #expect(error.reason == reason)
        #expect(error.message.contains(named), "\(error.message)")
        #expect(try names(store).isEmpty, "nothing was created")
        #expect(!recorder.isRecording)
    }

    @Test func badSeriesParametersChangeNothing() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var requests: [(RecordingRequest, String)] = []
        var r = RecordingRequest(name: "A"); r.segmentSeconds = 0; requests.append((r, "segmentSeconds"))
        r = RecordingRequest(name: "A"); r.segmentAlign = "week"; requests.append((r, "segmentAlign"))
        r = RecordingRequest(name: "A"); r.segmentAlign = "hour"; r.segmentSeconds = 7; requests.append((r, "divide"))
        r = RecordingRequest(name: "A"); r.keep = RetentionRule(count: 0); requests.append((r, "keep.count"))
        r = RecordingRequest(name: "A"); r.trigger = TriggerRequest(level: 3); requests.append((r, "trigger.level"))
        r = RecordingRequest(name: "A"); r.preroll = 5; requests.append((r, "capture_preroll"))
        r = RecordingRequest(name: "A"); r.trigger = TriggerRequest(level: -40); r.segmentSeconds = 5; requests.append((r, "combined"))
        for (request, word) in requests {
            guard case .failure(let error)? = start(recorder, request) else {
                Issue.record("accepted a request whose \(word) is wrong")
                continue
            }
            #expect(error.reason == .outOfRange)
            #expect(error.message.contains(word), "\(error.message) does not name \(word)")
        }
        #expect(try names(store).isEmpty)
        #expect(!recorder.isRecording)
    }
}
