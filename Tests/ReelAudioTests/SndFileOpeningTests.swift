import Foundation
import Testing
@testable import ReelAudio
import ReelModel
import ReelRuntime

/// libsndfile's error after a failed open lives in one process-wide variable that every open
/// clears: opens on other threads must not change the verdict a failed open gives.
@Suite struct SndFileOpeningTests {
    /// A text file opened while other threads open a good WAV again and again is always "not an
    /// audio file" with libsndfile's sentence for it, never a corrupt file with "No Error.".
    @Test func aFailedOpensVerdictIsItsOwnWhileOtherThreadsOpenGoodFiles() throws {
        let directory = TestAudio.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("good.wav").path
        try TestAudio.writeTone(to: good, codec: "wav", seconds: 0.01)
        let text = directory.appendingPathComponent("text.wav").path
        try Data("this is text, not a WAV file at all".utf8).write(to: URL(fileURLWithPath: text))

        let rounds = 20000
        let verdicts = Locked([String]())
        let group = DispatchGroup()
        for thread in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var wrong: [String] = []
                for _ in 0..<rounds {
                    if thread % 2 == 0 {
                        _ = try? SndFileReader(path: good)
                        continue
                    }
                    do {
                        _ = try SndFileReader(path: text)
                        wrong.append("the text file opened")
                    } catch {
                        guard let error = error as? ReelError else {
                            wrong.append("\(error)")
                            continue
                        }
                        if error.reason != .unsupportedFormat || !error.message.contains("Format not recognised") {
                            wrong.append("\(error.reason): \(error.message)")
                        }
                    }
                }
                verdicts.withLock { $0 += wrong }
            }
        }
        group.wait()
        let wrong = verdicts.current
        #expect(wrong.count == 0, "\(wrong.count) of \(2 * rounds) failed opens gave another verdict, first: \(wrong.first ?? "")")
    }
}
