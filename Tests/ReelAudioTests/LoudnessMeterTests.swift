import Foundation
import ReelAudio
import ReelModel
import Testing

/// A take's loudness through libebur128: a sine's integrated loudness is its level (a stereo
/// 1 kHz sine at −20 dBFS reads −20 LUFS, EBU Tech 3341's own check at −23), so its ReplayGain
/// 2.0 gain is −18 − (−20) = +2 dB; silence measures nothing.
@Suite struct LoudnessMeterTests {
    static let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 2)

    /// `seconds` of a stereo 1 kHz sine whose peak is `dBFS`.
    static func sine(dBFS: Double, seconds: Double) -> [Int16] {
        let amplitude = 32767 * pow(10, dBFS / 20)
        let frames = Int(seconds * 48000)
        var samples = [Int16](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let value = Int16((amplitude * sin(2 * Double.pi * 1000 * Double(frame) / 48000)).rounded())
            samples[2 * frame] = value
            samples[2 * frame + 1] = value
        }
        return samples
    }

    func measure(_ samples: [Int16], chunk: Int = 4800) -> LoudnessMeter {
        let meter = LoudnessMeter(format: Self.format)
        samples.withUnsafeBytes { raw in
            var frame = 0
            let frames = samples.count / 2
            while frame < frames {
                let count = min(chunk, frames - frame)
                meter.add(raw.baseAddress! + frame * 4, frames: count)
                frame += count
            }
        }
        return meter
    }

    @Test func aSineReadsItsLevelAndGetsTheGainToMinus18LUFS() throws {
        let meter = measure(Self.sine(dBFS: -20, seconds: 5))
        #expect(meter.unavailable == nil)
        let loudness = try #require(meter.loudness)
        #expect(abs(loudness - -20) < 0.1, "a -20 dBFS sine reads \(loudness) LUFS")
        let gain = try #require(meter.replayGain)
        #expect(abs(gain.gain - 2) < 0.1)
        #expect(abs((gain.peak ?? 0) - pow(10, -20.0 / 20)) < 0.001)
        // −6 dBFS: 14 dB louder, 14 dB less gain.
        let loud = try #require(measure(Self.sine(dBFS: -6, seconds: 5)).replayGain)
        #expect(abs(gain.gain - loud.gain - 14) < 0.1)
    }

    @Test func silenceAndTooShortMeasureNothing() {
        #expect(measure([Int16](repeating: 0, count: 48000 * 2 * 3)).replayGain == nil)
        #expect(measure(Self.sine(dBFS: -20, seconds: 0.2)).replayGain == nil)
    }

    @Test func theMeasuringWriterFeedsTheMeterWhatItWrites() throws {
        let inner = MemoryWriter()
        inner.script { $0.channels = 2 }
        let meter = LoudnessMeter(format: Self.format)
        let writer = LoudnessMeasuringWriter(inner, meter: meter)
        let samples = Self.sine(dBFS: -20, seconds: 3)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: samples.count * 2, alignment: 16)
        defer { buffer.deallocate() }
        samples.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        try writer.write(buffer, frames: samples.count / 2)
        try writer.sync()
        try writer.close()
        #expect(inner.state.samples == samples)
        #expect(inner.state.closed)
        #expect(abs((meter.loudness ?? 0) - -20) < 0.1)
    }
}
