import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import Testing

/// A capture device giving a ramp (sample n holds n) only as far as the test allows: the frame
/// being captured when a mark is made is known exactly.
final class GatedRampInput: PCMInput, @unchecked Sendable {
    let name = "gated ramp"
    private let state = Locked((produced: 0, allowed: 0))

    /// Lets the device deliver frames up to `frames` in all.
    func allow(_ frames: Int) { state.withLock { $0.allowed = frames } }

    func open(_ format: PCMFormat, timing: PCMTiming) throws(ReelError) -> PCMConfiguration {
        PCMConfiguration(format: format, periodFrames: 400, bufferFrames: 1600)
    }

    /// What is allowed and not yet read, up to `frames` (a device's non-blocking read).
    func read(into buffer: UnsafeMutableRawPointer, frames: Int) -> Int {
        let (start, count) = state.withLock { state -> (Int, Int) in
            let count = min(frames, state.allowed - state.produced)
            defer { state.produced += max(count, 0) }
            return (state.produced, count)
        }
        guard count > 0 else { return -Int(EAGAIN) }
        let samples = buffer.assumingMemoryBound(to: Int16.self)
        for index in 0..<count { samples[index] = Int16(truncatingIfNeeded: start + index) }
        return count
    }

    func prepare() -> Int32 { 0 }
    func resume() -> Int32 { 0 }
    func drop() {}
    func wait(timeoutMilliseconds: Int) -> Int32 {
        usleep(1000)
        return 0
    }
    func close() {}
}

/// Marks in takes (`recorder.mark`, the recorder's own `addMark(label:atFrame:)`) and in a
/// recording playing (`player.mark`, `player.seek {mark}`): frame-exact, kept before the reply,
/// written into the file as chapters where the format has them.
@Suite struct RecorderMarksTests {
    let input = GatedRampInput()

    func recorder() throws -> (RecorderController, LibraryStore, String) {
        let directory = NSTemporaryDirectory() + "reel-marks-\(UUID().uuidString)"
        let store = try LibraryStore(directory: directory)
        let recorder = RecorderController(
            device: input, timing: PCMTiming(), store: store, defaults: RecordingDefaults(), logger: Logger(label: "test"))
        return (recorder, store, directory)
    }

    func waitUntil(seconds: Double = 60, _ done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !done() && Date() < deadline { usleep(2000) }
        return done()
    }

    func start(_ recorder: RecorderController, _ request: RecordingRequest) throws -> RecorderState {
        let result = Awaited<Result<RecorderState, ReelError>>()
        recorder.start(request) { result.put($0) }
        return try #require(result.get()).get()
    }

    func mark(_ recorder: RecorderController, _ label: String?) -> Result<Mark, ReelError>? {
        let result = Awaited<Result<Mark, ReelError>>()
        recorder.mark(label: label) { result.put($0) }
        return result.get()
    }

    func stop(_ recorder: RecorderController) throws -> Item? {
        let result = Awaited<Result<Item?, ReelError>>()
        recorder.stop { result.put($0) }
        return try #require(result.get(timeout: 60)).get()
    }

    /// Lets the device deliver `frames` in all and waits until the engine has them.
    func capture(_ recorder: RecorderController, through frames: Int) -> Bool {
        input.allow(frames)
        return waitUntil { recorder.engine.snapshot.capturedFrames == Int64(frames) }
    }

    /// `ffprobe`'s chapters of `path`: (start in seconds, title).
    func chapters(_ path: String) throws -> [(start: Double, title: String?)] {
        let output = try run("/usr/bin/ffprobe", ["-v", "error", "-show_chapters", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        let chapters = json?["chapters"] as? [[String: Any]] ?? []
        return chapters.map { chapter in
            let start = Double(chapter["start_time"] as? String ?? "") ?? -1
            return (start, (chapter["tags"] as? [String: Any])?["title"] as? String)
        }
    }

    func run(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test(arguments: ["flac", "ogg", "opus"])
    func aTakesMarksAreItsFramesAndItsChapters(codec: String) throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rate = codec == "opus" ? 48000 : 8000
        let started = try start(recorder, RecordingRequest(name: "Take", codec: codec, sampleRate: rate, channels: 1))
        let item = try #require(started.item)
        #expect(capture(recorder, through: rate))
        let first = try #require(mark(recorder, "Verse")).get()
        #expect(first.frame == Int64(rate), "the mark is the frame being captured: \(first.frame)")
        #expect(first.seconds == 1)
        #expect(capture(recorder, through: rate * 5 / 2))
        let second = try #require(mark(recorder, nil)).get()
        #expect(second.frame == Int64(rate * 5 / 2))
        #expect(capture(recorder, through: rate * 3))
        let finished = try #require(try stop(recorder))
        #expect(finished.duration == 3)

        let listed = try store.itemWithMarks(.id(item.id)).marks
        #expect(listed == [first, second])
        let found = try chapters(try store.audioPath(for: finished))
        #expect(found.map(\.start) == [1, 2.5], "chapters: \(found)")
        #expect(found.first?.title == "Verse")
        if codec == "flac" {
            let tags = try run("/usr/bin/metaflac", ["--export-tags-to=-", try store.audioPath(for: finished)])
            #expect(tags.contains("CHAPTER001=00:00:01.000\nCHAPTER001NAME=Verse\nCHAPTER002=00:00:02.500\n"), "\(tags)")
        }
        // The file is whole and the same length after its chapters were written.
        let reader = try AudioFileOpener.open(path: try store.audioPath(for: finished))
        #expect(reader.frameCount == Int64(rate * 3))
    }

    @Test func aWAVTakeKeepsItsMarksInTheLibraryOnly() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try start(recorder, RecordingRequest(name: "Plain", codec: "wav", sampleRate: 8000, channels: 1))
        #expect(capture(recorder, through: 4000))
        let made = try #require(mark(recorder, "here")).get()
        #expect(capture(recorder, through: 8000))
        let finished = try #require(try stop(recorder))
        #expect(try store.itemWithMarks(.id(finished.id)).marks == [made])
        let reader = try AudioFileOpener.open(path: try store.audioPath(for: finished))
        #expect(reader.frameCount == 8000)
    }

    @Test func aMarkIsKeptWhenItIsAnswered() throws {
        let (recorder, _, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let started = try start(recorder, RecordingRequest(name: "Kept", codec: "flac", sampleRate: 8000, channels: 1))
        #expect(capture(recorder, through: 2000))
        let made = try #require(mark(recorder, "now")).get()
        // Another connection to the same database (a restarted daemon) sees it while the take
        // is still being made: it was committed before the reply.
        let other = try LibraryStore(directory: directory)
        #expect(try other.marks(ofRecording: try #require(started.item).id).map(\.mark) == [made])
        _ = try stop(recorder)
    }

    @Test func aMarkPastASegmentsEndGoesIntoTheNextSegment() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var request = RecordingRequest(name: "Seg", codec: "flac", sampleRate: 8000, channels: 1)
        request.segmentSeconds = 1
        _ = try start(recorder, request)
        #expect(capture(recorder, through: 4000))
        // The recorder's own mark (a title change) at session frame 12000: in the second segment.
        let added = Awaited<Result<Mark, ReelError>>()
        recorder.addMark(label: "Next title", atFrame: 12000) { added.put($0) }
        #expect(try #require(added.get()).get().frame == 12000)
        #expect(capture(recorder, through: 20000))
        #expect(waitUntil { recorder.state.series?.takes == 2 })
        _ = try stop(recorder)
        let takes = try store.list().items.filter { $0.kind == .recording }.sorted { $0.name < $1.name }
        #expect(takes.map(\.name) == ["Seg 001", "Seg 002", "Seg 003"])
        let marks = try takes.map { try store.itemWithMarks(.id($0.id)).marks ?? [] }
        #expect(marks.map { $0.map(\.frame) } == [[], [4000], []])
        #expect(try chapters(try store.audioPath(for: takes[1])).map(\.title) == ["Next title"])
        #expect(try chapters(try store.audioPath(for: takes[0])).isEmpty)
    }

    @Test func aMarkPastTheLastSegmentsEndIsOnItsLastFrame() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var request = RecordingRequest(name: "End", codec: "flac", sampleRate: 8000, channels: 1)
        request.segmentSeconds = 1
        _ = try start(recorder, request)
        #expect(capture(recorder, through: 4000))
        let added = Awaited<Result<Mark, ReelError>>()
        recorder.addMark(label: "Late", atFrame: 6000) { added.put($0) }
        #expect(try #require(added.get()).get().frame == 6000)
        let last = try #require(try stop(recorder))
        #expect(last.name == "End 001" && last.duration == 0.5)
        #expect(try store.itemWithMarks(.id(last.id)).marks?.map(\.frame) == [3999])
        #expect(try chapters(try store.audioPath(for: last)).map(\.title) == ["Late"])
    }

    @Test func aMarkNeedsATakeAndAPlainLabel() throws {
        let (recorder, _, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard case .failure(let idle)? = mark(recorder, "x") else {
            Issue.record("recorder.mark while idle did not fail")
            return
        }
        #expect(idle.reason == .notRecording)
        #expect(idle.message.contains("nothing is being recorded"))

        var request = RecordingRequest(name: "Vox", codec: "flac", sampleRate: 8000, channels: 1)
        request.trigger = TriggerRequest(level: -1)
        _ = try start(recorder, request)
        #expect(capture(recorder, through: 800))
        guard case .failure(let armed)? = mark(recorder, nil) else {
            Issue.record("recorder.mark while armed with no take did not fail")
            return
        }
        #expect(armed.reason == .notRecording)
        #expect(armed.message.contains("armed"))
        _ = try stop(recorder)

        _ = try start(recorder, RecordingRequest(name: "Labels", codec: "wav", sampleRate: 8000, channels: 1))
        guard case .failure(let newline)? = mark(recorder, "two\nlines") else {
            Issue.record("a label with a newline was taken")
            return
        }
        #expect(newline.reason == .outOfRange)
        guard case .failure(let long)? = mark(recorder, String(repeating: "x", count: 1001)) else {
            Issue.record("a label of 1001 bytes was taken")
            return
        }
        #expect(long.reason == .outOfRange)
        let finished = try #require(try stop(recorder))
        _ = finished
    }
}

/// `player.mark` and `player.seek {mark}` on a recording of the library.
@Suite struct PlayerMarksTests {
    @Test func aMarkMadeWhilePlayingIsWhereSeekingToItLands() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        _ = directory
        let upload = core.library.newUploadPath()
        try writeWAV(upload, frames: 8000 * 60)
        let imported = Awaited<Result<Item, ReelError>>()
        core.library.importUpload(path: upload, folder: .root, name: "Talk", displayName: "a.wav") { imported.put($0) }
        let item = try #require(imported.get()).get()

        let stopped = Awaited<Result<Mark, ReelError>>()
        core.player.mark(label: "x") { stopped.put($0) }
        guard case .failure(let error)? = stopped.get() else {
            Issue.record("player.mark while stopped did not fail")
            return
        }
        #expect(error.reason == .notPlaying)

        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(.recording(.id(item.id)), at: nil, afterCurrent: false) { added.put($0) }
        let entry = try #require(try added.get()?.get().first)
        let loaded = Awaited<Result<PlayerState, ReelError>>()
        core.player.load(entry: entry.id, position: 12.3456, playing: false) { loaded.put($0) }
        #expect((try? loaded.get()?.get())?.state == .paused)

        let marked = Awaited<Result<Mark, ReelError>>()
        core.player.mark(label: "Point") { marked.put($0) }
        let mark = try #require(marked.get()).get()
        #expect(mark.frame == 98765)

        let away = Awaited<Result<PlayerState, ReelError>>()
        core.player.seek(.absolute(40)) { away.put($0) }
        _ = try #require(away.get()).get()
        let sought = Awaited<Result<PlayerState, ReelError>>()
        core.player.seek(toMark: 0) { sought.put($0) }
        let state = try #require(sought.get()).get()
        #expect(state.position == 98765.0 / 8000, "landed at \(state.position)")

        let beyond = Awaited<Result<PlayerState, ReelError>>()
        core.player.seek(toMark: 1) { beyond.put($0) }
        guard case .failure(let outOfRange)? = beyond.get() else {
            Issue.record("seeking to a mark that is not there did not fail")
            return
        }
        #expect(outOfRange.reason == .outOfRange)
        #expect(outOfRange.message.contains("1 mark"))
    }
}
