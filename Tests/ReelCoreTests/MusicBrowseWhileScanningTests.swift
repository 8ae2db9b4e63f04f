// Browsing the music index answers while a scan runs: the front ends (MPD's view among them)
// read what is indexed so far instead of waiting for the scan.
import Dispatch
import Foundation
import Logging
import ReelAudio
import ReelLibrary
import ReelModel
import ReelRuntime
import Testing

@testable import ReelCore

@Suite struct MusicBrowseWhileScanningTests {
    @Test func browseAnswersWhileTheScanWaitsOnAFile() throws {
        let directory = NSTemporaryDirectory() + "reel-music-browse-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let music = directory + "/Music"
        try FileManager.default.createDirectory(atPath: music + "/A", withIntermediateDirectories: true)
        for name in ["1", "2", "3"] {
            FileManager.default.createFile(atPath: "\(music)/A/\(name).flac", contents: Data([1]))
        }
        // The reader stops at the third file until the test lets it go on.
        let gate = DispatchSemaphore(value: 0)
        let reached = DispatchSemaphore(value: 0)
        let reader: MusicScanner.Reader = { path throws(ReelError) in
            if path.hasSuffix("3.flac") {
                reached.signal()
                gate.wait()
            }
            return ScannedAudio(
                tags: TrackTags(title: path, artist: "Alpha", album: "One"), codec: "flac", sampleRate: 44100,
                channels: 2, duration: 1, hasEmbeddedCover: false)
        }
        let store = try LibraryStore(directory: directory + "/data")
        let controller = MusicController(store: store, roots: [music], reader: reader, logger: Logger(label: "test"))
        controller.start()
        #expect(reached.wait(timeout: .now() + 20) == .success)
        #expect(controller.progress.latest.value.running)

        // While the scan waits: a listing answers (with what is indexed so far).
        let answered = DispatchSemaphore(value: 0)
        let count = Locked(-1)
        controller.browse({ index throws(ReelError) in try index.files(root: music, under: "").count }) { result in
            count.withLock { $0 = (try? result.get()) ?? -2 }
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 20) == .success)
        #expect(count.withLock { $0 } >= 0 && count.withLock { $0 } < 3)
        #expect(controller.progress.latest.value.running)

        gate.signal()
        let deadline = Date().addingTimeInterval(20)
        while controller.progress.latest.value.running, Date() < deadline { usleep(10_000) }
        #expect(!controller.progress.latest.value.running)
        #expect(controller.lastScanEnded != nil)
        controller.browse({ index throws(ReelError) in try index.files(root: music, under: "A").count }) { result in
            count.withLock { $0 = (try? result.get()) ?? -2 }
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 20) == .success)
        #expect(count.withLock { $0 } == 3)
        controller.shutdown()
    }
}
