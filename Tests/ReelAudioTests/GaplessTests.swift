import Dispatch
import Foundation
import Glibc
import Logging
import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// Consecutive tracks through the engine's chain, on real alsa-lib devices: the `file` plugin
/// captures exactly the bytes played (faster than real time), the PulseAudio null sink paces.
@Suite(.serialized) struct GaplessTests {
    let directory = TestAudio.temporaryDirectory()

    /// Plays `paths` in order, lining up each next track when the engine asks, as the queue does.
    /// The `file` plugin over `null` is not paced, so a track is written out in a few
    /// milliseconds: there the next one is opened on the audio thread, inside the request, so
    /// that it is lined up before the current one ends (the daemon opens it on its own queue,
    /// ahead of time, which `paced: true` does here).
    final class ChainPlayer: @unchecked Sendable {
        final class Holder: @unchecked Sendable { weak var engine: PlaybackEngine? }
        let engine: PlaybackEngine
        let changes = Locked<[PlaybackSnapshot]>([])

        init(device: String, paths: [String], paced: Bool = false, timing: PCMTiming = PCMTiming()) {
            let opening = DispatchQueue(label: "test.open")
            let holder = Holder()
            engine = PlaybackEngine(
                device: ALSAOutput(name: device), timing: timing, logger: Logger(label: "test"),
                onWantsNext: { token in
                    // Token t plays paths[t - 1]; what follows it is paths[t].
                    let lineUp: @Sendable () -> Void = {
                        guard token < paths.count, let engine = holder.engine,
                              let reader = try? AudioFileOpener.open(path: paths[token])
                        else { return }
                        engine.send(.lineUp(after: token, next: TrackBox(reader, token: token + 1), { _ in }))
                    }
                    if paced { opening.async(execute: lineUp) } else { lineUp() }
                },
                onChange: { [changes] snapshot in changes.withLock { $0.append(snapshot) } })
            holder.engine = engine
            engine.start()
            let reader = try! AudioFileOpener.open(path: paths[0])
            engine.send(.load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, { _ in }))
        }

        deinit { engine.shutdown() }

        func waitUntilStopped(timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            usleep(20_000)
            while Date() < deadline {
                if engine.snapshot.activity == .stopped { return true }
                usleep(10_000)
            }
            return false
        }

        /// The tokens that became audible, in order.
        var audibleTokens: [Int] {
            changes.current.compactMap(\.token).reduce(into: []) { tokens, token in
                if tokens.last != token { tokens.append(token) }
            }
        }
    }

    /// Stereo 16-bit frames in which every sample differs from every other: any frame inserted,
    /// dropped or repeated shows in a byte comparison.
    static func distinctSamples(frames: Int) -> [Int16] {
        precondition(frames * 2 <= 65536)
        return (0..<(frames * 2)).map { Int16(truncatingIfNeeded: ($0 &* 40503) & 0xFFFF) }
    }

    func write(_ samples: ArraySlice<Int16>, to name: String, codec: String, rate: Int = 44100) throws -> String {
        let path = directory.appendingPathComponent(name).path
        let writer = try SndFileWriter(
            path: path, codec: codec, format: PCMFormat(sample: .s16, sampleRate: rate, channels: 2))
        let frames = Array(samples)
        try frames.withUnsafeBytes { raw in try writer.write(raw.baseAddress!, frames: frames.count / 2) }
        try writer.close()
        return path
    }

    func bytes(_ samples: some Collection<Int16>) -> [UInt8] {
        Array(samples).withUnsafeBytes { Array($0) }
    }

    func captured(_ path: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A (20,001 frames: not a multiple of any period), a middle track shorter than one period
    /// (700 frames; a period is 2,205), then B: the device must receive A‖middle‖B exactly.
    @Test(arguments: ["wav", "flac"])
    func consecutiveTracksReachTheDeviceSampleExactly(codec: String) throws {
        let samples = Self.distinctSamples(frames: 32_000)
        let a = try write(samples[0..<40_002], to: "a.\(codec)", codec: codec)
        let middle = try write(samples[40_002..<41_402], to: "m.\(codec)", codec: codec)
        let b = try write(samples[41_402...], to: "b.\(codec)", codec: codec)
        let out = directory.appendingPathComponent("out-\(codec).raw").path
        let player = ChainPlayer(device: "file:FILE=\(out),FORMAT=raw", paths: [a, middle, b])
        #expect(player.waitUntilStopped(timeout: 20))
        let got = try captured(out)
        let expected = bytes(samples)
        #expect(got.count == expected.count, "the device got \(got.count) bytes, the three tracks hold \(expected.count)")
        let firstDifference = zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(firstDifference == nil, "first difference at byte \(firstDifference ?? -1)")
        #expect(player.audibleTokens == [1, 2, 3])
        #expect(player.engine.snapshot.counters.xruns == 0)
    }

    /// A 44.1 kHz track then a 48 kHz one: the device is drained and reopened, both complete.
    @Test func aFormatChangeReopensTheDeviceAndLosesNothing() throws {
        let samples = Self.distinctSamples(frames: 30_000)
        let a = try write(samples[0..<30_000], to: "a441.wav", codec: "wav", rate: 44100)
        let b = try write(samples[30_000...], to: "b48.wav", codec: "wav", rate: 48000)
        let out = directory.appendingPathComponent("out-%r.raw").path
        let player = ChainPlayer(device: "file:FILE=\(out),FORMAT=raw", paths: [a, b])
        #expect(player.waitUntilStopped(timeout: 20))
        let first = try captured(directory.appendingPathComponent("out-44100.raw").path)
        let second = try captured(directory.appendingPathComponent("out-48000.raw").path)
        #expect(first == bytes(samples[0..<30_000]))
        #expect(second == bytes(samples[30_000...]))
        #expect(player.audibleTokens == [1, 2])
    }

    /// Lossy codecs: each part encoded on its own from one tone. Decoded back to back, the
    /// length equals the source's, the parts line up with the source at every junction (a frame
    /// inserted or dropped would shift everything after it), and the output equals the codec's
    /// own reference decoder (`lame --decode`, `opusdec`) run on each part and concatenated: no
    /// discontinuity beyond the codec's own error.
    @Test(arguments: ["mp3", "opus"])
    func lossyTracksJoinWithoutInsertingOrDroppingFrames(codec: String) throws {
        let rate = codec == "opus" ? 48000 : 44100
        let tone = TestAudio.toneSamples(seconds: 3, rate: rate, channels: 2, frequency: 440, amplitude: 0.4)
        let frames = tone.count / 2
        let cuts = [0, 61_111, 61_811, frames]  // a, a middle part shorter than a period, b
        var paths: [String] = []
        var reference: [Int16] = []
        for part in 0..<3 {
            let wav = try write(tone[(cuts[part] * 2)..<(cuts[part + 1] * 2)], to: "p\(part).wav", codec: "wav", rate: rate)
            let encoded = directory.appendingPathComponent("p\(part).\(codec)").path
            let decoded = directory.appendingPathComponent("p\(part).ref.wav").path
            if codec == "mp3" {
                try TestAudio.run("/usr/bin/lame", ["--quiet", "-V", "2", wav, encoded])
                try TestAudio.run("/usr/bin/lame", ["--quiet", "--decode", encoded, decoded])
            } else {
                try TestAudio.run("/usr/bin/opusenc", ["--quiet", "--bitrate", "160", wav, encoded])
                try TestAudio.run("/usr/bin/opusdec", ["--quiet", "--no-dither", "--rate", "48000", encoded, decoded])
            }
            reference += try Self.decodeAll(decoded)
            paths.append(encoded)
        }
        let out = directory.appendingPathComponent("out-\(codec).raw").path
        let player = ChainPlayer(device: "file:FILE=\(out),FORMAT=raw", paths: paths)
        #expect(player.waitUntilStopped(timeout: 20))
        let got = try captured(out).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(got.count == tone.count, "decoded \(got.count / 2) frames from a \(frames)-frame source")
        #expect(reference.count == tone.count, "the reference decoder gave \(reference.count / 2) frames")
        guard got.count == tone.count, reference.count == tone.count else { return }
        for cut in cuts[1...2] {
            // Around each junction, the output matches the source best without any shift…
            let errors = (-2...2).map { shift in
                GaplessTests.meanError(got, tone, from: cut + 200, count: 600, shift: shift)
            }
            let best = errors.indices.min { errors[$0] < errors[$1] }! - 2
            #expect(best == 0, "around frame \(cut) the output lines up with the source shifted by \(best): \(errors)")
            // …and across it equals what the reference decoder makes of the same parts.
            let across = GaplessTests.maxError(got, reference, from: cut - 1000, count: 2000)
            #expect(across <= 8, "across frame \(cut) the output differs from the reference decoder's by \(across)")
        }
        let overall = GaplessTests.maxError(got, reference, from: 0, count: frames)
        #expect(overall <= 8, "the output differs from the reference decoder's by up to \(overall)")
    }

    /// Every sample of a 16-bit file.
    static func decodeAll(_ path: String) throws -> [Int16] {
        let reader = try SndFileReader(path: path)
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096 * reader.pcmFormat.channels)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            if count == 0 { break }
            samples += chunk[0..<(count * reader.pcmFormat.channels)]
        }
        return samples
    }

    static func meanError(_ got: [Int16], _ source: [Int16], from frame: Int, count: Int, shift: Int) -> Double {
        var total = 0.0
        for index in (frame * 2)..<((frame + count) * 2) {
            total += abs(Double(got[index]) - Double(source[index + shift * 2]))
        }
        return total / Double(count * 2)
    }

    static func maxError(_ got: [Int16], _ source: [Int16], from frame: Int, count: Int) -> Int {
        var worst = 0
        for index in (frame * 2)..<((frame + count) * 2) {
            worst = max(worst, abs(Int(got[index]) - Int(source[index])))
        }
        return worst
    }

    /// The same chain in real time on the null sink: no underrun at the junctions.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"] != nil,
                   "needs the PulseAudio null sink that scripts/test starts"))
    func chainPlaysInRealTimeWithoutUnderruns() throws {
        let tone = TestAudio.toneSamples(seconds: 2.5, rate: 44100, channels: 2)
        let a = try write(tone[0..<(44_111 * 2)], to: "ra.flac", codec: "flac")
        let middle = try write(tone[(44_111 * 2)..<(44_811 * 2)], to: "rm.flac", codec: "flac")
        let b = try write(tone[(44_811 * 2)...], to: "rb.flac", codec: "flac")
        let started = Date()
        // A 1 s buffer, as reeld's default 2 s one, leaves the opener time even on a slow machine.
        let player = ChainPlayer(
            device: "pulse", paths: [a, middle, b], paced: true,
            timing: PCMTiming(periodMicroseconds: 100_000, bufferMicroseconds: 1_000_000))
        #expect(player.waitUntilStopped(timeout: 10))
        #expect(Date().timeIntervalSince(started) >= 2.4, "2.5 s of audio ended early")
        #expect(player.audibleTokens == [1, 2, 3])
        #expect(player.engine.snapshot.counters.xruns == 0)
    }
}

/// Lining up another track after one that is already in the device (the queue changed): the
/// engine drops what the device holds and refills from the audible frame, so what is heard is
/// the current track to its end, then the new next one — never the old one.
@Suite struct LineUpReplacementTests {
    let directory = TestAudio.temporaryDirectory()

    func write(_ samples: ArraySlice<Int16>, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        let writer = try SndFileWriter(path: path, codec: "wav", format: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2))
        let frames = Array(samples)
        try frames.withUnsafeBytes { raw in try writer.write(raw.baseAddress!, frames: frames.count / 2) }
        try writer.close()
        return path
    }

    @Test func replacingATrackAlreadyInTheDeviceRefillsFromTheAudibleFrame() throws {
        let samples = GaplessTests.distinctSamples(frames: 16_000)
        let a = try write(samples[0..<16_000], "a.wav")  // 8,000 frames
        let b = try write(samples[16_000..<24_000], "b.wav")  // 4,000 frames
        let c = try write(samples[24_000..<32_000], "c.wav")  // 4,000 frames
        let device = FakeOutput()
        // The device holds 3,000 frames (its delay); it fills up once B is partly in it.
        device.script { $0.delayFrames = 3000; $0.fullAfterFrames = 9000 }
        let engine = PlaybackEngine(device: device, logger: Logger(label: "test")) { _ in }
        engine.start()
        defer { engine.shutdown() }
        engine.send(.load(ReaderBox(try AudioFileOpener.open(path: a)), token: 1, startFrame: 0, startPlaying: true, { _ in }))
        engine.send(.lineUp(after: 1, next: TrackBox(try AudioFileOpener.open(path: b), token: 2), { _ in }))
        // Wait until B is being written while A is still what is heard (9,000 − 3,000 < 8,000).
        let deadline = Date().addingTimeInterval(20)
        while device.state.framesWritten < 9000 && Date() < deadline { usleep(1000) }
        #expect(device.state.framesWritten >= 9000, "written \(device.state.framesWritten)")
        let replaced = Locked<Result<PlaybackSnapshot, ReelError>?>(nil)
        engine.send(.lineUp(after: 1, next: TrackBox(try AudioFileOpener.open(path: c), token: 3), { result in
            replaced.withLock { $0 = result }
        }))
        while replaced.current == nil && Date() < deadline { usleep(1000) }
        #expect((try? replaced.current?.get()) != nil, "the line-up failed: \(String(describing: replaced.current))")
        device.script { $0.fullAfterFrames = nil }
        while engine.snapshot.activity != .stopped && Date() < deadline { usleep(5_000) }
        #expect(engine.snapshot.activity == .stopped)
        #expect(device.state.calls.contains("drop"))
        // What was written: A from its start (and some of B), then — after the drop — A again
        // from the audible frame k (= frames written before the drop − the delay), then C.
        let written = device.state.written.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let expectedTail = { (k: Int) in Array(samples[(k * 2)..<16_000]) + Array(samples[24_000..<32_000]) }
        let k = (0..<8000).first { k in
            let start = (k + 3000) * 2
            return start < written.count && written.count - start == (8000 - k + 4000) * 2
                && Array(written[start...]) == expectedTail(k)
        }
        #expect(k != nil, "the refill is not A from the audible frame followed by C")
        if let k { #expect(k + 3000 > 8000, "B had not reached the device before the replacement") }
        #expect(!written.contains(samples[16_000 + 2 * 3999]), "the end of B was written")
    }
}

/// An MP3 without a Xing/Info tag starts at once with no duration; the engine publishes the
/// length when the background count ends, while it plays.
@Suite struct LateLengthTests {
    @Test func theLengthOfAnUntaggedMP3IsPublishedWhileItPlays() throws {
        let directory = TestAudio.temporaryDirectory()
        let path = directory.appendingPathComponent("untagged.mp3").path
        try TestAudio.writeTone(to: path, codec: "mp3-noxing", seconds: 20)
        let device = FakeOutput()
        device.script { $0.fullAfterFrames = 44_100 }  // holds the engine in the first second
        let changes = Locked<[PlaybackSnapshot]>([])
        let engine = PlaybackEngine(device: device, logger: Logger(label: "test")) { snapshot in
            changes.withLock { $0.append(snapshot) }
        }
        engine.start()
        defer { engine.shutdown() }
        let reader = try AudioFileOpener.open(path: path)
        engine.send(.load(ReaderBox(reader), token: 1, startFrame: 0, startPlaying: true, { _ in }))
        let deadline = Date().addingTimeInterval(20)
        while engine.snapshot.frameCount == nil && Date() < deadline { usleep(5_000) }
        let count = try #require(engine.snapshot.frameCount, "the length was never published")
        #expect(abs(Double(count) / 44_100 - 20) < 0.05, "\(count) frames")
        #expect(changes.current.contains { $0.frameCount == count }, "no change was published with the length")
        #expect(engine.snapshot.activity == .playing)
    }
}
