// The stream buffer alone (no sockets): the pause buffer's rules — what it keeps for going
// back, what a live stream drops when nobody reads, a finite resource's writer waiting, sizing
// to the bitrate, and a refetch from another byte.

import Foundation
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite struct StreamBufferTests {
    static func write(_ buffer: StreamBuffer, _ bytes: [UInt8], generation: Int? = nil) -> Bool {
        bytes.withUnsafeBytes { buffer.write($0.baseAddress!, count: $0.count, generation: generation) }
    }

    static func read(_ buffer: StreamBuffer, _ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard case .bytes(let got) = out.withUnsafeMutableBytes({ buffer.read(into: $0.baseAddress!, count: count) })
        else { return [] }
        return Array(out.prefix(got))
    }

    @Test func bytesReadStayUntilTheirRoomIsNeededAndTheReaderGoesBackToThem() {
        let buffer = StreamBuffer(capacity: 10)
        #expect(Self.write(buffer, Array(0..<8)))
        #expect(Self.read(buffer, 8) == Array(0..<8))
        #expect(buffer.kept == 0..<8)
        // Four more: only the two oldest bytes read make room; the rest stay for going back.
        #expect(Self.write(buffer, Array(8..<12)))
        #expect(buffer.kept == 2..<12)
        #expect(buffer.seekRead(to: 3))
        #expect(Self.read(buffer, 4) == [3, 4, 5, 6])
        #expect(buffer.readOffset == 7)
        // Not kept any more, or not written yet: refused, the read position unchanged.
        #expect(!buffer.seekRead(to: 1))
        #expect(!buffer.seekRead(to: 13))
        #expect(buffer.readOffset == 7)
        #expect(buffer.seekRead(to: 12))
        #expect(buffer.available == 0)
    }

    @Test func aLiveStreamKeepsBeingReceivedWhileNobodyReadsAndTheOldestBytesGo() {
        // A reader is idle at once here (`idleReaderSeconds: 0`): as when paused.
        let buffer = StreamBuffer(capacity: 10, overwrites: true, idleReaderSeconds: 0)
        #expect(Self.write(buffer, Array(0..<6)))
        #expect(Self.read(buffer, 2) == [0, 1])
        // Paused: 4 then 6 more bytes come; the writer never waits.
        #expect(Self.write(buffer, Array(6..<10)))
        #expect(!buffer.takeOverrun())
        #expect(buffer.kept == 0..<10)
        #expect(Self.write(buffer, Array(10..<16)))
        // The bytes read went first, then unread ones: the read position moved to the oldest kept.
        #expect(buffer.kept == 6..<16)
        #expect(buffer.takeOverrun())
        #expect(!buffer.takeOverrun(), "said once")
        #expect(buffer.readOffset == 6)
        #expect(Self.read(buffer, 20) == Array(6..<16))
    }

    @Test func whileTheReaderKeepsUpNoByteIsLost() {
        let buffer = StreamBuffer(capacity: 10, overwrites: true)
        var got: [UInt8] = []
        for start in stride(from: 0, to: 200, by: 7) {
            #expect(Self.write(buffer, (start..<min(start + 7, 200)).map { UInt8($0) }))
            got += Self.read(buffer, 7)
        }
        got += Self.read(buffer, 100)
        #expect(got == (0..<200).map { UInt8($0) })
        #expect(!buffer.takeOverrun())
    }

    /// A server that sends faster than the stream plays (or without end) while the reader reads
    /// is held back: the writer waits, nothing is dropped (and nothing burns the CPU).
    @Test func aLiveStreamsWriterWaitsWhileTheReaderReads() {
        let buffer = StreamBuffer(capacity: 4, overwrites: true, idleReaderSeconds: 600)
        #expect(Self.read(buffer, 1) == [])
        let written = Locked<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            let ok = Self.write(buffer, [1, 2, 3, 4, 5, 6])
            written.withLock { $0 = ok }
            done.signal()
        }
        writer.start()
        #expect(waitUntil { buffer.available == 4 })
        #expect(written.withLock { $0 } == nil, "waiting for the reader")
        #expect(Self.read(buffer, 3) == [1, 2, 3])
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(Self.read(buffer, 10) == [4, 5, 6])
        #expect(!buffer.takeOverrun())
    }

    @Test func aFiniteResourcesWriterWaitsForTheReaderInsteadOfDropping() {
        let buffer = StreamBuffer(capacity: 4)
        let written = Locked<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            let ok = Self.write(buffer, [1, 2, 3, 4, 5, 6])  // blocks: not inside the lock
            written.withLock { $0 = ok }
            done.signal()
        }
        writer.start()
        #expect(waitUntil { buffer.available == 4 })
        #expect(written.withLock { $0 } == nil, "waiting for room")
        #expect(Self.read(buffer, 3) == [1, 2, 3])
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(written.withLock { $0 } == true)
        #expect(Self.read(buffer, 10) == [4, 5, 6])
        #expect(!buffer.takeOverrun())
    }

    @Test func resizingKeepsTheNewestBytesAndNeverUnreadOnesOfAFiniteResource() {
        let live = StreamBuffer(capacity: 16, overwrites: true)
        #expect(Self.write(live, Array(0..<12)))
        #expect(Self.read(live, 4) == [0, 1, 2, 3])
        live.resize(to: 6)
        #expect(live.capacity == 6 && live.kept == 6..<12)
        #expect(live.takeOverrun(), "unread bytes 4 and 5 went")
        #expect(Self.read(live, 10) == Array(6..<12))
        live.resize(to: 32)
        #expect(live.kept == 6..<12)
        #expect(live.seekRead(to: 6))
        #expect(Self.read(live, 10) == Array(6..<12))

        let file = StreamBuffer(capacity: 16)
        #expect(Self.write(file, Array(0..<12)))
        #expect(Self.read(file, 4) == [0, 1, 2, 3])
        file.resize(to: 6)
        #expect(file.capacity == 8, "the eight unread bytes stay")
        #expect(!file.takeOverrun())
        #expect(Self.read(file, 10) == Array(4..<12))
    }

    @Test func aRefetchForgetsEveryByteAndTheOldTransferWritesNothingMore() {
        let buffer = StreamBuffer(capacity: 10)
        let old = buffer.generation
        #expect(Self.write(buffer, [1, 2, 3], generation: old))
        buffer.finish(error: nil)
        buffer.reset(at: 1000)
        #expect(buffer.kept == 1000..<1000 && buffer.readOffset == 1000 && !buffer.hasEnded)
        #expect(!Self.write(buffer, [4, 5], generation: old), "the old transfer ends")
        #expect(Self.write(buffer, [9, 8, 7], generation: buffer.generation))
        #expect(buffer.kept == 1000..<1003)
        var copy = [UInt8](repeating: 0, count: 2)
        #expect(buffer.copy(from: 1001, into: &copy) && copy == [8, 7])
        #expect(!buffer.copy(from: 999, into: &copy))
        #expect(Self.read(buffer, 10) == [9, 8, 7])
    }

    @Test func theBufferIsSizedInSecondsOfTheStreamsBitrate() {
        var configuration = StreamConfiguration()
        #expect(configuration.bufferSeconds == 300)
        // 300 s of 128 kbit/s: 4.8 MB; not known yet: as for 320 kbit/s; never under 256 KiB.
        #expect(configuration.bufferBytes(kilobitsPerSecond: 128) == 4_800_000)
        #expect(configuration.bufferBytes(kilobitsPerSecond: nil) == 12_000_000)
        configuration.bufferSeconds = 0
        #expect(configuration.bufferBytes(kilobitsPerSecond: 128) == 256 << 10)
        configuration.bufferBytes = 1000
        #expect(configuration.bufferBytes(kilobitsPerSecond: 128) == 1000)
    }

    @Test func checkpointsFindTheFrameBeforeATargetAndTheFirstKept() {
        var list = CheckpointList()
        for index in 0..<10 { list.append(offset: Int64(100 + index * 400), raw: Int64(index * 1152)) }
        list.append(offset: 500, raw: 1152)  // decoded again after a seek back: already there
        #expect(list.count == 10)
        #expect(list.lastIndex(atOrBefore: 0) == 0)
        #expect(list.lastIndex(atOrBefore: 1151) == 0)
        #expect(list.lastIndex(atOrBefore: 1152 * 3 + 5) == 3)
        #expect(list.lastIndex(atOrBefore: -1) == nil)
        #expect(list.raw(atOffset: 900) == 2304 && list.raw(atOffset: 901) == nil)
        list.dropBefore(offset: 1000)
        #expect(list.count == 7 && list[0].offset == 1300)
        #expect(list.first(atOrAfter: 0)?.raw == Int64(3 * 1152))
        #expect(list.lastIndex(atOrBefore: 1152) == nil)
    }
}

@Suite struct StreamTitleMarkTests {
    /// A title found in the audio itself (an MPEG-TS timed-ID3 tag) is heard from its frame; a
    /// repeat of the title on air (every segment says it) makes no new mark.
    @Test func aTimedTitleIsHeardFromItsFrameAndRepeatsMakeNoMark() {
        let stream = HTTPStream(url: "http://127.0.0.1:1/live.m3u8", configuration: StreamConfiguration())
        stream.placeTitlesByDecoding()  // as FFmpeg's reader does for a timed-ID3 stream
        #expect(stream.noteTitleHeard("A", atFrame: 0))
        #expect(!stream.noteTitleHeard("A", atFrame: 88_200), "a repeat")
        #expect(stream.noteTitleHeard("B", atFrame: 176_400))
        #expect(stream.title(atFrame: 176_399) == ("A", 176_400))
        #expect(stream.title(atFrame: 176_400).title == "B")
        #expect(stream.current.title == "B", "the last received")
        // Decoded again after a seek back: the same marks.
        #expect(!stream.noteTitleHeard("A", atFrame: 0))
        #expect(stream.title(atFrame: 200_000).title == "B")
    }

    @Test func skippedMetadataIsKeptForTheLogOnceInARow() {
        let stream = HTTPStream(url: "http://127.0.0.1:1/live.m3u8", configuration: StreamConfiguration())
        stream.noteSkipped("broken: TIT2")
        stream.noteSkipped("broken: TIT2")
        stream.noteSkipped("broken: TPE1")
        #expect(stream.takeNotices() == ["broken: TIT2", "broken: TPE1"])
        #expect(stream.takeNotices().isEmpty)
        for index in 0..<20 { stream.noteSkipped("broken \(index)") }
        #expect(stream.takeNotices().count == HTTPStream.noticeLimit, "bounded")
    }

    /// A decoder that does not place titles (FFmpeg's): the last title received is on air.
    @Test func withoutADecoderPlacingThemTheLastTitleReceivedIsOnAir() {
        let stream = HTTPStream(url: "http://127.0.0.1:1/live.aac", configuration: StreamConfiguration())
        #expect(stream.title(atFrame: 0).title == nil)
        stream.noteTitleReceived("A", at: 16_000)
        #expect(stream.title(atFrame: 0).title == "A" && stream.title(atFrame: 0).next == nil)
        #expect(stream.current.title == "A")
    }

    @Test func aTitleIsHeardFromTheFrameOfTheAudioItNamesNotWhenItArrives() {
        let stream = HTTPStream(url: "http://127.0.0.1:1/live.mp3", configuration: StreamConfiguration())
        stream.placeTitlesByDecoding()  // as libmpg123's reader does when it opens
        // Received with the bytes: "A" names the audio from byte 16,000 on, "B" from 48,000.
        stream.noteTitleReceived("A", at: 16_000)
        stream.noteTitleReceived("B", at: 48_000)
        #expect(stream.title(atFrame: Int64.max).title == nil, "nothing decoded yet: nothing heard")
        // The decoder: MPEG frames of 418 bytes, 1,152 frames each; the one starting at byte
        // 16,000 or after is the first with "A".
        var offset: Int64 = 0
        var frame: Int64 = 0
        var previous: Int64 = -1
        var marks: [Int64] = []
        while offset < 60_000 {
            if stream.noteDecoded(from: previous + 1, to: offset + 1, frame: frame) { marks.append(frame) }
            previous = offset
            offset += 418
            frame += 1152
        }
        let first = Int64((16_000 + 417) / 418) * 1152
        let second = Int64((48_000 + 417) / 418) * 1152
        #expect(marks == [first, second])
        #expect(stream.title(atFrame: first - 1).title == nil && stream.title(atFrame: first - 1).next == first)
        #expect(stream.title(atFrame: first).title == "A" && stream.title(atFrame: first).next == second)
        #expect(stream.title(atFrame: second + 5).title == "B" && stream.title(atFrame: second + 5).next == nil)
        // Decoded again after a seek back: the same marks, none new.
        #expect(!stream.noteDecoded(from: 15_000, to: Int64(first / 1152) * 418 + 1, frame: first))
        #expect(stream.title(atFrame: first + 10).title == "A")
    }

    /// A server repeats the title on air in every metadata block (about once a second), and the
    /// decoder may read far behind what was received (every reconnect's burst adds to the
    /// buffer's lead): the repeats must not push out the changes the decoder has not reached.
    @Test func repeatedTitlesDoNotPushOutTheChangesTheDecoderHasNotReached() {
        let stream = HTTPStream(url: "http://127.0.0.1:1/live.mp3", configuration: StreamConfiguration())
        stream.placeTitlesByDecoding()
        // "A" from byte 16,000, repeated every 16,000 bytes; "B" from byte 2,016,000, repeated too:
        // many more blocks than `markLimit`, none decoded yet.
        let blocks = 3 * HTTPStream.markLimit
        for block in 1...blocks {
            stream.noteTitleReceived(block <= 126 ? "A" : "B", at: Int64(block) * 16_000)
        }
        var offset: Int64 = 0
        var frame: Int64 = 0
        var previous: Int64 = -1
        var marks: [(Int64, String?)] = []
        while offset < Int64(blocks + 1) * 16_000 {
            if stream.noteDecoded(from: previous + 1, to: offset + 1, frame: frame) {
                marks.append((frame, stream.title(atFrame: frame).title))
            }
            previous = offset
            offset += 418
            frame += 1152
        }
        let first = Int64((16_000 + 417) / 418) * 1152
        let second = Int64((126 * 16_000 + 16_000 + 417) / 418) * 1152
        #expect(marks.map(\.0) == [first, second])
        #expect(marks.map(\.1) == ["A", "B"])
        #expect(stream.title(atFrame: first + 1).title == "A" && stream.title(atFrame: second).title == "B")
    }
}
