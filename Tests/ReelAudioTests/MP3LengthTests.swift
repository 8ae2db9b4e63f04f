import Foundation
import ReelModel
import Testing

@testable import ReelAudio
import ReelTestSupport

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

    /// An MP3 without a tag, longer than a small file: `copies` of a `seconds`-long encoding,
    /// enough of them to pass `Mpg123Reader.scanAtOpenLimit`.
    func longMP3(_ kind: String, seconds: Double, name: String = "") throws -> String {
        let segment = try mp3(kind, seconds: seconds, name: "\(name)segment-")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        let path = directory.appendingPathComponent("\(name)long-\(kind).mp3").path
        try TestAudio.repeatFile(segment, copies: Int(Mpg123Reader.scanAtOpenLimit) / size + 2, to: path)
        return path
    }

    @Test(arguments: ["mp3-noxing", "mp3-cbr-noxing"])
    func withoutTagALongFileOpensWithAnEstimateThenTheBackgroundScanCounts(kind: String) throws {
        let path = try longMP3(kind, seconds: 6)
        let reader = try AudioFileOpener.open(path: path)
        #expect((reader as? Mpg123Reader)?.lengthSource == .backgroundScan)
        let exact = try #require(try Mpg123Reader(path: path, lengthScan: .atOpen).frameCount)
        // An estimate from the start, close for a steady tone (VBR or not); the count itself is
        // unknown until the scan ends: never an estimate.
        let estimate = try #require(reader.estimatedFrameCount)
        #expect(abs(Double(estimate - exact)) / Double(exact) < 0.01, "estimate \(estimate), exact \(exact)")
        var seen: Set<Int64?> = [reader.frameCount]
        #expect(waitUntil {
            seen.insert(reader.frameCount)
            return reader.frameCountIsFinal
        })
        #expect(reader.frameCount == exact)
        #expect(seen.isSubset(of: [nil, exact]), "counts seen: \(seen)")
        #expect(reader.knownDuration?.estimated == false)
        #expect(reader.knownDuration?.seconds == Double(exact) / 44100)
        #expect(Int64(try TestAudio.decodeAll(reader).count / 2) == exact)
    }

    /// A file up to `scanAtOpenLimit` is counted before the reader opens: exact from the start.
    @Test(arguments: ["mp3-noxing", "mp3-cbr-noxing"])
    func withoutTagASmallFileIsCountedAtOpen(kind: String) throws {
        let path = try mp3(kind, seconds: 6)
        let reader = try #require(try AudioFileOpener.open(path: path) as? Mpg123Reader)
        #expect(reader.lengthSource == .smallFileScan)
        #expect(reader.frameCountIsFinal)
        #expect(reader.estimatedFrameCount == nil)
        let count = try #require(reader.frameCount)
        #expect(reader.knownDuration?.estimated == false)
        #expect(count == (try Mpg123Reader(path: path, lengthScan: .atOpen).frameCount))
        #expect(Int64(try TestAudio.decodeAll(reader).count / 2) == count)
    }

    /// Described only (`.estimate`, adding to the queue): a long file keeps its estimate, no scan.
    @Test func describingALongFileStartsNoScan() throws {
        let path = try longMP3("mp3-noxing", seconds: 6)
        let reader = try Mpg123Reader(path: path, lengthScan: .estimate)
        #expect(reader.lengthSource == .backgroundScan)
        #expect(reader.estimatedFrameCount != nil)
        #expect(reader.knownDuration?.estimated == true)
        #expect(!reader.backgroundScanStarted)
        #expect(reader.frameCount == nil && !reader.frameCountIsFinal)
        let played = try Mpg123Reader(path: path, lengthScan: .background)
        #expect(played.backgroundScanStarted)
    }

    /// Opening reads the first frames and the end of the file (libmpg123 looks for an ID3v1
    /// tag), and without a tag the estimate's windows: the same few kilobytes, or few hundred,
    /// for a file of 2 MB as for one of 20 MB, and a tagged one of 2 s as of 40 s. No scan at
    /// open, except of a small file.
    @Test func openReadsTheSameBytesHoweverLongTheFile() throws {
        for (index, seconds) in [2.0, 40].enumerated() {
            let tagged = try #require(try AudioFileOpener.open(path: try mp3("mp3", seconds: seconds, name: "\(index)-")) as? Mpg123Reader)
            #expect(tagged.bytesReadAtOpen < 8192, "\(seconds) s: \(tagged.bytesReadAtOpen) bytes")
        }
        let windows = MP3LengthEstimate.windows * (MP3LengthEstimate.windowLength + MP3LengthEstimate.lookAhead)
        let long = try longMP3("mp3-noxing", seconds: 40)
        let longer = directory.appendingPathComponent("longer.mp3").path
        try TestAudio.repeatFile(long, copies: 10, to: longer)
        for path in [long, longer] {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            let reader = try #require(try AudioFileOpener.open(path: path) as? Mpg123Reader)
            #expect(reader.lengthSource == .backgroundScan)
            #expect(reader.bytesReadAtOpen < 8192 + windows + 1024, "\(size) bytes: \(reader.bytesReadAtOpen) read")
        }
        // A small file is read whole at open; so is any, opened for the library.
        let small = try mp3("mp3-noxing", seconds: 2)
        let smallSize = try #require(try FileManager.default.attributesOfItem(atPath: small)[.size] as? Int)
        let counted = try #require(try AudioFileOpener.open(path: small) as? Mpg123Reader)
        #expect(counted.lengthSource == .smallFileScan)
        #expect(counted.bytesReadAtOpen >= smallSize)
        let longSize = try #require(try FileManager.default.attributesOfItem(atPath: long)[.size] as? Int)
        let scanned = try Mpg123Reader(path: long, lengthScan: .atOpen)
        #expect(scanned.lengthSource == .scanAtOpen)
        #expect(scanned.bytesReadAtOpen >= longSize)
    }

    /// A download cut short keeps its tag but not the frames it counts: the tag is not believed.
    @Test func truncatedFileIsScanned() throws {
        let path = try mp3("mp3", seconds: 6)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path))
        let reader = try #require(try AudioFileOpener.open(path: path) as? Mpg123Reader)
        #expect(reader.lengthSource == .smallFileScan)
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
