// Chapters written into a FLAC file's padding in place, and what a kill at each step leaves.

import Foundation
import Glibc
import ReelModel
@testable import ReelTags
import ReelTestSupport
import Testing

@Suite struct FLACChaptersInPlaceTests {
    /// A folder with `take.flac`: a second of 8 kHz mono with an ARTIST tag, laid out as the
    /// recorder's takes (comment then PADDING, the first frame at 8192) when `padding`, else
    /// with 8 bytes of padding only (no room).
    func scratch(padding: Bool = true) throws -> (directory: String, path: String, journal: String) {
        let directory = NSTemporaryDirectory() + "reel-chapters-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let raw = directory + "/take.raw"
        let samples = (0..<8000).map { Int16(truncatingIfNeeded: $0 * 7) }
        _ = FileManager.default.createFile(atPath: raw, contents: samples.withUnsafeBytes { Data($0) })
        let path = directory + "/take.flac"
        // flac's own comment: its vendor string (32 bytes for 1.4.2), one 15-byte field.
        let comment = 4 + 4 + 32 + 4 + 4 + 15
        _ = try TestTool.run("/usr/bin/flac", [
            "--silent", "--force-raw-format", "--endian=little", "--sign=signed", "--channels=1", "--bps=16",
            "--sample-rate=8000", "--no-seektable", "--padding=\(padding ? 8192 - 4 - 38 - comment - 4 : 8)",
            "-T", "ARTIST=Someone", "-o", path, raw,
        ])
        unlink(raw)
        return (directory, path, directory + "/.chapters-take.part")
    }

    func tags(_ path: String) throws -> String {
        try TestTool.run("/usr/bin/metaflac", ["--export-tags-to=-", path])
    }

    func inode(_ path: String) -> UInt {
        var info = stat()
        return stat(path, &info) == 0 ? UInt(info.st_ino) : 0
    }

    func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    let marks = [Mark(frame: 8000, label: "Verse", sampleRate: 8000), Mark(frame: 20000, label: nil, sampleRate: 8000)]

    @Test func chaptersGoIntoThePaddingKeepingTheFileAndItsOtherTags() throws {
        let (directory, path, journal) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let before = try bytes(path)
        let file = inode(path)
        // Old chapters (and a lower-case one) are replaced; other fields stay.
        _ = try TestTool.run("/usr/bin/metaflac", ["--set-tag=CHAPTER001=00:00:00.500", "--set-tag=chapter002name=Old", path])
        try ChapterWriter.write(marks, into: path, copyPath: journal)
        #expect(try tags(path) == "ARTIST=Someone\nCHAPTER001=00:00:01.000\nCHAPTER001NAME=Verse\nCHAPTER002=00:00:02.500\n")
        #expect(inode(path) == file, "written in place, not through a copy renamed over the file")
        let after = try bytes(path)
        #expect(after.count == before.count)
        #expect(after[8192...] == before[8192...], "the frames are untouched")
        #expect(!FileManager.default.fileExists(atPath: journal))
        #expect(try TestTool.run("/usr/bin/flac", ["-t", "--silent", path]).isEmpty)
    }

    @Test func chaptersThatDoNotFitGoThroughACopy() throws {
        let (directory, path, journal) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = inode(path)
        let many = (0..<200).map { Mark(frame: Int64($0) * 40, label: String(repeating: "x", count: 60), sampleRate: 8000) }
        #expect(try FLACCommentsInPlace.write(
            path: path, journalPath: journal, replaces: ChapterWriter.isChapterField, with: ChapterWriter.fields(of: many)) == false)
        try ChapterWriter.write(many, into: path, copyPath: journal)
        #expect(inode(path) != file, "renamed over the file")
        let found = try tags(path)
        #expect(found.contains("CHAPTER200=00:00:00.995\nCHAPTER200NAME=\(String(repeating: "x", count: 60))\n"))
        #expect(found.hasPrefix("ARTIST=Someone\n"))
        #expect(!FileManager.default.fileExists(atPath: journal))
        // A file without room is the copy's too, first time.
        let (other, tight, tightJournal) = try scratch(padding: false)
        defer { try? FileManager.default.removeItem(atPath: other) }
        let tightFile = inode(tight)
        try ChapterWriter.write(marks, into: tight, copyPath: tightJournal)
        #expect(inode(tight) != tightFile)
        #expect(try tags(tight).contains("CHAPTER002=00:00:02.500\n"))
    }

    /// The crash argument of `FLACCommentsInPlace`, step by step: the write stops as a kill
    /// would (the journal cut after any byte; whole but the region untouched; the region cut
    /// after any byte; all written but the journal), then the daemon's start finishes what is
    /// there. The file is always valid with exactly the old chapters or exactly the new ones
    /// (the new ones once the journal was whole), its frames untouched, no journal left.
    @Test func aKillAtEveryStepLeavesTheOldChaptersOrTheNew() throws {
        let (directory, path, journal) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try ChapterWriter.write([Mark(frame: 4000, label: "Old", sampleRate: 8000)], into: path, copyPath: journal)
        let base = try bytes(path)
        let oldTags = try tags(path)
        let new = ChapterWriter.fields(of: marks)
        // The journal's and the region's sizes, from a write that completes.
        let layout = try #require(FLACCommentsInPlace.Layout(base))
        var kept = layout.fields.filter { !ChapterWriter.isChapterField($0) }
        kept += new
        let region = try #require(layout.region(vendor: layout.vendor, fields: kept))
        let journalSize = FLACCommentsInPlace.Journal(file: "take.flac", size: Int64(base.count), offset: 0, bytes: region).encoded.count
        let newTags = "ARTIST=Someone\nCHAPTER001=00:00:01.000\nCHAPTER001NAME=Verse\nCHAPTER002=00:00:02.500\n"

        func cuts(_ count: Int) -> [Int] {
            Array(Set(Array(0..<16) + Array(stride(from: 16, to: count, by: 97)) + Array(max(0, count - 16)..<count))).sorted()
        }
        var interruptions: [(FLACCommentsInPlace.Interruption, newExpected: Bool)] = cuts(journalSize).map { (.journal(bytes: $0), false) }
        interruptions.append((.beforeRegion, true))
        interruptions += cuts(region.count).map { (.region(bytes: $0), true) }
        interruptions.append((.beforeRemovingJournal, true))
        for (interruption, newExpected) in interruptions {
            try Data(base).write(to: URL(fileURLWithPath: path))
            #expect(throws: ReelError.self) {
                try FLACCommentsInPlace.write(
                    path: path, journalPath: journal, replaces: ChapterWriter.isChapterField, with: new, interruption: interruption)
            }
            let found = FLACCommentsInPlace.finishInterrupted(inDirectory: directory, prefix: ".chapters-", suffix: ".part")
            #expect(found.finished == [".chapters-take.part"] && found.failed.isEmpty, "\(interruption)")
            let after = try bytes(path)
            #expect(after.count == base.count && after[8192...] == base[8192...], "\(interruption): the frames are untouched")
            #expect(try tags(path) == (newExpected ? newTags : oldTags), "\(interruption)")
            #expect(FLACCommentsInPlace.Layout(after) != nil, "\(interruption): the metadata chain is whole")
            #expect(!FileManager.default.fileExists(atPath: journal), "\(interruption)")
        }
        #expect(try TestTool.run("/usr/bin/flac", ["-t", "--silent", path]).isEmpty)
    }

    /// A power cut may keep any pages of the region's write and not others: with the journal
    /// whole, whatever the region holds is written again.
    @Test func aRegionTornAnywhereIsWrittenAgainFromTheJournal() throws {
        let (directory, path, journal) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: ReelError.self) {
            try FLACCommentsInPlace.write(
                path: path, journalPath: journal, replaces: ChapterWriter.isChapterField,
                with: ChapterWriter.fields(of: marks), interruption: .beforeRemovingJournal)
        }
        let descriptor = open(path, O_WRONLY)
        let garbage = [UInt8](repeating: 0xA5, count: 3000)
        #expect(pwrite(descriptor, garbage, garbage.count, 4096) == garbage.count)
        close(descriptor)
        #expect(try ChapterWriter.finishInterrupted(journalPath: journal))
        #expect(try tags(path).contains("CHAPTER002=00:00:02.500\n"))
        #expect(try TestTool.run("/usr/bin/flac", ["-t", "--silent", path]).isEmpty)
    }

    /// A whole journal whose region cannot be written (here the file's name is a folder now:
    /// the open fails, and not because it is gone) is kept, with the error, for the next start:
    /// it is the only whole copy of the new header. Found while reviewing: it was removed.
    @Test func aJournalWhoseRedoFailsIsKept() throws {
        let (directory, path, journal) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: ReelError.self) {
            try FLACCommentsInPlace.write(
                path: path, journalPath: journal, replaces: ChapterWriter.isChapterField,
                with: ChapterWriter.fields(of: marks), interruption: .beforeRegion)
        }
        let moved = directory + "/take.moved"
        #expect(rename(path, moved) == 0)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let found = FLACCommentsInPlace.finishInterrupted(inDirectory: directory, prefix: ".chapters-", suffix: ".part")
        #expect(found.finished.isEmpty)
        #expect(found.failed.map(\.name) == [".chapters-take.part"])
        #expect(found.failed.first?.error.reason == .ioError)
        #expect(FileManager.default.fileExists(atPath: journal), "the journal stays for the next start")
        // The next start, with the file back, finishes it.
        try FileManager.default.removeItem(atPath: path)
        #expect(rename(moved, path) == 0)
        #expect(try ChapterWriter.finishInterrupted(journalPath: journal))
        #expect(!FileManager.default.fileExists(atPath: journal))
        #expect(try tags(path).contains("CHAPTER002=00:00:02.500\n"))
    }

    /// A copy of the rename path at the journal's path, of any size (up to a whole take), is
    /// not a journal: left for the reconcile, and read only as far as telling that.
    @Test func aLargeCopyAtTheJournalsPathIsNotAJournal() throws {
        let (directory, path, journal) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var copy = try bytes(path)
        copy += [UInt8](repeating: 0x5A, count: 3 << 20)
        try Data(copy).write(to: URL(fileURLWithPath: journal))
        #expect(try ChapterWriter.finishInterrupted(journalPath: journal) == false)
        #expect(FileManager.default.fileExists(atPath: journal))
    }

    /// What else may sit at the journal's path is left alone: a copy of the rename path (a FLAC
    /// file) for the reconcile to remove; and a journal whose file changed size since is dropped
    /// without writing.
    @Test func onlyAWholeJournalForTheSameFileIsWritten() throws {
        let (directory, path, journal) = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: path, toPath: journal)
        #expect(try ChapterWriter.finishInterrupted(journalPath: journal) == false)
        #expect(FileManager.default.fileExists(atPath: journal))
        unlink(journal)

        let before = try tags(path)
        #expect(throws: ReelError.self) {
            try FLACCommentsInPlace.write(
                path: path, journalPath: journal, replaces: ChapterWriter.isChapterField,
                with: ChapterWriter.fields(of: marks), interruption: .beforeRegion)
        }
        let descriptor = open(path, O_WRONLY | O_APPEND)
        #expect(write(descriptor, "x", 1) == 1)
        close(descriptor)
        #expect(try ChapterWriter.finishInterrupted(journalPath: journal))
        #expect(!FileManager.default.fileExists(atPath: journal))
        #expect(try tags(path) == before)
    }

    @Test func chapterFieldsAreNumberedWithTheirNames() {
        #expect(ChapterWriter.fields(of: marks) == [
            "CHAPTER001=00:00:01.000", "CHAPTER001NAME=Verse", "CHAPTER002=00:00:02.500",
        ])
        #expect(ChapterWriter.isChapterField("chapter012name=x"))
        #expect(ChapterWriter.isChapterField("CHAPTER001=00:00:00.000"))
        #expect(!ChapterWriter.isChapterField("CHAPTERS=3"))
        #expect(!ChapterWriter.isChapterField("ARTIST=CHAPTER001"))
    }
}

/// What writing a take's chapters costs on an hour of FLAC, in place against through a copy (the
/// path every take took before): `REEL_CHAPTERS_FILE=/path/hour.flac swift test --skip-build
/// --filter ChapterWriteCost` (a FLAC file laid out as a take: comment, then PADDING to byte
/// 8192, e.g. `flac --padding=8102 --no-seektable`). Prints wall and CPU time per write, the
/// two ways in turn, with the load average. The file is copied first (to its folder) and left
/// as it was.
@Suite(.serialized) struct ChapterWriteCost {
    static let file = ProcessInfo.processInfo.environment["REEL_CHAPTERS_FILE"]

    @Test(.enabled(if: file != nil)) func chaptersOfAnHourLongTake() throws {
        let source = try #require(Self.file)
        let path = source + ".chapters-bench.flac"
        let copyPath = source + ".chapters-bench.part"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: source, toPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let marks = (0..<20).map { Mark(frame: Int64($0) * 44100 * 180, label: "Title number \($0) — a song", sampleRate: 44100) }
        func cpu() -> Double {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        }
        func measure(_ write: () throws -> Void) rethrows -> (wall: Double, cpu: Double) {
            let wallStart = Date()
            let cpuStart = cpu()
            try write()
            return (Date().timeIntervalSince(wallStart), cpu() - cpuStart)
        }
        for round in 1...3 {
            let copied = try measure { try ChapterWriter.writeThroughCopy(marks, into: path, copyPath: copyPath) }
            let inPlace = try measure { try ChapterWriter.write(marks, into: path, copyPath: copyPath) }
            let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
            print(String(
                format: "round %d: through a copy %.3f s wall, %.3f s CPU; in place %.4f s wall, %.4f s CPU (load %@)",
                round, copied.wall, copied.cpu, inPlace.wall, inPlace.cpu, load))
            #expect(FileManager.default.fileExists(atPath: path) && !FileManager.default.fileExists(atPath: copyPath))
        }
    }
}
