import Foundation
import ReelModel
import Testing

@testable import ReelAudio

/// An MP3's length: from its Xing/Info tag at open, or else from a scan of the whole file on a
/// background thread, with nothing in between shown as if it were exact.
@Suite struct MP3LengthTests {
    let directory = TestAudio.temporaryDirectory()

    func mp3(_ kind: String, seconds: Double, name: String = "") throws -> String {
        let path = directory.appendingPathComponent("\(name)\(kind).mp3").path
        try TestAudio.writeTone(to: path, codec: kind, seconds: seconds)
        return path
    }

    @Test(arguments: ["mp3", "mp3-cbr", "mp3-xing-only"])
    func tagGivesTheExactLengthAtOpen(kind: String) throws {
        let path = try mp3(kind, seconds: 4)
        let reader = try #require(try AudioFileOpener.open(path: path) as? Mpg123Reader)
        #expect(reader.lengthSource == .header)
        #expect(reader.frameCountIsFinal)
        let count = try #require(reader.frameCount)
        #expect(Int64(try TestAudio.decodeAll(reader).count / 2) == count)
    }

    @Test(arguments: ["mp3-noxing", "mp3-cbr-noxing"])
    func withoutTagTheLengthComesFromABackgroundScan(kind: String) throws {
        let path = try mp3(kind, seconds: 6)
        let reader = try AudioFileOpener.open(path: path)
        #expect((reader as? Mpg123Reader)?.lengthSource == .backgroundScan)
        let exact = try #require(try Mpg123Reader(path: path, lengthScan: .atOpen).frameCount)
        // Until the scan ends, the count is unknown: never libmpg123's estimate from the first frame.
        var seen: Set<Int64?> = [reader.frameCount]
        #expect(waitUntil {
            seen.insert(reader.frameCount)
            return reader.frameCountIsFinal
        })
        #expect(reader.frameCount == exact)
        #expect(seen.isSubset(of: [nil, exact]), "counts seen: \(seen)")
        #expect(Int64(try TestAudio.decodeAll(reader).count / 2) == exact)
    }

    /// Opening reads the first frames and the end of the file (libmpg123 looks for an ID3v1
    /// tag), the same few kilobytes for a file of 2 s as for one of 40 s: no scan at open.
    @Test(arguments: ["mp3", "mp3-noxing"])
    func openReadsAFewKilobytesHoweverLongTheFile(kind: String) throws {
        let short = try mp3(kind, seconds: 2, name: "short-")
        let long = try mp3(kind, seconds: 40, name: "long-")
        let longSize = try #require(try FileManager.default.attributesOfItem(atPath: long)[.size] as? Int)
        #expect(longSize > 200_000)
        for path in [short, long] {
            let reader = try #require(try AudioFileOpener.open(path: path) as? Mpg123Reader)
            #expect(reader.bytesReadAtOpen < 8192, "\(path): \(reader.bytesReadAtOpen) bytes")
        }
        // The count does see a scan: opened for the library, a file without a tag is read whole.
        if kind == "mp3-noxing" {
            let scanned = try Mpg123Reader(path: long, lengthScan: .atOpen)
            #expect(scanned.lengthSource == .scanAtOpen)
            #expect(scanned.bytesReadAtOpen >= longSize)
        }
    }

    /// A download cut short keeps its tag but not the frames it counts: the tag is not believed.
    @Test func truncatedFileIsScanned() throws {
        let path = try mp3("mp3", seconds: 6)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path))
        let reader = try #require(try AudioFileOpener.open(path: path) as? Mpg123Reader)
        #expect(reader.lengthSource == .backgroundScan)
        #expect(waitForFinalLength(reader))
        let count = try #require(reader.frameCount)
        #expect(Int64(try TestAudio.decodeAll(reader).count / 2) == count)
        #expect(abs(Double(count) / 44100 - 3) < 0.1)
    }

    @Test func id3v2TagBeforeTheFirstFrameIsSkipped() throws {
        let path = try mp3("mp3", seconds: 3)
        // An ID3v2.4 tag: a TIT2 frame, then padding to 3,000 bytes (sizes are syncsafe).
        func syncsafe(_ n: Int) -> [UInt8] { [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)] }
        let title = [0x03] + Array("A tone".utf8)
        var frame = Array("TIT2".utf8) + syncsafe(title.count) + [0, 0] + title
        frame += [UInt8](repeating: 0, count: 3000 - 10 - frame.count)
        let tag = Array("ID3".utf8) + [4, 0, 0] + syncsafe(frame.count) + frame
        let audio = try Data(contentsOf: URL(fileURLWithPath: path))
        try (Data(tag) + audio).write(to: URL(fileURLWithPath: path))
        let layout = try #require(MP3Layout.read(path: path))
        #expect(layout.audioStart == 3000)
        #expect(layout.declaredFrames != nil)
        let reader = try #require(try AudioFileOpener.open(path: path) as? Mpg123Reader)
        #expect(reader.lengthSource == .header)
        let count = try #require(reader.frameCount)
        #expect(Int64(try TestAudio.decodeAll(reader).count / 2) == count)
    }
}
