import Foundation
import ReelModel
import Testing

@testable import ReelAudio
import ReelTestSupport

/// A seek in an MP3 lands on the exact frame and what follows is the same, byte for byte, as a
/// decode from the start: with a Xing/Info tag or without, before the background scan's index
/// is there (libmpg123 parses forward from the frames it indexed) and after.
@Suite struct MP3SeekTests {
    let directory = TestAudio.temporaryDirectory()

    /// A full-scale tone: LAME's VBR mode makes small frames that borrow much of their data from
    /// the frames before (the bit reservoir), which a seek must decode again.
    @Test(arguments: ["mp3-cbr-noxing", "mp3-cbr", "mp3", "mp3-noxing", "mp3-xing-only"])
    func seekMatchesAStraightDecode(kind: String) throws {
        let path = directory.appendingPathComponent("\(kind).mp3").path
        try TestAudio.writeTone(to: path, codec: kind, seconds: 12, amplitude: 1)
        let straight = try TestAudio.decodeAll(try AudioFileOpener.open(path: path))
        let total = straight.count / 2
        let compared = 4 * 1152
        let targets = [0, 1, 1151, 1152 * 7 + 300, 44100 * 5 + 1234, total - compared - 17, total - 1]

        let unindexed = try Mpg123Reader(
            path: path, layout: MP3Layout.read(path: path), lengthScan: .background, backgroundScan: false)
        let indexed = try Mpg123Reader(path: path)
        #expect(waitUntil { indexed.backgroundScanFinished })
        for (name, reader) in [("without the scan's index", unindexed), ("with it", indexed)] {
            for target in targets {
                try reader.seek(to: Int64(target))
                let count = min(compared, total - target)
                var after = [Int16](repeating: 0, count: count * 2)
                let read = try after.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: count) }
                #expect(read == count, "\(name), seek to \(target): read \(read) frames")
                let expected = Array(straight[(target * 2)..<((target + count) * 2)])
                let firstDifference = after.indices.first { after[$0] != expected[$0] }.map { $0 / 2 }
                #expect(firstDifference == nil, "\(name), seek to \(target): frame \(firstDifference ?? 0) after it differs")
            }
        }
    }
}
