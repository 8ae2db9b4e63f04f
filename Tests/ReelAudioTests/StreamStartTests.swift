// What comes before a stream's first sound: the first MPEG frames of a station joined in the
// middle (whose bit reservoir was never received) are not played as silence, and FFmpeg's
// decoder hands its pages back only once its first seconds are out, not on the way to them; the
// start's path from the first bytes to the first decoded audio has no thread hop and runs at
// real-time priority where allowed, then normal.

import CFFmpeg
import Foundation
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite struct MP3BitReservoirTests {
    /// The first bytes of an MPEG-1 Layer III frame, 128 kbit/s at 44.1 kHz, padded, joint
    /// stereo (418 bytes: 382 of main data), whose main data begins `reachesBack` bytes before
    /// it; with a CRC after the header when `crc` (380 of main data).
    static func mpeg1Frame(reachesBack: Int, crc: Bool = false) -> [UInt8] {
        let header: [UInt8] = [0xFF, crc ? 0xFA : 0xFB, 0x92, 0x64]
        return header + (crc ? [0x12, 0x34] : []) + [UInt8(reachesBack >> 1), UInt8((reachesBack & 1) << 7)]
    }

    /// What `take` says of each frame in turn, and the reservoir's bytes after each.
    static func taken(_ frames: [[UInt8]]) -> (whole: [Bool], bytes: [Int]) {
        var reservoir = MP3BitReservoir()
        var whole: [Bool] = []
        var bytes: [Int] = []
        for frame in frames {
            whole.append(reservoir.take(frame))
            bytes.append(reservoir.bytes)
        }
        return (whole, bytes)
    }

    @Test func aStationJoinedInTheMiddleHasNoReservoirForItsFirstFrames() {
        // What Icecast's burst of a 128 kbit/s station began with (`main_data_begin` of its
        // first frames): libmpg123 put out two frames of silence before the tone.
        let joined = Self.taken([487, 481, 492, 511].map { Self.mpeg1Frame(reachesBack: $0) })
        #expect(joined.whole == [false, false, true, true])
        // At most what a frame can reach back.
        #expect(joined.bytes == [382, 511, 511, 511])
    }

    @Test func aStreamFromItsFirstFrameDecodesWhole() {
        // An encoder's first frame reaches back nowhere.
        let fromStart = Self.taken([0, 124, 275].map { Self.mpeg1Frame(reachesBack: $0) })
        #expect(fromStart.whole == [true, true, true])
    }

    @Test func aCRCIsNotMainData() {
        let protected = Self.taken([381, 380].map { Self.mpeg1Frame(reachesBack: $0, crc: true) })
        #expect(protected.whole == [false, true])
        #expect(protected.bytes.first == 380)
    }

    @Test func mpeg2PointsBackWithEightBitsAndKeepsAtMost255Bytes() {
        // MPEG-2 Layer III, 64 kbit/s at 22.05 kHz, mono: 208 bytes, 195 of main data.
        let lsf = Self.taken([200, 200, 255].map { [0xFF, 0xF3, 0x80, 0xC0, UInt8($0)] })
        #expect(lsf.whole == [false, false, true])
        #expect(lsf.bytes == [195, 255, 255])
    }

    @Test func bytesThatAreNoFrameSayNothing() {
        // An ID3 tag, a header cut short, a frame too short to say where its main data begins.
        let other = Self.taken([[0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0], [0xFF, 0xFB], [0xFF, 0xFB, 0x92, 0x64]])
        #expect(other.whole == [true, true, true])
        #expect(other.bytes == [0, 0, 0])
    }
}

@Suite(.serialized) struct StreamStartTests {
    /// A 128 kbit/s MP3 of a 440 Hz tone cut in the middle of its 40th frame, as a listener
    /// joining a station gets it; the cut's bytes.
    static func joinedInTheMiddle(in directory: URL) throws -> (path: String, bytes: [UInt8]) {
        let whole = directory.appendingPathComponent("whole.mp3").path
        try TestTool.run(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=6:sample_rate=44100", "-ac", "2",
             "-c:a", "libmp3lame", "-b:a", "128k", "-id3v2_version", "0", "-write_xing", "0", "-f", "mp3", whole])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: whole)))
        var offset = 0
        for _ in 0..<40 {
            let header = try #require(MP3FrameHeader(bytes, at: offset), "no MPEG frame at byte \(offset)")
            offset += header.length
        }
        let cut = Array(bytes[(offset + 100)...])
        let path = directory.appendingPathComponent("joined.mp3").path
        try Data(cut).write(to: URL(fileURLWithPath: path))
        return (path, cut)
    }

    @Test func aStationJoinedInTheMiddleSoundsFromItsFirstFrameThatDecodes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let joined = try Self.joinedInTheMiddle(in: directory)
        // The cut's first frames reach back into the frames cut off (else this shows nothing).
        var offset = 0
        while offset < 4096 {
            if let header = MP3FrameHeader(joined.bytes, at: offset), MP3FrameHeader(joined.bytes, at: offset + header.length) != nil {
                break
            }
            offset += 1
        }
        let lead = MP3BitReservoirTests.taken([Array(joined.bytes[offset..<(offset + MP3BitReservoir.frameStartLength)])])
        #expect(lead.whole == [false])

        let server = try StreamServer(mp3: joined.path)
        let (reader, _) = try StreamSourceTests.open(server.url("/live.mp3"))
        #expect(reader is Mpg123StreamReader)
        // The first 1,152 frames returned (one MPEG frame): libmpg123 decodes a frame without
        // its main data as silence, and that silence came first.
        let channels = reader.pcmFormat.channels
        var first: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 1152 * channels)
        let deadline = Date().addingTimeInterval(60)
        while first.count < 1152 * channels && Date() < deadline {
            let wanted = 1152 - first.count / channels
            let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: wanted) }
            if frames == 0 && reader.isWaitingForData {
                usleep(5000)
                continue
            }
            if frames == 0 { break }
            first += chunk[0..<(frames * channels)]
        }
        #expect(first.count == 1152 * channels, "the stream ended after \(first.count / channels) frames")
        // The first frame that decodes starts from silence (its transform overlaps nothing before
        // it), so the tone comes a few hundred frames in: as from libmad.
        let loud = first.firstIndex { abs(Int($0)) > 100 }.map { $0 / channels }
        #expect(loud != nil, "the first 1,152 frames are silence")
        print("the tone starts at frame \(loud.map(String.init) ?? "none") of the stream joined in the middle")
    }

    @Test func ffmpegHandsItsPagesBackOnlyOnceItsFirstSecondsAreOut() throws {
        // Waits a second or so: a stream's release also waits for its first read to be a second old.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("tone.aac").path
        try TestTool.run(
            "/usr/bin/ffmpeg",
            ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=6:sample_rate=44100", "-ac", "2",
             "-c:a", "aac", "-b:a", "128k", "-f", "adts", path])
        var status = REEL_FF_OK
        var message = [CChar](repeating: 0, count: 512)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096 * 8, alignment: 16)
        defer { buffer.deallocate() }

        // A file's decoder: at its first read, before it is heard (its reader hands out audio
        // only as it is played, so a release later would come with little ahead of the device).
        let file = try #require(reel_ff_open(path, &status, &message, message.count), "FFmpeg cannot open \(path)")
        #expect(reel_ff_pages_released(file) == 0)
        #expect(reel_ff_read(file, buffer, 1, &message, message.count) == 1)
        #expect(reel_ff_pages_released(file) == 1, "a file's decoder did not hand its pages back at its first read")
        reel_ff_close(file)

        // The same bytes as a stream, through the read callback.
        final class Bytes {
            let data: [UInt8]
            var offset = 0
            init(_ data: [UInt8]) { self.data = data }
        }
        let bytes = Bytes([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        let context = Unmanaged.passUnretained(bytes).toOpaque()
        let decoder = try #require(
            reel_ff_open_stream(
                { context, buffer, size in
                    let bytes = Unmanaged<Bytes>.fromOpaque(context!).takeUnretainedValue()
                    let count = min(Int(size), bytes.data.count - bytes.offset)
                    guard count > 0 else { return -541_478_725 }  // AVERROR_EOF
                    bytes.data.withUnsafeBufferPointer { buffer!.update(from: $0.baseAddress! + bytes.offset, count: count) }
                    bytes.offset += count
                    return Int32(count)
                }, context, nil, 0, 256 << 10, 3_000_000, &status, &message, message.count),
            "FFmpeg cannot open the stream: \(String(cString: message))")
        defer { reel_ff_close(decoder) }
        let rate = Int64(reel_ff_get_info(decoder).sample_rate)
        var read: Int64 = 0
        func readUpTo(_ frames: Int64) {
            while read < frames {
                let got = reel_ff_read(decoder, buffer, min(4096, frames - read), &message, message.count)
                if got <= 0 { break }
                read += got
            }
        }
        // Its first read, and what a start plays: the release would come before it was heard.
        readUpTo(1)
        #expect(reel_ff_pages_released(decoder) == 0, "handed back at the first read")
        readUpTo(3 * rate - 1)
        #expect(reel_ff_pages_released(decoder) == 0, "handed back before 3 s were out")
        readUpTo(4 * rate)
        #expect(read == 4 * rate)
        // Once its first read is a second old as well, the next read hands them back.
        let released = waitUntil(seconds: 30) {
            readUpTo(read + 1)
            return reel_ff_pages_released(decoder) == 1
        }
        #expect(released, "not handed back after 4 s of audio, \(read) frames read")
        #expect(read < 6 * rate, "the stream ended first")
        withExtendedLifetime(bytes) {}
    }
}

/// Whether this process may run a thread at real-time priority (root, or an rtprio limit), asked
/// on a thread of its own.
func realtimeIsGranted() -> Bool {
    let granted = Locked(false)
    let thread = OSThread.start(name: "reel-test-rt", realtime: false) {
        let raised = OSThread.raiseToRealtime(priority: OSThread.startPriority)
        granted.withLock { $0 = raised }
        if raised { OSThread.lowerToNormal() }
    }
    pthread_join(thread, nil)
    return granted.current
}

@Suite struct StartPriorityTests {
    @Test func aThreadRaisedToRealtimeRunsSoUntilItIsLowered() {
        let seen = Locked<[Bool]>([])
        let thread = OSThread.start(name: "reel-test-rt", realtime: false) {
            let before = OSThread.isRealtime
            let raised = OSThread.raiseToRealtime(priority: OSThread.startPriority)
            let during = OSThread.isRealtime
            // Raised again while real-time: nothing changes, and nothing is to be lowered.
            let again = OSThread.raiseToRealtime(priority: OSThread.startPriority)
            if raised { OSThread.lowerToNormal() }
            seen.withLock { $0 = [before, raised, during, again, OSThread.isRealtime] }
        }
        pthread_join(thread, nil)
        let (before, raised, during, again, after) = (seen.current[0], seen.current[1], seen.current[2], seen.current[3], seen.current[4])
        #expect(!before)
        #expect(during == raised, "raised: \(raised), real-time after it: \(during)")
        #expect(!again)
        #expect(!after, "still real-time after it was lowered")
        print("real-time scheduling granted here: \(raised)")
    }
}

@Suite(.serialized) struct StreamStartPathTests {
    @Test func anFFmpegStationOpensOnTheOpenersThreadAndDecodesItsStartAtRealtimePriority() throws {
        let granted = realtimeIsGranted()
        let server = try StreamServer(fixtures: [("tone.aac", "aac", 4)])
        let (opened, stream) = try StreamCodecTests.open(server.url("/live/tone.aac"))
        defer { stream.stop() }
        let reader = try #require(opened as? FFmpegStreamReader)
        // No thread hop between the first bytes and the player: the opener opened the demuxer.
        #expect(reader.firstOpenedOnOpenersThread)
        // The opener is back at normal priority.
        #expect(!OSThread.isRealtime)
        // The decoding thread wrote its first audio real-time (where allowed), and goes on at
        // normal priority once the start's half second is decoded.
        let noted = waitUntil(seconds: 30) { reader.decodingStartPriority.afterStart != nil }
        #expect(noted, "the decoding thread wrote nothing after its start: \(reader.decodedFramesWaiting) frames decoded")
        #expect(reader.decodingStartPriority.atFirstAudio == granted)
        #expect(reader.decodingStartPriority.afterStart == false)
        // And it plays.
        let samples = try StreamSourceTests.readAudible(reader, frames: 44100)
        #expect(samples.map { abs(Int($0)) }.max() ?? 0 > 1000, "silence")
    }
}

extension StartPriorityTests {
    @Test func aThreadStartedFromARealtimeThreadRunsAtNormalPriority() {
        let seen = Locked<(raised: Bool, child: Bool?)>((false, nil))
        let thread = OSThread.start(name: "reel-test-rt", realtime: false) {
            let raised = OSThread.raiseToRealtime(priority: OSThread.startPriority)
            let child = OSThread.start(name: "reel-test-child", realtime: false) {
                seen.withLock { $0.child = OSThread.isRealtime }
            }
            pthread_join(child, nil)
            if raised { OSThread.lowerToNormal() }
            seen.withLock { $0.raised = raised }
        }
        pthread_join(thread, nil)
        #expect(seen.current.child == false, "a thread started by a real-time thread (raised: \(seen.current.raised)) runs real-time")
    }
}

extension StartPriorityTests {
    @Test func aThreadStartedRealtimeRunsSoFromItsFirstInstructionUntilItLowersItself() {
        let granted = realtimeIsGranted()
        let seen = Locked<[Bool]>([])
        let thread = OSThread.start(name: "reel-test-rt", realtime: false, startingRealtime: OSThread.startPriority) {
            let first = OSThread.isRealtime
            OSThread.lowerToNormal()
            seen.withLock { $0 = [first, OSThread.isRealtime] }
        }
        pthread_join(thread, nil)
        #expect(seen.current == [granted, false], "real-time at its start, after lowering: \(seen.current); granted: \(granted)")
    }
}

extension StartPriorityTests {
    @Test func whatARealtimeThreadCreatesInheritingItsSchedulingRunsAtNormalPriority() {
        // libdispatch makes a worker thread with attributes that inherit the creator's
        // scheduling when a thread queues work and no worker is idle: created so by a thread in
        // its real-time stretch, the worker would run every queue's later work real-time.
        let seen = Locked<(raised: Bool, child: Bool?)>((false, nil))
        let thread = OSThread.start(name: "reel-test-rt", realtime: false) {
            let raised = OSThread.raiseToRealtime(priority: OSThread.startPriority)
            final class Box: @unchecked Sendable { let seen: Locked<(raised: Bool, child: Bool?)>; init(_ s: Locked<(raised: Bool, child: Bool?)>) { seen = s } }
            var child = pthread_t()
            let box = Unmanaged.passRetained(Box(seen)).toOpaque()
            // Default attributes: PTHREAD_INHERIT_SCHED.
            let created = pthread_create(&child, nil, { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.seen.withLock { $0.child = OSThread.isRealtime }
                return nil
            }, box)
            if created == 0 { pthread_join(child, nil) }
            if raised { OSThread.lowerToNormal() }
            seen.withLock { $0.raised = raised }
        }
        pthread_join(thread, nil)
        #expect(seen.current.child == false, "a thread inheriting a real-time thread's scheduling (raised: \(seen.current.raised)) runs real-time")
    }
}
