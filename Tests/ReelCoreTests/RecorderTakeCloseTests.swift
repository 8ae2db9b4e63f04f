// The recorder's state while a take closes.
import Foundation
import Logging
import ReelAudio
@testable import ReelCore
import ReelLibrary
import ReelModel
import Testing

@Suite struct RecorderTakeCloseTests {
    /// Regression (a CI run: `recorder.start` into a full disk was answered with no item): a
    /// take that closes clears the session's take at once, and its finished row came only after
    /// the repair, the loudness and the commit; a state read between named no take at all. Here
    /// the commit waits for another program's lock on the database, holding that window open.
    @Test func aTakeThatClosesIsNamedByTheStateUntilItsRowIsFinished() throws {
        let directory = NSTemporaryDirectory() + "reel-core-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LibraryStore(directory: directory, busyTimeout: 30)
        let recorder = RecorderController(
            device: ALSAInput(name: "null"), timing: PCMTiming(), store: store, defaults: RecordingDefaults(),
            logger: Logger(label: "test"))
        let started = Awaited<Result<RecorderState, ReelError>>()
        recorder.start(RecordingRequest(name: "idea")) { started.put($0) }
        let answered = try #require(started.get())
        let item = try #require(try answered.get().item)
        // Another program holds the database's write lock until its stdin closes.
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = [
            "python3", "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); sys.stdin.read()",
            directory + "/library.sqlite",
        ]
        let output = Pipe()
        let input = Pipe()
        locker.standardOutput = output
        locker.standardInput = input
        try locker.run()
        defer {
            try? input.fileHandleForWriting.close()
            locker.waitUntilExit()
        }
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(said.contains("locked"), "the locker said \(said)")
        let stopped = Awaited<Result<Item?, ReelError>>()
        recorder.stop { stopped.put($0) }
        // The take closes; its row's commit waits for the lock. Every state read meanwhile
        // names the take.
        // Longer than the store's busy timeout: the `null` device captures faster than real
        // time, so when the stop comes a second or more after the start (a loaded machine), a
        // row update at 5 s of audio waits out that timeout for the lock first, holding the
        // recorder's queue, and only then does the take close.
        var closing: RecorderState?
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            let state = recorder.state
            if state.state != .recording {
                closing = state
                break
            }
            usleep(1000)
        }
        let state = try #require(closing, "the take did not close")
        #expect(state.item?.id == item.id, "\(state)")
        try input.fileHandleForWriting.close()
        let answer = try #require(stopped.get(timeout: 30))
        #expect(try answer.get()?.id == item.id)
        #expect(recorder.state.state == .idle)
        #expect(recorder.state.item?.id == item.id)
    }
}
