// The pipe outputs' conversion: the ring, channels, sample size and libsoxr's resampling.

import Foundation
import ReelModel
import Testing

@testable import ReelAudio

@Suite struct PipeConverterTests {
    /// Runs `samples` (interleaved, `source` format) through a converter in `chunk`-frame calls and
    /// returns what came out of the ring, as 16-bit samples.
    func convert(
        _ samples: [Int16], source: PCMFormat, target: OutputFormat, chunk: Int, ringBytes: Int = 1 << 22
    ) throws -> [Int16] {
        let converter = try PipeConverter(source: source, target: target, maxFrames: chunk)
        var ring = ByteRing(capacity: ringBytes)
        defer { ring.deallocate() }
        var output: [UInt8] = []
        let frames = samples.count / source.channels
        func drain() {
            while ring.count > 0 {
                let front = ring.front(limit: 4 * 777)
                output.append(contentsOf: front)
                ring.drop(front.count)
            }
        }
        try samples.withUnsafeBytes { bytes in
            var frame = 0
            while frame < frames {
                let count = min(chunk, frames - frame)
                let base = try #require(bytes.baseAddress) + frame * source.bytesPerFrame
                converter.convert(base, frames: count, into: &ring)
                frame += count
                drain()  // in odd-sized pieces, as FIFO writes do
            }
        }
        converter.finish(into: &ring)
        drain()
        return output.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// The largest step between neighbouring samples of channel 0, as a fraction of full scale.
    func largestStep(_ samples: [Int16], channels: Int, skip: Int = 0) -> Double {
        var largest = 0
        var previous: Int16?
        for index in stride(from: skip * channels, to: samples.count, by: channels) {
            if let previous { largest = max(largest, abs(Int(samples[index]) - Int(previous))) }
            previous = samples[index]
        }
        return Double(largest) / 32767
    }

    @Test func sameFormatPassesThroughUnchanged() throws {
        let tone = TestAudio.toneSamples(seconds: 0.5, rate: 48000, channels: 2)
        let out = try convert(
            tone, source: PCMFormat(sample: .s16, sampleRate: 48000, channels: 2), target: .snapcastDefault, chunk: 1000)
        #expect(out == tone)
    }

    @Test func resampling44100To48000KeepsTheToneContinuousAndTheLength() throws {
        // 1 kHz at amplitude 0.5: a step between samples of at most 0.5·2π·1000/48000 ≈ 0.065.
        let seconds = 3.0
        let tone = TestAudio.toneSamples(seconds: seconds, rate: 44100, channels: 2, frequency: 1000)
        let out = try convert(
            tone, source: PCMFormat(sample: .s16, sampleRate: 44100, channels: 2), target: .snapcastDefault, chunk: 2205)
        let frames = out.count / 2
        // What libsoxr held back (its filter's delay) comes out at `finish`: every frame.
        #expect(abs(Double(frames) - seconds * 48000) <= 2, "\(frames) frames")
        #expect(largestStep(out, channels: 2, skip: 2000) < 0.07)
        let peak = out.enumerated().filter { $0.offset >= 4000 && $0.offset % 2 == 0 }.map { abs(Int($0.element)) }.max() ?? 0
        #expect(abs(Double(peak) / 32767 - 0.5) < 0.01, "peak \(peak)")
    }

    @Test func monoGoesToBothChannelsAnd32BitsToSixteen() throws {
        let mono = TestAudio.toneSamples(seconds: 0.1, rate: 48000, channels: 1)
        let out = try convert(
            mono, source: PCMFormat(sample: .s16, sampleRate: 48000, channels: 1), target: .snapcastDefault, chunk: 480)
        #expect(out.count == mono.count * 2)
        for (index, sample) in mono.enumerated() {
            #expect(out[2 * index] == sample && out[2 * index + 1] == sample)
        }
        let wide: [Int32] = mono.map { Int32($0) << 16 }
        let converter = try PipeConverter(
            source: PCMFormat(sample: .s32, sampleRate: 48000, channels: 1), target: .snapcastDefault, maxFrames: wide.count)
        var ring = ByteRing(capacity: 1 << 20)
        defer { ring.deallocate() }
        wide.withUnsafeBytes { converter.convert($0.baseAddress!, frames: wide.count, into: &ring) }
        let front = ring.front(limit: ring.count)
        let narrowed = Array(front.bindMemory(to: Int16.self))
        #expect(narrowed.count == mono.count * 2)
        #expect(narrowed.enumerated().allSatisfy { $0.element == mono[$0.offset / 2] })
    }

    @Test func ringDropsTheOldestWhenFullAndWrapsInOrder() {
        var ring = ByteRing(capacity: 10)
        defer { ring.deallocate() }
        let bytes: [UInt8] = Array(0..<8)
        bytes.withUnsafeBytes { ring.append($0.baseAddress!, count: 8) }
        ring.drop(6)
        bytes.withUnsafeBytes { ring.append($0.baseAddress!, count: 8) }  // wraps
        var out: [UInt8] = []
        while ring.count > 0 {
            let front = ring.front(limit: 100)
            out.append(contentsOf: front)
            ring.drop(front.count)
        }
        #expect(out == [6, 7] + bytes)
        bytes.withUnsafeBytes { ring.append($0.baseAddress!, count: 8) }
        bytes.withUnsafeBytes { ring.append($0.baseAddress!, count: 8) }  // 6 oldest dropped
        #expect(ring.count == 10)
        #expect(ring.overflowed == 6)
        var last: [UInt8] = []
        while ring.count > 0 {
            let front = ring.front(limit: 3)
            last.append(contentsOf: front)
            ring.drop(front.count)
        }
        #expect(last == [6, 7] + bytes)
    }
}
