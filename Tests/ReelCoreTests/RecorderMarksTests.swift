import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import ReelRuntime
import ReelTestSupport
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
        let output = try TestTool.run("/usr/bin/ffprobe", ["-v", "error", "-show_chapters", "-of", "json", path])
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        let chapters = json?["chapters"] as? [[String: Any]] ?? []
        return chapters.map { chapter in
            let start = Double(chapter["start_time"] as? String ?? "") ?? -1
            return (start, (chapter["tags"] as? [String: Any])?["title"] as? String)
        }
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
        var before = stat()
        #expect(stat(try store.audioPath(for: item), &before) == 0)
        let finished = try #require(try stop(recorder))
        #expect(finished.duration == 3)

        let listed = try store.itemWithMarks(.id(item.id)).marks
        #expect(listed == [first, second])
        let found = try chapters(try store.audioPath(for: finished))
        #expect(found.map(\.start) == [1, 2.5], "chapters: \(found)")
        #expect(found.first?.title == "Verse")
        if codec == "flac" {
            let tags = try TestTool.run("/usr/bin/metaflac", ["--export-tags-to=-", try store.audioPath(for: finished)])
            #expect(tags.contains("CHAPTER001=00:00:01.000\nCHAPTER001NAME=Verse\nCHAPTER002=00:00:02.500\n"), "\(tags)")
            // Written into the take's padding in place: the same file, its size unchanged.
            var after = stat()
            #expect(stat(try store.audioPath(for: finished), &after) == 0)
            #expect(after.st_ino == before.st_ino)
            #expect(finished.size == Int64(after.st_size))
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

    /// `player.mark`'s chapter writing (`writeChapters(ofRecording:done:)`) never rewrites a
    /// file the recorder is writing: for the take being made it is done at once and the take's
    /// close writes every mark; for a take closing (its row still in progress) it waits until
    /// the row is finished, then writes the recording's own marks.
    @Test func chaptersOfAMarkMadeWhilePlayingWaitForTheRecorder() throws {
        let (recorder, store, directory) = try recorder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let started = try start(recorder, RecordingRequest(name: "Take", codec: "flac", sampleRate: 8000, channels: 1))
        let take = try #require(started.item)
        #expect(capture(recorder, through: 8000))
        _ = try store.addMark(recording: take.id, frame: 4000, label: "played")
        let answered = Locked(false)
        recorder.writeChapters(ofRecording: take.id) { answered.withLock { $0 = true } }
        #expect(waitUntil { answered.current })
        #expect(capture(recorder, through: 16000))
        let finished = try #require(try stop(recorder))
        let takeFile = try store.audioPath(for: finished)
        #expect(try chapters(takeFile).map(\.start) == [0.5], "the take's close wrote the mark")

        let closing = try store.addRecording(name: "Closing", format: AudioFormat(codec: "flac", sampleRate: 8000, channels: 1))
        let closingFile = try store.audioPath(for: closing)
        try FileManager.default.copyItem(atPath: takeFile, toPath: closingFile)
        try store.updateRecording(id: closing.id, duration: 2, size: finished.size)
        _ = try store.addMark(recording: closing.id, frame: 8000, label: "later")
        let waited = Locked(false)
        recorder.writeChapters(ofRecording: closing.id) { waited.withLock { $0 = true } }
        recorder.queue.sync {}
        #expect(!waited.current, "it did not wait for the closing take")
        #expect(try chapters(closingFile).map(\.start) == [0.5], "the closing take's file was rewritten")
        try store.updateRecording(id: closing.id, finished: true)
        recorder.queue.sync { recorder.finishPendingChapters(ofRecording: closing.id) }
        #expect(waited.current)
        let found = try chapters(closingFile)
        #expect(found.map(\.start) == [1] && found.first?.title == "later", "\(found)")
        #expect(try store.item(id: closing.id).size == Int64(try #require(
            try FileManager.default.attributesOfItem(atPath: closingFile)[.size] as? Int)))
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

        let file = try core.player.store.audioPath(for: item)
        let before = try Data(contentsOf: URL(fileURLWithPath: file))
        let marked = Awaited<Result<Mark, ReelError>>()
        core.player.mark(label: "Point") { marked.put($0) }
        let mark = try #require(marked.get()).get()
        #expect(mark.frame == 98765)
        // A WAV has no chapters: the mark is in the library only, the file as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)

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

    /// A mark made while playing a finished FLAC recording is written into its file as a
    /// chapter before the reply, with the marks already there: through a copy renamed over the
    /// file, which stays whole, and the library's size is the new file's.
    @Test func aMarkMadeWhilePlayingAFinishedRecordingIsWrittenIntoItsFileAsAChapter() throws {
        let (core, directory) = try makeCore()
        defer { core.shutdown() }
        let wav = directory + "/talk.wav"
        try writeWAV(wav, frames: 8000 * 60)
        let upload = core.library.newUploadPath()
        let encoded = Process()
        encoded.executableURL = URL(fileURLWithPath: "/usr/bin/flac")
        encoded.arguments = ["-s", "-f", "-o", upload, wav]
        try encoded.run()
        encoded.waitUntilExit()
        #expect(encoded.terminationStatus == 0)
        let imported = Awaited<Result<Item, ReelError>>()
        core.library.importUpload(path: upload, folder: .root, name: "Talk", displayName: "talk.flac") { imported.put($0) }
        let item = try #require(imported.get()).get()
        #expect(item.format?.codec == "flac")
        let store = core.player.store
        let file = try store.audioPath(for: item)

        let added = Awaited<Result<[QueueEntry], ReelError>>()
        core.player.add(.recording(.id(item.id)), at: nil, afterCurrent: false) { added.put($0) }
        let entry = try #require(try added.get()?.get().first)
        let loaded = Awaited<Result<PlayerState, ReelError>>()
        core.player.load(entry: entry.id, position: 12.3456, playing: false) { loaded.put($0) }
        #expect((try? loaded.get()?.get())?.state == .paused)
        let first = Awaited<Result<Mark, ReelError>>()
        core.player.mark(label: "Point") { first.put($0) }
        #expect(try #require(first.get()).get().frame == 98765)
        let chapters = RecorderMarksTests()
        var found = try chapters.chapters(file)
        #expect(found.count == 1 && found.first?.start == 12.345 && found.first?.title == "Point", "\(found)")

        let away = Awaited<Result<PlayerState, ReelError>>()
        core.player.seek(.absolute(30)) { away.put($0) }
        _ = try #require(away.get()).get()
        let second = Awaited<Result<Mark, ReelError>>()
        core.player.mark(label: nil) { second.put($0) }
        #expect(try #require(second.get()).get().frame == 240_000)
        found = try chapters.chapters(file)
        #expect(found.map(\.start) == [12.345, 30] && found.map(\.title) == ["Point", nil], "\(found)")
        let tags = try TestTool.run("/usr/bin/metaflac", ["--export-tags-to=-", file])
        #expect(tags.contains("CHAPTER001=00:00:12.345\nCHAPTER001NAME=Point\nCHAPTER002=00:00:30.000\n"), "\(tags)")

        // Whole, the same length, listed at its new size; no copy left beside it.
        #expect(try AudioFileOpener.open(path: file).frameCount == 8000 * 60)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(try store.item(id: item.id).size == Int64(size))
        #expect(!FileManager.default.fileExists(atPath: store.chaptersCopyPath(forRecording: item.id)))
        #expect(try store.itemWithMarks(.id(item.id)).marks?.count == 2)
    }
}
